"""The knowledge base: the one place that writes documents, keeping the vector store and BM25 in step.

Error policy: one unreadable file is reported as an IngestResult with status "failed", its `kind` and a reason,
and a batch goes on; bad configuration raises ValueError at construction. Writes are serialised by a WriteLock
(threads and processes sharing the data directory); reads (search, documents, find) never take it, and neither
does opening: repairs at open run only when no write is in progress (a live writer's state is not damage).

A store that lost its data, or cannot be read, raises LibraryDamaged at open and nothing is changed: the kept
originals (advanced_retrieval.library.originals) are the user's only copies, and `rebuild=True` (`cli.py rebuild`)
indexes them again.
"""

from __future__ import annotations

import hashlib
import logging
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from advanced_retrieval.hybrid import HybridRetriever
from advanced_retrieval.keyword.bm25 import BM25Index, ids_hash
from advanced_retrieval.keyword.corpus import BM25IndexError
from advanced_retrieval.keyword.index import KeywordIndex
from advanced_retrieval.library.locking import LockTimeout, WriteLock
from advanced_retrieval.library.originals import Originals
from advanced_retrieval.library.outline import Outline, build_outline
from advanced_retrieval.library.restore import lost_reason, rebuild_from_originals, reindex_lost_documents
from advanced_retrieval.seams import Store
from advanced_retrieval.tables import TableStore, TableStoreError
from advanced_retrieval.types import Progress
from document_processor import DocumentError, Limits, ParsedDocument, parse_bytes, parse_file, sanitize_name
from vector_db import DocumentRecord, LibraryDamaged, StoreError

log = logging.getLogger(__name__)

