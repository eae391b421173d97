"""Kept originals of a library that several data directories share through one Chroma server (issue 27, item 4).

The server tests run a real `chroma run` and open data directories A and B on it, as two app servers or two CLIs
on two machines would: no shared lock and no shared folder, only the store.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from advanced_retrieval import Originals
from testing.chroma_server import CHROMA, ChromaServer
from tests.helpers.library import kb_on
from vector_db import HashingEmbedder, LibraryDamaged, StoreError, client_from_env, make_client


def body(topic: str) -> bytes:
    return "\n\n".join(f"{topic} paragraph {i}. " + " ".join(f"{topic}{(i * 7 + k) % 53}" for k in range(30))
                       for i in range(6)).encode()


def open_on(server: ChromaServer, data: Path, **options):
    client = client_from_env(data, {"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(server.port)})
    return kb_on(client, data, HashingEmbedder(), **options)


def kept(data: Path) -> set[str]:
    """Names of the originals kept in a data directory."""
    folder = data / "originals"
    return {p.name for p in folder.iterdir() if p.is_file()} if folder.is_dir() else set()


@pytest.fixture
def fresh_server(tmp_path):
    """A second server on empty storage: what a Chroma server restarted on fresh storage looks like."""
    if not CHROMA.exists():
        pytest.skip("the chroma command is not installed next to this Python")
    (tmp_path / "fresh").mkdir()
    server = ChromaServer(tmp_path / "fresh" / "server-data")
    server.start()
    yield server
    server.stop()


@pytest.mark.server
def test_a_document_indexed_in_one_data_directory_is_viewed_and_rebuilt_from_another(chroma_server, fresh_server,
                                                                                      tmp_path):
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a = open_on(chroma_server, a_dir)
    b = open_on(chroma_server, b_dir)
    from_b = b.ingest_bytes(body("glacier"), "glacier.txt")
    from_a = a.ingest_bytes(body("tundra"), "tundra.txt")
    assert from_b.status == from_a.status == "indexed"
    # each views the other's document from its original, byte for byte, without reopening
    seen_in_a, seen_in_b = a.original_path(from_b.doc_id), b.original_path(from_a.doc_id)
    assert seen_in_a is not None and seen_in_a.read_bytes() == body("glacier")
    assert seen_in_b is not None and seen_in_b.read_bytes() == body("tundra")
    # a data directory opened later copies every shared original at open, so it can rebuild all of them
    c_dir = tmp_path / "c"
    open_on(chroma_server, c_dir)
    assert len(kept(c_dir)) == 2
    with pytest.raises(LibraryDamaged):
        open_on(fresh_server, c_dir)
    rebuilt = open_on(fresh_server, c_dir, rebuild=True)
    assert sorted(r.file_name for r in rebuilt.rebuilt if r.status == "indexed") == ["glacier.txt", "tundra.txt"]
    assert sorted(d.file_name for d in rebuilt.documents()) == ["glacier.txt", "tundra.txt"]


@pytest.mark.server
def test_a_delete_in_another_data_directory_removes_only_the_original_the_store_recorded_as_deleted(
        chroma_server, tmp_path):
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a = open_on(chroma_server, a_dir)
    gone = a.ingest_bytes(body("delta"), "delta.txt")
    stays = a.ingest_bytes(body("fjord"), "fjord.txt")
    b = open_on(chroma_server, b_dir)
    assert b.delete("delta.txt") is not None
    a = open_on(chroma_server, a_dir)
    assert kept(a_dir) == {f"{stays.doc_id}.txt"}
    assert "removed 1 kept original(s) of documents deleted in another program" in a.recovery_messages
    assert not any("original(s) of documents no longer indexed" in m for m in a.recovery_messages)
    assert a.original_path(gone.doc_id) is None and a.original_path(stays.doc_id) is not None


@pytest.mark.server
def test_originals_of_documents_a_server_never_recorded_as_deleted_are_kept(chroma_server, fresh_server, tmp_path):
    """A server on fresh storage that another program has written to since (so the lost-store guard, which
    needs a never-written store, does not fire): A's originals are its documents' only copies."""
    a_dir = tmp_path / "a"
    a = open_on(chroma_server, a_dir)
    mine = {a.ingest_bytes(body(t), f"{t}.txt").doc_id for t in ("moraine", "esker")}
    open_on(fresh_server, tmp_path / "b").ingest_bytes(body("drumlin"), "drumlin.txt")
    a = open_on(fresh_server, a_dir)
    assert {f"{d}.txt" for d in mine} <= kept(a_dir)
    assert any("not recorded as deleted" in m and "cli.py rebuild" in m for m in a.recovery_messages), \
        a.recovery_messages
    rebuilt = open_on(fresh_server, a_dir, rebuild=True)
    assert sorted(d.file_name for d in rebuilt.documents()) == ["drumlin.txt", "esker.txt", "moraine.txt"]


@pytest.mark.server
def test_a_clear_in_another_data_directory_is_reported_to_the_others_as_a_clear(chroma_server, tmp_path):
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a = open_on(chroma_server, a_dir)
    for topic in ("cirque", "arete"):
        assert a.ingest_bytes(body(topic), f"{topic}.txt").status == "indexed"
    b = open_on(chroma_server, b_dir)
    b.clear()
    a = open_on(chroma_server, a_dir)  # no LibraryDamaged: a clear is not a loss
    assert a.documents() == [] and kept(a_dir) == set() and a.check()["consistent"]
    cleared = [m for m in a.recovery_messages if "cleared in another program" in m]
    assert len(cleared) == 1 and "2 kept original(s)" in cleared[0], a.recovery_messages
    assert not any("original(s) of documents no longer indexed" in m or "lost" in m for m in a.recovery_messages)
    # the shared library goes on: a document indexed after the clear is seen and viewed by both
    again = b.ingest_bytes(body("cirque"), "cirque.txt")
    assert a.original_path(again.doc_id).read_bytes() == body("cirque")
    assert [d.file_name for d in open_on(chroma_server, a_dir).documents()] == ["cirque.txt"]


class FakeShared:
    """A shared store holding one original, whose bytes may be wrong, and refusing to keep any (`refuse`)."""

    where = "http://127.0.0.1:1"

    def __init__(self, held: dict[str, bytes], refuse: bool = False):
        self.held, self.refuse = held, refuse

    def keep_original(self, doc_id, name, suffix, data):
        if self.refuse:
            raise StoreError("cannot reach Chroma at http://127.0.0.1:1: refused")
        self.held[doc_id] = data

    def original(self, doc_id):
        return ("a.txt", ".txt", self.held[doc_id]) if doc_id in self.held else None


def test_bytes_from_the_shared_store_that_are_not_the_documents_are_refused(tmp_path):
    right = b"the real text"
    doc_id = hashlib.sha256(right).hexdigest()
    originals = Originals(tmp_path / "originals", shared=FakeShared({doc_id: b"something else"}))
    with pytest.raises(StoreError, match="a.txt stored at http://127.0.0.1:1 is not that file's bytes"):
        originals.path(doc_id)
    assert originals.count() == 0
    originals.shared.held[doc_id] = right
    assert originals.path(doc_id).read_bytes() == right and originals.name(doc_id) == "a.txt"


def test_an_upload_whose_original_the_shared_store_cannot_keep_fails_and_leaves_nothing(tmp_path):
    kb = kb_on(make_client(tmp_path / "data"), tmp_path / "data", HashingEmbedder())
    kb.originals.shared = FakeShared({}, refuse=True)  # the embedded store stands in for the server's chunks
    result = kb.ingest_bytes(body("sérac"), "serac.txt")
    assert result.status == "failed" and result.kind == "store" and "cannot reach Chroma" in result.reason
    assert kb.documents() == [] and kb.originals.count() == 0 and kb.check()["consistent"]
