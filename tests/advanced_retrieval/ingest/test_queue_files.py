"""The queue's files are not trusted: tampered or damaged manifests are set aside with their bytes kept, nothing
outside the queue folder is read, written or removed, and no single entry can stop the queue or its worker."""

from __future__ import annotations

import hashlib
import json
import time

import pytest

from advanced_retrieval.ingest.queue import IngestQueue
from advanced_retrieval.ingest.queue_files import INDEXING, QUEUED, BadEntry, QueueFiles, QueueItem
from tests.helpers.ingest import WAIT, open_kb, text
from vector_db import HashingEmbedder


def saved(files: QueueFiles, name: str, data: bytes, seq: int, **changes) -> QueueItem:
    """An entry written as IngestQueue.enqueue writes it (bytes, then manifest)."""
    item = QueueItem(QueueFiles.new_id(), seq, name, len(data), hashlib.sha256(data).hexdigest(), time.time(),
                     **changes)
    files.write_upload(item.entry_id, data)
    files.write_manifest(item)
    return item


def tamper(files: QueueFiles, item: QueueItem, **fields) -> None:
    path = files.directory / f"{item.entry_id}.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, **fields}))


def idle(queue: IngestQueue) -> bool:
    return queue.wait(lambda items: all(i.finished for i in items), WAIT)


