"""Getting the library back from the kept originals when the store lost documents (issue 16, item 2).

The store can lose its data without any error: a deleted or emptied chroma.sqlite3 is recreated empty, a Chroma
server restarted on fresh storage answers with no collections. Before, opening then "repaired" everything in
step with the empty store: the keyword index was emptied and every kept original deleted as "no longer indexed".
Now an empty store with originals (or a saved keyword index) beside it is reported as LibraryDamaged, and the
originals are indexed again only when asked (`KnowledgeBase(rebuild=True)`, `cli.py rebuild`). Documents that
recovery removed because their chunks were damaged are indexed again from their originals at once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from advanced_retrieval.library.originals import NOT_INDEXED, Originals
from advanced_retrieval.seams import Store
from advanced_retrieval.types import Progress
from vector_db import REBUILD_HINT, DocumentRecord

log = logging.getLogger(__name__)



def lost_reason(store: Store, originals: Originals, keyword_index) -> str:
    """Why the store looks like it lost its data ('' when it does not).

    A store never written has generation 0; clearing the library moves the generation on. So generation 0 with
    kept originals, or a saved keyword index that held chunks, means the store forgot what it held, unless the
    store still holds a record: a first write killed after saving the keyword index and the original but before
    its commit leaves its "indexing" record, which recovery sweeps (that is a crash, not a loss).
    """
    if store.generation() != 0 or store.holds_records():
        return ""
    kept = originals.count()
    manifest = keyword_index.saved_manifest() or {}
    saved = int(manifest.get("count") or 0)
    if not kept and not saved:
        return ""
    evidence = [f"{kept} kept original(s) in {originals.directory}"] if kept else []
    evidence += [f"a keyword index of {saved} chunks"] if saved else []
    return (f"the library at {store.where} holds no documents, but {' and '.join(evidence)} show that it held "
            f"some: its data was lost (a deleted or emptied chroma.sqlite3, or a Chroma server on fresh storage). "
            f"Nothing was changed; {REBUILD_HINT}")


class IngestFile(Protocol):
    """KnowledgeBase.ingest_file: index one file under `name`; a result with status "failed" when it cannot."""

    def __call__(self, path: Path, *, name: str | None = None, progress: Progress | None = None): ...


def rebuild_from_originals(store: Store, originals: Originals, ingest_file: IngestFile,
                           progress: Progress | None = None) -> list:
    """Index every kept original the library lacks, under its kept name; returns one IngestResult per file.

    A copy that cannot be indexed is moved to originals/not-indexed/ (never deleted) and its result says so.
    """
    indexed = {d.doc_id for d in store.documents()}
    return [_reindex(originals, ingest_file, doc_id, path, progress) for doc_id, path in originals.entries()
            if doc_id not in indexed]


def reindex_lost_documents(store: Store, originals: Originals, ingest_file: IngestFile,
                           before: Mapping[str, DocumentRecord], progress: Progress | None = None) -> list:
    """Index again, from their kept originals, the documents that were ready before recovery and are gone now
    without a newer document of the same name (recovery removed them because chunks were missing)."""
    now = store.documents()
    names, ids = {d.file_name for d in now}, {d.doc_id for d in now}
    gone = {doc_id for doc_id, rec in before.items() if doc_id not in ids and rec.file_name not in names}
    return [_reindex(originals, ingest_file, doc_id, path, progress) for doc_id, path in originals.entries()
            if doc_id in gone]


def _reindex(originals: Originals, ingest_file: IngestFile, doc_id: str, path: Path, progress: Progress | None):
    name = originals.name(doc_id) or f"{doc_id[:12]}{path.suffix}"
    result = ingest_file(path, name=name, progress=progress)
    if result.status == "failed":
        moved = originals.set_aside(doc_id)
        log.warning("could not index the kept original of %s again (%s); moved to %s", name, result.reason, moved)
        result = replace(result, reason=f"{result.reason}; the file is kept in {originals.directory / NOT_INDEXED}")
    return result
