"""The ingestion queue on disk: each upload's bytes and a small JSON manifest, written so a crash leaves no half entry.

Layout of the queue directory: `<entry_id>.upload` (the bytes as uploaded), `<entry_id>.json` (the manifest:
name, size, sha256, time queued, state, attempts and, once finished, the result), `tmp/` (files being written),
`worker.lock` (held by the one process whose worker indexes this queue).
Each file is written to tmp/, flushed with fsync and renamed into place, then the directory is fsynced: a rename
is atomic, so a reader sees the whole file or none of it. The manifest is written after the bytes and is the
commit point: an entry exists once its manifest does, and bytes without a manifest are what a crash during an
upload left (removed at open, with a log line).

Nothing read from the folder is trusted: an entry id is used in a path only when it has exactly the form new_id
gives (digits, a dash, hex: no separator, no dot), checked by every function that builds a path, and a manifest is
loaded only when every field has its type and its id is its own file name. Anything else is set aside as
`<name>.damaged` with its upload's bytes kept (the queue lists it; nothing outside the folder is touched).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import os
import re
import time
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
_UPLOAD, _MANIFEST, _DAMAGED, _TMP, _WORKER_LOCK = ".upload", ".json", ".damaged", "tmp", "worker.lock"
_ID = re.compile(r"[0-9]{20}-[0-9a-f]{8}")  # QueueFiles.new_id: nanoseconds since 1970, then 8 random hex digits
_SHA256 = re.compile(r"[0-9a-f]{64}")


class BadEntry(ValueError):
    """A queue file that is not one the queue wrote; the message says which field and why."""


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


@dataclasses.dataclass(frozen=True)
class Pause:
    """Why the worker stopped taking files: the disk refused a write (`cause`, the one line that said so). Every
    waiting upload keeps its saved bytes; the next start resumes them (IngestQueue's docstring says why not
    sooner)."""

    cause: str

    @property
    def disk_full(self) -> bool:
        """Whether the cause says the disk is full (else it refused a write some other way: an I/O error)."""
        return any(w in self.cause.lower() for w in ("full", "no space", "quota", "free on the disk"))


_LIVE = ("stage", "done", "total", "fraction", "seconds_left")  # progress: kept in memory only


def to_json(item: QueueItem) -> str:
    data = {f.name: getattr(item, f.name) for f in dataclasses.fields(item) if f.name not in _LIVE}
    data["result"] = dataclasses.asdict(item.result) if item.result is not None else None
    return json.dumps(data, ensure_ascii=False, indent=1)


def check_id(entry_id: object) -> str:
    """`entry_id` when it has the form new_id gives (so it is safe in a file name); else BadEntry."""
    if not isinstance(entry_id, str) or not _ID.fullmatch(entry_id):
        raise BadEntry(f"entry id {str(entry_id)[:80]!r} is not one the queue makes")
    return entry_id


_ITEM_FIELDS = {"entry_id": str, "seq": int, "name": str, "size": int, "sha256": str, "queued_at": float,
                "state": str, "attempts": int, "started_at": (float, None), "finished_at": (float, None),
                "note": str}
_RESULT_FIELDS = {"file_name": str, "status": str, "reason": str, "kind": str, "doc_id": (str, None),
                  "duplicate_of": (str, None), "chunks": int, "units": int, "unit_name": str, "seconds": float,
                  "warnings": list}


def _typed(data: object, fields: dict, what: str) -> dict:
    """`data` when it is a JSON object with exactly these fields, each of its type (a float may be written as a
    whole number; a bool is never a number); else BadEntry naming the first field that is wrong."""
    if not isinstance(data, dict):
        raise BadEntry(f"{what} is {type(data).__name__}, not an object")
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise BadEntry(f"{what} has unknown fields {', '.join(unknown)}")
    for key, kind in fields.items():
        if key not in data:
            raise BadEntry(f"{what} lacks {key}")
        kinds = kind if isinstance(kind, tuple) else (kind,)
        value = data[key]
        ok = any(value is None if k is None else
                 (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
                 if k is float else isinstance(value, k) and not isinstance(value, bool) for k in kinds)
        if not ok:
            raise BadEntry(f"{what}: {key} is {json.dumps(value)[:40]}, not {'/'.join(_kind_name(k) for k in kinds)}")
    return data


def _kind_name(kind) -> str:
    return {None: "null", str: "text", int: "a whole number", float: "a number", list: "a list"}[kind]


def from_json(text: str, entry_id: str) -> QueueItem:
    """The entry a manifest holds, checked: every field of its type, the id `entry_id` (its file name), seq >= 1,
    size and attempts >= 0, a known state, a sha256 digest, text warnings.

    Raises:
        BadEntry: a manifest the queue did not write, or one damaged.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadEntry(f"it is not whole JSON (cut short or damaged: {exc})") from exc
    data = _typed(data, {**_ITEM_FIELDS, "result": (dict, None)}, "the manifest")
    if check_id(data["entry_id"]) != entry_id:
        raise BadEntry(f"its entry id {data['entry_id']!r} is not its file name's")
    for key, low in (("seq", 1), ("size", 0), ("attempts", 0)):
        if data[key] < low:
            raise BadEntry(f"{key} is {data[key]}, below {low}")
    if data["state"] not in STATES:
        raise BadEntry(f"unknown state {data['state'][:40]!r}")
    if not _SHA256.fullmatch(data["sha256"]):
        raise BadEntry("sha256 is not a SHA-256 digest")
    result = data.pop("result")
    if result is not None:
        result = _typed(result, _RESULT_FIELDS, "its result")
        if not all(isinstance(w, str) for w in result["warnings"]):
            raise BadEntry("its result's warnings are not all text")
        result = IngestResult(**{**result, "warnings": tuple(result["warnings"])})
    return QueueItem(**data, result=result)


