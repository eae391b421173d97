"""vector_db.vector_index: a damaged vector index rebuilt from the stored chunks, an interrupted rebuild finished or
discarded."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from testing import damage  # the cases and the fresh-process steps, shared with bench/damage.py
from tests.helpers.damaged_library import assert_whole, damaged
from tests.helpers.vector_docs import make_doc, words_doc
from vector_db import VectorStore, make_client, vector_index


@pytest.mark.slow
@pytest.mark.parametrize("case", ["hnsw dir deleted", "hnsw level0 truncated", "hnsw links cut"])
def test_a_damaged_vector_index_is_detected_at_open_and_rebuilt_from_the_stored_chunks(base, tmp_path, case):
    data = damaged(base, tmp_path, case)
    run = damage.cli_outcome(data, "search", "topic1 w5", "--strategy", "vector")
    assert run["exit"] == 0 and not run["traceback"], run
    assert "the vector index was damaged" in run["stderr"] and "rebuilt it" in run["stderr"], run
    audit = assert_whole(data)  # every chunk reachable by vector search again
    assert audit["messages"] == []


def test_a_healthy_library_whose_chunks_approximate_search_misses_is_not_rebuilt(tmp_path, fake_embedder):
    """Issue 27: a chunk need not be in its own approximate top 10 (here 280 chunks share one text, as a
    repeated boilerplate page does; in a large library near neighbours do the same), so the probe searches the
    sampled chunks exactly; the open of this healthy library rebuilds nothing."""
    client = make_client(tmp_path)
    texts = ["This page is intentionally left blank."] * 280 + [f"section {i} of the report on w{i}" for i in range(20)]
    store = VectorStore(client, fake_embedder)
    store.add_document(make_doc("a.pdf", texts))
    chunks = client.get_collection("chunks")
    top = chunks.query(query_embeddings=[fake_embedder.embed_query("a.pdf > Intro\n" + texts[0])], n_results=10,
                       include=[])["ids"][0]
    assert len(top) == 10  # so at most 10 of the 280 repeated chunks find themselves by approximate search
    assert [vector_index.probe(chunks, seed=seed) for seed in range(5)] == [""] * 5
    embedded = fake_embedder.texts_embedded
    assert VectorStore(client, fake_embedder).recover() == []
    assert fake_embedder.texts_embedded == embedded  # nothing embedded again


def test_an_interrupted_vector_index_rebuild_is_finished_or_discarded_at_open(tmp_path, fake_embedder):
    """vector_index.rebuild writes a full copy, deletes the damaged collection, renames the copy; a crash
    between the last two steps must not leave the library without its chunks (recovery would drop every
    document as "0 of N chunks stored")."""
    client = make_client(tmp_path)
    doc = words_doc("a.pdf", 5, "alpha")
    VectorStore(client, fake_embedder).add_document(doc)
    old = client.get_collection("chunks")
    got = old.get(include=["embeddings", "documents", "metadatas"])
    copy = client.create_collection("chunks-rebuild", configuration={"hnsw": {"space": "cosine"}},
                                    metadata=old.metadata, embedding_function=None)
    copy.add(ids=got["ids"], embeddings=got["embeddings"], documents=got["documents"], metadatas=got["metadatas"])
    client.create_collection("chunks-rebuild-x", embedding_function=None)  # unrelated names stay
    client.delete_collection("chunks")  # killed here
    store = VectorStore(client, fake_embedder)
    assert store.recover() == ["finished an interrupted rebuild of the vector index"]
    assert store.count() == 5 and store.query(fake_embedder.embed_query(doc.chunks[2].index_text), 1)[0][0] == doc.chunks[2]
    client.create_collection("chunks-rebuild", embedding_function=None)  # killed while still copying
    assert VectorStore(client, fake_embedder).recover() == ["discarded an unfinished rebuild of the vector index"]
    assert "chunks-rebuild" not in {c.name for c in client.list_collections()}


class _Listing:
    """A chunk collection that notes every call listing all of its ids."""

    def __init__(self, col):
        self.col, self.full_listings, self.exact_searched = col, 0, 0

    def get(self, **kwargs):
        self.full_listings += not kwargs.get("ids") and not kwargs.get("where")
        return self.col.get(**kwargs)

    def query(self, **kwargs):
        self.exact_searched += len(kwargs.get("ids") or ())
        return self.col.query(**kwargs)


def test_the_probe_draws_its_sample_through_the_documents_without_listing_every_id(tmp_path, fake_embedder):
    """Listing every id costs ~5 s at a million chunks, on every open; the records say which documents hold how
    many chunks, so the sample is drawn through them, still uniformly over the chunks."""
    store = VectorStore(make_client(tmp_path), fake_embedder)
    records = [store.add_document(words_doc(f"d{i}.pdf", n, f"d{i}")) for i, n in enumerate((5, 40, 120))]
    listing = _Listing(make_client(tmp_path).get_collection("chunks"))
    documents = [(r.doc_id, r.chunks) for r in records]
    assert [vector_index.probe(listing, seed=seed, documents=documents) for seed in range(5)] == [""] * 5
    assert listing.full_listings == 0
    owner = {c.id: c.doc_id for c in store.iter_chunks()}
    drawn = Counter(owner[p] for s in range(40) for p in vector_index._sample(listing, random.Random(s), documents, 8))
    small, middle, large = (drawn[r.doc_id] for r in records)
    assert large > middle > small  # in proportion to their chunks (5 : 40 : 120)
    assert vector_index.probe(listing, seed=1) == "" and listing.full_listings == 1  # without records: as before


def test_only_chunks_a_plain_search_misses_are_searched_for_exactly(tmp_path, fake_embedder):
    """The exact search walks the whole graph (~70 ms a chunk at 100k, ~10x at a million): chunks a plain search
    already finds are not searched for again."""
    store = VectorStore(make_client(tmp_path), fake_embedder)
    store.add_document(words_doc("d.pdf", 60, "d"))
    listing = _Listing(make_client(tmp_path).get_collection("chunks"))
    assert vector_index.probe(listing, seed=3) == ""
    assert listing.exact_searched == 0  # 60 distinct chunks: the plain search finds every sampled one
