"""Tokenizer, BM25 index, fusion, strategy choice and the hybrid retriever over a real temporary Chroma."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from advanced_retrieval import (
    BM25Index,
    BM25IndexError,
    BM25Params,
    Filters,
    HybridRetriever,
    KeywordIndex,
    choose_strategy,
    plan_query,
    reciprocal_rank_fusion,
    tokenize,
)
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION
from advanced_retrieval.query.plan import quoted_phrases
from document_processor import Chunk, Location, ParsedDocument, chunk_id
from vector_db import VectorStore, make_client

REPO = Path(__file__).resolve().parents[1]

# -- helpers ----------------------------------------------------------------------------------------------------


def make_chunks(texts, doc_id="doc-a", file_type="txt", file_name=None, context=""):
    return [
        Chunk(id=chunk_id(doc_id, Location(page=i + 1), i, t), doc_id=doc_id, file_name=file_name or f"{doc_id}.txt",
              file_type=file_type, text=t, location=Location(page=i + 1), ordinal=i, context=context)
        for i, t in enumerate(texts)
    ]


def make_doc(texts, doc_id="doc-a", file_type="txt", file_name=None) -> ParsedDocument:
    chunks = make_chunks(texts, doc_id, file_type, file_name)
    return ParsedDocument(doc_id=doc_id, file_name=chunks[0].file_name, file_type=file_type, size_bytes=100,
                          title=doc_id, unit_name="pages", units=len(texts), chunks=tuple(chunks))


CORPUS = [
    "the cat sat on the mat near the door",
    "dogs and cats living together in a small house",
    "revenue grew 28.4% to $4,000 million in fiscal 2022",
    "the annual report on form 10-K describes revenue and risks",
    "cat cat cat and one dog",
    "nothing to see here, just a long sentence about weather and clouds and rain",
    "steel mats are finished by rolling; net income fell",
    "income before taxes, net of the adjustments, was stable",
]


# -- tokenizer --------------------------------------------------------------------------------------------------


def test_words_are_lowercased_stemmed_and_stopwords_dropped():
    assert tokenize("The Companies were Running their reports") == ["compani", "run", "report"]
    assert tokenize("What did Adobe report?") == ["adob", "report"]  # question words are stopwords too


@pytest.mark.parametrize(("text", "whole"), [
    ("grew 28.4% last year", "28.4"),
    ("paid $4,000 in fees", "4000"),
    ("the vote was 10-9", "10-9"),
    ("see the Form 10-K", "10-k"),
    ("GPT-4 outperforms", "gpt-4"),
    ("certified ISO-9001", "iso-9001"),
    ("cells A1:F40 hold totals", "a1:f40"),
    ("version 3.11.2 ships", "3.11.2"),
    ("set max_tokens to 256", "max_tokens"),
])
def test_numbers_and_codes_stay_whole_and_unstemmed(text, whole):
    assert whole in tokenize(text)


def test_codes_also_give_their_parts_but_decimals_do_not_split():
    assert tokenize("ISO-9001") == ["iso-9001", "iso", "9001"]
    assert tokenize("28.4") == ["28.4"]
    assert tokenize("2023-12-31") == ["2023-12-31", "2023", "12", "31"]
    assert tokenize("FY2022") == ["fy2022", "fy", "2022"]  # documents say "fiscal 2022"
    assert tokenize("A1 x86") == ["a1", "x86"]  # short codes are not split
    assert tokenize("$4,000 and 4000") == ["4000", "4000"]


def test_punctuation_ligatures_and_possessives():
    assert tokenize("Sales rose in 2022.") == ["sale", "rose", "2022"]
    assert tokenize("ﬁnancial") == tokenize("financial")  # PDF ligature
    assert tokenize("the company's state-of-the-art plant") == ["compani", "state", "art", "plant"]


def test_typographic_hyphens_and_dashes_read_as_hyphens():
    assert tokenize("Form 10\u2011K") == tokenize("Form 10-K") == ["form", "10-k", "10"]  # non-breaking hyphen
    assert tokenize("COVID\u201019 cases") == tokenize("COVID-19 cases")
    assert "2023" in tokenize("from 2019\u20132023")  # en dash range still finds its years
    assert tokenize("revenue\u2014which grew") == tokenize("revenue - which grew") == ["revenu", "grew"]
    assert tokenize("\u22125.2 percent") == tokenize("-5.2 percent")


@pytest.mark.parametrize("text", ["", "   ", "the of and to", "a", "!!! ???"])
def test_empty_or_stopword_only_text_has_no_tokens(text):
    assert tokenize(text) == []


# -- BM25 index -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire"])
def test_scores_equal_bm25s_own_indexing(method):
    index = BM25Index.build(make_chunks(CORPUS), params=BM25Params(method=method))
    reference = bm25s.BM25(method=method)
    reference.index([tokenize(t) for t in CORPUS], show_progress=False)
    for query in ["cat mat", "revenue 2022", "net income", "dog house weather"]:
        ours = dict(index.score(query, index.chunk_ids))
        theirs = reference.get_scores(tokenize(query))
        assert np.allclose([ours[c] for c in index.chunk_ids], theirs, rtol=1e-5, atol=1e-7)


def test_okapi_compatible_params_reproduce_rank_bm25_exactly():
    """atire term frequency + robertson idf is BM25Okapi's formula while every query term is in < N/2 chunks."""
    index = BM25Index.build(make_chunks(CORPUS), params=BM25Params(method="atire", idf_method="robertson"))
    okapi = BM25Okapi([tokenize(t) for t in CORPUS])  # k1=1.5, b=0.75 as ours
    for query in ["cat mat", "revenue 2022", "net income", "dog steel weather", "10-K risks"]:
        ours = index.score(query, index.chunk_ids)
        theirs = okapi.get_scores(tokenize(query))
        assert np.allclose([ours[c] for c in index.chunk_ids], theirs, rtol=1e-5)
        ranked = [cid for cid, _ in index.search(query, k=len(CORPUS))]
        expected = [index.chunk_ids[i] for i in np.argsort(-theirs, kind="stable") if theirs[i] > 0]
        assert ranked == expected


