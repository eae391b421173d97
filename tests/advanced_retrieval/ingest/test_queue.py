"""The ingestion queue: order, bad files, cancel, stop and resume, crashes, atomic entries, many threads.

A real temporary Chroma and the fake embedder; an embedder that waits on an Event holds a file mid-embedding, so
nothing here sleeps or times anything (every wait is bounded and only fails the test when something hangs).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading

import pytest
from chromadb.errors import InternalError

from advanced_retrieval import KnowledgeBase
from advanced_retrieval.ingest.queue import IngestQueue, IngestQueueError
from advanced_retrieval.ingest.queue_files import INDEXING, QUEUED, QueueFiles, QueueItem
from tests.helpers.ingest import WAIT, GatedEmbedder, open_kb, text
from tests.helpers.paths import REPO
from ui import queue_view
from vector_db import HashingEmbedder


class FailingEmbedder(HashingEmbedder):
    """Raises on a batch containing `marker`: a crash in the middle of a file's embedding."""

    def embed(self, texts, progress=None):
        if any("explode" in t.lower() for t in texts):
            raise RuntimeError("the embedding runtime crashed")
        return super().embed(texts, progress)


class FullDiskEmbedder(HashingEmbedder):
    """While `full` is set, a batch fails as embedded Chroma's SQLite fails on a full disk (the store then refuses
    every later write of this process, vector_db/guard.py)."""

    full = False

    def embed(self, texts, progress=None):
        if self.full:
            raise InternalError("error returned from database: (code: 13) database or disk is full")
        return super().embed(texts, progress)


class Recording:
    """The queue's Ingester seam around a real KnowledgeBase, recording the order files are indexed in."""

    def __init__(self, kb: KnowledgeBase):
        self.kb, self.order = kb, []
        self.read_only_reason = ""

    def ingest_file(self, path, *, name=None, progress=None):
        self.order.append(name)
        return self.kb.ingest_file(path, name=name, progress=progress)


def idle(queue: IngestQueue) -> bool:
    return queue.wait(lambda items: all(i.finished for i in items), WAIT)


def states(queue: IngestQueue) -> dict[str, str]:
    return {i.name: i.state for i in queue.items()}


def test_files_are_indexed_in_queue_order_each_searchable_and_their_bytes_removed(tmp_path, stopper):
    kb = open_kb(tmp_path, HashingEmbedder())
    recording = Recording(kb)
    queue = IngestQueue(recording, tmp_path / "queue", start=False)
    stopper(queue)
    for topic in ("penguins", "volcanoes", "glaciers"):
        queue.enqueue(text(topic), f"{topic}.txt")
    assert [i.state for i in queue.items()] == [QUEUED] * 3 and [i.seq for i in queue.items()] == [1, 2, 3]
    assert queue.pending_names() == ("penguins.txt", "volcanoes.txt", "glaciers.txt")
    queue.start()
    assert idle(queue)
    assert recording.order == ["penguins.txt", "volcanoes.txt", "glaciers.txt"]
    assert states(queue) == {"penguins.txt": "indexed", "volcanoes.txt": "indexed", "glaciers.txt": "indexed"}
    assert queue.pending_names() == ()
    assert [h.chunk.file_name for h in kb.retriever.retrieve("volcanoes", k=3, strategy="bm25")][0] == "volcanoes.txt"
    assert not list((tmp_path / "queue").glob("*.upload"))  # the knowledge base keeps its own copy
    assert all(kb.original_path(i.result.doc_id) for i in queue.items())
    assert kb.check()["consistent"]


def test_a_bad_file_between_two_good_ones_keeps_its_reason_and_the_next_goes_on(tmp_path, stopper, caplog):
    kb = open_kb(tmp_path, HashingEmbedder())

    class Buggy(Recording):
        def ingest_file(self, path, *, name=None, progress=None):
            if name == "bug.txt":
                raise KeyError("a bug of ours")
            return super().ingest_file(path, name=name, progress=progress)

    queue = IngestQueue(Buggy(kb), tmp_path / "queue", start=False)
    stopper(queue)
    queue.enqueue(text("penguins"), "a.txt")
    queue.enqueue(b"%PDF-1.7\nthis is not really a pdf", "broken.pdf")
    queue.enqueue(b"", "empty.txt")
    queue.enqueue(text("bugs"), "bug.txt")
    queue.enqueue(text("volcanoes"), "c.txt")
    queue.start()
    assert idle(queue)
    items = {i.name: i for i in queue.items()}
    assert [items[n].state for n in ("a.txt", "broken.pdf", "empty.txt", "bug.txt", "c.txt")] == \
        ["indexed", "failed", "failed", "failed", "indexed"]
    assert items["broken.pdf"].reason and "\n" not in items["broken.pdf"].reason
    assert items["empty.txt"].result.kind == "empty"
    assert items["bug.txt"].result.kind == "error" and "KeyError" in items["bug.txt"].reason
    assert "indexing bug.txt from the queue failed" in caplog.text  # logged with its traceback, never swallowed
    assert [d.file_name for d in kb.documents()] == ["a.txt", "c.txt"]


