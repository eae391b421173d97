"""vector_db.sweep: recovery repairs every kind of damage."""

from __future__ import annotations

import dataclasses
import os
import socket

from tests.helpers.vector_docs import make_doc, words_doc
from vector_db import library as library_mod
from vector_db import sweep
from vector_db.records import chunk_to_metadata

# A lease naming this pid with another start time: the writer that held it has gone (vector_db.lease).
DEAD_WRITER = {"writer": f"{socket.gethostname()}:{os.getpid()}:0", "heartbeat": 0.0}


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
    # the interrupted write and the older copy are recorded as deleted (data directories sharing the store drop
    # their copies); the damaged document is not: it is indexed again from its kept original
    assert {d: why["why"] for d, why in store.deletions().items()} == {half.doc_id: "deleted", old.doc_id: "deleted"}


def test_an_interrupted_write_and_an_older_copy_are_repaired_without_reading_every_chunk(store, client,
                                                                                          monkeypatch):
    # a large library killed mid-write: only that write's chunks are read (the scan of every chunk's metadata,
    # ~90 s at a million chunks, is for damage the records cannot name)
    kept = [store.add_document(words_doc(f"kept{i}.pdf", 4, f"kept{i}")) for i in range(3)]
    half = store.add_document(words_doc("half.pdf", 6, "half"))
    lib = client.get_collection("chunks-library")
    library_mod.put_record(lib, dataclasses.replace(half, status="indexing"), DEAD_WRITER)
    old = store.add_document(make_doc("report.pdf", ["old one", "old two"], doc_id="old"))
    new = store.add_document(make_doc("report.pdf", ["new one"], doc_id="new"))
    scanned, counted = [], []
    real_pages = sweep.pages
    monkeypatch.setattr(sweep, "pages", lambda *a, **k: scanned.append(1) or real_pages(*a, **k))
    collection = type(client.get_collection("chunks"))
    real_count = collection.count
    monkeypatch.setattr(collection, "count", lambda col: counted.append(col.name) or real_count(col))

    messages = store.recover()

    assert scanned == []
    assert counted.count("chunks") == 1  # ~3.5 s at a million chunks: what went is subtracted, not counted again
    assert len(messages) == 2 and "half.pdf" in messages[0] + messages[1]
    assert {d.doc_id for d in store.documents()} == {r.doc_id for r in kept} | {new.doc_id}
    assert client.get_collection("chunks").count() == store.count() == 13
    assert set(store.deletions()) == {half.doc_id, old.doc_id}
    # damage the records cannot name still gets the full scan
    client.get_collection("chunks").delete(ids=[words_doc("kept0.pdf", 4, "kept0").chunks[0].id])
    assert "kept0.pdf: 3 of its 4 chunks" in "\n".join(store.recover())
    assert scanned
