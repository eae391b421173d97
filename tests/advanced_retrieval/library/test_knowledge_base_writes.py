"""Writes that must not lose or hide data (issue 16, items 1, 3, 4, 5, 13): a disk that fills during the BM25
save, recovery in another process while a document is being embedded, two programs uploading one name at once
through a Chroma server, readers opening while a writer works, and one name in two Unicode forms.

Overlaps are made deterministic with a gated embedder (a fake that waits on an event before a chosen batch),
not with sleeps; nothing here asserts a duration."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import unicodedata
from pathlib import Path

import pytest

from advanced_retrieval import KnowledgeBase
from testing.chroma_server import ChromaServer
from tests.helpers.library import kb_on
from tests.helpers.paths import REPO
from vector_db import HashingEmbedder, client_from_env, make_client

WAIT = 60  # seconds any step may block before the test fails instead of hanging


class GatedEmbedder(HashingEmbedder):
    """The hashing embedder, pausing before its `gate_call`-th embed call until `go` is set (`paused` tells the
    test it got there)."""

    def __init__(self, gate_call: int):
        super().__init__()
        self.gate_call, self.paused, self.go = gate_call, threading.Event(), threading.Event()

    def embed(self, texts, progress=None):
        if self.calls + 1 == self.gate_call:
            self.paused.set()
            if not self.go.wait(WAIT):
                raise TimeoutError("the test never opened the gate")
        return super().embed(texts, progress)


def text(n: int, topic: str) -> bytes:
    return "\n\n".join(f"{topic} paragraph {i}. " + " ".join(f"{topic}{(i * 3 + k) % 41}" for k in range(40))
                       for i in range(n)).encode()


def in_thread(fn) -> tuple[threading.Thread, dict]:
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # handed to the test, which asserts on it
            out["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def finish(thread: threading.Thread, out: dict):
    thread.join(WAIT)
    assert not thread.is_alive(), "a write hung"
    if "error" in out:
        raise out["error"]
    return out["value"]


_DISK_FULL = """
import json, resource, signal, sys
sys.path[:0] = [{repo!r}, {tests!r}]
from pathlib import Path
from vector_db import HashingEmbedder
from wiring import open_knowledge_base

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead of killing us
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
kb = open_knowledge_base(Path({data!r}), embedder=HashingEmbedder(), isolate=False)
body = Path({body!r}).read_bytes()
seen = {{"repairs": kb.recovery_messages}}
if {fill!r}:
    kb.ingest_bytes(b"Harbour cranes unload copper.", "first.txt")

    def fill_the_disk(name, stage, done, total):
        if stage == "indexing" and done == 0:  # the chunks are in Chroma; the BM25 save comes next
            resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))

    failed = kb.ingest_bytes(body, "second.txt", progress=fill_the_disk)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    seen.update(failed=[failed.status, failed.reason], original=str(kb.original_path(failed.doc_id)))
seen["listed"] = [d.file_name for d in kb.documents()]
retry = kb.ingest_bytes(body, "second.txt")
seen.update(retry=[retry.status, retry.reason], after=[d.file_name for d in kb.documents()],
            consistent=kb.check()["consistent"])
