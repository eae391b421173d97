"""advanced_retrieval.keyword.index: a stale or damaged saved index is rebuilt from the store."""

from __future__ import annotations

import json

import pytest

from advanced_retrieval import KeywordIndex
from testing import damage  # the cases and the fresh-process steps, shared with bench/damage.py
from tests.helpers.damaged_library import assert_whole, damaged
from tests.helpers.retrieval import CORPUS, make_doc
from vector_db import library as library_mod
from vector_db import make_client


def test_stale_saved_index_is_caught_up_from_the_store(tmp_path, fake_embedder, store):
    keyword = KeywordIndex(tmp_path / "bm25")
    assert keyword.open(store) == []  # empty store, nothing saved: nothing to report
    store.add_document(make_doc(CORPUS[:4], "doc-a"))  # written behind the index's back
    index = keyword.current(store)
    assert index.count == 4 and index.generation == store.generation()
    assert keyword.load_saved().ids_hash == index.ids_hash  # and saved for other processes
    reopened = KeywordIndex(tmp_path / "bm25")
    assert reopened.open(store) == [] and reopened.snapshot().count == 4


def test_open_compares_documents_not_every_chunk_id_and_relabels_a_copy_a_repair_left_behind(tmp_path, store,
                                                                                             monkeypatch):
    """Listing every chunk id at open costs ~5 s at a million chunks; the records say which documents hold how
    many chunks. A repair at open moves the generation without touching the documents: the saved copy is then
    relabelled, not written again."""
    keyword = KeywordIndex(tmp_path / "bm25")
    keyword.open(store)
    for name, texts in (("doc-a", CORPUS[:4]), ("doc-b", CORPUS[4:7])):
        store.add_document(make_doc(texts, name))
    keyword.current(store)
    monkeypatch.setattr(store, "chunk_ids", lambda: pytest.fail("open listed every chunk id"))
    library_mod.bump_generation(make_client(tmp_path / "data").get_collection("chunks-library"))  # as recover() does
    saved_at = (tmp_path / "bm25" / "CURRENT").read_text()

    reopened = KeywordIndex(tmp_path / "bm25")
    assert reopened.open(store) == []
    assert reopened.snapshot().generation == store.generation() == reopened.saved_manifest()["generation"]
    assert (tmp_path / "bm25" / "CURRENT").read_text() == saved_at  # the same copy, relabelled
    assert reopened.snapshot().documents == {"doc-a": 4, "doc-b": 3}

    store.delete_document("doc-a")  # behind the index's back
    again = KeywordIndex(tmp_path / "bm25")
    assert "stale" in again.open(store)[0]
    assert again.snapshot().documents == {"doc-b": 3} and again.snapshot().generation == store.generation()
    assert {cid for cid, _ in again.snapshot().search(CORPUS[0], k=10)} <= {c.id for c in store.iter_chunks()}


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


class _WriterBetween:
    """The store, with another thread's write landing between a reader's first look and its refresh."""

    def __init__(self, store, write):
        self._store, self._write, self.reads = store, write, 0

    def generation(self) -> int:
        self.reads += 1
        seen = self._store.generation()
        if self.reads == 1:
            self._write()  # the reader has read the old generation; the writer publishes and commits now
        return seen

    def __getattr__(self, name):
        return getattr(self._store, name)


def test_a_search_that_waited_for_a_writer_does_not_put_the_older_index_back(tmp_path, store):
    keyword = KeywordIndex(tmp_path / "bm25")
    store.add_document(make_doc(CORPUS[:3], "doc-a"))
    keyword.open(store)
    store.add_document(make_doc(CORPUS[3:6], "doc-b"))  # another process wrote: the reader must catch up

    def write():  # what a writer of this process does under the lock: publish, then commit
        keyword.publish(keyword.snapshot().with_chunks(make_doc(CORPUS[6:8], "doc-c").chunks,
                                                       generation=store.next_generation()))
        store.add_document(make_doc(CORPUS[6:8], "doc-c"))

    index = keyword.current(_WriterBetween(store, write))
    assert index.generation == store.generation()
    assert sorted(index.chunk_ids) == sorted(store.chunk_ids())  # doc-b caught up, doc-c kept


def test_saved_copies_share_segments_and_old_ones_are_removed(tmp_path, store):
    """Each publish writes its own segment and a manifest; what neither the live copy nor the one before it names
    (older manifests, merged-away segments, a copy in the earlier one-folder format) is removed."""
    from advanced_retrieval.keyword.segments import SEGMENTS
    from tests.advanced_retrieval.keyword.test_files import _v1_copy

    root = tmp_path / "bm25"
    root.mkdir()
    _v1_copy(root / "g1-old", CORPUS[:2])
    (root / "CURRENT").write_text("g1-old")
    keyword = KeywordIndex(root)
    store.add_document(make_doc(CORPUS[:6], "doc-0"))
    keyword.open(store)  # the old copy is stale: caught up and published in the new format
    for i in range(1, 12):
        keyword.publish(keyword.snapshot().with_chunks(make_doc([f"{CORPUS[i % 8]} {i}"], f"doc-{i}").chunks,
                                                       generation=i))
    manifests = sorted(p.name for p in root.iterdir() if p.suffix == ".json")
    live = (root / "CURRENT").read_text()
    assert len(manifests) == 2 and live in manifests and not (root / "g1-old").exists()
    named = {s["name"] for m in manifests for s in json.loads((root / m).read_text())["segments"]}
    assert {p.name for p in (root / SEGMENTS).iterdir()} == named
    assert keyword.load_saved().count == 6 + 11 and keyword.load_saved().segment_count < 6
