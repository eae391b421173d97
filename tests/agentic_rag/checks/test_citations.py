"""agentic_rag.checks.citations: passage IDs in the forms models write, a document's own references, and the reader's
numbers."""

from __future__ import annotations

import pytest

from agentic_rag.checks.citations import DisplayStream, cited_ids, display, strip_ids
from agentic_rag.checks.claims import split_claims
from agentic_rag.checks.verdicts import check_claim
from agentic_rag.types import ContextBlock, Verdict
from tests.helpers.agent import _hit


@pytest.mark.parametrize("written, ids", [
    ("a [P2]", (2,)), ("a [P1, P2]", (1, 2)), ("a [P1-P3]", (1, 2, 3)), ("a [P1–3]", (1, 2, 3)),
    ("a [P1][P2]", (1, 2)), ("a [Source 2]", (2,)), ("a [Passage 4]", (4,)), ("a (P5)", (5,)),
    ("a [P1; P3]", (1, 3)), ("a [P2 and P4]", (2, 4)), ("a [p7]", (7,)),
    ("deeper networks [11] train better", ()), ("see [2] and [3, 4]", ()), ("in (2019)", ()),
])
def test_the_forms_models_write_are_read_and_a_documents_own_references_are_not(written, ids):
    assert cited_ids(written) == ids


def test_an_id_that_names_no_passage_is_dropped_and_flagged_never_remapped(filing):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    both = split_claims("Adjusted EBITDA was 2,117 in 2023 [P1, P9].")[0]
    assert check_claim(both, Verdict(0, "supported", 1), blocks).verdict == "partial"
    only = split_claims("Adjusted EBITDA was 2,117 in 2023 [P9].")[0]
    claim = check_claim(only, Verdict(0, "supported", 9), blocks)
    assert claim.verdict == "unsupported" and "P9" in claim.reason and claim.citations == ()
    shown, order = display("EBITDA was 2,117 [P1, P9]. Ignored [P9].", {1})
    assert shown == "EBITDA was 2,117 [1]. Ignored." and order == {1: 1}


def test_streamed_text_shows_reader_numbers_never_raw_ids():
    pieces = []
    stream = DisplayStream(pieces.append, {1, 3})
    for piece in ["Revenue rose [", "P3", "] and costs [P1", "] fell (see [11]) [P", "9]."]:
        stream(piece)
    stream.flush()
    assert "".join(pieces) == "Revenue rose [1] and costs [2] fell (see [11])."
    assert not any("P" in p for p in pieces)
    assert strip_ids("It rose [P3] (P4) [11].") == "It rose [11]."
