"""One writer at a time: a threading.Lock for this process's threads plus an fcntl lock file for other processes."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no fcntl, so only this process's threads are serialised
    fcntl = None


class LockTimeout(TimeoutError):
    """Another writer held the lock for longer than the timeout."""


class WriteLock:
    """Serialises writers across threads and processes sharing one data directory; readers never take it.

    Args:
        path: the lock file (created); None locks threads of this process only.
        timeout: seconds to wait for another writer before LockTimeout.
        poll: seconds between attempts on the file lock.

    Raises:
        ValueError: timeout or poll not positive.
    """

    def __init__(self, path: Path | None, *, timeout: float = 600.0, poll: float = 0.05):
        if timeout <= 0 or poll <= 0:
            raise ValueError(f"timeout and poll must be > 0, got timeout={timeout}, poll={poll}")
        self.path = Path(path) if path is not None else None
        self.timeout = timeout
        self.poll = poll
        self._thread_lock = threading.Lock()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Wait (at most `timeout` seconds) for the lock and hold it for the `with` block.

        Raises:
            LockTimeout: another thread or process kept it longer than `timeout`.
        """
        deadline = time.monotonic() + self.timeout
        if not self._thread_lock.acquire(timeout=self.timeout):
            raise LockTimeout(f"another writer in this process kept the knowledge base busy for {self.timeout:.0f} s")
        try:
            fd = self._open_file()
            try:
                while not self._try_file(fd):
                    if time.monotonic() >= deadline:
                        raise LockTimeout(f"another process kept {self.path} locked for {self.timeout:.0f} s")
                    time.sleep(self.poll)
                yield
            finally:
                self._close_file(fd)
        finally:
            self._thread_lock.release()

    @contextlib.contextmanager
    def attempt(self) -> Iterator[bool]:
        """Take the lock only if it is free right now; yields whether it was taken."""
        if not self._thread_lock.acquire(blocking=False):
            yield False
            return
        try:
            fd = self._open_file()
            try:
                yield self._try_file(fd)
            finally:
                self._close_file(fd)
        finally:
            self._thread_lock.release()

    def _open_file(self) -> int | None:
        if self.path is None or fcntl is None:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    @staticmethod
    def _try_file(fd: int | None) -> bool:
        if fd is None:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    @staticmethod
    def _close_file(fd: int | None) -> None:
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the flock
