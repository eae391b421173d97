"""The ingestion queue on disk: each upload's bytes and a small JSON manifest, written so a crash leaves no half entry.

Layout of the queue directory: `<entry_id>.upload` (the bytes as uploaded), `<entry_id>.json` (the manifest:
name, size, sha256, time queued, state, attempts and, once finished, the result), `tmp/` (files being written),
`worker.lock` (held by the one process whose worker indexes this queue).
Each file is written to tmp/, flushed with fsync and renamed into place, then the directory is fsynced: a rename
is atomic, so a reader sees the whole file or none of it. The manifest is written after the bytes and is the
commit point: an entry exists once its manifest does, and bytes without a manifest are what a crash during an
upload left (removed at open, with a log line).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import uuid
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: one queue per data directory is then the user's to keep
    fcntl = None

from advanced_retrieval.library.knowledge_base import IngestResult

log = logging.getLogger(__name__)

QUEUED, INDEXING, CANCELLED = "queued", "indexing", "cancelled"
FINISHED = frozenset({"indexed", "duplicate", "replaced", "failed", CANCELLED})
STATES = frozenset({QUEUED, INDEXING}) | FINISHED
_UPLOAD, _MANIFEST, _TMP, _WORKER_LOCK = ".upload", ".json", "tmp", "worker.lock"


@dataclasses.dataclass(frozen=True)
class QueueItem:
    """One upload and where it stands; frozen, so a copy handed to a page can never change under it.

    state: queued | indexing | indexed | duplicate | replaced | failed | cancelled. While indexing, `stage` is the
    knowledge base's progress stage (reading, ocr, chunking, embedding, indexing), `fraction` the share done
    (0..1) and `seconds_left` the estimate (None while there is too little to go on); a queued item's
    `seconds_left` counts the files before it. `result` is the IngestResult once finished (its `reason` is the
    one line a bad file keeps).
    """

    entry_id: str
    seq: int
    name: str
    size: int
    sha256: str
    queued_at: float
    state: str = QUEUED
    attempts: int = 0
    started_at: float | None = None
    finished_at: float | None = None
    result: IngestResult | None = None
    note: str = ""  # why a file was cancelled (a cancelled file has no IngestResult)
    stage: str = ""
    done: int = 0
    total: int = 0
    fraction: float = 0.0
    seconds_left: float | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def reason(self) -> str:
        """The one-line reason of a failed or cancelled file (or a note on a finished one; '' otherwise)."""
        return self.result.reason if self.result is not None and self.result.reason else self.note


_LIVE = ("stage", "done", "total", "fraction", "seconds_left")  # progress: kept in memory only


def to_json(item: QueueItem) -> str:
    data = {f.name: getattr(item, f.name) for f in dataclasses.fields(item) if f.name not in _LIVE}
    data["result"] = dataclasses.asdict(item.result) if item.result is not None else None
    return json.dumps(data, ensure_ascii=False, indent=1)


def from_json(text: str) -> QueueItem:
    """Raises ValueError (or KeyError, TypeError) for a manifest that is not one of ours."""
    data = json.loads(text)
    result = data.pop("result", None)
    if result is not None:
        result = IngestResult(**{**result, "warnings": tuple(result.get("warnings") or ())})
    item = QueueItem(**data, result=result)
    if item.state not in STATES:
        raise ValueError(f"unknown state {item.state!r}")
    return item


class QueueFiles:
    """The queue's files under `directory` (created). Names come from entry ids, never from the user."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._tmp = self.directory / _TMP
        self._tmp.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def new_id(seq: int) -> str:
        """An id that sorts in queue order and never repeats (the random tail survives a reset sequence)."""
        return f"{seq:08d}-{uuid.uuid4().hex[:10]}"

    def upload_path(self, entry_id: str) -> Path:
        return self.directory / f"{entry_id}{_UPLOAD}"

    def write_upload(self, entry_id: str, data: bytes) -> None:
        """The bytes, durably and atomically. Raises OSError (disk full, ...), leaving nothing behind."""
        self._write(self.upload_path(entry_id), data)

    def write_manifest(self, item: QueueItem) -> None:
        """The manifest, durably and atomically (it replaces the previous one in one step). Raises OSError."""
        self._write(self.directory / f"{item.entry_id}{_MANIFEST}", to_json(item).encode("utf-8"))

    def remove_upload(self, entry_id: str) -> None:
        self.upload_path(entry_id).unlink(missing_ok=True)

    def remove(self, entry_id: str) -> None:
        """Forget an entry: manifest first, so a crash in between leaves orphan bytes (swept), never a manifest
        without its bytes."""
        (self.directory / f"{entry_id}{_MANIFEST}").unlink(missing_ok=True)
        self.remove_upload(entry_id)

    def load(self) -> list[QueueItem]:
        """Every entry in queue order, after removing what an interrupted write left (temp files, bytes without
        a manifest). A manifest that cannot be read is renamed to `.damaged` and logged, never silently dropped."""
        for leftover in self._tmp.iterdir():
            log.warning("ingestion queue: removing %s, left by an interrupted write", leftover.name)
            leftover.unlink(missing_ok=True)
        items = []
        for path in sorted(self.directory.glob(f"*{_MANIFEST}")):
            try:
                items.append(from_json(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.error("ingestion queue: manifest %s cannot be read (%s); set aside as .damaged", path.name, exc)
                os.replace(path, path.with_suffix(".damaged"))
        known = {item.entry_id for item in items}
        for path in self.directory.glob(f"*{_UPLOAD}"):
            if path.name[: -len(_UPLOAD)] not in known:
                log.warning("ingestion queue: removing %s, an upload interrupted before it was queued", path.name)
                path.unlink(missing_ok=True)
        return sorted(items, key=lambda item: (item.seq, item.entry_id))

    def _write(self, target: Path, data: bytes) -> None:
        tmp = self._tmp / f"{target.name}.{uuid.uuid4().hex[:8]}"
        try:
            with open(tmp, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _fsync_dir(self.directory)


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (POSIX); where a directory cannot be opened (Windows) the rename stands as it is."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def damage(path: Path, item: QueueItem) -> IngestResult | None:
    """A failed result when the saved bytes are not the upload's any more (damaged on disk); else None."""
    h = hashlib.sha256()
    with open(path, "rb") as f:  # OSError (the bytes are gone) propagates: recorded as this file's failure
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    if h.hexdigest() == item.sha256:
        return None
    return IngestResult(item.name, "failed", kind="io", reason="the saved upload was damaged on disk "
                        f"({os.path.getsize(path)} of {item.size} bytes, contents changed); upload it again")


def claim_worker(directory: Path) -> tuple[int | None, str]:
    """(descriptor holding the queue's flock, '') or (None, why not): one worker per queue directory, in this
    process or any other (a flock is per open file, so a second queue in the same process is refused too)."""
    if fcntl is None:
        return None, ""
    fd = os.open(Path(directory) / _WORKER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another queue"
        os.close(fd)
        return None, f"another program ({holder}) indexes the uploads of this data directory"
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()}\n".encode(), 0)
    return fd, ""


def release_worker(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the flock