def test_a_queued_file_is_cancelled_at_once_and_a_file_mid_embedding_is_undone(tmp_path, stopper):
    embedder = GatedEmbedder()
    kb = open_kb(tmp_path, embedder)
    queue = IngestQueue(kb, tmp_path / "queue")
    stopper(queue)
    held = queue.enqueue(text("penguins") + b"\n\nGATED", "held.txt")
    waiting = queue.enqueue(text("volcanoes"), "waiting.txt")
    after = queue.enqueue(text("glaciers"), "after.txt")
    assert embedder.entered.wait(WAIT)
    assert {i.name: i.stage for i in queue.items()}["held.txt"] == "embedding"
    assert queue.cancel(waiting.entry_id) == ""
    assert queue.cancel(held.entry_id) == ""  # takes effect at its next progress step
    assert not queue.upload_path(waiting.entry_id).exists()
    embedder.release.set()
    assert idle(queue)
    items = {i.name: i for i in queue.items()}
    assert items["waiting.txt"].state == "cancelled" and "before it was indexed" in items["waiting.txt"].reason
    assert items["held.txt"].state == "cancelled"
    assert items["held.txt"].reason == "cancelled while embedding; nothing of it was indexed"
    assert items["after.txt"].state == "indexed"
    assert [d.file_name for d in kb.documents()] == ["after.txt"]
    assert kb.check()["consistent"] and kb.check()["chunks_in_store"] == items["after.txt"].result.chunks
    assert "finished" in queue.cancel(after.entry_id)


def test_forgetting_finished_entries_keeps_the_files_still_to_do_and_survives_a_restart(tmp_path, stopper):
    embedder = GatedEmbedder()
    kb = open_kb(tmp_path, embedder)
    queue = IngestQueue(kb, tmp_path / "queue")
    stopper(queue)
    done = queue.enqueue(text("volcanoes"), "done.txt")
    assert queue.wait(lambda items: all(i.finished for i in items), WAIT)
    held = queue.enqueue(text("penguins") + b"\n\nGATED", "held.txt")
    waiting = queue.enqueue(text("glaciers"), "waiting.txt")
    assert embedder.entered.wait(WAIT)
    assert queue.forget_finished() == 1
    assert [i.name for i in queue.items()] == ["held.txt", "waiting.txt"]
    embedder.release.set()
    assert idle(queue)
    assert {i.entry_id for i in QueueFiles(tmp_path / "queue").load()} == {held.entry_id, waiting.entry_id}
    assert done.entry_id not in {i.entry_id for i in queue.items()}


def test_a_stop_mid_queue_leaves_nothing_half_indexed_and_a_new_queue_resumes_in_order(tmp_path, stopper):
    embedder = GatedEmbedder()
    kb = open_kb(tmp_path, embedder)
    queue = IngestQueue(kb, tmp_path / "queue")
    queue.enqueue(text("penguins") + b"\n\nGATED", "first.txt")
    queue.enqueue(text("volcanoes"), "second.txt")
    assert embedder.entered.wait(WAIT)
    stopping = threading.Thread(target=queue.stop, args=(WAIT,))
    stopping.start()
    assert queue.wait(lambda _items: queue.stopping, WAIT)
    embedder.release.set()  # the held batch ends; its progress step sees the stop and undoes the write
    stopping.join(WAIT)
    assert states(queue) == {"first.txt": QUEUED, "second.txt": QUEUED}
    assert kb.documents() == [] and kb.check()["chunks_in_store"] == 0 and kb.check()["consistent"]
    with pytest.raises(IngestQueueError, match="stopped"):
        queue.enqueue(b"late", "late.txt")

    recording = Recording(kb)
    resumed = IngestQueue(recording, tmp_path / "queue")  # as the next server start builds it
    stopper(resumed)
    assert idle(resumed)
    assert recording.order == ["first.txt", "second.txt"]
    assert states(resumed) == {"first.txt": "indexed", "second.txt": "indexed"}
    assert [i.attempts for i in resumed.items()] == [2, 1]


