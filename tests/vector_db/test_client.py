"""vector_db.client: the client from the environment, and server mode (a real `chroma run`): add, query, delete, clear,
other processes writing live, an outage."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from advanced_retrieval import Filters
from agentic_rag import OfflineBrain, build_agent
from testing import crash  # the kill-and-restart steps, shared with bench/crash.py
from tests.helpers.library import assert_sound, open_kb, text_doc
from tests.helpers.vector_docs import words_doc
from vector_db import StoreError, VectorStore, client_from_env, make_client


def test_client_from_env(tmp_path):
    embedded = client_from_env(tmp_path, {})
    assert (tmp_path / "chroma").is_dir() and embedded.heartbeat() > 0
    with pytest.raises(ValueError, match="CHROMA_PORT"):
        client_from_env(tmp_path, {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": "80a"})
    with pytest.raises(ValueError, match="CHROMA_SSL"):
        client_from_env(tmp_path, {"CHROMA_HOST": "127.0.0.1", "CHROMA_SSL": "maybe"})
    with pytest.raises(ValueError, match="port"):
        make_client(tmp_path, host="127.0.0.1", port=70000)


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


@pytest.mark.server
@pytest.mark.slow
def test_server_mode_processes_share_live_and_an_outage_is_a_clear_error_then_recovers(
        chroma_server, tmp_path, fake_embedder, monkeypatch):
    env = {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(chroma_server.port)}
    data = tmp_path / "data"
    kb = open_kb(data, fake_embedder, **env)
    agent = build_agent(OfflineBrain(fake_embedder), kb.retriever, embedder=fake_embedder)
    folder = tmp_path / "batch"
    folder.mkdir()
    for i in range(4):
        name, body = text_doc(i, "meadow")
        (folder / name).write_bytes(body)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    writer = subprocess.Popen(crash.worker_command(data, folder, "fake", isolate=False), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    while writer.poll() is None:  # questions while another process writes
        agent.ask("What does the meadow report say?")
        time.sleep(0.05)
    assert writer.returncode == 0, writer.stderr.read()[-1500:]
    hits = kb.retriever.retrieve("meadow report part", k=50, strategy="vector")  # live: no restart needed
    assert {h.chunk.file_name for h in hits} == {f.name for f in folder.iterdir()}
    assert_sound(kb, {f.name for f in folder.iterdir()})

    chroma_server.stop()
    where = f"cannot reach Chroma at http://127.0.0.1:{chroma_server.port}"
    with pytest.raises(StoreError, match=where):
        kb.retriever.retrieve("meadow", k=3)
    failed = kb.ingest_bytes(b"Copper lanterns light the summit.", "copper.txt")
    assert failed.status == "failed" and failed.kind == "store" and where in failed.reason
    chroma_server.start()
    assert kb.ingest_bytes(b"Copper lanterns light the summit.", "copper.txt").status == "indexed"
    assert_sound(kb, {f.name for f in folder.iterdir()} | {"copper.txt"})
    assert agent.ask("What lights the summit?").citations[0].file == "copper.txt"
