"""vector_db.store: the Chroma-backed VectorStore (add, read, query, delete, clear, generation, batches, failures,
configuration)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from advanced_retrieval import Filters
from document_processor import Location, ParsedDocument
from tests.helpers.paths import REPO
from tests.helpers.vector_docs import FailingEmbedder, make_doc, words_doc
from vector_db import StoreError, VectorStore, make_client
from vector_db import library as library_mod


def test_round_trip_through_chroma(store):
    locs = [Location(page=1), Location(slide=4), Location(sheet="S", cells="B2:C3"), Location(paragraph=5),
            Location(lines=(1, 9))]
    doc = make_doc("mixed.docx", [f"text {i} with ünicode ✓" for i in range(5)], "docx", locations=locs)
    record = store.add_document(doc)
    assert record.status == "ready" and record.chunks == 5 and record.file_name == "mixed.docx"
    assert record.title == "Mixed.Docx" and record.size_bytes == 1234 and record.unit_name == "pages"
    ids = [c.id for c in doc.chunks]
    assert store.get_chunks(ids) == list(doc.chunks)
    assert store.get_chunks(ids[::-1] + ["missing"]) == list(doc.chunks)[::-1]
    assert sorted(store.iter_chunks(batch=2), key=lambda c: c.ordinal) == list(doc.chunks)
    assert sorted(store.chunk_ids()) == sorted(ids)
    assert store.count() == 5 and store.documents() == [record] and store.get_document(doc.doc_id) == record
    assert store.find_by_name("mixed.docx") == [record] and store.find_by_name("other") == []


def test_query_returns_cosine_similarity_best_first(store, fake_embedder):
    doc = words_doc("a.pdf", 12, "alpha")
    store.add_document(doc)
    target = doc.chunks[3]
    hits = store.query(fake_embedder.embed_query(target.index_text), 4)
    assert hits[0][0] == target
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    scores = [s for _c, s in hits]
    assert scores == sorted(scores, reverse=True) and len(hits) == 4
    expected = [float(fake_embedder.embed_query(c.index_text) @ fake_embedder.embed_query(target.index_text))
                for c, _s in hits]
    assert scores == pytest.approx(expected, abs=1e-5)


def test_empty_store_returns_empty_everything(store, fake_embedder):
    assert store.query(fake_embedder.embed_query("anything"), 5) == []
    assert store.query(fake_embedder.embed_query("anything"), 5, Filters(doc_ids=("x",))) == []
    assert store.documents() == [] and store.count() == 0 and store.chunk_ids() == []
    assert list(store.iter_chunks()) == [] and store.get_chunks([]) == [] and store.get_chunks(["nope"]) == []
    assert store.get_document("x") is None and store.delete_document("x") == 0
    assert store.recover() == [] and store.generation() == 0


def test_query_zero_n_and_wrong_dimension(store, fake_embedder):
    store.add_document(words_doc("a.pdf", 3, "alpha"))
    assert store.query(fake_embedder.embed_query("alpha"), 0) == []
    with pytest.raises(ValueError, match="384"):
        store.query(np.ones(10, dtype=np.float32), 3)


def test_empty_document_is_recorded_with_no_chunks(store):
    record = store.add_document(ParsedDocument("empty", "empty.txt", "txt", 0, "", "lines", 0, ()))
    assert record.chunks == 0 and store.documents() == [record] and store.count() == 0


def test_add_is_idempotent_and_does_not_re_embed(store, fake_embedder, client):
    doc = words_doc("a.pdf", 10, "alpha")
    first = store.add_document(doc)
    embedded, generation = fake_embedder.texts_embedded, store.generation()
    again = store.add_document(doc)
    assert again == first and fake_embedder.texts_embedded == embedded and store.generation() == generation
    assert store.count() == 10 and client.get_collection("chunks").count() == 10


def test_add_rewrites_a_document_whose_chunks_went_missing(store, client):
    doc = words_doc("a.pdf", 6, "alpha")
    store.add_document(doc)
    client.get_collection("chunks").delete(ids=[doc.chunks[0].id])
    store.add_document(doc)
    assert sorted(store.chunk_ids()) == sorted(c.id for c in doc.chunks)


def test_re_adding_with_different_chunking_replaces_the_old_chunks(store, fake_embedder):
    first = make_doc("a.pdf", ["one", "two", "three"])
    second = make_doc("a.pdf", ["one two", "three four"])  # same doc_id, new chunk ids
    store.add_document(first)
    assert store.add_document(second).chunks == 2
    assert sorted(store.chunk_ids()) == sorted(c.id for c in second.chunks) and store.recover() == []


def test_duplicate_chunk_ids_are_stored_once(store):
    doc = words_doc("a.pdf", 4, "alpha")
    doubled = dataclasses.replace(doc, chunks=doc.chunks + doc.chunks[:2])
    assert store.add_document(doubled).chunks == 4 and store.count() == 4


def test_progress_reports_embedding_up_to_total(client, fake_embedder):
    store = VectorStore(client, fake_embedder, batch_size=4)
    calls = []
    store.add_document(words_doc("a.pdf", 10, "alpha"), progress=lambda *a: calls.append(a))
    assert calls == [("embedding", 0, 10), ("embedding", 4, 10), ("embedding", 8, 10), ("embedding", 10, 10)]


def test_document_larger_than_chromas_max_batch(client, fake_embedder):
    max_batch = client.get_max_batch_size()
    doc = make_doc("huge.pdf", [f"w{i} w{i % 97}" for i in range(max_batch + 50)])
    store = VectorStore(client, fake_embedder)
    assert store.add_document(doc).chunks == max_batch + 50
    assert fake_embedder.calls == 2  # embedded and written batch by batch
    assert store.count() == max_batch + 50 == len(store.chunk_ids())
    assert sum(1 for _ in store.iter_chunks()) == max_batch + 50
    assert len(store.get_chunks([c.id for c in doc.chunks])) == max_batch + 50
    assert store.delete_document(doc.doc_id) == max_batch + 50


def test_small_batches_are_respected(client, fake_embedder):
    store = VectorStore(client, fake_embedder, batch_size=7)
    store.add_document(words_doc("a.pdf", 30, "alpha"))
    assert fake_embedder.calls == 5 and store.count() == 30


@pytest.mark.parametrize("error", [RuntimeError("embedder broke"), KeyboardInterrupt()])
def test_failure_mid_add_leaves_nothing(client, fake_embedder, error):
    store = VectorStore(client, FailingEmbedder(fake_embedder, 3, error), batch_size=5)
    store.add_document(words_doc("keep.pdf", 3, "keep"))  # call 1
    with pytest.raises(type(error)):
        store.add_document(words_doc("broken.pdf", 12, "broken"))  # call 2 is written, call 3 fails
    assert [r.file_name for r in store.documents()] == ["keep.pdf"]
    assert store.get_document("id-broken.pdf") is None
    assert client.get_collection("chunks").count() == 3 == store.count()
    assert all(c.file_name == "keep.pdf" for c, _s in store.query(fake_embedder.embed_query("broken note"), 10))


def test_wrong_embedding_shape_is_a_store_error(client, fake_embedder):
    class Short(FailingEmbedder):
        def embed(self, texts, progress=None):
            return self.inner.embed(texts)[:1]

    store = VectorStore(client, Short(fake_embedder, 0, RuntimeError()))
    with pytest.raises(StoreError, match="returned shape"):
        store.add_document(words_doc("a.pdf", 3, "alpha"))
    assert store.get_document("id-a.pdf") is None and client.get_collection("chunks").count() == 0


def test_delete_leaves_nothing_searchable(store, fake_embedder, client):
    a, b = words_doc("a.pdf", 8, "alpha"), words_doc("b.pdf", 5, "beta")
    store.add_document(a)
    store.add_document(b)
    assert store.delete_document(a.doc_id) == 8
    assert store.delete_document(a.doc_id) == 0
    assert store.get_document(a.doc_id) is None and store.get_chunks([c.id for c in a.chunks]) == []
    assert {c.doc_id for c, _s in store.query(fake_embedder.embed_query("alpha note"), 20)} == {b.doc_id}
    assert store.count() == 5 and client.get_collection("chunks").count() == 5


def test_clear_leaves_nothing_and_store_stays_usable(store, fake_embedder, client):
    store.add_document(words_doc("a.pdf", 8, "alpha"))
    store.add_document(words_doc("b.pdf", 5, "beta"))
    store.clear()
    assert store.documents() == [] and store.count() == 0 and store.chunk_ids() == []
    assert store.query(fake_embedder.embed_query("alpha note"), 5) == []
    assert client.get_collection("chunks").count() == 0
    store.add_document(words_doc("c.pdf", 2, "gamma"))
    assert store.count() == 2


def test_delete_and_clear_record_what_they_removed(store):
    a, b, c = (words_doc(f"{n}.pdf", 3, n) for n in ("a", "b", "c"))
    for doc in (a, b, c):
        store.add_document(doc)
    assert store.deletions() == {}
    store.delete_document(a.doc_id)
    store.delete_document("never-stored")  # nothing removed: nothing recorded
    store.clear()
    gone = store.deletions()
    assert {d: why["why"] for d, why in gone.items()} == {a.doc_id: "deleted", b.doc_id: "cleared",
                                                          c.doc_id: "cleared"}
    assert all("process" in why["by"] and why["at"] > 0 for why in gone.values())


def test_an_embedded_store_is_not_shared_and_keeps_no_originals(store):
    assert store.shared is False and store.original("x" * 64) is None and store.stored_originals() == {}
    with pytest.raises(StoreError, match="not shared"):
        store.keep_original("x" * 64, "a.pdf", ".pdf", b"%PDF")


def test_generation_moves_on_every_completed_write_only(store):
    seen = [store.generation()]
    doc = words_doc("a.pdf", 3, "alpha")
    store.add_document(doc)
    seen.append(store.generation())
    store.documents()
    store.query(np.eye(384, dtype=np.float32)[0], 2)
    assert store.generation() == seen[-1]
    store.delete_document(doc.doc_id)
    seen.append(store.generation())
    store.add_document(doc)
    store.clear()
    seen.append(store.generation())
    assert seen == sorted(seen) and len(set(seen)) == len(seen)


def test_the_writing_process_reads_the_generation_again_only_after_a_write(store, client, fake_embedder,
                                                                            monkeypatch):
    """Only the owner of an embedded directory writes it, and every generation write counts itself: a question
    need not ask Chroma for a value nothing changed (a get, ~1 ms alone and ~4 ms of a question)."""
    store.add_document(words_doc("a.pdf", 3, "alpha"))
    reads = []
    real = library_mod.read_generation
    monkeypatch.setattr(library_mod, "read_generation", lambda lib: reads.append(1) or real(lib))
    before = store.generation()
    reads.clear()
    assert store.generation() == before and store.count() == 3 and reads == []
    VectorStore(client, fake_embedder).add_document(words_doc("b.pdf", 2, "beta"))  # another store of this process
    assert store.generation() != before and reads and store.count() == 5
    library_mod.bump_generation(client.get_collection("chunks-library"))  # a write below the store, as recover's
    moved = store.generation()
    assert moved > before and store.generation() == moved


def test_another_store_on_the_same_client_sees_writes(client, fake_embedder):
    writer, reader = VectorStore(client, fake_embedder), VectorStore(client, fake_embedder)
    assert reader.count() == 0  # fills the reader's record cache
    writer.add_document(words_doc("a.pdf", 4, "alpha"))
    assert reader.count() == 4 and [r.file_name for r in reader.documents()] == ["a.pdf"]
    writer.clear()
    assert reader.count() == 0 and reader.query(np.eye(384, dtype=np.float32)[0], 3) == []


def test_chunks_of_a_document_still_indexing_are_invisible(store, client, fake_embedder):
    doc = words_doc("busy.pdf", 4, "busy")
    record = store.add_document(doc)
    library_mod.put_record(client.get_collection("chunks-library"), dataclasses.replace(record, status="indexing"))
    library_mod.bump_generation(client.get_collection("chunks-library"))
    assert store.count() == 0 and store.chunk_ids() == [] and list(store.iter_chunks()) == []
    assert store.get_chunks([c.id for c in doc.chunks]) == []
    assert store.query(fake_embedder.embed_query("busy note"), 3) == []
    assert store.get_document(doc.doc_id).status == "indexing"


_READER = """
import json, sys
sys.path[:0] = [{repo!r}, {tests!r}]
from pathlib import Path
from vector_db import HashingEmbedder
from vector_db import VectorStore, make_client
store = VectorStore(make_client(Path({data!r})), HashingEmbedder())
print(json.dumps({{"docs": [r.file_name for r in store.documents()], "count": store.count(),
                  "ids": sorted(store.chunk_ids()), "generation": store.generation()}}))