def test_entries_left_indexing_by_a_dead_server_are_queued_again_until_too_many_tries(tmp_path, stopper):
    files = QueueFiles(tmp_path / "queue")
    for seq, (name, attempts) in enumerate((("again.txt", 1), ("cursed.txt", 3)), start=1):
        item = QueueItem(QueueFiles.new_id(), seq, name, 0, "", 0.0, state=INDEXING, attempts=attempts)
        data = text("penguins" if seq == 1 else "volcanoes")
        files.write_upload(item.entry_id, data)
        files.write_manifest(QueueItem(**{**item.__dict__, "size": len(data), "sha256": _sha(data)}))
    kb = open_kb(tmp_path, HashingEmbedder())
    queue = IngestQueue(kb, tmp_path / "queue", max_attempts=3, start=False)
    stopper(queue)
    assert states(queue) == {"again.txt": QUEUED, "cursed.txt": "failed"}
    assert "interrupted 3 times" in {i.name: i for i in queue.items()}["cursed.txt"].reason
    queue.start()
    assert idle(queue) and states(queue)["again.txt"] == "indexed"


def test_a_crash_in_the_middle_of_embedding_leaves_nothing_of_that_file(tmp_path, stopper, caplog):
    kb = open_kb(tmp_path, FailingEmbedder())
    queue = IngestQueue(kb, tmp_path / "queue")
    stopper(queue)
    queue.enqueue(text("penguins"), "good.txt")
    queue.enqueue(text("volcanoes", 6) + b"\n\n" + text("explode", 6), "crash.txt")  # batches 1-2 go in, then boom
    queue.enqueue(text("glaciers"), "next.txt")
    assert idle(queue)
    items = {i.name: i for i in queue.items()}
    assert items["crash.txt"].state == "failed" and "the embedding runtime crashed" in items["crash.txt"].reason
    assert [d.file_name for d in kb.documents()] == ["good.txt", "next.txt"]
    check = kb.check()
    assert check["consistent"]
    assert check["chunks_in_store"] == items["good.txt"].result.chunks + items["next.txt"].result.chunks
    assert "RuntimeError" in caplog.text


def test_an_upload_is_visible_whole_or_not_at_all(tmp_path, monkeypatch, stopper):
    directory = tmp_path / "queue"
    files = QueueFiles(directory)
    (directory / "tmp" / "x.upload.1234").write_bytes(b"half an upl")  # a crash while writing the bytes
    (directory / f"{QueueFiles.new_id()}.upload").write_bytes(b"no manifest")  # a crash before the manifest
    kb = open_kb(tmp_path, HashingEmbedder())
    queue = IngestQueue(kb, directory, start=False)
    stopper(queue)
    assert queue.items() == () and sorted(p.name for p in directory.rglob("*") if p.is_file()) == ["worker.lock"]
    assert files.load() == []

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(IngestQueueError, match="could not save big.txt.*No space left"):
        queue.enqueue(text("penguins"), "big.txt")
    assert queue.items() == () and not [p for p in directory.rglob("*") if p.is_file() and p.name != "worker.lock"]


