"""The ingestion queue: uploads are written to the data directory first, then one worker thread indexes them in order.

The queue belongs to the server process, not to a browser tab: closing or reloading a tab, asking questions or
opening other tabs never loses or restarts a file. It is the library's single writer of uploads (the one-writer
rule of vector_db/owner.py and docs/reliability.md): tabs enqueue, only the worker calls KnowledgeBase.ingest_file.

Life of an entry (advanced_retrieval.ingest.queue_files keeps it on disk): queued → indexing (stages reading, ocr,
chunking, embedding, indexing) → indexed | duplicate | replaced | failed (with the one-line reason) | cancelled.
A file is searchable the moment it is indexed: the commit moves the store's generation and every reader reloads
on it. Finished entries lose their bytes (the knowledge base keeps its own copy) and keep their result for a while.

Interrupting: cancel() and stop() take effect at the worker's next progress callback, which raises Interrupted;
KnowledgeBase and VectorStore undo an uncommitted write on the way out, so nothing half-indexed stays. Once the
file reaches the "indexing" stage (BM25 and the commit, under a second) it is let finish: cancel() refuses then.
An entry still queued or indexing when the process stops (or dies) is queued again at the next start and indexed
from its saved bytes; one interrupted `max_attempts` times is failed instead, so a file that kills the server
cannot do so forever. A SIGKILL mid-file leaves an "indexing" record that the next open's recovery sweeps.

A full disk is nobody's file's fault: when indexing a file fails because the disk refused a write, that file goes
back to the queue (its try not counted; the knowledge base undid its write, or the next open's recovery sweeps
it) and the worker pauses with every saved upload kept; `pause` says why. The files wait for the next start,
which resumes them: not a retry in this process, because Chroma's next write after a refused one can hang for
good, even once space is freed (measured, Chroma 1.5.9 on a full tmpfs remounted larger: the retried file's
commit never returned; vector_db/guard.py measured the same after SQLite's "database or disk is full").

Error policy: a bad file is its own failed result and the next file goes on; an unexpected error, whatever the
entry, is logged with its traceback and recorded as that file's failure (kind "error"), and the worker goes on
with the next; nothing is swallowed. A queue file the queue did not write is set aside at open (queue_files) and
listed in `set_aside`. Thread-safe: any number of threads may enqueue, cancel and read items() while it runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from advanced_retrieval.ingest.disk import DISK_ERRNOS, disk_cause
from advanced_retrieval.ingest.estimates import FileEstimate, Throughput
from advanced_retrieval.ingest.queue_files import (
    CANCELLED,
    INDEXING,
    QUEUED,
    Pause,
    QueueFiles,
    QueueItem,
    SetAside,
    claim_worker,
    damage,
    release_worker,
)
from advanced_retrieval.library.knowledge_base import IngestResult, shown_name
from advanced_retrieval.types import Progress

log = logging.getLogger(__name__)



class Ingester(Protocol):
    """What the queue needs from the knowledge base."""

    read_only_reason: str

    def ingest_file(self, path: Path, *, name: str | None = None, progress: Progress | None = None) -> IngestResult:
        ...


class IngestQueueError(Exception):
    """An upload could not be queued; `reason` says why in one line, `kind` is read_only (another program owns
    the library), busy (another program runs this queue), stopped, or io (the bytes could not be saved)."""

    def __init__(self, reason: str, kind: str):
        super().__init__(reason)
        self.reason, self.kind = reason, kind


class Interrupted(BaseException):
    """Raised from the progress callback to stop the file being indexed (cancel or stop). A BaseException, so no
    `except Exception` on the way (a reader's per-page guard, the in-process parser's) takes it for the file's
    failure; it only unwinds through the undo steps of KnowledgeBase and VectorStore."""


class IngestQueue:
    """Uploads queued under `directory`, indexed in order by one worker thread through `kb`.

    Args:
        kb: the KnowledgeBase (anything with ingest_file and read_only_reason).
        directory: where uploads and manifests are kept (wiring puts it at <data_dir>/queue).
        keep_finished_s: seconds a finished entry's result stays listed; at most `max_finished` of them are kept.
        max_attempts: starts of one file that a stop or crash may interrupt before it is failed.
        start: start the worker now (False lets a test look at the queue as a restart finds it).

    Raises:
        ValueError: max_attempts < 1 or max_finished < 0.
    """

    def __init__(self, kb: Ingester, directory: Path, *, keep_finished_s: float = 24 * 3600.0,
                 max_finished: int = 200, max_attempts: int = 3, start: bool = True):
        if max_attempts < 1 or max_finished < 0:
            raise ValueError(f"max_attempts must be >= 1 and max_finished >= 0, got {max_attempts}, {max_finished}")
        self._kb = kb
        self._files = QueueFiles(directory)
        self._keep_finished_s, self._max_finished, self._max_attempts = keep_finished_s, max_finished, max_attempts
        self._pause: Pause | None = None
        self._cond = threading.Condition()
        self._items: dict[str, QueueItem] = {}
        self._seq = 0
        self._version = 0
        self._indexed = 0
        self._current: tuple[str, FileEstimate] | None = None
        self._cancel: set[str] = set()
        self._stopping = False
        self._throughput = Throughput()
        self._thread: threading.Thread | None = None
        self._lock_fd, self.busy_reason = claim_worker(Path(directory))
        if not self.busy_reason:
            self._resume(self._files.load())
        if start:
            self.start()

    # -- reading (any thread) -----------------------------------------------------------------------------------
    @property
    def version(self) -> int:
        """Grows on every change (a page can redraw only when it moved)."""
        with self._cond:
            return self._version

    @property
    def stopping(self) -> bool:
        """True once stop() was called (the queue then takes no uploads)."""
        with self._cond:
            return self._stopping

    @property
    def pause(self) -> Pause | None:
        """Why the worker is not taking files (the disk refused a write), or None while it works."""
        with self._cond:
            return self._pause

    @property
    def set_aside(self) -> tuple[SetAside, ...]:
        """Queue files found at open that the queue did not write (renamed `.damaged`, their uploads kept)."""
        return self._files.set_aside

    def upload_path(self, entry_id: str) -> Path:
        """Where an entry's bytes are saved until it is finished.

        Raises:
            ValueError (queue_files.BadEntry): not an id the queue makes.
        """
        return self._files.upload_path(entry_id)

    def items(self) -> tuple[QueueItem, ...]:
        """Every entry in queue order (finished ones still listed, then pending), with live progress and estimates."""
        with self._cond:
            current_id, estimate = self._current or ("", None)
            current_left = estimate.seconds_left() if estimate is not None else None
            ahead = current_left if estimate is not None else 0.0  # seconds until the files before this one are done
            out = []
            for item in sorted(self._items.values(), key=lambda i: i.seq):
                if item.entry_id == current_id:
                    item = dataclasses.replace(item, seconds_left=current_left)
                elif item.state == QUEUED:
                    own = self._throughput.seconds_for(item.size) if self._pause is None else None
                    ahead = ahead + own if ahead is not None and own is not None else None
                    item = dataclasses.replace(item, seconds_left=ahead)
                out.append(item)
            return tuple(out)

    @property
    def indexed_count(self) -> int:
        """Files this queue indexed or replaced since it started (a page redraws its document list when it moved)."""
        with self._cond:
            return self._indexed

    def pending_names(self) -> tuple[str, ...]:
        """Names (as the library will list them) of the files still queued or being indexed, in queue order: an
        answer given meanwhile can say which files it could not search yet."""
        return tuple(shown_name(item.name) for item in self.items() if not item.finished)

    def wait(self, predicate: Callable[[tuple[QueueItem, ...]], bool], timeout: float) -> bool:
        """Block until predicate(items()) holds or `timeout` seconds passed; returns whether it holds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate(self.items()):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    # -- changing (any thread) ----------------------------------------------------------------------------------
    def enqueue(self, data: bytes, name: str) -> QueueItem:
        """Write an upload to disk (durably; a reader never sees half an entry) and queue it; returns its entry.

        Raises:
            IngestQueueError: the library is read-only here, another process runs this queue, the queue is
                stopped, or the bytes could not be written (the reason names it; nothing is left behind).
        """
        for kind, refusal in (("busy", self.busy_reason), ("read_only", self._kb.read_only_reason),
                              ("stopped", "the ingestion queue is stopped" if self._stopping else "")):
            if refusal:
                raise IngestQueueError(refusal, kind)
        entry_id = QueueFiles.new_id()
        try:
            self._files.write_upload(entry_id, data)
            with self._cond:  # the manifest makes the entry exist; seq is taken with it, so order = visibility
                self._seq += 1
                item = QueueItem(entry_id, self._seq, name, len(data), hashlib.sha256(data).hexdigest(), time.time())
                self._files.write_manifest(item)
                self._items[entry_id] = item
                self._changed()
        except OSError as exc:
            self._files.remove_upload(entry_id)
            raise IngestQueueError(f"could not save {name} in the data directory: {exc.strerror or exc}",
                                   "io") from exc
        log.info("queued %s (%d bytes) as %s", name, len(data), entry_id)
        return item

    def cancel(self, entry_id: str) -> str:
        """Cancel a file: a queued one at once, one being indexed at its next progress step (its write is undone).
        Returns '' when done or under way, else why not (finished, unknown, or already at its final write)."""
        with self._cond:
            item = self._items.get(entry_id)
            if item is None or item.finished:
                return "it is no longer in the queue" if item is None else f"it has finished ({item.state})"
            if item.state == QUEUED:
                self._set(item, CANCELLED, note="cancelled before it was indexed", finished_at=time.time())
                self._forget_bytes(item)
                return ""
            if item.stage == "indexing":
                return "it is being written to the library (under a second); it cannot be cancelled any more"
            self._cancel.add(entry_id)
            return ""

    def start(self) -> None:
        """Start the worker (once; not when another process runs this queue, nor on a read-only library, where
        every write would fail: pending entries then wait for the process that owns the library)."""
        with self._cond:
            if self.busy_reason or self._kb.read_only_reason or self._thread is not None:
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="docagent-ingest", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> bool:
        """Stop the worker: the file being indexed is interrupted (its write undone) and stays queued for the next
        start. Returns False when the worker did not end within `timeout` (it is logged)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("the ingestion worker did not stop within %.0f s", timeout)
                return False
        release_worker(self._lock_fd)
        self._lock_fd = None
        return True

    # -- the worker ---------------------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                item = self._take()
                if item is None:
                    return
                try:  # under the lock that took it: a cancel cannot slip in between
                    item = self._set(item, INDEXING, attempts=item.attempts + 1, started_at=time.time(),
                                     stage="reading")
                    self._current = (item.entry_id, FileEstimate())
                except Exception as exc:
                    self._broken(item, exc)
                    continue
            try:
                self._index(item)
            except Exception as exc:
                self._broken(item, exc)

    def _take(self) -> QueueItem | None:
        """The next entry to index, once there is one and the queue is not paused; None once stopping."""
        while not self._stopping:
            item = self._next() if self._pause is None else None
            if item is not None:
                return item
            self._cond.wait()
        return None

    def _broken(self, item: QueueItem, exc: Exception) -> None:
        """A bug around one entry (its manifest, the queue's own code): logged with its traceback and recorded as
        that entry's failure, so the worker goes on with the next."""
        log.error("ingestion queue: unexpected error around %s", item.name, exc_info=exc)
        result = IngestResult(item.name, "failed", kind="error", reason="unexpected error in the ingestion queue "
                              f"({type(exc).__name__}: {exc}; see the server log)")
        with self._cond:
            self._current = None
            self._cancel.discard(item.entry_id)
            current = self._items.get(item.entry_id, item)
            try:
                self._set(current, "failed", finished_at=time.time(), stage="", result=result)
            except Exception as again:  # the entry leaves the queue in memory whatever its manifest holds
                log.error("ingestion queue: could not record the failure of %s", item.name, exc_info=again)
                self._items[item.entry_id] = dataclasses.replace(current, state="failed", result=result)
                self._changed()
            self._forget_bytes(item)  # under the lock: no reader sees the entry finished with its bytes still there

    def _index(self, item: QueueItem) -> None:
        path = self._files.upload_path(item.entry_id)
        try:
            damaged = damage(path, item)
            result = damaged or self._kb.ingest_file(path, name=item.name, progress=self._progress(item.entry_id))
        except Interrupted:
            with self._cond:
                cancelled, stage = item.entry_id in self._cancel, self._items[item.entry_id].stage
            if cancelled:
                self._finish(item, None, note=f"cancelled while {stage or 'reading'}; nothing of it was indexed")
            else:
                self._requeue(item)
            return
        except Exception as exc:  # a bug, not a bad file (those come back as results): logged and recorded
            log.exception("indexing %s from the queue failed", item.name)
            result = IngestResult(item.name, "failed", reason=f"{type(exc).__name__}: {exc}", kind="error")
            if isinstance(exc, OSError) and exc.errno in DISK_ERRNOS:
                result = dataclasses.replace(result, reason=os.strerror(exc.errno), kind="io")
        cause = disk_cause(result, self._files.directory, item.size)
        if cause:
            self._wait_for_disk(item, cause)
        else:
            self._finish(item, result)

    def _wait_for_disk(self, item: QueueItem, cause: str) -> None:
        """The disk refused a write while indexing `item` (the knowledge base undid it): the file is queued again
        as it was, bytes kept, this try not counted, and the worker pauses (see the module docstring)."""
        with self._cond:
            cancelled = item.entry_id in self._cancel
            if not cancelled:
                self._pause = Pause(cause)
                self._current = None
                self._set(self._items[item.entry_id], QUEUED, attempts=max(item.attempts - 1, 0), stage="",
                          done=0, total=0, fraction=0.0)
                waiting = sum(not i.finished for i in self._items.values())
        if cancelled:  # cancelled meanwhile: it goes as asked (nothing of it was indexed)
            self._finish(item, None, note="cancelled while the disk was full; nothing of it was indexed")
            return
        log.error("ingestion queue: paused, the disk refused a write while indexing %s (%s); %d file(s) wait with "
                  "their uploads kept until the next start", item.name, cause, waiting)

    def _progress(self, entry_id: str) -> Progress:
        def report(_name: str, stage: str, done: int, total: int) -> None:
            with self._cond:
                if stage != "indexing" and (self._stopping or entry_id in self._cancel):
                    raise Interrupted(entry_id)
                current = self._current
                if current is None or current[0] != entry_id:
                    return
                fraction = current[1].update(stage, done, total)
                self._set(self._items[entry_id], INDEXING, stage=stage, done=done, total=total, fraction=fraction)

        return report

    def _finish(self, item: QueueItem, result: IngestResult | None, note: str = "") -> None:
        with self._cond:
            item = self._items.get(item.entry_id, item)
            if result is not None and item.attempts > 1 and result.status == "duplicate" \
                    and result.duplicate_of == shown_name(item.name):  # indexed just before a stop: not a duplicate
                result = dataclasses.replace(result, status="indexed", reason="indexed before the server stopped")
            self._current = None
            self._cancel.discard(item.entry_id)
            state = result.status if result is not None else CANCELLED
            if result is not None and result.status in ("indexed", "replaced"):
                self._throughput.add(item.size, result.seconds)
                self._indexed += 1
            self._set(item, state, result=result, note=note, finished_at=time.time(), stage="", seconds_left=None)
            self._forget_bytes(item)  # under the lock: no reader sees the entry finished with its bytes still there
            self._prune()
        log.info("ingestion queue: %s %s%s", item.name, state,
                 f" ({result.reason})" if result is not None and result.reason else "")

    def _forget_bytes(self, item: QueueItem) -> None:
        try:
            self._files.remove_upload(item.entry_id)
        except (OSError, ValueError) as exc:  # only costs disk space (BadEntry: an id never saved); finished anyway
            log.error("ingestion queue: could not remove the saved bytes of %s: %s", item.name, exc)

    def _requeue(self, item: QueueItem) -> None:
        with self._cond:
            self._current = None
            self._set(self._items[item.entry_id], QUEUED, stage="", done=0, total=0, fraction=0.0)
        log.info("ingestion queue: %s interrupted by the stop; it stays queued", item.name)

    # -- bookkeeping (callers hold self._cond) ------------------------------------------------------------------
    def _next(self) -> QueueItem | None:
        return min((i for i in self._items.values() if i.state == QUEUED), key=lambda i: i.seq, default=None)

    def _set(self, item: QueueItem, state: str, **changes) -> QueueItem:
        """Replace an entry (in memory, and on disk when its state changed) and wake whoever waits."""
        new = dataclasses.replace(item, state=state, **changes)
        self._items[item.entry_id] = new
        if state != item.state or "attempts" in changes:
            try:
                self._files.write_manifest(new)
            except OSError as exc:  # the queue goes on in memory; a restart finds the previous state (re-done)
                log.error("ingestion queue: could not save the state of %s (%s): %s", item.name, state, exc)
        self._changed()
        return new

    def _changed(self) -> None:
        self._version += 1
        self._cond.notify_all()

    def _resume(self, items: list[QueueItem]) -> None:
        """Take over what the last run left: pending entries are queued again (or failed after too many tries)."""
        with self._cond:
            for item in items:
                self._items[item.entry_id] = item
                if item.finished and self._files.upload_path(item.entry_id).exists():
                    log.info("ingestion queue: removing the saved bytes of %s, finished (%s) before the last stop",
                             item.name, item.state)
                    self._forget_bytes(item)
                if item.state == INDEXING and item.attempts >= self._max_attempts:
                    self._set(item, "failed", finished_at=time.time(), result=IngestResult(
                        item.name, "failed", kind="error", reason=f"indexing it was interrupted {item.attempts} "
                        f"times (the server stopped or crashed meanwhile); add it again to retry"))
                    self._forget_bytes(item)
                elif item.state == INDEXING:
                    self._set(item, QUEUED)
                    log.info("ingestion queue: %s was being indexed when the server stopped; queued again", item.name)
            self._seq = max((item.seq for item in items), default=0)
            self._prune()

    def _prune(self) -> None:
        """Forget finished entries older than keep_finished_s, and the oldest beyond max_finished."""
        finished = sorted((i for i in self._items.values() if i.finished), key=lambda i: i.finished_at or 0)
        cutoff = time.time() - self._keep_finished_s
        excess = len(finished) - self._max_finished
        for n, item in enumerate(finished):
            if n < excess or (item.finished_at or 0) < cutoff:
                self._drop(item)

    def forget_finished(self) -> int:
        """Forget every finished entry, as when the user cleared the library (their results, "indexed" in green,
        described documents no longer there); files still to do stay. Returns how many were forgotten."""
        with self._cond:
            finished = [item for item in self._items.values() if item.finished]
            for item in finished:
                self._drop(item)
            return len(finished)

    def _drop(self, item: QueueItem) -> None:
        """Forget a finished entry (under the lock)."""
        del self._items[item.entry_id]
        try:
            self._files.remove(item.entry_id)
        except OSError as exc:  # listed again after a restart, then pruned; nothing else depends on it
            log.error("ingestion queue: could not remove the finished entry %s: %s", item.name, exc)