"""


def read_in_new_process(data_dir: Path) -> dict:
    code = _READER.format(repo=str(REPO), tests=str(REPO / "tests"), data=str(data_dir))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_new_process_sees_the_same_library(tmp_path, fake_embedder):
    store = VectorStore(make_client(tmp_path), fake_embedder)
    a, b = words_doc("a.pdf", 7, "alpha"), words_doc("b.docx", 3, "beta", "docx")
    store.add_document(a)
    store.add_document(b)
    store.delete_document(b.doc_id)
    seen = read_in_new_process(tmp_path)
    assert seen == {"docs": ["a.pdf"], "count": 7, "ids": sorted(c.id for c in a.chunks),
                    "generation": store.generation()}


def test_changing_the_embedder_of_a_filled_store_is_refused(client, fake_embedder):
    VectorStore(client, fake_embedder).add_document(words_doc("a.pdf", 2, "alpha"))

    other = FailingEmbedder(fake_embedder, 0, RuntimeError())
    other.name = "other-model"
    with pytest.raises(StoreError, match="holds vectors from hashing-384, not other-model"):
        VectorStore(client, other).count()


@pytest.mark.parametrize("kwargs, message", [
    ({"collection": "x"}, "collection"), ({"collection": "bad name!"}, "collection"),
    ({"batch_size": 0}, "batch_size"),
])
def test_bad_configuration_is_a_value_error(client, fake_embedder, kwargs, message):
    with pytest.raises(ValueError, match=message):
        VectorStore(client, fake_embedder, **kwargs)


def test_iter_chunks_rejects_bad_batch(store):
    with pytest.raises(ValueError, match="batch"):
        list(store.iter_chunks(batch=0))


def test_separate_collections_do_not_mix(client, fake_embedder):
    one, two = VectorStore(client, fake_embedder), VectorStore(client, fake_embedder, collection="other")
    one.add_document(words_doc("a.pdf", 3, "alpha"))
    assert two.count() == 0 and two.documents() == [] and one.count() == 3


def test_document_chunks_are_every_chunk_of_one_ready_document_in_order(store, client):
    store.add_document(words_doc("a.pdf", 7, "alpha"))
    store.add_document(words_doc("b.pdf", 3, "beta"))
    doc_a = next(d for d in store.documents() if d.file_name == "a.pdf")
    chunks = store.document_chunks(doc_a.doc_id)
    assert [c.ordinal for c in chunks] == sorted(c.ordinal for c in chunks) and len(chunks) == 7
    assert {c.file_name for c in chunks} == {"a.pdf"}
    assert store.document_chunks("no-such-doc") == []
