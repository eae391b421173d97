"""One writing program per embedded Chroma directory.

Embedded Chroma keeps each collection's vector index (HNSW) in the memory of the process that opened it and
writes it back from there. Two processes writing to one directory therefore overwrite each other's index:
measured on Chroma 1.5.9, two processes each ingesting five ~1,400-chunk files into one directory, taking turns
under the library's write lock, left 15 of one file's 604 chunks unreachable by vector search and the index
answering later queries with "Error finding id". Serialising the writes does not help; only one writer does.

So the first process to open a directory claims it (an flock on "owner.lock" inside it, held while any store of
this process uses the directory; the kernel drops it when the process dies, even by SIGKILL). A second process
opens the directory read-only: it can list, search and ask, and every write fails with a message naming the
owner and the way out (close it, or share the library through a Chroma server). A process that opened read-only
stays so: its in-memory index may be behind the owner's writes, and writing from it would do the same damage.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; one process per directory is then the user's to keep
    fcntl = None

LOCK_NAME = "owner.lock"
_registry_lock = threading.Lock()
_held: dict[str, list[int]] = {}  # resolved directory -> [descriptor holding the flock, stores using it]


class Claim:
    """This process's claim on a directory: `owner` is True when it may write, else `holder` describes who does."""

    def __init__(self, directory: Path, owner: bool, holder: str = ""):
        self.directory = directory
        self.owner = owner
        self.holder = holder
        self._released = False

    @property
    def writes_alone(self) -> bool:
        """Whether, while this claim is held, no other process can write the directory (owner, not released)."""
        return self.owner and not self._released

    def read_only_reason(self, where: str) -> str:
        """'' for the owner; else why writes are refused and what to do, for the person who tried."""
        if self.owner:
            return ""
        return (f"the library ({where}) is open in another program ({self.holder}), and embedded Chroma allows "
                f"one writing program at a time: close that program and start this one again, or share the "
                f"library through a Chroma server (set CHROMA_HOST and CHROMA_PORT, see the README)")

    def release(self) -> None:
        """Give the claim back (once); the flock goes when the last store of this process on the directory does."""
        if self._released or not self.owner:
            return
        self._released = True
        key = str(self.directory)
        with _registry_lock:
            entry = _held.get(key)
            if entry is None:
                return
            entry[1] -= 1
            if entry[1] <= 0:
                del _held[key]
                os.close(entry[0])  # closing the descriptor drops the flock


def claim(directory: Path) -> Claim:
    """Claim `directory` for this process if no other process has; never blocks.

    Raises:
        OSError: the lock file cannot be created (the directory is not writable).
    """
    directory = Path(directory).resolve()
    key = str(directory)
    if fcntl is None:
        return Claim(directory, owner=True)
    with _registry_lock:
        if key in _held:
            _held[key][1] += 1
            return Claim(directory, owner=True)
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            return Claim(directory, owner=False, holder=holder)
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {_command_line()}\n".encode(), 0)
        _held[key] = [fd, 1]
        return Claim(directory, owner=True)


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 400, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "a process that did not say which"


def _command_line() -> str:
    words = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"] + sys.argv[1:3]
    return " ".join(w for w in words if w)[:200]