def tree(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_an_entry_id_that_leaves_the_queue_folder_touches_nothing_outside_it(tmp_path, stopper):
    directory = tmp_path / "data" / "queue"
    files = QueueFiles(directory)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = b"The launch code is 0000. " * 20
    (outside / "secret.upload").write_bytes(secret)  # what "../../outside/secret" points the queue at
    (outside / "config.json").write_text('{"keep": "me"}')
    before = tree(outside)
    lure = saved(files, "lure.txt", secret, 1)  # its sha256 matches the file outside
    tamper(files, lure, entry_id="../../outside/secret")
    config = saved(files, "config.txt", b"anything", 2)
    tamper(files, config, entry_id="../../outside/config")
    good = saved(files, "good.txt", text("penguins"), 3)
    kb = open_kb(tmp_path, HashingEmbedder())
    queue = IngestQueue(kb, directory)
    stopper(queue)
    assert idle(queue)
    assert tree(outside) == before  # nothing read into the library, removed, or written beside them
    assert [d.file_name for d in kb.documents()] == ["good.txt"]
    assert {i.name: i.state for i in queue.items()} == {"good.txt": "indexed"}
    aside = {a.file_name: a for a in queue.set_aside}
    assert set(aside) == {f"{lure.entry_id}.json.damaged", f"{config.entry_id}.json.damaged"}
    assert "is not one the queue makes" in aside[f"{lure.entry_id}.json.damaged"].reason
    assert aside[f"{lure.entry_id}.json.damaged"].upload == f"{lure.entry_id}.upload"  # its own bytes kept
    assert (directory / f"{lure.entry_id}.upload").read_bytes() == secret
    assert not (directory / f"{good.entry_id}.upload").exists()
    for path_of in (files.upload_path, files.remove_upload, files.remove):  # defence in depth: every path checks
        with pytest.raises(BadEntry):
            path_of("../../outside/secret")
    with pytest.raises(BadEntry):
        files.write_manifest(QueueItem("../../outside/config", 1, "x", 0, "", 0.0))
    assert tree(outside) == before


@pytest.mark.parametrize("damage, why", [
    ("null", "the manifest is NoneType, not an object"),
    ({"seq": "2"}, 'seq is "2", not a whole number'),
    ({"attempts": None}, "attempts is null, not a whole number"),
    ({"size": "1234"}, 'size is "1234", not a whole number'),
    ({"state": "indexing", "attempts": True}, "attempts is true, not a whole number"),
    ({"result": {"status": "indexed"}}, "its result lacks file_name"),
    ("truncated", "it is not whole JSON (cut short or damaged"),
], ids=["null", "string-seq", "null-attempts", "string-size", "bool-attempts", "bad-result", "truncated"])
def test_a_damaged_manifest_is_set_aside_named_with_its_bytes_kept_and_the_rest_is_indexed(tmp_path, stopper, damage,
                                                                                            why):
    directory = tmp_path / "queue"
    files = QueueFiles(directory)
    saved(files, "before.txt", text("glaciers"), 1)
    bad = saved(files, "bad.txt", text("volcanoes"), 2)
    saved(files, "after.txt", text("penguins"), 3)
    manifest = directory / f"{bad.entry_id}.json"
    if damage == "null":
        manifest.write_text("null")
    elif damage == "truncated":
        manifest.write_bytes(manifest.read_bytes()[:40])
    else:
        tamper(files, bad, **damage)
    kb = open_kb(tmp_path, HashingEmbedder())
    queue = IngestQueue(kb, directory)  # opens: no entry can stop it (before, a null or string seq did)
    stopper(queue)
    assert idle(queue)  # the worker lives on (before, a null attempts ended it and everything stayed queued)
    assert {i.name: i.state for i in queue.items()} == {"before.txt": "indexed", "after.txt": "indexed"}
    assert [d.file_name for d in kb.documents()] == ["after.txt", "before.txt"]
    (aside,) = queue.set_aside
    assert aside.file_name == f"{bad.entry_id}.json.damaged" and why in aside.reason
    assert (directory / f"{bad.entry_id}.upload").read_bytes() == text("volcanoes")  # kept, not "interrupted"
    assert not [p for p in directory.glob("*.upload") if p.stem != bad.entry_id]
    queue.stop(WAIT)
    again = IngestQueue(kb, directory, start=False)  # the next start still names it, and still keeps its bytes
    stopper(again)
    assert [a.file_name for a in again.set_aside] == [aside.file_name]
    assert (directory / f"{bad.entry_id}.upload").exists()


def test_a_manifest_under_another_entrys_name_is_set_aside(tmp_path):
    files = QueueFiles(tmp_path / "queue")
    one, two = saved(files, "one.txt", b"one", 1), saved(files, "two.txt", b"two", 2)
    tamper(files, one, entry_id=two.entry_id)
    assert [i.name for i in files.load()] == ["two.txt"]
    assert "is not its file name's" in files.set_aside[0].reason
    assert (files.directory / f"{one.entry_id}.upload").read_bytes() == b"one"


def test_an_error_around_one_entry_fails_that_entry_with_its_reason_and_the_worker_goes_on(tmp_path, stopper,
                                                                                           caplog):
    kb = open_kb(tmp_path, HashingEmbedder())
    queue = IngestQueue(kb, tmp_path / "queue", start=False)
    stopper(queue)
    write_manifest = queue._files.write_manifest

    def broken_for_one(item):  # a bug in the queue's own bookkeeping, on one entry only
        if item.name == "cursed.txt" and item.state == INDEXING:
            raise RuntimeError("the manifest writer broke")
        write_manifest(item)

    queue._files.write_manifest = broken_for_one
    queue.enqueue(text("glaciers"), "cursed.txt")
    queue.enqueue(text("penguins"), "next.txt")
    queue.start()
    assert idle(queue)
    items = {i.name: i for i in queue.items()}
    assert items["cursed.txt"].state == "failed" and items["cursed.txt"].result.kind == "error"
    assert "RuntimeError: the manifest writer broke" in items["cursed.txt"].reason
    assert items["next.txt"].state == "indexed"
    assert "unexpected error around cursed.txt" in caplog.text and "Traceback" in caplog.text
    assert not list((tmp_path / "queue").glob("*.upload"))


def test_a_finished_entry_whose_bytes_a_kill_left_loses_them_at_open(tmp_path, stopper):
    files = QueueFiles(tmp_path / "queue")
    done = saved(files, "done.txt", text("penguins"), 1, state="indexed", attempts=1, finished_at=time.time())
    waiting = saved(files, "waiting.txt", text("glaciers"), 2)
    queue = IngestQueue(open_kb(tmp_path, HashingEmbedder()), tmp_path / "queue", start=False)
    stopper(queue)
    assert {i.name: i.state for i in queue.items()} == {"done.txt": "indexed", "waiting.txt": QUEUED}
    assert not files.upload_path(done.entry_id).exists()  # at once, not when the entry is pruned a day later
    assert files.upload_path(waiting.entry_id).exists()
