"""advanced_retrieval.keyword.index: a stale or damaged saved index is rebuilt from the store."""

from __future__ import annotations

import pytest

from advanced_retrieval import KeywordIndex
from testing import damage  # the cases and the fresh-process steps, shared with bench/damage.py
from tests.helpers.damaged_library import assert_whole, damaged
from tests.helpers.retrieval import CORPUS, make_doc


def test_stale_saved_index_is_caught_up_from_the_store(tmp_path, fake_embedder, store):
    keyword = KeywordIndex(tmp_path / "bm25")
    assert keyword.open(store) == []  # empty store, nothing saved: nothing to report
    store.add_document(make_doc(CORPUS[:4], "doc-a"))  # written behind the index's back
    index = keyword.current(store)
    assert index.count == 4 and index.generation == store.generation()
    assert keyword.load_saved().ids_hash == index.ids_hash  # and saved for other processes
    reopened = KeywordIndex(tmp_path / "bm25")
    assert reopened.open(store) == [] and reopened.snapshot().count == 4


@pytest.mark.slow
@pytest.mark.parametrize("case", ["bm25 postings truncated", "bm25 postings byte flipped"])
def test_a_damaged_bm25_postings_file_is_rebuilt_from_the_store(base, tmp_path, case):
    data = damaged(base, tmp_path, case)
    for argv in (("docs",), ("search", "topic1 w5", "--strategy", "bm25")):
        run = damage.cli_outcome(data, *argv)
        assert run["exit"] == 0 and not run["traceback"], run
        assert run["stdout_lines"] >= 4, run
    audit = assert_whole(data)
    assert audit["messages"] == []  # the first command rebuilt and saved it; the next open finds it whole
