"""advanced_retrieval.hybrid: the hybrid retriever over a real temporary Chroma (strategies, scores, filters, deletes,
another process's writes), one hit per page, the vocabulary, named documents and headed pages in its ranking."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from advanced_retrieval import Filters, HybridRetriever, KeywordIndex
from document_processor import Chunk, Location, ParsedDocument, chunk_id
from tests.helpers.paths import REPO
from tests.helpers.retrieval import CORPUS, STATEMENTS, chunk, doc, make_doc


@pytest.fixture
def retriever(store, tmp_path, fake_embedder):
    yield HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)


@pytest.mark.parametrize("strategy", ["auto", "hybrid", "vector", "bm25"])
def test_every_strategy_on_empty_store_and_empty_query(retriever, store, strategy):
    assert retriever.retrieve("revenue 2022", strategy=strategy) == []
    store.add_document(make_doc(CORPUS))
    assert retriever.retrieve("", strategy=strategy) == []
    assert retriever.retrieve("   ", strategy=strategy) == []
    assert retriever.retrieve("revenue", k=0, strategy=strategy) == []


def test_unknown_strategy_is_refused(retriever):
    with pytest.raises(ValueError, match="allowed: auto, hybrid, vector, bm25"):
        retriever.retrieve("x", strategy="magic")


def test_hybrid_hits_carry_every_score(retriever, store):
    store.add_document(make_doc(CORPUS))  # visible through the generation check, no explicit sync
    hits = retriever.retrieve("revenue in fiscal 2022", k=4)
    assert [h.rank for h in hits] == [1, 2, 3, 4] and all(h.strategy == "hybrid" for h in hits)
    assert hits[0].chunk.text == CORPUS[2]
    assert hits[0].vector_score is not None and hits[0].vector_score > 0 and hits[0].bm25_score > 0
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.bm25_score is not None for h in hits)  # filled for vector-only candidates too (0.0 = no term)


def test_a_bm25_only_hit_of_a_hybrid_query_gets_its_cosine_from_the_stored_vector(store, tmp_path, fake_embedder):
    store.add_document(make_doc(CORPUS))
    narrow = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder, candidates=1)  # 1 vector candidate
    hits = narrow.retrieve("revenue fiscal 2022 cat dog income", k=4, strategy="hybrid")
    assert len(hits) > 1 and all(h.vector_score is not None for h in hits)
    query = fake_embedder.embed_query("revenue fiscal 2022 cat dog income")
    for h in hits:  # exactly the cosine a vector search would have reported
        assert h.vector_score == pytest.approx(float(fake_embedder.embed([h.chunk.text])[0] @ query), abs=1e-5)


def test_single_retriever_strategies_report_their_own_scores(retriever, store):
    store.add_document(make_doc(CORPUS))
    bm25 = retriever.retrieve("cat", strategy="bm25")
    assert bm25 and all(h.score == h.bm25_score and h.vector_score is None for h in bm25)
    vector = retriever.retrieve("cat", strategy="vector", k=3)
    assert all(h.score == h.vector_score and h.bm25_score is not None for h in vector)
    code = retriever.retrieve("10-K")
    assert code[0].strategy == "bm25" and code[0].chunk.text == CORPUS[3]


def test_filters_reach_both_retrievers(retriever, store):
    store.add_document(make_doc(CORPUS[:4], "doc-a", "pdf"))
    store.add_document(make_doc(CORPUS[4:], "doc-b", "docx"))
    for strategy in ("hybrid", "vector", "bm25"):
        hits = retriever.retrieve("cat revenue income", k=8, strategy=strategy, filters=Filters(doc_ids=("doc-b",)))
        assert hits and {h.chunk.doc_id for h in hits} == {"doc-b"}
        hits = retriever.retrieve("cat revenue income", k=8, strategy=strategy, filters=Filters(file_types=("pdf",)))
        assert hits and {h.chunk.file_type for h in hits} == {"pdf"}
    assert {d.doc_id for d in retriever.documents()} == {"doc-a", "doc-b"}


def test_quoted_phrase_ranks_the_exact_phrase_first(retriever, store):
    store.add_document(make_doc(CORPUS))
    hits = retriever.retrieve('"net income"', k=2)
    assert hits[0].strategy == "bm25" and hits[0].chunk.text == CORPUS[6]
    hybrid = retriever.retrieve('what happened to "net income"', k=2)
    assert hybrid[0].chunk.text == CORPUS[6]


def test_deleted_documents_are_never_returned(retriever, store):
    store.add_document(make_doc(CORPUS[:4], "doc-a"))
    store.add_document(make_doc(CORPUS[4:], "doc-b"))
    assert retriever.retrieve("cat", strategy="bm25")
    store.delete_document("doc-b")
    for strategy in ("hybrid", "vector", "bm25"):
        assert all(h.chunk.doc_id == "doc-a" for h in retriever.retrieve("cat dog income", strategy=strategy))


def test_another_process_write_becomes_visible(tmp_path, fake_embedder, retriever, store):
    """A real second process indexes a document; our retriever sees it on the next query (generation check).

    This process first lets go of the embedded directory (one writing process at a time, vector_db/owner.py);
    it keeps reading. With a Chroma server both would write at once (tests/vector_db/test_client.py covers that)."""
    assert retriever.retrieve("penguins") == []
    store.close()
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(REPO)!r}, {str(REPO / 'tests')!r}]
        from vector_db import HashingEmbedder
        from pathlib import Path
        from wiring import knowledge_base
        from vector_db import VectorStore, make_client
        emb = HashingEmbedder()
        data = Path({str(tmp_path)!r})
        kb = knowledge_base(VectorStore(make_client(data / "data"), emb), data, emb, isolate=False)
        result = kb.ingest_bytes(b"Emperor penguins huddle in the Antarctic winter.", "penguins.txt")
        assert result.status == "indexed", result
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    hits = retriever.retrieve("penguins", strategy="bm25")
    assert [h.chunk.file_name for h in hits] == ["penguins.txt"]
    hybrid = retriever.retrieve("Antarctic penguins")
    assert hybrid and hybrid[0].chunk.file_name == "penguins.txt"


PAGES = [  # (page, text): page 1 has three chunks about revenue, pages 2 and 3 one each
    (1, "revenue grew in fiscal 2022 revenue by segment"),
    (1, "revenue table continued revenue 2022 2021"),
    (1, "revenue footnotes for the revenue table"),
    (2, "revenue outlook for the next year"),
    (3, "revenue recognition policy"),
    (4, "the weather and the clouds"),
]


@pytest.mark.parametrize("strategy", ["bm25", "hybrid", "vector"])
def test_a_page_takes_one_place_and_its_other_chunks_ride_along(store, tmp_path, fake_embedder, strategy):
    store.add_document(doc([chunk(t, p, i) for i, (p, t) in enumerate(PAGES)]))
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    hits = retriever.retrieve("revenue 2022 revenue table", k=3, strategy=strategy)
    pages = [h.chunk.location.page for h in hits]
    assert len(pages) == len(set(pages)) == 3
    assert [h.rank for h in hits] == [1, 2, 3]
    first_page = next(h for h in hits if h.chunk.location.page == 1)
    assert {c.location.page for c in first_page.page_chunks} <= {1}
    assert all(c.id != first_page.chunk.id for c in first_page.page_chunks)


def test_one_per_page_off_gives_todays_chunk_ranking(store, tmp_path, fake_embedder):
    store.add_document(doc([chunk(t, p, i) for i, (p, t) in enumerate(PAGES)]))
    flat = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder, one_per_page=False)
    hits = flat.retrieve("revenue 2022 revenue table", k=3, strategy="bm25")
    assert [h.chunk.location.page for h in hits].count(1) >= 2
    assert all(h.page_chunks == () for h in hits)


def test_chunks_without_pages_are_never_grouped(store, tmp_path, fake_embedder):
    chunks = [Chunk(id=chunk_id("notes", Location(lines=(i, i)), i, t), doc_id="notes", file_name="notes.txt",
                    file_type="txt", text=t, location=Location(lines=(i, i)), ordinal=i)
              for i, t in enumerate(["revenue one", "revenue two", "revenue three"])]
    store.add_document(ParsedDocument(doc_id="notes", file_name="notes.txt", file_type="txt", size_bytes=10,
                                      title="notes", unit_name="lines", units=3, chunks=tuple(chunks)))
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    assert len(retriever.retrieve("revenue", k=3, strategy="bm25")) == 3


def test_the_vocabulary_finds_the_statement_through_the_retriever(store, tmp_path, fake_embedder):
    store.add_document(doc([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)]))
    on = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    off = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-off"), fake_embedder, expand=False)
    assert [h.chunk.location.page for h in on.retrieve("free cash flow", k=2, strategy="bm25")] == [1, 2]
    assert [h.chunk.location.page for h in off.retrieve("free cash flow", k=2, strategy="bm25")] == [1]
    assert all(h.bm25_score == h.score for h in off.retrieve("free cash flow", k=2, strategy="bm25"))


def test_the_named_document_outranks_the_same_passage_in_a_sibling(store, tmp_path, fake_embedder):
    text = "net cash provided by operating activities was 812 million in the year"
    for name in ("ACME_2021_10K", "ACME_2022_10K", "GLOBEX_2022_10K", "INITECH_2022_10K"):
        store.add_document(doc([chunk(f"{text} ({i})", i + 1, i, doc_id=name) for i in range(3)], doc_id=name))
    routed = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    flat = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-flat"), fake_embedder, route=False)
    question = "Globex net cash provided by operating activities"
    hits = routed.retrieve(question, k=3, strategy="hybrid")
    assert {h.chunk.doc_id for h in hits} == {"GLOBEX_2022_10K"}
    query = fake_embedder.embed_query(question)
    for h in hits:  # the cosine of the search within the named document, as a vector search reports it
        assert h.vector_score == pytest.approx(float(fake_embedder.embed([h.chunk.text])[0] @ query), abs=1e-5)
    assert {h.chunk.doc_id for h in flat.retrieve(question, k=3, strategy="hybrid")} != {"GLOBEX_2022_10K"}
    only_acme = Filters(doc_ids=("ACME_2021_10K",))  # the user's filter wins over the name
    assert {h.chunk.doc_id for h in routed.retrieve(question, k=3, filters=only_acme)} == {"ACME_2021_10K"}


def test_the_first_headed_page_counts_as_much_as_every_other_search_together():
    from advanced_retrieval.hybrid import _Candidates
    from advanced_retrieval.query.plan import QueryPlan

    prose = chunk("prose", 1, 1)

    def fused(keyword_weight: float) -> list[str]:
        # the prose chunk is first in three searches and second in the library-wide BM25; "statement" only heads
        # its page
        found = _Candidates(vector=[(prose, 0.9)], bm25=[("other", 9.0), (prose.id, 8.0)],
                            extra=(([prose.id], 1.0), ([prose.id], keyword_weight)), headed=["statement"])
        retriever = HybridRetriever(None, None, None)
        return [cid for cid, _ in retriever._rank(QueryPlan("hybrid", "test", keyword_weight), found, {}, 0)]

    for keyword_weight in (1.0, 2.0):
        assert fused(keyword_weight) == ["statement", prose.id, "other"]


def test_a_named_documents_vectors_are_read_once_and_again_after_a_write(store, tmp_path, fake_embedder, monkeypatch):
    text = "net cash provided by operating activities was 812 million in the year"
    for name in ("ACME_2022_10K", "GLOBEX_2022_10K", "INITECH_2022_10K"):
        store.add_document(doc([chunk(f"{text} ({i})", i + 1, i, doc_id=name) for i in range(3)], doc_id=name))
    read: list[list[str]] = []
    vectors = store.vectors
    monkeypatch.setattr(store, "vectors", lambda ids: read.append(sorted(ids)) or vectors(ids))
    routed = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    first = routed.retrieve("Globex net cash provided by operating activities", k=3, strategy="hybrid")
    named_reads = len(read)
    assert named_reads >= 1 and {h.chunk.doc_id for h in first} == {"GLOBEX_2022_10K"}
    again = routed.retrieve("Globex operating cash flow", k=3, strategy="hybrid")
    both = routed.retrieve("Globex and Initech net cash provided by operating activities", k=6, strategy="hybrid")
    globex = {c.id for c in store.document_chunks("GLOBEX_2022_10K")}
    later = [ids for ids in read[named_reads:] if set(ids) & globex]
    assert later == [] and {h.chunk.doc_id for h in again} == {"GLOBEX_2022_10K"}  # Globex's vectors kept
    assert {h.chunk.doc_id for h in both} == {"GLOBEX_2022_10K", "INITECH_2022_10K"}
    pdfs, docx = Filters(file_types=("pdf",)), Filters(file_types=("docx",))  # a file-type filter on the kept vectors
    assert {h.chunk.doc_id for h in routed.retrieve("Globex operating cash flow", k=3, filters=pdfs)} == {"GLOBEX_2022_10K"}
    assert routed.retrieve("Globex operating cash flow", k=3, filters=docx) == []
    store.delete_document("INITECH_2022_10K")  # a write: the kept vectors are read again at the new generation
    read.clear()
    assert {h.chunk.doc_id for h in routed.retrieve("Globex operating activities", k=3, strategy="hybrid")} == {
        "GLOBEX_2022_10K"} and any(set(ids) & globex for ids in read)


def test_a_retrieval_reads_the_stores_generation_once_and_the_next_one_sees_a_write(retriever, store, monkeypatch):
    from vector_db import library

    store.add_document(make_doc(CORPUS))
    retriever.retrieve("revenue in fiscal 2022", k=4)
    reads = []
    real = library.read_generation
    monkeypatch.setattr(library, "read_generation", lambda lib: reads.append(1) or real(lib))
    retriever.retrieve("revenue in fiscal 2022", k=4, strategy="hybrid")
    assert len(reads) <= 2  # the retrieval's own, and at most the BM25 prefetch's on its worker thread
    store.delete_document(make_doc(CORPUS).doc_id)
    assert retriever.retrieve("revenue in fiscal 2022", k=4) == []  # the next retrieval sees the delete


def test_a_hybrid_retrieval_holds_numpys_blas_to_one_thread(retriever, store):
    """The question's products are memory-bound; a second BLAS thread spinning after each took the core the
    keyword searches ran on (hybrid.one_blas_thread)."""
    from threadpoolctl import threadpool_info

    store.add_document(make_doc(CORPUS))
    assert retriever.retrieve("revenue in fiscal 2022", k=4, strategy="hybrid")
    # numpy's own BLAS, which the products run on: another library's (scipy's, loaded later by other tests or
    # modules) is not the one a question uses
    blas = [pool for pool in threadpool_info()
            if pool["user_api"] == "blas" and "numpy" in Path(pool["filepath"]).parent.name]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)