_MIN_PREFIX = 4  # shortest doc_id prefix `find` accepts, so "a" never picks a document by chance


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file.

    status: "indexed" | "duplicate" | "replaced" | "failed". For "failed", `kind` is a DocumentError kind, or
    "io" (the file could not be read), "store" (the store or index failed) or "error" (an unexpected error).
    """

    file_name: str
    status: str
    reason: str = ""
    kind: str = ""
    doc_id: str | None = None
    duplicate_of: str | None = None
    chunks: int = 0
    units: int = 0
    unit_name: str = ""
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()  # indexed, but part of it read poorly or not at all (e.g. a low-confidence scan)


def shown_name(name: str) -> str:
    """The name a file is listed under: sanitised, in Unicode NFC, so that "café.txt" typed on a Mac (NFD) and on
    Windows (NFC) is one document name and a second upload replaces the first."""
    return unicodedata.normalize("NFC", sanitize_name(name))


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class KnowledgeBase:
    """Ingest, list, find, delete and search documents; the coordinator the CLI, app, engine and eval share.

    Args:
        store: the VectorStore (any Store: advanced_retrieval.seams).
        keyword_index: the BM25 index kept in step with `store` (KeywordIndex over its directory, trying `lock`).
        retriever: searches `store` and `keyword_index` (HybridRetriever).
        originals: where a copy of each indexed file is kept for the source viewer and for rebuilds.
        lock: the writers' lock (threads and processes sharing the data directory).
        tables: where every document's tables are kept as data (TableStore; None: tables are not stored).
        limits: parsing limits (document_processor.Limits).
        isolate: parse in a child process with time and memory limits (False only for trusted files).
        rebuild: index every kept original the library lacks (after the store lost its data); the per-file
            results are in `rebuilt`.
        rebuild_progress: progress(file_name, stage, done, total) during that rebuild.

    The composition root (wiring.knowledge_base) builds the collaborators; nothing here builds another.
    Opening runs store.recover() and checks the saved BM25 index against the store (generation, chunk count
    and ids hash), rebuilding it when missing or stale; a document the store lost chunks of is indexed again
    from its kept original. `recovery_messages` says what was repaired. When another writer holds the lock,
    opening repairs nothing and waits for nothing.

    Raises:
        LibraryDamaged: the store holds no documents while kept originals (or the saved keyword index) show it
            held some, and `rebuild` is False; nothing was changed.
    """

    def __init__(self, store: Store, keyword_index: KeywordIndex, retriever: HybridRetriever, originals: Originals,
                 lock: WriteLock, *, tables: TableStore | None = None, limits: Limits | None = None,
                 isolate: bool = True, rebuild: bool = False, rebuild_progress: Progress | None = None):
        self.store = store
        self.tables = tables
        self.keyword_index = keyword_index
        self._retriever = retriever
        self.originals = originals
        self._lock = lock
        self.limits = limits or Limits()
        self.isolate = isolate
        self.recovery_messages: list[str] = []
        self.rebuilt: list[IngestResult] = []
        lost = lost_reason(store, self.originals, self.keyword_index)
        if lost and not rebuild:
            raise LibraryDamaged(lost)
        self._open(rebuild, rebuild_progress)
        for message in self.recovery_messages:
            log.warning("knowledge base repaired on open: %s", message)

    def _open(self, rebuild: bool, progress: Progress | None) -> None:
        """Repair what a crash or a damaged store left, if no write is in progress; else only load the index."""
        with self._lock.attempt() as free:
            if not free:  # a writer is busy: its "indexing" record and fresh chunks are not damage
                log.info("another writer holds %s: opening without repairs", self._lock.path)
                self.keyword_index.current(self.store)
                return
            before = {d.doc_id: d for d in self.store.documents()}
            self.recovery_messages = self.store.recover() + self.keyword_index.open(self.store)
        if rebuild:
            self.rebuilt = rebuild_from_originals(self.store, self.originals, self.ingest_file, progress)
        else:
            self.rebuilt = reindex_lost_documents(self.store, self.originals, self.ingest_file, before, progress)
        self.recovery_messages += [f"{r.file_name}: {r.status} from its kept original"
                                   + (f" ({r.reason})" if r.reason else "") for r in self.rebuilt]
        with self._lock.attempt() as free:
            if free:
                ready = [d.doc_id for d in self.store.documents()]
                self.recovery_messages += self.originals.prune(ready)
                self.recovery_messages += self._prune_tables(ready)

    def close(self) -> None:
        """Let another process own the embedded library (VectorStore.close); nothing else needs closing."""
        self.store.close()

    @property
    def read_only_reason(self) -> str:
        """'' when this process may write; else why not (another process owns the embedded library)."""
        return self.store.read_only_reason

    @property
    def retriever(self) -> HybridRetriever:
        return self._retriever

    # -- ingest ---------------------------------------------------------------------------------------------
    def ingest_file(self, path, *, name: str | None = None, progress: Progress | None = None) -> IngestResult:
        """Index one file (shown as `name`, default its basename); never raises for a bad file."""
        path = Path(path)
        shown = shown_name(name if name is not None else path.name)
        started = time.monotonic()
        try:
            digest = _file_sha256(path)
        except OSError as e:
            return IngestResult(shown, "failed", reason=f"cannot read the file: {e.strerror or e}", kind="io")
        return self._ingest(shown, digest, progress, started, path,
                            lambda report: parse_file(path, name=shown, limits=self.limits,
                                                      isolate=self.isolate, progress=report))

    def ingest_bytes(self, data: bytes, name: str, *, progress: Progress | None = None) -> IngestResult:
        """Index an upload's bytes under `name`; never raises for bad content."""
        shown, started = shown_name(name), time.monotonic()
        return self._ingest(shown, hashlib.sha256(data).hexdigest(), progress, started, data,
                            lambda report: parse_bytes(data, shown, limits=self.limits,
                                                       isolate=self.isolate, progress=report))

    def ingest_many(self, paths: Iterable, *, progress: Progress | None = None) -> list[IngestResult]:
        """Index several files in order; a file that fails in any way is reported and the batch goes on."""
        results = []
        for path in paths:
            try:
                results.append(self.ingest_file(path, progress=progress))
            except Exception as e:  # a bug on one file must not cost the user the rest of the batch
                log.exception("unexpected error indexing %s", path)
                results.append(IngestResult(Path(path).name, "failed", reason=f"{type(e).__name__}: {e}",
                                            kind="error"))
        return results

    def _ingest(self, name: str, doc_id: str, progress: Progress | None, started: float, source: Path | bytes,
                parse: Callable) -> IngestResult:
        # doc_id is the sha256 of the bytes (document_processor.parsing), so a duplicate costs no parsing
        try:
            duplicate = self._duplicate(doc_id, name, started)
        except StoreError as e:  # a Chroma server that is down is this file's failure too, not the caller's crash
            return IngestResult(name, "failed", reason=str(e), kind="store", seconds=time.monotonic() - started)
        if duplicate is not None:
            return duplicate
        if self.read_only_reason:  # before parsing: the write would be refused anyway
            return IngestResult(name, "failed", reason=self.read_only_reason, kind="store",
                                seconds=time.monotonic() - started)

        def report(stage: str, done: int, total: int) -> None:
            if progress is not None:
                progress(name, stage, done, total)

        try:
            parsed = parse(report)
        except DocumentError as e:
            return IngestResult(name, "failed", reason=e.reason, kind=e.kind, seconds=time.monotonic() - started)
        except OSError as e:
            return IngestResult(name, "failed", reason=f"cannot read the file: {e.strerror or e}", kind="io",
                                seconds=time.monotonic() - started)
        if not parsed.chunks:  # a blank or image-only file: a record nothing can ever cite would only confuse
            return IngestResult(name, "failed", reason="no text found in the file (blank, or only images?)",
                                kind="no_text", doc_id=parsed.doc_id, units=parsed.units, unit_name=parsed.unit_name,
                                seconds=time.monotonic() - started)
        try:
            with self._lock.hold():
                result = self._write(parsed, report, started, source)
            if result.status == "indexed":
                self._retriever.warm_soon()  # the first questions after a batch read nothing (when enabled)
            return replace(result, warnings=tuple(parsed.warnings) + result.warnings) if result.status != "failed" \
                else result
        except (StoreError, LockTimeout, BM25IndexError, OSError) as e:
            return IngestResult(name, "failed", reason=str(e), kind="store", seconds=time.monotonic() - started)

    def _keep_original(self, parsed: ParsedDocument, source: Path | bytes) -> None:
        try:
            self.originals.keep(parsed.doc_id, Path(parsed.file_name).suffix, source, name=parsed.file_name)
        except OSError as e:  # the document is indexed; only the page/slide view falls back to the chunk text
            log.warning("could not keep a copy of %s for the source viewer: %s", parsed.file_name, e)

    def _store_tables(self, parsed: ParsedDocument) -> str:
        """Keep the document's tables as data; '' when stored, else a warning: the text is indexed either way."""
        if self.tables is None:
            return ""
        try:
            self.tables.write(parsed.doc_id, parsed.file_name, parsed.tables, build_outline(parsed.chunks).to_dict())
        except (TableStoreError, OSError) as e:
            log.warning("could not store the tables of %s: %s", parsed.file_name, e)
            return f"its tables could not be stored for calculations ({e}); its text is indexed"
        return ""

    def _delete_tables(self, doc_ids: list[str]) -> None:
        if self.tables is not None:
            self.tables.delete(doc_ids)

    def _prune_tables(self, ready: list[str]) -> list[str]:
        """Tables of documents the store no longer holds (a write killed before its commit) are removed; with a
        shared store, only those of documents it recorded as deleted (as for the originals)."""
        if self.tables is None:
            return []
        try:
            if self.store.shared:
                deleted = self.store.deletions()
                ready = [*ready, *(d for d in self.tables.documents() if d not in deleted)]
            return self.tables.prune(ready)
        except TableStoreError as e:
            return [f"the tables file could not be checked: {e}"]

    def outline(self, doc_id: str) -> Outline:
        """A document's outline: the one kept with it, else built from its stored chunks (and kept, when this
        program may write)."""
        kept = self.tables.outline(doc_id) if self.tables is not None else None
        if kept is not None:
            return Outline.from_dict(kept)
        outline = build_outline(self.store.document_chunks(doc_id))
        if self.tables is not None and not self.read_only_reason and doc_id in self.tables.documents():
            self.tables.set_outline(doc_id, outline.to_dict())
        return outline

    def tables_missing(self) -> list[DocumentRecord]:
        """Documents whose tables were never read (indexed before tables were kept, or the tables file was lost)."""
        if self.tables is None:
            return []
        read = self.tables.documents()
        return [d for d in self.documents() if d.doc_id not in read]

    def fill_missing_tables(self, progress: Progress | None = None) -> list[str]:
        """Read the tables of every document that lacks them from its kept original; one line per document
        (nothing in a program that may not write: another one owns the library and reads them itself)."""
        if self.read_only_reason:
            return []
        lines = []
        for record in self.tables_missing():
            path = self.original_path(record.doc_id)
            if path is None:
                lines.append(f"{record.file_name}: no kept original to read its tables from")
                continue
            try:
                parsed = parse_file(path, name=record.file_name, limits=self.limits, isolate=self.isolate,
                                    progress=(lambda stage, done, total, n=record.file_name: progress(n, stage, done,
                                                                                                   total))
                                    if progress else None)
            except (DocumentError, OSError) as e:
                lines.append(f"{record.file_name}: its tables could not be read ({e})")
                continue
            with self._lock.hold():
                if self.store.get_document(record.doc_id) is not None:
                    self.tables.write(record.doc_id, record.file_name, parsed.tables,
                                      build_outline(parsed.chunks).to_dict())
            lines.append(f"{record.file_name}: {len(parsed.tables)} table(s) read")
        return lines

    def original_path(self, doc_id: str) -> Path | None:
        """The stored copy of an indexed file (for the source viewer), or None; with a shared store, copied from
        it when this data directory lacks one. A copy that cannot be had is logged, and the viewer shows the
        passage's text instead."""
        try:
            return self.originals.path(doc_id)
        except (StoreError, OSError) as e:
            log.warning("the original of %s cannot be had: %s", doc_id[:12], e)
            return None

    def _duplicate(self, doc_id: str, name: str, started: float) -> IngestResult | None:
        record = self.store.get_document(doc_id)
        if record is None or record.status != "ready":
            return None
        return IngestResult(name, "duplicate", reason=f"already indexed as {record.file_name}", doc_id=doc_id,
                            duplicate_of=record.file_name, chunks=record.chunks, units=record.units,
                            unit_name=record.unit_name, seconds=time.monotonic() - started)

    def _write(self, parsed: ParsedDocument, report: Callable[[str, int, int], None], started: float,
               source: Path | bytes) -> IngestResult:
        """Index the new version fully and invisibly (store, BM25, kept original), then make it visible in one
        step, and only then remove older versions of the same name.

        On a failure before that step the library ends as if the upload never happened, and the first error is
        the one raised (a failing rollback is logged; its "indexing" record stays invisible and recovery sweeps it).
        """
        duplicate = self._duplicate(parsed.doc_id, parsed.file_name, started)  # another writer may have won
        if duplicate is not None:
            return duplicate
        base = self.keyword_index.current(self.store)
        record = self.store.add_document(parsed, progress=report, ready=False)
        report("indexing", 0, 1)
        try:
            generation = self.store.next_generation()
            index = base.with_chunks(parsed.chunks, generation=generation)
            self.keyword_index.publish(index)
            self._keep_original(parsed, source)
            table_note = self._store_tables(parsed)
            record = self.store.commit_document(record.doc_id, generation=generation)
        except BaseException:
            self._roll_back(record.doc_id, base)
            raise
        # a search between publish and commit saw the older generation and caught the index up to it (without
        # this document); the store now has the index's generation, so the index goes back in use
        self.keyword_index.use(index)
        result = self._settle_name(record, index, started)
        report("indexing", 1, 1)
        return replace(result, warnings=(table_note,)) if table_note else result

    def _roll_back(self, doc_id: str, base: BM25Index) -> None:
        """Undo an uncommitted write, logging (not raising) what fails, so the caller's first error is the one
        the user sees. The BM25 index in memory goes back to `base`; a saved copy left ahead of the store is
        caught up at the next open or read (its ids no longer match the store's)."""
        self.keyword_index.use(base)
        steps = (("remove its chunks", lambda: self.store.delete_document(doc_id)),
                 ("remove its kept original", lambda: self.originals.remove(doc_id)),
                 ("remove its tables", lambda: self.tables and self.tables.delete([doc_id])),
                 ("save the keyword index", lambda: self.keyword_index.publish(
                     base.at_generation(self.store.generation()))))
        for what, step in steps:
            try:
                step()
            except Exception as e:  # reported here; the write's own error is the one that propagates
                log.warning("rolling back the failed upload of %s: could not %s: %s", doc_id[:12], what, e)

    def _settle_name(self, record: DocumentRecord, index: BM25Index, started: float) -> IngestResult:
        """One document per name: the upload that started last wins, whichever finished first (two programs on
        one Chroma server can upload the same name at once); the others are removed and told so."""
        rivals = [r for r in self.store.find_by_name(record.file_name) if r.doc_id != record.doc_id]
        newest = max([record, *rivals], key=lambda r: (r.added_at, r.doc_id))
        if newest.doc_id != record.doc_id:
            self._remove_older([record], index)
            return IngestResult(record.file_name, "replaced", doc_id=newest.doc_id,
                                reason=f"replaced by a later upload of {newest.file_name} from another program",
                                chunks=record.chunks, units=record.units, unit_name=record.unit_name,
                                seconds=time.monotonic() - started)
        reason = self._remove_older(rivals, index) if rivals else ""
        return IngestResult(record.file_name, "replaced" if rivals else "indexed", reason=reason,
                            doc_id=record.doc_id, chunks=record.chunks, units=record.units,
                            unit_name=record.unit_name, seconds=time.monotonic() - started)

    def _remove_older(self, older: list[DocumentRecord], index: BM25Index) -> str:
        try:
            for record in older:
                self.store.delete_document(record.doc_id)
                self.originals.remove(record.doc_id)
                self._delete_tables([record.doc_id])
                index = index.without_documents([record.doc_id], generation=self.store.generation())
        except StoreError as e:  # the new version is in place; recover() drops the older one on next open
            log.warning("could not remove the previous version of %s: %s", older[0].file_name, e)
            return f"the previous version could not be removed yet ({e}); it will be on next start"
        finally:
            self.keyword_index.publish(index.at_generation(self.store.generation()))
        return f"replaced the previous version (added {time.strftime('%Y-%m-%d %H:%M', time.localtime(older[0].added_at))})"

    # -- library --------------------------------------------------------------------------------------------
    def documents(self) -> list[DocumentRecord]:
        """Ready documents sorted by file name."""
        return self.store.documents()

    def find(self, name_or_id: str) -> DocumentRecord | None:
        """The document with this file name (in any Unicode normal form; the newest if several), doc_id, or unique
        doc_id prefix."""
        docs = self.documents()
        wanted = unicodedata.normalize("NFC", name_or_id)
        named = [d for d in docs if unicodedata.normalize("NFC", d.file_name) == wanted]
        if named:
            return max(named, key=lambda d: d.added_at)
        exact = [d for d in docs if d.doc_id == name_or_id]
        if exact:
            return exact[0]
        prefixed = [d for d in docs if len(name_or_id) >= _MIN_PREFIX and d.doc_id.startswith(name_or_id)]
        return prefixed[0] if len(prefixed) == 1 else None

    def delete(self, name_or_id: str) -> DocumentRecord | None:
        """Remove a document from both indexes; returns its record, or None when nothing matched."""
        with self._lock.hold():
            record = self.find(name_or_id)
            if record is None:
                return None
            base = self.keyword_index.current(self.store)
            self.store.delete_document(record.doc_id)
            self.originals.remove(record.doc_id)
            self._delete_tables([record.doc_id])
            self.keyword_index.publish(base.without_documents([record.doc_id], generation=self.store.generation()))
        self._retriever.warm_soon()
        return record

    def clear(self) -> None:
        """Remove every document from both indexes."""
        with self._lock.hold():
            self.store.clear()
            self.originals.clear()
            if self.tables is not None:
                self.tables.clear()
            self.keyword_index.publish(BM25Index(params=self.keyword_index.params, generation=self.store.generation()))

    def check(self) -> dict:
        """Both indexes compared: documents, chunks in the store, in BM25 (memory) and saved, and whether all
        agree (same chunk ids and generation). Reads only; a stale index is repaired by the next search."""
        generation, store_ids = self.store.generation(), self.store.chunk_ids()
        expected = ids_hash(store_ids)
        index = self.keyword_index.snapshot() or BM25Index(params=self.keyword_index.params, generation=-1)
        saved = self.keyword_index.saved_manifest() or {}
        return {
            "documents": len(self.documents()), "chunks_in_store": len(store_ids), "chunks_in_bm25": index.count,
            "chunks_saved": saved.get("count"), "generation": generation, "bm25_generation": index.generation,
            "consistent": index.ids_hash == expected and index.generation == generation
            and saved.get("ids_hash") == expected and saved.get("generation") == generation,
        }