def test_many_threads_enqueue_at_once_and_every_file_is_indexed_once_in_queue_order(tmp_path, stopper):
    kb = open_kb(tmp_path, HashingEmbedder())
    recording = Recording(kb)
    queue = IngestQueue(recording, tmp_path / "queue")
    stopper(queue)
    torn, errors = [], []

    def reader():  # while files are written: every listed pending entry has all its bytes on disk
        while not done.is_set():
            for item in queue.items():
                path = queue.upload_path(item.entry_id)
                if item.state == QUEUED and (not path.exists() or path.stat().st_size != item.size):
                    torn.append(item.name)

    def upload(t: int):
        try:
            for n in range(4):
                queue.enqueue(text(f"topic{t}x{n}", 2), f"t{t}-{n}.txt")
        except Exception as exc:
            errors.append(exc)

    done = threading.Event()
    watcher = threading.Thread(target=reader)
    watcher.start()
    threads = [threading.Thread(target=upload, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert idle(queue)
    done.set()
    watcher.join(WAIT)
    items = queue.items()
    assert errors == [] and torn == []
    assert sorted(i.seq for i in items) == list(range(1, 25))
    assert recording.order == [i.name for i in sorted(items, key=lambda i: i.seq)]
    assert {i.state for i in items} == {"indexed"} and len(kb.documents()) == 24 and kb.check()["consistent"]


def test_a_file_is_searchable_as_soon_as_it_is_indexed_while_the_rest_wait(tmp_path, stopper):
    embedder = GatedEmbedder()
    kb = open_kb(tmp_path, embedder)
    queue = IngestQueue(kb, tmp_path / "queue")
    stopper(queue)
    queue.enqueue(text("penguins"), "penguins.txt")
    queue.enqueue(text("volcanoes") + b"\n\nGATED", "volcanoes.txt")
    queue.enqueue(text("glaciers"), "glaciers.txt")
    assert embedder.entered.wait(WAIT)
    assert [h.chunk.file_name for h in kb.retriever.retrieve("penguins", k=1)] == ["penguins.txt"]
    assert queue.pending_names() == ("volcanoes.txt", "glaciers.txt")
    embedder.release.set()
    assert idle(queue) and queue.pending_names() == ()


def test_a_read_only_library_or_a_queue_run_elsewhere_refuses_uploads_with_the_reason(tmp_path, stopper):
    kb = open_kb(tmp_path, HashingEmbedder())
    first = IngestQueue(kb, tmp_path / "queue")
    stopper(first)
    second = IngestQueue(kb, tmp_path / "queue")
    assert "indexes the uploads of this data directory" in second.busy_reason
    with pytest.raises(IngestQueueError, match="indexes the uploads"):
        second.enqueue(b"x", "x.txt")

    read_only = Recording(kb)
    read_only.read_only_reason = "the library is open in another program"
    other = IngestQueue(read_only, tmp_path / "other")
    stopper(other)
    with pytest.raises(IngestQueueError, match="open in another program"):
        other.enqueue(b"x", "x.txt")


def test_finished_entries_are_kept_for_the_log_then_pruned(tmp_path, stopper):
    kb = open_kb(tmp_path, HashingEmbedder())
    queue = IngestQueue(kb, tmp_path / "queue", max_finished=2)
    stopper(queue)
    for n in range(4):
        queue.enqueue(text(f"topic{n}", 2), f"f{n}.txt")
    assert queue.wait(lambda items: len(kb.documents()) == 4 and all(i.finished for i in items), WAIT)
    assert [i.name for i in queue.items()] == ["f2.txt", "f3.txt"]
    assert len(list((tmp_path / "queue").glob("*.json"))) == 2


@pytest.mark.slow
def test_sigkill_mid_file_then_a_restart_indexes_everything_once(tmp_path):
    """A real server process killed while embedding: the next start sweeps its half write and resumes."""
    child = textwrap.dedent(f"""
        import sys, threading
        sys.path[:0] = [{str(REPO)!r}, {str(REPO / 'tests')!r}]
        from pathlib import Path
        from tests.helpers.ingest import GatedEmbedder, open_kb, text
        from advanced_retrieval.ingest.queue import IngestQueue
        root = Path({str(tmp_path)!r})
        embedder = GatedEmbedder()
        queue = IngestQueue(open_kb(root, embedder), root / "queue")
        queue.enqueue(text("penguins"), "done.txt")
        queue.enqueue(text("volcanoes") + b"\\n\\nGATED", "killed.txt")
        queue.enqueue(text("glaciers"), "later.txt")
        embedder.entered.wait(120)
        print("held", flush=True)
        threading.Event().wait(120)
    """)
    process = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert process.stdout.readline().strip() == "held"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(WAIT)
    kb = open_kb(tmp_path, HashingEmbedder())  # recovery sweeps the killed write ("indexing" record, dead writer)
    assert [d.file_name for d in kb.documents()] == ["done.txt"] and kb.check()["consistent"]
    queue = IngestQueue(kb, tmp_path / "queue")
    try:
        assert idle(queue)
        assert {i.name: i.state for i in queue.items()} == {"done.txt": "indexed", "killed.txt": "indexed",
                                                            "later.txt": "indexed"}
    finally:
        queue.stop(WAIT)
    assert [d.file_name for d in kb.documents()] == ["done.txt", "killed.txt", "later.txt"]
    assert kb.check()["consistent"]


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_a_full_disk_pauses_the_queue_with_every_upload_kept_and_the_next_start_resumes(tmp_path, stopper):
    embedder = FullDiskEmbedder()
    kb = open_kb(tmp_path, embedder)
    queue = IngestQueue(kb, tmp_path / "queue", start=False)
    bodies = {f"f{n:02d}.txt": text(f"topic{n}", 3) for n in range(30)}
    for name, body in bodies.items():
        queue.enqueue(body, name)
    embedder.full = True
    queue.start()
    assert queue.wait(lambda _items: queue.pause is not None, WAIT)
    items = queue.items()
    assert [i.state for i in items] == [QUEUED] * 30 and [i.attempts for i in items] == [0] * 30  # none failed
    for item in items:  # every upload kept, whole (before: all 30 failed and their bytes were deleted)
        assert hashlib.sha256(queue.upload_path(item.entry_id).read_bytes()).hexdigest() == item.sha256
    assert "database or disk is full" in queue.pause.cause and queue.pause.disk_full
    assert queue_view.summary(items, queue.pause) == "Paused: the disk is full · 30 files wait"
    assert queue_view.pause_line(queue.pause, 30).startswith(
        "**The disk is full**: 30 files wait, their uploads kept. Free some disk space and start the program again")
    assert kb.documents() == []
    queue.stop(WAIT)
    kb.close()

    kb = open_kb(tmp_path, HashingEmbedder())  # the next start, with room on the disk
    resumed = IngestQueue(kb, tmp_path / "queue")
    stopper(resumed)
    assert idle(resumed) and resumed.pause is None
    assert {i.name: i.state for i in resumed.items()} == dict.fromkeys(bodies, "indexed")
    assert sorted(d.file_name for d in kb.documents()) == sorted(bodies) and kb.check()["consistent"]
    assert not list((tmp_path / "queue").glob("*.upload"))


_FULL_DISK_CHILD = """
import faulthandler, json, os, sys
faulthandler.dump_traceback_later(240, exit=True)  # a hang shows where, in the test's failure
sys.path[:0] = [{repo!r}, {tests!r}]
from pathlib import Path
from tests.helpers.ingest import text
from ui import queue_view
from vector_db import HashingEmbedder
from wiring import open_ingest_queue, open_knowledge_base

data = Path({data!r})
kb = open_knowledge_base(data, embedder=HashingEmbedder(), isolate=False)
queue = open_ingest_queue(data, kb, start=False)
if {enqueue!r}:
    for n in range(30):
        queue.enqueue(text(f"topic{{n}}", 100), f"f{{n:02d}}.txt")
queue.start()
queue.wait(lambda items: queue.pause is not None or all(i.finished for i in items), 120)
items = queue.items()
kept = [i.sha256 == __import__("hashlib").sha256(queue.upload_path(i.entry_id).read_bytes()).hexdigest()
        for i in items if not i.finished]
print(json.dumps({{"states": [i.state for i in items], "kept": kept, "docs": len(kb.documents()),
                  "summary": queue_view.summary(items, queue.pause), "cause": queue.pause and queue.pause.cause,
                  "uploads": len(list((data / "queue").glob("*.upload"))),
                  "consistent": None if queue.pause else kb.check()["consistent"]}}), flush=True)
queue.stop(30)
os._exit(0)  # a Chroma that a full disk upset may not close cleanly; the next start recovers it
"""


@pytest.fixture
def small_disk(tmp_path):
    """An 8 MB tmpfs (root and mount(8) needed, else skipped): a real full disk under the data directory."""
    if os.environ.get("DOCAGENT_REAL_DISK_TEST") != "1":
        # Opt-in: 2 of 9 runs hung inside Chroma (its rollback after a refused write never returned), a hang in
        # vector_db on a full disk that is not this queue's and is not fixed yet; a flaky test cannot gate CI.
        pytest.skip("a real full disk is opt-in (DOCAGENT_REAL_DISK_TEST=1): Chroma itself may hang on it")
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a real full disk needs root and mount(8)")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode()[-200:]}")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=True)


@pytest.mark.slow
def test_a_real_full_disk_pauses_the_queue_and_the_next_start_after_freeing_space_indexes_everything(small_disk):
    """30 uploads of ~47 KB into an 8 MB disk: the library fills it after a few files (Chroma says "Error in
    compaction", not "disk full"); then the disk grows (space freed) and a new process resumes."""

    def run(enqueue: bool) -> dict:
        code = _FULL_DISK_CHILD.format(repo=str(REPO), tests=str(REPO / "tests"), data=str(small_disk / "data"),
                                       enqueue=enqueue)
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
        assert child.returncode == 0, child.stderr[-3000:]
        return json.loads(child.stdout.strip().splitlines()[-1])

    full = run(enqueue=True)
    waiting = full["states"].count(QUEUED)
    assert 0 < full["docs"] < 30 and set(full["states"]) == {"indexed", QUEUED}, full  # none failed
    assert full["kept"] == [True] * waiting and full["uploads"] == waiting, full  # each upload whole
    assert full["summary"] == f"Paused: the disk is full · {waiting} files wait", full
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)  # space freed
    again = run(enqueue=False)
    assert again["states"] == ["indexed"] * 30 and again["docs"] == 30 and again["consistent"], again
    assert again["uploads"] == 0, again
