"""What every VectorStore call goes through: Chroma's failures as StoreError, a disk that refused a write, and a
read-only process following the owner of its embedded directory."""

from __future__ import annotations

import functools
import logging
import threading
import time

from chromadb.errors import ChromaError, NotFoundError

from vector_db.client import StoreError, reaching

log = logging.getLogger(__name__)

# SQLite's words for a write the disk refused. Measured (Chroma 1.5.9, disk filled by RLIMIT_FSIZE): after one,
# the next write of the same process waits forever inside Chroma; a new process recovers the database.
_DISK_FAILURES = ("disk I/O error", "database or disk is full")
REOPEN_SECONDS = 30.0  # a read-only process reloads the owner's state at most this often, unless a read fails


def guarded(method):
    """Run a store method with Chroma failures turned into StoreError, looking collections up again once when
    another process (or a server restart on fresh storage) deleted them; remember a disk that refused a write
    (the store then refuses writes with the reason); and in a read-only process, follow the owner's writes and
    read once more on a fresh view when Chroma failed on the old one."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            with reaching(self.where):
                self._follow_owner()
                try:
                    return method(self, *args, **kwargs)
                except NotFoundError:
                    self._forget()
                    return method(self, *args, **kwargs)
        except StoreError as error:
            if any(sign in str(error) for sign in _DISK_FAILURES):
                self._disk_failure = self._disk_failure or str(error)
            if not self._follows_owner() or not isinstance(error.__cause__, ChromaError):
                raise  # only Chroma's own failures can come from a stale view (not a refused write, say)
            log.info("stale read of %s (%s): loading the owner's state and reading again", self.where, error)
        with reaching(self.where):  # a reader whose view broke ("Error finding id") reads the owner's new state
            self._follow_owner(now=True)
            return method(self, *args, **kwargs)

    return wrapper


class Follower:
    """When a process that only reads an embedded directory another process owns should load Chroma afresh.

    Embedded Chroma's view in a reader falls behind the owner's writes until its queries fail with "Error finding
    id" (issue 16, item 6). The view is reloaded when the owner's generation moved, at most every REOPEN_SECONDS,
    or at once (`now`, whatever the generation: the owner may be mid-write) after a read failed on it.
    Measured: each view's memory stays with the process (~5 MB at 8,000 chunks; 39 reloads in 45 s: 349 MB against
    163 MB for a fresh process; with the interval, 226 MB), hence the interval; between reloads, reads see the
    previous state.
    """

    def __init__(self):
        self._followed: int | None = None  # the owner's generation the current view is from
        self._reloaded_at = -REOPEN_SECONDS  # the first move of the generation reloads at once
        self._lock = threading.Lock()

    def due(self, generation: int, now: bool = False) -> bool:
        """Whether to reload now; counts the reload as done when it says yes."""
        with self._lock:
            if self._followed is None:
                self._followed = generation
            moved = generation != self._followed and time.monotonic() - self._reloaded_at >= REOPEN_SECONDS
            if now or moved:
                self._reloaded_at, self._followed = time.monotonic(), generation
                return True
            return False
