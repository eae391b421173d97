"""advanced_retrieval.keyword.bm25: scores against bm25s and rank_bm25, search, filters, updates, the vocabulary
expansion's weight and per-document word rates."""

from __future__ import annotations

import math

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from advanced_retrieval import BM25Index, BM25Params, Filters, tokenize
from advanced_retrieval.keyword.expansion import EXPANSION_SHARE, expansion_query
from tests.helpers.retrieval import CORPUS, STATEMENTS, chunk, make_chunks


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


def test_one_query_scored_once_serves_every_filter_and_the_expansion_alike():
    """A question's searches share the query's unfiltered scores: each filter, the expansion and score() must
    still give what an index that never saw the other searches gives."""
    chunks = make_chunks(CORPUS[:4], "doc-a", "pdf") + make_chunks(CORPUS[4:], "doc-b", "docx")
    shared = BM25Index.build(chunks).without_chunks([chunks[1].id], generation=2)  # a dead row too
    calls = [("cat", None, ""), ("cat", Filters(doc_ids=("doc-b",)), ""), ("cat", None, "dog mat"),
             ("cat", Filters(file_types=("pdf",)), "dog mat"), ("cat", Filters(doc_ids=("doc-a",)), ""),
             ("dog mat", None, ""), ("cat", None, "")]
    for query, allowed, expansion in calls:
        alone = BM25Index.build(chunks).without_chunks([chunks[1].id], generation=2)
        got = shared.search(query, 10, allowed, expansion=expansion)
        assert got == alone.search(query, 10, allowed, expansion=expansion)
        assert shared.score(query, shared.chunk_ids) == alone.score(query, alone.chunk_ids)
    assert {cid for cid, _ in shared.search("cat", 10, Filters(doc_ids=("doc-b",)))} <= {c.id for c in chunks[4:]}
    assert chunks[1].id not in dict(shared.search("cat", 10))


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


def test_expansion_reorders_but_never_lifts_a_chunk_above_the_users_words():
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)])
    plain = index.search("free cash flow", 3)
    assert [cid for cid, _ in plain] == [index.chunk_ids[0]]  # only the chunk with the user's words
    grown = index.search("free cash flow", 3, expansion=expansion_query("free cash flow"))
    ids = [cid for cid, _ in grown]
    assert ids[:2] == [index.chunk_ids[0], index.chunk_ids[1]]  # the statement now found, below the user's match
    best_own = plain[0][1]
    assert grown[1][1] <= EXPANSION_SHARE * best_own + 1e-6


def test_expansion_alone_when_the_users_words_match_nothing():
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS[1:])])
    assert index.search("fcf", 3) == []
    found = index.search("fcf", 3, expansion=expansion_query("fcf"))
    assert found and found[0][0] == index.chunk_ids[0]


def test_expansion_tokens_already_in_the_query_count_once():
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)])
    same = index.search("capital expenditures", 3, expansion="capital expenditures")
    assert same == index.search("capital expenditures", 3)


def test_empty_index_and_empty_expansion():
    empty = BM25Index.build([])
    assert empty.search("free cash flow", 5, expansion="net cash provided") == []
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)])
    assert index.search("free cash flow", 3, expansion="") == index.search("free cash flow", 3)


def test_document_rates_tell_how_much_of_each_document_holds_a_word():
    index = BM25Index.build([chunk("alpha beta", 1, 0, doc_id="a"), chunk("beta gamma", 1, 0, doc_id="b"),
                             chunk("gamma", 2, 1, doc_id="b"), chunk("delta", 3, 2, doc_id="b"),
                             chunk("beta", 4, 3, doc_id="b")])
    assert index.document_rates(["beta", "omega", ""]) == {"beta": {"a": 1.0, "b": 0.5}, "omega": {}, "": {}}
