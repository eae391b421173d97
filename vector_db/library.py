"""The library collection: one entry per DocumentRecord, the write generation, and what was deleted, all fetched
by id or kind.

Chroma wants an embedding for every entry, so each gets the same one-number vector; nothing searches it.

A deletion leaves a tombstone ("gone:<doc_id>": why, when, by whom), written before the record goes, so that
every data directory sharing the store (issue 27, item 4) removes its kept copy of that document because the
store says it was deleted, never because the store merely does not list it (a server on fresh storage lists
nothing). A clear leaves one per document it removed, saying "cleared".
"""

from __future__ import annotations

import threading
import time

from vector_db.records import DocumentRecord, record_from_metadata, record_to_metadata

_VECTOR = [1.0]
_GENERATION_ID = "meta:generation"
_PREFIX = "doc:"
_GONE = "gone:"
DELETED, CLEARED = "deleted", "cleared"
_bumps = 0  # generation writes started by this process (bump_generation), in any directory
_bumps_lock = threading.Lock()


def _key(doc_id: str) -> str:
    return _PREFIX + doc_id


def get_record(lib, doc_id: str) -> DocumentRecord | None:
    """The record stored for `doc_id`, or None."""
    got = lib.get(ids=[_key(doc_id)], include=["metadatas"])
    return record_from_metadata(got["metadatas"][0]) if got["ids"] else None


def put_record(lib, record: DocumentRecord, extra: dict | None = None) -> None:
    """Write (or overwrite) `record`; `extra` adds bookkeeping keys (a writer's lease) that records do not show."""
    meta = record_to_metadata(record) | (extra or {})
    lib.upsert(ids=[_key(record.doc_id)], embeddings=[_VECTOR], metadatas=[meta])


def all_records(lib) -> list[DocumentRecord]:
    """Every stored record, whatever its status, in no particular order."""
    return [record for record, _meta in all_entries(lib)]


def all_entries(lib) -> list[tuple[DocumentRecord, dict]]:
    """Every stored record with its raw metadata (which holds the writer's lease of an "indexing" record)."""
    got = lib.get(where={"kind": "document"}, include=["metadatas"])
    return [(record_from_metadata(meta), meta) for meta in got["metadatas"]]


def remove_records(lib, doc_ids: list[str]) -> None:
    """Delete the records of `doc_ids` (unknown ids are fine)."""
    if doc_ids:
        lib.delete(ids=[_key(d) for d in doc_ids])


def bumps() -> int:
    """How many generation writes this process has started: a generation read when this was n is still the
    stored one while it is n, in a directory only this process writes (owner.py)."""
    return _bumps


def read_generation(lib) -> int:
    """The current write generation; 0 for a store never written."""
    got = lib.get(ids=[_GENERATION_ID], include=["metadatas"])
    return int(got["metadatas"][0].get("generation", 0)) if got["ids"] else 0


def next_generation(lib) -> int:
    """The value bump_generation would write now: max(current + 1, clock in microseconds)."""
    return max(read_generation(lib) + 1, time.time_ns() // 1000)


def bump_generation(lib, to: int = 0) -> int:
    """Move the generation forward and return it: to `to` when that is larger than the current value, else to
    max(current + 1, clock in microseconds).

    Two processes that read the same old value a moment apart still write different, larger numbers, so a reader
    that saw either one notices the other's write. `to` (from next_generation) lets a writer announce the value
    beforehand, so that the keyword index it saved just before carries the same one.
    """
    global _bumps
    with _bumps_lock:  # counted before the write: a reader that saw the old count re-reads after it
        _bumps += 1
    current = read_generation(lib)
    new = to if to > current else max(current + 1, time.time_ns() // 1000)
    try:
        lib.upsert(ids=[_GENERATION_ID], embeddings=[_VECTOR], metadatas=[{"kind": "meta", "generation": new}])
    finally:
        with _bumps_lock:  # and after it: a reader that read the count during the write reads again
            _bumps += 1
    return new


def record_deleted(lib, doc_ids: list[str], why: str, by: str, step: int) -> None:
    """Leave a tombstone for each of `doc_ids` (`why`: DELETED or CLEARED; `by`: the writer), `step` per call."""
    at = round(time.time(), 3)
    for start in range(0, len(doc_ids), step):
        batch = doc_ids[start:start + step]
        lib.upsert(ids=[_GONE + d for d in batch], embeddings=[_VECTOR] * len(batch),
                   metadatas=[{"kind": "deleted", "doc_id": d, "why": why, "by": by, "at": at} for d in batch])


def deletions(lib) -> dict[str, dict]:
    """{doc_id: {"why", "by", "at"}} of every tombstone (a document added again keeps its old one: readers
    check the records first)."""
    got = lib.get(where={"kind": "deleted"}, include=["metadatas"])
    return {meta["doc_id"]: {k: meta.get(k) for k in ("why", "by", "at")} for meta in got["metadatas"]}
