"""The knowledge base: the one place that writes documents, keeping the vector store and BM25 in step.

Error policy: one unreadable file is reported as an IngestResult with status "failed", its `kind` and a reason,
and a batch goes on; bad configuration raises ValueError at construction. Writes are serialised by a WriteLock
(threads and processes sharing the data directory); reads (search, documents, find) never take it.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from advanced_retrieval.bm25 import BM25Index, BM25IndexError, ids_hash
from advanced_retrieval.keyword_index import KeywordIndex
from advanced_retrieval.locking import LockTimeout, WriteLock
from advanced_retrieval.originals import Originals
from advanced_retrieval.retriever import HybridRetriever
from document_processor import DocumentError, Limits, ParsedDocument, parse_bytes, parse_file, sanitize_name
from vector_db import DocumentRecord, StoreError

log = logging.getLogger(__name__)

Progress = Callable[[str, str, int, int], None]  # (file_name, stage, done, total)
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


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class KnowledgeBase:
    """Ingest, list, find, delete and search documents; the coordinator the CLI, app, engine and eval share.

    Args:
        store: the VectorStore.
        bm25_dir: where the BM25 index is saved.
        embedder: embeds queries for the retriever (the store embeds chunks with its own).
        lock_path: the writers' lock file (default: "write.lock" beside `bm25_dir`).
        limits: parsing limits (document_processor.Limits).
        isolate: parse in a child process with time and memory limits (False only for trusted files).
        lock_timeout: seconds a write waits for another writer before failing.
        originals_dir: where a copy of each indexed file is kept for the source viewer (default: "originals"
            beside `bm25_dir`).

    Opening runs store.recover() and checks the saved BM25 index against the store (generation, chunk count
    and ids hash), rebuilding it when missing or stale; `recovery_messages` says what was repaired.
    """

    def __init__(self, store, bm25_dir: Path, embedder, *, lock_path: Path | None = None,
                 limits: Limits | None = None, isolate: bool = True, lock_timeout: float = 600.0,
                 originals_dir: Path | None = None):
        bm25_dir = Path(bm25_dir)
        self.originals = Originals(originals_dir or bm25_dir.parent / "originals")
        self.store = store
        self.limits = limits or Limits()
        self.isolate = isolate
        self._lock = WriteLock(lock_path or bm25_dir.parent / "write.lock", timeout=lock_timeout)
        self.keyword_index = KeywordIndex(bm25_dir, try_lock=self._lock.attempt)
        self._retriever = HybridRetriever(store, self.keyword_index, embedder)
        with self._lock.hold():
            self.recovery_messages = store.recover() + self.keyword_index.open(store)
            self.recovery_messages += self.originals.prune(d.doc_id for d in store.documents())
        for message in self.recovery_messages:
            log.warning("knowledge base repaired on open: %s", message)

    def close(self) -> None:
        """Let another process own the embedded library (VectorStore.close); nothing else needs closing."""
        closer = getattr(self.store, "close", None)
        if closer is not None:
            closer()

    @property
    def read_only_reason(self) -> str:
        """'' when this process may write; else why not (another process owns the embedded library)."""
        return getattr(self.store, "read_only_reason", "")

    @property
    def retriever(self) -> HybridRetriever:
        return self._retriever

    # -- ingest ---------------------------------------------------------------------------------------------
    def ingest_file(self, path, *, name: str | None = None, progress: Progress | None = None) -> IngestResult:
        """Index one file (shown as `name`, default its basename); never raises for a bad file."""
        path = Path(path)
        shown = sanitize_name(name if name is not None else path.name)
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
        shown, started = sanitize_name(name), time.monotonic()
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
                result = self._write(parsed, report, started)
        except (StoreError, LockTimeout, BM25IndexError, OSError) as e:
            return IngestResult(name, "failed", reason=str(e), kind="store", seconds=time.monotonic() - started)
        if result.status in ("indexed", "replaced"):
            self._keep_original(parsed, source)
        return result

    def _keep_original(self, parsed: ParsedDocument, source: Path | bytes) -> None:
        try:
            self.originals.keep(parsed.doc_id, Path(parsed.file_name).suffix, source)
        except OSError as e:  # the document is indexed; only the page/slide view falls back to the chunk text
            log.warning("could not keep a copy of %s for the source viewer: %s", parsed.file_name, e)

    def original_path(self, doc_id: str) -> Path | None:
        """The stored copy of an indexed file (for the source viewer), or None."""
        return self.originals.path(doc_id)

    def _duplicate(self, doc_id: str, name: str, started: float) -> IngestResult | None:
        record = self.store.get_document(doc_id)
        if record is None or record.status != "ready":
            return None
        return IngestResult(name, "duplicate", reason=f"already indexed as {record.file_name}", doc_id=doc_id,
                            duplicate_of=record.file_name, chunks=record.chunks, units=record.units,
                            unit_name=record.unit_name, seconds=time.monotonic() - started)

    def _write(self, parsed: ParsedDocument, report: Callable[[str, int, int], None], started: float) -> IngestResult:
        """Index the new version fully (store, then BM25), and only then remove older ones of the same name."""
        duplicate = self._duplicate(parsed.doc_id, parsed.file_name, started)  # another writer may have won
        if duplicate is not None:
            return duplicate
        base = self.keyword_index.current(self.store)
        older = [r for r in self.store.find_by_name(parsed.file_name) if r.doc_id != parsed.doc_id]
        record = self.store.add_document(parsed, progress=report)
        report("indexing", 0, 1)
        try:
            index = base.with_chunks(parsed.chunks, generation=self.store.generation())
            self.keyword_index.publish(index)
        except BaseException:
            self.store.delete_document(record.doc_id)  # neither index keeps the new version; the old is intact
            raise
        reason = self._remove_older(older, index) if older else ""
        report("indexing", 1, 1)
        return IngestResult(parsed.file_name, "replaced" if older else "indexed", reason=reason,
                            doc_id=record.doc_id, chunks=record.chunks, units=record.units,
                            unit_name=record.unit_name, seconds=time.monotonic() - started)

    def _remove_older(self, older: list[DocumentRecord], index: BM25Index) -> str:
        try:
            for record in older:
                self.store.delete_document(record.doc_id)
                self.originals.remove(record.doc_id)
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
        """The document with this exact file name (the newest if several), doc_id, or unique doc_id prefix."""
        docs = self.documents()
        named = [d for d in docs if d.file_name == name_or_id]
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
            self.keyword_index.publish(base.without_documents([record.doc_id], generation=self.store.generation()))
        return record

    def clear(self) -> None:
        """Remove every document from both indexes."""
        with self._lock.hold():
            self.store.clear()
            self.originals.clear()
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