def test_default_lucene_scores_relate_to_okapi_term_by_term():
    """Default: ours(q, d) = Σ_t okapi({t}, d) · idf_lucene(t) / ((k1 + 1) · idf_okapi(t)), so single-term
    rankings are identical and multi-term ones differ only by each term's idf."""
    index = BM25Index.build(make_chunks(CORPUS))
    tokens = [tokenize(t) for t in CORPUS]
    okapi, n = BM25Okapi(tokens), len(CORPUS)
    query = "cat revenue income weather"
    expected = np.zeros(n)
    for term in tokenize(query):
        df = sum(term in doc for doc in tokens)
        idf_okapi = math.log(n - df + 0.5) - math.log(df + 0.5)
        idf_lucene = math.log(1 + (n - df + 0.5) / (df + 0.5))
        expected += okapi.get_scores([term]) * idf_lucene / (2.5 * idf_okapi)
        single = index.score(term, index.chunk_ids)
        assert np.allclose([single[c] for c in index.chunk_ids], okapi.get_scores([term]) * idf_lucene / (2.5 * idf_okapi),
                           rtol=1e-5)
    ours = index.score(query, index.chunk_ids)
    assert np.allclose([ours[c] for c in index.chunk_ids], expected, rtol=1e-5)


def test_tiny_corpus_okapi_scores_zero_where_lucene_finds_the_chunk():
    """Why lucene is the default: in a two-chunk knowledge base BM25Okapi's idf of a term in one chunk is 0."""
    texts = ["quarterly revenue table", "board of directors"]
    assert list(BM25Okapi([tokenize(t) for t in texts]).get_scores(tokenize("revenue"))) == [0.0, 0.0]
    index = BM25Index.build(make_chunks(texts))
    assert [cid for cid, _ in index.search("revenue")] == [index.chunk_ids[0]]


def test_empty_corpus_and_empty_queries_give_nothing():
    with pytest.raises(ZeroDivisionError):  # rank_bm25's issue #36, which we must not inherit
        BM25Okapi([])
    empty = BM25Index.build([])
    assert empty.search("anything") == [] and empty.count == 0 and empty.score("x", ["a"]) == {}
    index = BM25Index.build(make_chunks(CORPUS))
    assert index.search("") == [] and index.search("the of and") == [] and index.search("cat", k=0) == []
    assert index.search("zebra unicorn") == []  # no query token in the vocabulary