@dataclasses.dataclass(frozen=True)
class SetAside:
    """A queue file set aside (renamed `.damaged`) because the queue did not write it as it reads now."""

    file_name: str  # as it is now, in the queue folder
    reason: str
    upload: str  # the bytes kept beside it ('' when there are none)


class QueueFiles:
    """The queue's files under `directory` (created). Names come from entry ids, never from the user."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._tmp = self.directory / _TMP
        self._tmp.mkdir(parents=True, exist_ok=True)
        self.set_aside: tuple[SetAside, ...] = ()  # what the last load() set aside (and earlier ones did)
        self._unmoved: list[SetAside] = []

    @staticmethod
    def new_id() -> str:
        """An id that sorts in upload order and never repeats (the random tail tells apart two in one tick)."""
        return f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"

    def upload_path(self, entry_id: str) -> Path:
        """Where an entry's bytes are. Raises BadEntry for an id new_id could not have made."""
        return self.directory / f"{check_id(entry_id)}{_UPLOAD}"

    def _manifest_path(self, entry_id: str) -> Path:
        return self.directory / f"{check_id(entry_id)}{_MANIFEST}"

    def write_upload(self, entry_id: str, data: bytes) -> None:
        """The bytes, durably and atomically. Raises OSError (disk full, ...), leaving nothing behind."""
        self._write(self.upload_path(entry_id), data)

    def write_manifest(self, item: QueueItem) -> None:
        """The manifest, durably and atomically (it replaces the previous one in one step). Raises OSError."""
        self._write(self._manifest_path(item.entry_id), to_json(item).encode("utf-8"))

    def remove_upload(self, entry_id: str) -> None:
        self.upload_path(entry_id).unlink(missing_ok=True)

    def remove(self, entry_id: str) -> None:
        """Forget an entry: manifest first, so a crash in between leaves orphan bytes (swept), never a manifest
        without its bytes."""
        self._manifest_path(entry_id).unlink(missing_ok=True)
        self.remove_upload(entry_id)

    def load(self) -> list[QueueItem]:
        """Every entry in queue order, after removing what an interrupted write left (temp files, bytes without
        a manifest). A manifest that is not one the queue wrote is renamed `.damaged`, its bytes kept, and listed
        in `set_aside` (as are those set aside by earlier loads), never silently dropped."""
        for leftover in self._tmp.iterdir():
            log.warning("ingestion queue: removing %s, left by an interrupted write", leftover.name)
            leftover.unlink(missing_ok=True)
        items = []
        for path in sorted(self.directory.glob(f"*{_MANIFEST}")):
            try:
                items.append(self._read_manifest(path))
            except (OSError, ValueError) as exc:  # BadEntry and json's JSONDecodeError are ValueErrors
                self._set_aside(path, str(exc))
        self.set_aside = self._damaged()
        known = {item.entry_id for item in items} | {Path(d.upload).stem for d in self.set_aside if d.upload}
        for path in self.directory.glob(f"*{_UPLOAD}"):
            if path.stem not in known:
                log.warning("ingestion queue: removing %s, an upload interrupted before it was queued", path.name)
                path.unlink(missing_ok=True)
        return sorted(items, key=lambda item: (item.seq, item.entry_id))

    def _read_manifest(self, path: Path) -> QueueItem:
        entry_id = check_id(path.name[: -len(_MANIFEST)])
        if path.is_symlink() or self.upload_path(entry_id).is_symlink():
            raise BadEntry("it or its upload is a symbolic link (the queue writes only files)")
        return from_json(path.read_text(encoding="utf-8"), entry_id)

    def _set_aside(self, path: Path, reason: str) -> None:
        """Rename a manifest `<name>.damaged` (its reason in `<name>.damaged.why`); only names in the folder."""
        log.error("ingestion queue: manifest %s is not one the queue wrote (%s); set aside as %s%s, its upload "
                  "kept", path.name, reason, path.name, _DAMAGED)
        target = self.directory / f"{path.name}{_DAMAGED}"
        try:
            os.replace(path, target)
            target.with_name(f"{target.name}.why").write_text(f"{reason}\n", encoding="utf-8")
        except OSError as exc:  # a full disk, say: the next open sets it aside again; the panel lists it meanwhile
            log.error("ingestion queue: could not set %s aside: %s", path.name, exc)
            self._unmoved.append(SetAside(path.name, f"{reason} (could not be renamed: {exc})",
                                          self._upload_beside(path.name[: -len(_MANIFEST)])))

    def _damaged(self) -> tuple[SetAside, ...]:
        out, self._unmoved = list(self._unmoved), []
        for path in sorted(self.directory.glob(f"*{_DAMAGED}")):
            stem = path.name[: -len(_DAMAGED)]
            upload = self._upload_beside(stem[: -len(_MANIFEST)] if stem.endswith(_MANIFEST) else stem)
            why = path.with_name(f"{path.name}.why")
            try:
                reason = why.read_text(encoding="utf-8").strip() if why.is_file() else "not one the queue wrote"
            except (OSError, UnicodeDecodeError) as exc:
                reason = f"not one the queue wrote (its note cannot be read: {exc})"
            out.append(SetAside(path.name, reason[:300], upload))
        return tuple(out)

    def _upload_beside(self, stem: str) -> str:
        """The name of the bytes kept with a set-aside manifest ('' when none); `stem` is a name in the folder."""
        upload = self.directory / f"{stem}{_UPLOAD}"
        return upload.name if upload.is_file() and not upload.is_symlink() else ""

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
