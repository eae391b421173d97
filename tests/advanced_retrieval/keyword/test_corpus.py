"""advanced_retrieval.keyword.corpus: BM25 parameters."""

from __future__ import annotations

import pytest

from advanced_retrieval import BM25Params


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="allowed: lucene, robertson, atire"):
        BM25Params(method="bm25+")
    with pytest.raises(ValueError):
        BM25Params(b=2)