def test_search_ranks_best_first_and_only_returns_matches():
    index = BM25Index.build(make_chunks(CORPUS))
    hits = index.search("cat", k=10)
    assert [index.chunk_ids.index(cid) for cid, _ in hits] == [4, 0, 1]  # tf 3, then the shorter chunk
    assert all(s > 0 for _, s in hits) and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_filters_restrict_by_document_and_type():
    chunks = make_chunks(CORPUS[:4], "doc-a", "pdf") + make_chunks(CORPUS[4:], "doc-b", "docx")
    index = BM25Index.build(chunks)
    by_doc = {cid for cid, _ in index.search("cat", 10, Filters(doc_ids=("doc-b",)))}
    assert by_doc and all(c.doc_id == "doc-b" for c in chunks if c.id in by_doc)
    by_type = {cid for cid, _ in index.search("cat", 10, Filters(file_types=("pdf",)))}
    assert by_type and all(c.file_type == "pdf" for c in chunks if c.id in by_type)
    assert index.search("cat", 10, Filters(doc_ids=("doc-a",), file_types=("docx",))) == []
    assert index.search("cat", 10, Filters(doc_ids=())) == []
    assert index.search("cat", 10, Filters(doc_ids=["doc-b"])) == index.search("cat", 10, Filters(doc_ids=("doc-b",)))
    assert index.search("cat", 10, Filters(doc_ids=("unknown",))) == []


def test_updates_equal_a_fresh_build():
    a, b = make_chunks(CORPUS[:4], "doc-a"), make_chunks(CORPUS[4:], "doc-b")
    updated = BM25Index.build(a).with_chunks(b, generation=2).without_documents(["doc-a"], generation=3)
    fresh = BM25Index.build(b)
    assert updated.generation == 3 and updated.chunk_ids == fresh.chunk_ids
    for query in ["cat dog", "net income", "weather"]:
        assert dict(updated.search(query, 5)) == pytest.approx(dict(fresh.search(query, 5)))
    assert updated.without_chunks(updated.chunk_ids, generation=4).search("cat") == []


def test_adding_known_chunks_is_a_no_op_and_the_old_index_is_unchanged():
    chunks = make_chunks(CORPUS)
    index = BM25Index.build(chunks)
    again = index.with_chunks(chunks + chunks[:2], generation=9)
    assert again.count == index.count == len(CORPUS) and again.ids_hash == index.ids_hash
    smaller = index.without_documents(["doc-a"], generation=10)
    assert smaller.count == 0 and index.count == len(CORPUS) and index.search("cat")  # immutable


def test_save_and_load_round_trip(tmp_path):
    index = BM25Index.build(make_chunks(CORPUS, context="Annual report > Risks"), generation=42)
    index.save(tmp_path / "v1")
    loaded = BM25Index.load(tmp_path / "v1")
    manifest = loaded.manifest()
    assert manifest["generation"] == 42 and manifest["count"] == len(CORPUS)
    assert manifest["ids_hash"] == index.ids_hash
    assert loaded.search("risks cat", 5) == index.search("risks cat", 5)  # context header is indexed too
    rescored = BM25Index.load(tmp_path / "v1", params=BM25Params(method="atire", idf_method="robertson"))
    built = BM25Index.build(make_chunks(CORPUS, context="Annual report > Risks"),
                            params=BM25Params(method="atire", idf_method="robertson"))
    assert dict(rescored.search("cat", 5)) == pytest.approx(dict(built.search("cat", 5)))
    BM25Index.build([]).save(tmp_path / "empty")
    assert BM25Index.load(tmp_path / "empty").search("cat") == []


def test_unusable_saved_index_raises_a_typed_error(tmp_path):
    with pytest.raises(BM25IndexError, match="no saved BM25 index"):
        BM25Index.load(tmp_path / "missing")
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v")
    manifest = (tmp_path / "v" / "manifest.json")
    manifest.write_text(manifest.read_text().replace(f'"tokenizer": {TOKENIZER_VERSION}', '"tokenizer": 99'))
    with pytest.raises(BM25IndexError, match="tokenizer"):
        BM25Index.load(tmp_path / "v")
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "w")
    (tmp_path / "w" / "postings.npz").write_bytes(b"garbage")
    with pytest.raises(BM25IndexError, match="postings.npz differs"):
        BM25Index.load(tmp_path / "w")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
