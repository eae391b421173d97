"""Reading the whole chunk collection, removing a document's traces, repairing a store at open.

Whole-collection reads list every id first (one call, ~0.5 s at 100k chunks) and then fetch pages by id.
Measured at 100k chunks, the alternatives grow worse with size: offset paging slows with the offset (~130 ms
per 2,000 ids at offset 50,000), and a `where` on one doc_id has a fixed cost (~30 ms) per document.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterator

from vector_db import lease, library
from vector_db.records import READY


def doc_where(doc_ids: list[str]) -> dict:
    """A Chroma `where` selecting the chunks of `doc_ids`: $eq for one id, $in for several."""
    return {"doc_id": {"$eq": doc_ids[0]}} if len(doc_ids) == 1 else {"doc_id": {"$in": list(doc_ids)}}


def pages(chunks_col, include: list[str], page: int) -> Iterator[dict]:
    """Chroma `get` results for every stored chunk, `page` ids at a time (memory stays flat but for the ids)."""
    ids = chunks_col.get(include=[])["ids"]
    for start in range(0, len(ids), page):
        yield chunks_col.get(ids=ids[start:start + page], include=include)


def chunk_ids_of(chunks_col, doc_id: str) -> list[str]:
    """Ids of the stored chunks of one document."""
    return chunks_col.get(where=doc_where([doc_id]), include=[])["ids"]


def delete_ids(chunks_col, ids: list[str], step: int) -> None:
    """Delete chunks by id, `step` at a time (Chroma caps a call at its max batch size)."""
    for start in range(0, len(ids), step):
        chunks_col.delete(ids=ids[start:start + step])


def delete_chunks_of(chunks_col, doc_ids: list[str], step: int) -> int:
    """Delete every chunk of `doc_ids`; return how many went."""
    if not doc_ids:
        return 0
    ids = chunks_col.get(where=doc_where(doc_ids), include=[])["ids"]
    delete_ids(chunks_col, ids, step)
    return len(ids)


def remove_document(chunks_col, lib, doc_id: str, step: int) -> int | None:
    """Delete a document's record, then its chunks; return the chunks removed, None when nothing was there.

    The record goes first: if the process dies between the two, the chunks are orphans that no query shows
    and repair() removes, rather than a "ready" document with chunks missing.
    """
    had_record = library.get_record(lib, doc_id) is not None
    library.remove_records(lib, [doc_id])
    removed = delete_chunks_of(chunks_col, [doc_id], step)
    return removed if had_record or removed else None


def repair(chunks_col, lib, step: int, by: str = "") -> list[str]:
    """Remove half-indexed documents, older duplicates of a file name, damaged documents and orphan chunks.

    A document still "indexing" whose writer is alive (vector_db.lease) is left alone, in any mode: it is a
    write in progress, perhaps by another process on the same Chroma server. Returns one human message per
    repair; [] when the store was consistent. Interrupted writes and older duplicates are recorded as deleted
    (`by` names this process), damaged documents are not: they are indexed again from their kept originals.

    What the records alone condemn (an interrupted write, an older copy of a name) is removed first, reading only
    those documents' chunks; when the counts then add up, that was the whole repair. Only a ready document
    missing chunks, or chunks without a record, need the scan of every chunk's metadata (~9 s at 100k chunks):
    an open after a write killed in a large library costs what that write had written.
    """
    entries = library.all_entries(lib)
    live = {rec.doc_id for rec, meta in entries if rec.status != READY and lease.is_live(meta)}
    records = [rec for rec, _meta in entries if rec.doc_id not in live]
    stored_here = chunks_col.count() - _stored_of(chunks_col, live)  # count(): ~3.5 s at a million chunks
    if _looks_consistent(records, stored_here):
        return []
    messages = []
    condemned = _doomed_by_records(records)
    if condemned:
        counts = _counts_of(chunks_col, list(condemned))
        messages += _remove(chunks_col, lib, records, condemned, counts, step, by)
        records = [r for r in records if r.doc_id not in condemned]
        if _looks_consistent(records, stored_here - sum(counts.values())):  # what was there, less what went
            return messages
    stored = Counter(meta["doc_id"] for got in pages(chunks_col, ["metadatas"], step) for meta in got["metadatas"])
    messages += _remove(chunks_col, lib, records, _doomed(records, stored), stored, step, by)
    orphans = sorted(set(stored) - {r.doc_id for r in records} - live)
    if orphans:
        count = delete_chunks_of(chunks_col, orphans, step)
        messages.append(f"removed {count} chunks left by {len(orphans)} document(s) no longer in the library")
    return messages


def _remove(chunks_col, lib, records, doomed: dict[str, str], stored: Counter, step: int, by: str) -> list[str]:
    """Remove the `doomed` documents' records and chunks, recording as deleted those that were not damaged
    (interrupted, or complete older copies); returns why each went."""
    if not doomed:
        return []
    gone = [r.doc_id for r in records if r.doc_id in doomed and (r.status != READY or stored[r.doc_id] == r.chunks)]
    library.record_deleted(lib, gone, library.DELETED, by, step)
    library.remove_records(lib, list(doomed))
    delete_chunks_of(chunks_col, list(doomed), step)
    return list(doomed.values())


def _counts_of(chunks_col, doc_ids: list[str]) -> Counter:
    """Stored chunks per document, for these documents only."""
    got = chunks_col.get(where=doc_where(doc_ids), include=["metadatas"]) if doc_ids else {"metadatas": []}
    return Counter(meta["doc_id"] for meta in got["metadatas"])


def _stored_of(chunks_col, doc_ids: set[str]) -> int:
    return len(chunks_col.get(where=doc_where(sorted(doc_ids)), include=[])["ids"]) if doc_ids else 0


def same_name(name: str) -> str:
    """The form under which two file names are the same document name: Unicode NFC (a Mac sends "café" in NFD,
    Windows and Linux in NFC; they look identical, so they are one name)."""
    return unicodedata.normalize("NFC", name)


def newest_first(records) -> list:
    """Records newest first: by added_at, then doc_id, so every process picks the same winner of a tie."""
    return sorted(records, key=lambda r: (r.added_at, r.doc_id), reverse=True)


def _doomed_by_records(records) -> dict[str, str]:
    """{doc_id: why it goes} for records not ready and older copies of a file name: the records alone say so."""
    doomed = {r.doc_id: f"removed {r.file_name}: its indexing was interrupted; add it again"
              for r in records if r.status != READY}
    seen_names = set()
    for rec in newest_first(r for r in records if r.status == READY):
        if same_name(rec.file_name) in seen_names:
            doomed[rec.doc_id] = f"removed an older copy of {rec.file_name} (the newest stays)"
        seen_names.add(same_name(rec.file_name))
    return doomed


def _doomed(records, stored: Counter) -> dict[str, str]:
    """{doc_id: why it goes} for records not ready, older copies of a file name, and ready ones missing chunks."""
    doomed = _doomed_by_records(records)
    for rec in records:
        if rec.doc_id not in doomed and stored[rec.doc_id] != rec.chunks:
            doomed[rec.doc_id] = (f"removed {rec.file_name}: {stored[rec.doc_id]} of its {rec.chunks} chunks "
                                  f"are stored; add it again")
    return doomed


def _looks_consistent(records, stored: int) -> bool:
    """All ready, names unique, and the chunk count adds up: then the full metadata scan (~9 s at 100k chunks)
    is skipped. Only orphans exactly offsetting missing chunks could hide behind these checks."""
    names = [same_name(r.file_name) for r in records]
    return (all(r.status == READY for r in records) and len(set(names)) == len(names)
            and sum(r.chunks for r in records) == stored)
