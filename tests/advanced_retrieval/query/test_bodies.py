"""Chunks and vectors held for a store generation: what a warm library's question reads (nothing), and that a
write is never answered from what was held before it."""

from __future__ import annotations

import pytest

from advanced_retrieval import Filters, HybridRetriever, KeywordIndex
from advanced_retrieval.query.bodies import Bodies
from tests.helpers.retrieval import CountingStore, chunk, doc

TOPICS = ["revenue grew in the cloud segment", "the board approved a dividend", "inventory fell at year end",
          "cash used in investing activities", "goodwill was tested for impairment", "the lease term is ten years"]


def _library(store, names=("ACME", "GLOBEX", "INITECH")):
    for n, name in enumerate(names):
        # a different number of filler words in each chunk: no two cosines tie (ties may come in any order)
        chunks = [chunk(f"{name} {t} page {p}" + " note" * (6 * n + p), page=p + 1, ordinal=p, doc_id=name)
                  for p, t in enumerate(TOPICS[n:] + TOPICS[:n])]
        store.add_document(doc(chunks, doc_id=name))


def test_held_chunks_are_read_once_per_generation_and_at_most_max_cached(store, monkeypatch):
    _library(store)
    reads = CountingStore(store)
    bodies = Bodies(reads)
    ids = [c.id for c in store.document_chunks("ACME")]
    generation = store.generation()
    first = bodies.get(ids[:4], generation)
    again = bodies.get([ids[3], ids[0], "no-such-id"], generation)
    assert list(first) == ids[:4] and set(again) == {ids[0], ids[3]}
    assert reads.reads == [("chunks", tuple(ids[:4])), ("chunks", ("no-such-id",))]  # only the unknown id again
    bodies.get(ids[:1], generation + 1)  # another generation: read again, the earlier ones dropped
    assert reads.reads[-1] == ("chunks", (ids[0],))
    bodies.get(ids[1:2], generation + 1)
    assert reads.reads[-1] == ("chunks", (ids[1],))
    monkeypatch.setattr(Bodies, "MAX_CACHED", 2)
    bodies.get(ids[2:4], generation + 1)  # the least recently used (ids[0]) goes
    calls = len(reads.reads)
    bodies.get(ids[2:4], generation + 1)
    assert len(reads.reads) == calls
    bodies.get(ids[:1], generation + 1)
    assert reads.reads[-1] == ("chunks", (ids[0],))
    assert bodies.read_ahead(ids, generation + 1) == 0  # more than MAX_CACHED: nothing read ahead


@pytest.mark.parametrize("filters", [None, Filters(doc_ids=("GLOBEX", "INITECH")), Filters(file_types=("pdf",)),
                                     Filters(doc_ids=("ACME",), file_types=("docx",))])
def test_a_warm_librarys_vector_search_is_the_stores_and_reads_nothing(store, tmp_path, fake_embedder, filters):
    """Issue 28 (the real-question path): a question's vector search over a library whose vectors and chunks are
    held is a product over the held vectors, exact, with the chunks it found held too. Same chunks, in the same
    order, with the same cosines as the store's own search, under every filter."""
    _library(store)
    cold = HybridRetriever(store, KeywordIndex(tmp_path / "cold"), fake_embedder, candidates=5)
    warm_store = CountingStore(store)
    warm = HybridRetriever(warm_store, KeywordIndex(tmp_path / "warm"), fake_embedder, candidates=5)
    assert warm.warm()["chunks"] == 18
    read_ahead = len(warm_store.reads)
    for question in ["How much cash was used in investing activities?", "Which dividend did the board approve?"]:
        for strategy in ("vector", "hybrid"):
            got = warm.retrieve(question, k=4, strategy=strategy, filters=filters)
            want = cold.retrieve(question, k=4, strategy=strategy, filters=filters)
            assert [(h.chunk, h.page_chunks, h.bm25_score) for h in got] == \
                [(h.chunk, h.page_chunks, h.bm25_score) for h in want]
            assert [h.vector_score for h in got] == pytest.approx([h.vector_score for h in want], abs=1e-5)
    assert warm_store.reads[read_ahead:] == []  # no search, chunk or vector read since the read ahead


def test_a_write_after_reading_ahead_is_searched_not_what_was_held(store, tmp_path, fake_embedder):
    _library(store, ("ACME", "GLOBEX"))
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder, candidates=5)
    retriever.warm()
    question = "What is the lease term?"
    before = retriever.retrieve(question, k=3, strategy="vector")
    assert before and all(h.chunk.doc_id in ("ACME", "GLOBEX") for h in before)
    store.delete_document("ACME")
    text = "INITECH the lease term is ten years page 1"
    store.add_document(doc([chunk(text, page=1, ordinal=0, doc_id="INITECH")], doc_id="INITECH"))
    after = retriever.retrieve(question, k=3, strategy="vector")
    assert "ACME" not in {h.chunk.doc_id for h in after}
    assert after[0].chunk.text == text  # the new document's passage, which no held vector knew
    assert retriever.retrieve(question, k=3, strategy="vector") == after
