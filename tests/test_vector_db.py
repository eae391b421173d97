"""vector_db: the Chroma-backed VectorStore, its library records, recovery, and server mode (real `chroma run`)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from advanced_retrieval import Filters
from document_processor import Chunk, Location, ParsedDocument, chunk_id
from testing.chroma_server import CHROMA, ChromaServer
from vector_db import DocumentRecord, HashingEmbedder, StoreError, VectorStore, client_from_env, make_client
from vector_db import library as library_mod
from vector_db.records import chunk_from_stored, chunk_to_metadata, record_from_metadata, record_to_metadata

REPO = Path(__file__).resolve().parents[1]


def make_doc(name: str, texts: list[str], file_type: str = "pdf", doc_id: str | None = None,
             locations: list[Location] | None = None) -> ParsedDocument:
    """A ParsedDocument whose chunk i has texts[i], page i//2+1 unless `locations` says otherwise."""
    doc_id = doc_id or f"id-{name}"
    chunks = []
    for i, text in enumerate(texts):
        loc = locations[i] if locations else Location(page=i // 2 + 1)
        chunks.append(Chunk(chunk_id(doc_id, loc, i, text), doc_id, name, file_type, text, loc,
                            ("Intro", f"Part {i}"), i, f"{name} > Intro"))
    return ParsedDocument(doc_id, name, file_type, 1234, name.title(), "pages", len(texts) // 2 + 1, tuple(chunks))


def words_doc(name: str, n: int, topic: str, file_type: str = "pdf") -> ParsedDocument:
    return make_doc(name, [f"{topic} note {i} {topic} w{i % 5}" for i in range(n)], file_type)


@pytest.fixture
def client(tmp_path):
    return make_client(tmp_path)


@pytest.fixture
def store(client, fake_embedder):
    return VectorStore(client, fake_embedder)


class FailingEmbedder:
    """The fake embedder, raising `error` on call number `fail_on` (1-based)."""

    def __init__(self, inner, fail_on: int, error: BaseException):
        self.inner, self.fail_on, self.error, self.calls = inner, fail_on, error, 0
        self.dim, self.name = inner.dim, inner.name

    def embed(self, texts, progress=None):
        self.calls += 1
        if self.calls == self.fail_on:
            raise self.error
        return self.inner.embed(texts, progress)

    def embed_query(self, text):
        return self.inner.embed_query(text)


# ---- round trip, add, read ----------------------------------------------------------------------------------------

def test_chunk_metadata_round_trip_is_exact():
    locations = [Location(page=3), Location(slide=2), Location(sheet="Revenue", cells="A1:F40"),
                 Location(sheet="Only"), Location(paragraph=12), Location(lines=(10, 24)), Location()]
    for loc in locations:
        chunk = Chunk("cid", "doc", "f.xlsx", "xlsx", "text ünï 東京", loc, ("A > B", "x\x1fy", ""), 7, "")
        assert chunk_from_stored("cid", chunk.text, chunk_to_metadata(chunk)) == chunk


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
    assert calls == [("embedding", 4, 10), ("embedding", 8, 10), ("embedding", 10, 10)]


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


# ---- delete, clear, generation --------------------------------------------------------------------------------------

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


def test_another_store_on_the_same_client_sees_writes(client, fake_embedder):
    writer, reader = VectorStore(client, fake_embedder), VectorStore(client, fake_embedder)
    assert reader.count() == 0  # fills the reader's record cache
    writer.add_document(words_doc("a.pdf", 4, "alpha"))
    assert reader.count() == 4 and [r.file_name for r in reader.documents()] == ["a.pdf"]
    writer.clear()
    assert reader.count() == 0 and reader.query(np.eye(384, dtype=np.float32)[0], 3) == []


# ---- filters ---------------------------------------------------------------------------------------------------------

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


# A lease naming this pid with another start time: the writer that held it has gone (vector_db.lease).
DEAD_WRITER = {"writer": f"{socket.gethostname()}:{os.getpid()}:0", "heartbeat": 0.0}


# ---- recovery and restart --------------------------------------------------------------------------------------------

def test_recover_repairs_every_kind_of_damage(store, client, fake_embedder):
    ok = store.add_document(words_doc("ok.pdf", 4, "okay"))
    half = store.add_document(words_doc("half.pdf", 6, "half"))
    lib = client.get_collection("chunks-library")
    library_mod.put_record(lib, dataclasses.replace(half, status="indexing"), DEAD_WRITER)  # as if killed mid-add
    ghost = words_doc("ghost.pdf", 3, "ghost")
    client.get_collection("chunks").upsert(
        ids=[c.id for c in ghost.chunks], embeddings=fake_embedder.embed([c.text for c in ghost.chunks]),
        documents=[c.text for c in ghost.chunks], metadatas=[chunk_to_metadata(c) for c in ghost.chunks])
    old = store.add_document(make_doc("report.pdf", ["old one", "old two"], doc_id="old"))
    new = store.add_document(make_doc("report.pdf", ["new one"], doc_id="new"))
    assert new.added_at > old.added_at
    damaged = store.add_document(words_doc("damaged.pdf", 5, "dmg"))
    client.get_collection("chunks").delete(ids=[words_doc("damaged.pdf", 5, "dmg").chunks[0].id])

    before = store.generation()
    messages = store.recover()
    text = "\n".join(messages)
    assert len(messages) == 4
    assert "half.pdf" in text and "interrupted" in text
    assert "older copy of report.pdf" in text
    assert "damaged.pdf: 4 of its 5 chunks" in text
    assert "removed 3 chunks left by 1 document(s)" in text
    assert store.documents() == sorted([ok, new], key=lambda r: r.file_name)
    assert store.get_document(half.doc_id) is None and store.get_document(damaged.doc_id) is None
    assert client.get_collection("chunks").count() == store.count() == 5
    assert {c.doc_id for c in store.iter_chunks()} == {ok.doc_id, new.doc_id}
    assert store.generation() != before
    assert store.recover() == []


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


# ---- configuration ---------------------------------------------------------------------------------------------------

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


def test_client_from_env(tmp_path):
    embedded = client_from_env(tmp_path, {})
    assert (tmp_path / "chroma").is_dir() and embedded.heartbeat() > 0
    with pytest.raises(ValueError, match="CHROMA_PORT"):
        client_from_env(tmp_path, {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": "80a"})
    with pytest.raises(ValueError, match="CHROMA_SSL"):
        client_from_env(tmp_path, {"CHROMA_HOST": "127.0.0.1", "CHROMA_SSL": "maybe"})
    with pytest.raises(ValueError, match="port"):
        make_client(tmp_path, host="127.0.0.1", port=70000)


def test_record_round_trip():
    record = DocumentRecord("d", "f.pdf", "pdf", 10, "", "pages", 3, 9, 1.5, "indexing")
    assert record_from_metadata(record_to_metadata(record)) == record


# ---- server mode -----------------------------------------------------------------------------------------------------

@pytest.fixture
def chroma_server(tmp_path):
    if not CHROMA.exists():
        pytest.skip("the chroma command is not installed next to this Python")
    server = ChromaServer(tmp_path / "server-data")
    server.start()
    yield server
    server.stop()


@pytest.mark.server
def test_server_add_query_delete_clear(chroma_server, fake_embedder, tmp_path):
    client = client_from_env(tmp_path, {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(chroma_server.port)})
    store = VectorStore(client, fake_embedder, batch_size=4)
    assert store.where == f"http://127.0.0.1:{chroma_server.port}"
    a, b = words_doc("a.pdf", 9, "alpha"), words_doc("b.docx", 3, "beta", "docx")
    store.add_document(a)
    store.add_document(b)
    assert store.count() == 12 and [r.file_name for r in store.documents()] == ["a.pdf", "b.docx"]
    hits = store.query(fake_embedder.embed_query(b.chunks[1].index_text), 3, Filters(file_types=("docx",)))
    assert hits[0][0] == b.chunks[1] and {c.doc_id for c, _s in hits} == {b.doc_id}
    assert store.get_chunks([a.chunks[0].id]) == [a.chunks[0]]
    assert store.delete_document(a.doc_id) == 9 and store.count() == 3
    store.clear()
    assert store.count() == 0 and store.query(fake_embedder.embed_query("beta"), 3) == []
    assert store.recover() == []


@pytest.mark.server
def test_server_outage_is_a_store_error_and_the_store_recovers(chroma_server, fake_embedder):
    store = VectorStore(make_client(chroma_server.path, host="127.0.0.1", port=chroma_server.port), fake_embedder)
    doc = words_doc("a.pdf", 5, "alpha")
    store.add_document(doc)
    chroma_server.stop()
    where = f"cannot reach Chroma at http://127.0.0.1:{chroma_server.port}: "
    with pytest.raises(StoreError, match=where):
        store.count()
    with pytest.raises(StoreError, match=where):
        store.query(fake_embedder.embed_query("alpha"), 3)
    with pytest.raises(StoreError, match=where):
        store.add_document(words_doc("b.pdf", 2, "beta"))
    with pytest.raises(StoreError, match=where):
        list(store.iter_chunks())
    with pytest.raises(StoreError, match=where):
        make_client(chroma_server.path, host="127.0.0.1", port=chroma_server.port)
    chroma_server.start()
    assert store.count() == 5 and store.get_chunks([doc.chunks[0].id]) == [doc.chunks[0]]
    assert store.add_document(words_doc("b.pdf", 2, "beta")).status == "ready" and store.count() == 7



def test_an_embedded_directory_has_one_writing_process(tmp_path, fake_embedder):
    """Stores of this process share the claim; another process opens read-only until every store here closed."""
    first = VectorStore(make_client(tmp_path), fake_embedder)
    second = VectorStore(make_client(tmp_path), fake_embedder)
    assert first.read_only_reason == second.read_only_reason == ""
    first.add_document(words_doc("a.pdf", 3, "alpha"))
    probe = ("import sys, json; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']\n"
             "from vector_db import HashingEmbedder\n"
             "from test_vector_db import words_doc\n"
             "from vector_db import StoreError, VectorStore, make_client\n"
             "store = VectorStore(make_client(sys.argv[2]), HashingEmbedder())\n"
             "try:\n    store.add_document(words_doc('b.pdf', 3, 'beta')); refused = ''\n"
             "except StoreError as e:\n    refused = str(e)\n"
             "print(json.dumps({'reason': store.read_only_reason, 'refused': refused, 'recover': store.recover(),\n"
             "                  'docs': [d.file_name for d in store.documents()]}))\n")

    def other_process() -> dict:
        run = subprocess.run([sys.executable, "-c", probe, str(REPO), str(tmp_path)], capture_output=True, text=True,
                             timeout=120, cwd=REPO)
        assert run.returncode == 0, run.stderr[-1500:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    seen = other_process()
    assert f"pid {os.getpid()}" in seen["reason"] and seen["refused"] == seen["reason"]
    assert seen["docs"] == ["a.pdf"] and seen["recover"] == []  # it reads; it repairs nothing
    first.close()
    assert other_process()["reason"]  # `second` still holds the claim for this process
    second.close()
    second.close()  # idempotent
    seen = other_process()
    assert seen["reason"] == seen["refused"] == "" and sorted(seen["docs"]) == ["a.pdf", "b.pdf"]


def test_document_chunks_are_every_chunk_of_one_ready_document_in_order(store, client):
    store.add_document(words_doc("a.pdf", 7, "alpha"))
    store.add_document(words_doc("b.pdf", 3, "beta"))
    doc_a = next(d for d in store.documents() if d.file_name == "a.pdf")
    chunks = store.document_chunks(doc_a.doc_id)
    assert [c.ordinal for c in chunks] == sorted(c.ordinal for c in chunks) and len(chunks) == 7
    assert {c.file_name for c in chunks} == {"a.pdf"}
    assert store.document_chunks("no-such-doc") == []


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


# ---- the hashing embedder (the one fake embedder) ---------------------------------------------------------------

def test_hashing_embedder_is_deterministic_normalised_and_handles_empty():
    emb = HashingEmbedder()
    calls = []
    vectors = emb.embed(["alpha beta", "alpha beta", "gamma", ""], progress=lambda d, t: calls.append((d, t)))
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(vectors[0], vectors[1]) and calls == [(4, 4)]
    query = emb.embed_query("alpha")
    assert query.shape == (384,)
    assert float(vectors[0] @ query) > float(vectors[2] @ query)
    assert emb.embed([]).shape == (0, 384)