@pytest.mark.parametrize("name", ["postings.npz", "data.csc.index.npy", "chunks.json"])
def test_a_damaged_saved_file_is_a_typed_error_never_a_zip_error_or_wrong_scores(tmp_path, name, damage):
    """Issue 16, item 7: a truncated .npz raised BadZipFile, a flipped byte "Bad CRC-32" or nothing at all (a .npy
    has no checksum, so its scores were silently wrong). The manifest's sha256 of every file catches each."""
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v")
    path = tmp_path / "v" / name
    raw = bytearray(path.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    else:
        raw[len(raw) - 3] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(BM25IndexError, match=f"damaged .{name} differs"):
        BM25Index.load(tmp_path / "v")


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="allowed: lucene, robertson, atire"):
        BM25Params(method="bm25+")
    with pytest.raises(ValueError):
        BM25Params(b=2)


# -- fusion and strategy ----------------------------------------------------------------------------------------


def test_rrf_matches_hand_computed_scores():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], k=60)
    expected = {"a": 1 / 61 + 1 / 62, "c": 1 / 63 + 1 / 61, "b": 1 / 62, "d": 1 / 63}
    assert [cid for cid, _ in fused] == ["a", "c", "b", "d"]
    assert dict(fused) == pytest.approx(expected)


def test_rrf_weights_ties_and_duplicates():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=10, weights=[1.0, 3.0]))
    assert fused == pytest.approx({"a": 1 / 11 + 3 / 12, "b": 1 / 12 + 3 / 11})
    assert reciprocal_rank_fusion([["x"], ["y"]]) == [("x", 1 / 61), ("y", 1 / 61)]  # tie: first seen first
    assert reciprocal_rank_fusion([["y"], ["x"]])[0][0] == "y"
    assert dict(reciprocal_rank_fusion([["a", "a", "b"]], k=0)) == {"a": 1.0, "b": 1 / 3}  # first position counts
    assert reciprocal_rank_fusion([]) == [] and reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError, match="one per list"):
        reciprocal_rank_fusion([["a"]], weights=[1, 2])
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=-1)


@pytest.mark.parametrize(("query", "strategy", "boosted"), [
    ("What is ISO-9001?", "bm25", True),
    ("A1:F40", "bm25", True),
    ('"force majeure"', "bm25", True),
    ("What was revenue in 2022?", "hybrid", True),
    ("What is the EBITDA margin", "hybrid", True),
    ('the "net income" trend', "hybrid", True),
    ("how do small companies manage risk", "hybrid", False),  # "all" inside "small" is not a feature
    ("summarize all of them", "hybrid", False),
    ("WHAT IS THE REVENUE", "hybrid", False),  # shouting is not an acronym
    ("", "hybrid", False),
])
def test_auto_strategy_uses_token_features(query, strategy, boosted):
    plan = plan_query(query)
    assert plan.strategy == strategy
    assert (plan.keyword_weight > 1) == boosted
    assert choose_strategy(query) == (plan.strategy, plan.reason) and plan.reason


def test_quoted_phrases():
    assert quoted_phrases('find "net  income" and “cash flow” but not company\'s') == ("net income", "cash flow")
    assert quoted_phrases("no quotes") == ()


# -- hybrid retriever on a real temporary Chroma ----------------------------------------------------------------


@pytest.fixture
def store(tmp_path, fake_embedder):
    yield VectorStore(make_client(tmp_path / "data"), fake_embedder)


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
    it keeps reading. With a Chroma server both would write at once (test_reliability covers that)."""
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


def test_stale_saved_index_is_caught_up_from_the_store(tmp_path, fake_embedder, store):
    keyword = KeywordIndex(tmp_path / "bm25")
    assert keyword.open(store) == []  # empty store, nothing saved: nothing to report
    store.add_document(make_doc(CORPUS[:4], "doc-a"))  # written behind the index's back
    index = keyword.current(store)
    assert index.count == 4 and index.generation == store.generation()
    assert keyword.load_saved().ids_hash == index.ids_hash  # and saved for other processes
    reopened = KeywordIndex(tmp_path / "bm25")
    assert reopened.open(store) == [] and reopened.snapshot().count == 4