print(json.dumps(seen))
"""


@pytest.mark.slow
def test_a_disk_that_fills_during_the_bm25_save_leaves_the_library_as_before_with_the_first_error(tmp_path):
    """The disk "fills" (RLIMIT_FSIZE in a child process) once the chunks are in Chroma: the BM25 save fails,
    and so does the rollback's delete in Chroma. Then a new process (the user starting again) retries."""
    (tmp_path / "body.txt").write_bytes(text(30, "glacier"))

    def child(fill: bool) -> dict:
        code = _DISK_FULL.format(repo=str(REPO), tests=str(REPO / "tests"), data=str(tmp_path / "data"),
                                 body=str(tmp_path / "body.txt"), fill=fill)
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=REPO)
        assert run.returncode == 0, run.stderr[-2000:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    seen = child(fill=True)
    status, reason = seen["failed"]
    assert status == "failed" and "could not save the keyword index" in reason, seen  # the first error, not
    assert "disk I/O error" not in reason, seen  # the rollback's (Chroma's delete failed too)
    assert seen["listed"] == ["first.txt"] and seen["original"] == "None", seen  # as if never uploaded
    assert seen["retry"][0] == "failed" and "start the program again" in seen["retry"][1], seen  # not "duplicate"
    again = child(fill=False)
    assert again["listed"] == ["first.txt"] and again["retry"][0] == "indexed", again
    assert again["after"] == ["first.txt", "second.txt"] and again["consistent"], again


def test_opening_listing_and_searching_do_not_wait_for_a_write_in_progress(tmp_path):
    data = tmp_path / "data"
    writer_embedder = GatedEmbedder(gate_call=2)
    writer = kb_on(make_client(data), data, writer_embedder)
    writer.ingest_bytes(text(6, "harbour"), "harbour.txt")
    thread, out = in_thread(lambda: writer.ingest_bytes(text(40, "glacier"), "glacier.txt"))
    assert writer_embedder.paused.wait(WAIT)  # the writer holds the write lock, mid-embedding
    try:
        # a short lock timeout: waiting for the writer would raise LockTimeout instead of hanging the test
        reader = kb_on(make_client(data), data, HashingEmbedder(), lock_timeout=0.5)
        assert [d.file_name for d in reader.documents()] == ["harbour.txt"]
        assert reader.retriever.retrieve("harbour paragraph", k=3)[0].chunk.file_name == "harbour.txt"
        assert reader.recovery_messages == []  # the writer's record "indexing" is not damage
    finally:
        writer_embedder.go.set()
    assert finish(thread, out).status == "indexed"
    assert [d.file_name for d in reader.documents()] == ["glacier.txt", "harbour.txt"]
    assert reader.retriever.retrieve("glacier paragraph", k=3)[0].chunk.file_name == "glacier.txt"
    assert reader.check()["consistent"]


def test_a_name_uploaded_in_nfc_then_nfd_is_one_document_replaced(tmp_path):
    kb = kb_on(make_client(tmp_path / "data"), tmp_path / "data", HashingEmbedder())
    nfc, nfd = unicodedata.normalize("NFC", "café.txt"), unicodedata.normalize("NFD", "café.txt")
    assert nfc != nfd
    assert kb.ingest_bytes(b"The cafe opens at seven.", nfc).status == "indexed"
    second = kb.ingest_bytes(b"The cafe opens at eight.", nfd)
    assert second.status == "replaced" and second.file_name == nfc
    assert [d.file_name for d in kb.documents()] == [nfc] and kb.find(nfd) is not None
    assert kb.check()["consistent"]


def store_repairs(kb: KnowledgeBase) -> list[str]:
    """What opening repaired in the store (a new data directory builds its own keyword index: not a repair)."""
    return [m for m in kb.recovery_messages if not m.startswith("keyword index")]


def server_client(server: ChromaServer, data: Path):
    return client_from_env(data, {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(server.port)})


@pytest.mark.server
def test_recovery_in_another_program_never_sweeps_a_document_still_being_embedded(chroma_server, tmp_path):
    """Two data directories on one server (no shared lock): B opens (and recovers) while A embeds batch 2."""
    a_embedder = GatedEmbedder(gate_call=2)
    a = kb_on(server_client(chroma_server, tmp_path / "a"), tmp_path / "a", a_embedder, batch_size=8)
    thread, out = in_thread(lambda: a.ingest_bytes(text(120, "tundra"), "big.txt"))
    assert a_embedder.paused.wait(WAIT)
    try:
        b = kb_on(server_client(chroma_server, tmp_path / "b"), tmp_path / "b", HashingEmbedder())
        assert b.recovery_messages == [] and b.documents() == []
    finally:
        a_embedder.go.set()
    result = finish(thread, out)
    assert result.status == "indexed" and result.chunks > 8
    fresh = kb_on(server_client(chroma_server, tmp_path / "c"), tmp_path / "c", HashingEmbedder())
    assert store_repairs(fresh) == []
    assert [(d.file_name, d.chunks) for d in fresh.documents()] == [("big.txt", result.chunks)]
    assert len(fresh.store.chunk_ids()) == result.chunks and fresh.check()["consistent"]


@pytest.mark.server
@pytest.mark.parametrize("first_to_finish", ["earlier upload", "later upload"])
def test_one_name_uploaded_by_two_programs_at_once_keeps_the_later_upload(chroma_server, tmp_path, first_to_finish):
    """Both uploads are embedding at once (each paused at its first batch); then one, then the other completes."""
    gates = {"early": GatedEmbedder(gate_call=1), "late": GatedEmbedder(gate_call=1)}
    bodies = {"early": b"Plan version one: ship in May.", "late": b"Plan version two: ship in June."}
    running = {}
    for who in ("early", "late"):  # the earlier upload starts first
        kb = kb_on(server_client(chroma_server, tmp_path / who), tmp_path / who, gates[who])
        running[who] = in_thread(lambda kb=kb, who=who: kb.ingest_bytes(bodies[who], "plan.txt"))
        assert gates[who].paused.wait(WAIT)
    order = ("early", "late") if first_to_finish == "earlier upload" else ("late", "early")
    results = {}
    for who in order:
        gates[who].go.set()
        results[who] = finish(*running[who])
    early, late = results["early"], results["late"]
    assert late.status in ("indexed", "replaced") and late.doc_id
    assert early.status in ("indexed", "replaced")
    if first_to_finish == "later upload":  # the earlier one completes last and learns that it lost
        assert early.status == "replaced" and "later upload" in early.reason and early.doc_id == late.doc_id
    else:
        assert late.status == "replaced"
    fresh = kb_on(server_client(chroma_server, tmp_path / "c"), tmp_path / "c", HashingEmbedder())
    assert store_repairs(fresh) == []
    assert [d.doc_id for d in fresh.documents()] == [late.doc_id] and fresh.check()["consistent"]


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, not even the rollback (patched out below)."""


def test_a_first_write_killed_just_before_its_commit_is_a_crash_not_a_lost_library(tmp_path, monkeypatch):
    # the keyword index and the kept original are saved, the store's record is still "indexing", generation 0:
    # opening again must sweep it and go on, not call the library damaged (seen once in the SIGKILL sweep)
    data = tmp_path / "data"
    embedder = HashingEmbedder()
    kb = kb_on(make_client(data / "chroma"), data, embedder)
    monkeypatch.setattr(type(kb.store), "commit_document", lambda *a, **k: (_ for _ in ()).throw(_Killed()))
    monkeypatch.setattr(KnowledgeBase, "_roll_back", lambda *a, **k: None)
    with pytest.raises(_Killed):
        kb.ingest_bytes(text(6, "alpha"), "alpha.txt")
    monkeypatch.undo()
    assert kb.keyword_index.saved_manifest()["count"] > 0 and kb.originals.count() == 1
    kb.close()
    again = kb_on(make_client(data / "chroma"), data, embedder)  # raised LibraryDamaged before
    assert again.documents() == [] and again.keyword_index.saved_manifest()["count"] == 0
    assert again.ingest_bytes(text(6, "alpha"), "alpha.txt").status == "indexed"
    assert [d.file_name for d in again.documents()] == ["alpha.txt"]
