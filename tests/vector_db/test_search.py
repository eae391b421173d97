"""vector_db.search: filters match brute force (over-fetch, or `where`)."""

from __future__ import annotations

import pytest

from advanced_retrieval import Filters
from tests.helpers.vector_docs import words_doc


def brute_force(docs, fake_embedder, query, n, allows):
    chunks = [c for d in docs for c in d.chunks if allows(c)]
    scores = [float(fake_embedder.embed_query(c.index_text) @ query) for c in chunks]
    return sorted(scores, reverse=True)[:n]


def spy_on_queries(store, monkeypatch) -> list:
    """The `where` argument of every Chroma query the store makes from now on."""
    store.count()  # open the collections so the spy wraps the one the store uses
    col = store._cols()[0]
    wheres, real = [], col.query
    monkeypatch.setattr(col, "query", lambda **kw: wheres.append(kw.get("where")) or real(**kw))
    return wheres


@pytest.mark.parametrize("filters, paths", [
    (None, [None]),  # one unfiltered query
    (Filters(doc_ids=("id-a.pdf",)), "any"),  # 70% of the chunks: over-fetch, `where` if that falls short
    (Filters(doc_ids=("id-c.pdf",)), ["where"]),  # 3.5%: over-fetching would need too many, so `where`
    (Filters(file_types=("docx",)), "any"),
    (Filters(file_types=("pdf",), doc_ids=("id-c.pdf", "id-b.docx")), ["where"]),
    (Filters(doc_ids=()), []),
    (Filters(file_types=("pptx",)), []),
])
def test_filters_match_brute_force(store, fake_embedder, monkeypatch, filters, paths):
    docs = [words_doc("a.pdf", 80, "alpha"), words_doc("b.docx", 30, "beta", "docx"), words_doc("c.pdf", 4, "gamma")]
    for doc in docs:
        store.add_document(doc)
    wheres = spy_on_queries(store, monkeypatch)
    query = fake_embedder.embed_query("beta gamma note w3")
    hits = store.query(query, 5, filters)
    allows = filters.allows if filters else (lambda c: True)
    assert all(allows(c) for c, _s in hits)
    assert [s for _c, s in hits] == pytest.approx(brute_force(docs, fake_embedder, query, 5, allows), abs=1e-5)
    if paths != "any":
        assert [w if w is None else "where" for w in wheres] == paths


def test_over_fetch_shortfall_falls_back_to_where(store, fake_embedder, monkeypatch):
    store.add_document(words_doc("a.pdf", 60, "apple"))
    store.add_document(words_doc("b.pdf", 40, "zebra"))
    wheres = spy_on_queries(store, monkeypatch)
    hits = store.query(fake_embedder.embed_query("zebra zebra note"), 10, Filters(doc_ids=("id-a.pdf",)))
    assert len(hits) == 10 and {c.doc_id for c, _s in hits} == {"id-a.pdf"}
    assert wheres == [None, {"doc_id": {"$eq": "id-a.pdf"}}]
