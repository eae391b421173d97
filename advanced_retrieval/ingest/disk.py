"""Whether a file's failure was the disk's doing (it refused a write) rather than the file's: the ingestion queue
then keeps the file queued and pauses, instead of failing it."""

from __future__ import annotations

import errno
import logging
import shutil
from pathlib import Path

from advanced_retrieval.library.knowledge_base import IngestResult

log = logging.getLogger(__name__)

# How a refused write reads once it reaches a result's reason: SQLite's words (vector_db/guard.py _DISK_FAILURES),
# the store's own sentence after one, and the OS's.
_DISK_REFUSED = ("database or disk is full", "disk I/O error", "could not write to the disk earlier",
                 "No space left on device", "Disk quota exceeded")
LOW_DISK_BYTES = 32 << 20  # a library write that fails with less than this free is taken for the disk's doing
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def free_bytes(directory: Path) -> int | None:
    """Free space on the disk holding `directory` (None when it cannot be read)."""
    try:
        return shutil.disk_usage(directory).free
    except OSError as exc:
        log.warning("ingestion queue: cannot read the free space of %s: %s", directory, exc)
        return None


def disk_cause(result: IngestResult, directory: Path, size: int) -> str:
    """Why a failed result is the disk's doing rather than the file's ('' when it is not): the reason names a
    refused write, or the library's write failed while the disk holds almost nothing free. The second, because
    Chroma's own words for a full disk need not say so (measured, Chroma 1.5.9 on a full tmpfs: "Error in
    compaction: Failed to apply logs to the metadata segment")."""
    if result.status != "failed" or result.kind not in ("store", "io", "error"):
        return ""
    if any(words in result.reason for words in _DISK_REFUSED):
        return result.reason
    free = free_bytes(directory)
    if free is None or free >= max(2 * size, LOW_DISK_BYTES):
        return ""
    return f"only {free / 1e6:.1f} MB free on the disk ({result.reason})"
