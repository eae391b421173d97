"""The library collection: one entry per DocumentRecord plus the write generation, all fetched by id or kind.

Chroma wants an embedding for every entry, so each gets the same one-number vector; nothing searches it.
"""

from __future__ import annotations

import time

from vector_db.records import DocumentRecord, record_from_metadata, record_to_metadata

_VECTOR = [1.0]
_GENERATION_ID = "meta:generation"
_PREFIX = "doc:"


def _key(doc_id: str) -> str:
    return _PREFIX + doc_id


def get_record(lib, doc_id: str) -> DocumentRecord | None:
    """The record stored for `doc_id`, or None."""
    got = lib.get(ids=[_key(doc_id)], include=["metadatas"])
    return record_from_metadata(got["metadatas"][0]) if got["ids"] else None


def put_record(lib, record: DocumentRecord) -> None:
    """Write (or overwrite) `record`."""
    lib.upsert(ids=[_key(record.doc_id)], embeddings=[_VECTOR], metadatas=[record_to_metadata(record)])


def all_records(lib) -> list[DocumentRecord]:
    """Every stored record, whatever its status, in no particular order."""
    got = lib.get(where={"kind": "document"}, include=["metadatas"])
    return [record_from_metadata(meta) for meta in got["metadatas"]]


def remove_records(lib, doc_ids: list[str]) -> None:
    """Delete the records of `doc_ids` (unknown ids are fine)."""
    if doc_ids:
        lib.delete(ids=[_key(d) for d in doc_ids])


def read_generation(lib) -> int:
    """The current write generation; 0 for a store never written."""
    got = lib.get(ids=[_GENERATION_ID], include=["metadatas"])
    return int(got["metadatas"][0].get("generation", 0)) if got["ids"] else 0


def bump_generation(lib) -> int:
    """Move the generation forward and return it.

    The new value is max(old + 1, clock in microseconds): two processes that read the same old value a moment
    apart still write different, larger numbers, so a reader that saw either one notices the other's write.
    """
    new = max(read_generation(lib) + 1, time.time_ns() // 1000)
    lib.upsert(ids=[_GENERATION_ID], embeddings=[_VECTOR], metadatas=[{"kind": "meta", "generation": new}])
    return new
