"""Who is writing a document: a lease on each "indexing" record, so recovery never sweeps a live write.

A record still "indexing" is either a write in progress or one that a killed process left behind. Only the
second may be swept. With a Chroma server, processes with different data directories share one store and no
lock, so recovery in one process cannot tell the two apart from the record alone (issue 16, item 1: a `docs`
in another process removed a 10,000-chunk document while it was being embedded). So every "indexing" record
names its writer (host, pid and the process's start time, which tells a reused pid from the original) and
when the writer last showed it was alive. A record is abandoned when its writer is on this host and no longer
runs, or, for a writer on another host, when it has not renewed the lease for LEASE_SECONDS.
"""

from __future__ import annotations

import os
import socket
import time

LEASE_SECONDS = 900.0  # a writer renews at least every RENEW_SECONDS while embedding; 15 min covers a stalled host
RENEW_SECONDS = 30.0
WRITER_KEY = "writer"
HEARTBEAT_KEY = "heartbeat"


def _stat(pid: int) -> list[str]:
    """Fields 3.. of /proc/PID/stat (state first), [] when unknown (no /proc, or the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return []
    return stat.rsplit(")", 1)[-1].split() if ")" in stat else []


def _start_ticks(pid: int) -> str:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); '' when unknown."""
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else ""


def writer_id() -> str:
    """'host:pid:start' naming this process for as long as it runs."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_ticks(pid)}"


def lease_fields(now: float | None = None) -> dict:
    """The metadata a writer puts on its "indexing" record (and renews)."""
    return {WRITER_KEY: writer_id(), HEARTBEAT_KEY: float(time.time() if now is None else now)}


def _runs_here(pid: int, start: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process with this pid: it runs
        pass
    fields = _stat(pid)
    if fields and fields[0] in ("Z", "X"):  # killed, not yet reaped by its parent: it writes nothing any more
        return False
    return not start or not fields or fields[19] == start


def is_live(meta: dict, now: float | None = None) -> bool:
    """Whether the writer named in an "indexing" record's metadata may still be writing it.

    A record without a writer (written by an older version) counts as abandoned, as before leases existed.
    """
    writer = str(meta.get(WRITER_KEY) or "")
    host, _, rest = writer.partition(":")
    pid_text, _, start = rest.partition(":")
    if not writer or not pid_text.isdigit():
        return False
    if host == socket.gethostname():
        return _runs_here(int(pid_text), start)
    heartbeat = float(meta.get(HEARTBEAT_KEY) or 0.0)
    return (time.time() if now is None else now) - heartbeat < LEASE_SECONDS
