"""VectorStore: chunks and their embeddings in Chroma, a library of DocumentRecords, and a write generation.

Errors: bad configuration raises ValueError at construction; a Chroma server that stops answering, or a Chroma
failure, raises StoreError with the reason. A store never leaves a document half-indexed: add_document removes
what it wrote when anything fails, and recover() sweeps what a killed process left behind. An embedded store
opened while another process owns the directory is read-only (vector_db.owner): its writes raise StoreError.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from chromadb.errors import NotFoundError

from document_processor import Chunk, ParsedDocument
from vector_db import blobs, guard, lease, library, owner, sweep, vector_index, writing
from vector_db import client as client_mod
from vector_db.client import StoreError, describe, embedded_path, reaching
from vector_db.guard import guarded
from vector_db.records import READY, DocumentRecord, chunk_from_stored, record_for
from vector_db.seams import Embedder
from vector_db.search import ChunkFilter, nearest

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,54}[a-zA-Z0-9]")
_COSINE = {"hnsw": {"space": "cosine"}}


class VectorStore:
    """Chunks of documents with their embeddings, searchable by cosine similarity.

    Args:
        client: a Chroma client (make_client / client_from_env).
        embedder: an Embedder (vector_db.seams): .dim, .name, .embed(texts, progress=None), .embed_query(text).
        collection: name of the chunk collection; the library lives in "<collection>-library".
        batch_size: chunks embedded and written per step (default and cap: client.get_max_batch_size()).

    An embedded store claims its directory for this process (vector_db.owner); when another process holds it,
    `read_only_reason` says so and add_document, delete_document and clear raise StoreError with that reason.

    A store on a Chroma server is `shared`: several data directories may use it, so it also keeps the bytes of
    every original in "<collection>-originals" (vector_db.blobs), removed in the same call that removes their
    document. Every store records what it deleted (library.record_deleted), so that a data directory removes
    its copy of an original only because the store says its document was deleted.

    Raises:
        ValueError: a collection name Chroma would refuse, or batch_size < 1.
    """

    def __init__(self, client, embedder: Embedder, *, collection: str = "chunks", batch_size: int | None = None):
        if not _NAME.fullmatch(collection):
            raise ValueError(f"collection must be 3-56 characters of a-z, A-Z, 0-9, '.', '_', '-' "
                             f"starting and ending with a letter or digit; got {collection!r}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be at least 1 or None (the client's maximum), got {batch_size}")
        self._client = client
        self._embedder = embedder
        self._name = collection
        self._batch_size = batch_size
        self._max_batch: int | None = None
        self._collections = None
        self._blobs = None
        self._records_cache: tuple[int, list[DocumentRecord]] | None = None
        self._generation_seen: tuple[int, int] | None = None  # (library.bumps(), the generation then read)
        self._pin = threading.local()  # pinned(): the generation read at the start of a block, per thread
        self._disk_failure = ""
        self._finished = ""  # what finish_interrupted did when the collections were first looked up
        self._follower = guard.Follower()
        self.where = describe(client)
        path = embedded_path(client)
        self.shared = path is None
        self._claim = owner.claim(path) if path is not None else None
        if self._claim is not None:
            weakref.finalize(self, self._claim.release)
        self.read_only_reason = self._claim.read_only_reason(self.where) if self._claim is not None else ""

    # ---- collections -------------------------------------------------------------------------------------------

    def _cols(self):
        """(chunks, library) collections, created on first use so that constructing a store never touches I/O."""
        if self._collections is None:
            if not self.read_only_reason:
                self._finished = vector_index.finish_interrupted(self._client, self._name)
            chunks = self._client.get_or_create_collection(
                self._name, configuration=_COSINE, embedding_function=None,
                metadata={"embedder": self._embedder.name, "dim": int(self._embedder.dim)})
            self._check_embedder(chunks)
            lib = self._client.get_or_create_collection(f"{self._name}-library", embedding_function=None)
            self._collections = (chunks, lib)
        return self._collections

    def _originals(self):
        """The collection of kept originals' bytes (a shared store only), created on first use."""
        if self._blobs is None:
            self._blobs = self._client.get_or_create_collection(f"{self._name}-originals", embedding_function=None)
        return self._blobs

    def _follows_owner(self) -> bool:
        """Whether this store only reads an embedded directory that another process owns (and writes)."""
        return self._claim is not None and not self._claim.owner

    def _follow_owner(self, now: bool = False) -> None:
        """Load Chroma afresh when the owner moved on (guard.Follower says when)."""
        if self._follows_owner() and self._follower.due(library.read_generation(self._cols()[1]), now):
            self._client = client_mod.reopen(self._client)
            self._forget()

    def _forget(self) -> None:
        """Drop cached collections and records, to look them up again (after a deletion elsewhere)."""
        self._collections = None
        self._blobs = None
        self._records_cache = None
        self._generation_seen = None

    def _check_embedder(self, chunks) -> None:
        stored = (chunks.metadata or {}).get("embedder")
        if stored == self._embedder.name:
            return
        if stored and chunks.count() > 0:
            raise StoreError(f"the index at {self.where} holds vectors from {stored}, not {self._embedder.name}: "
                             f"clear the library (or use {stored}) before adding documents")
        chunks.modify(metadata={"embedder": self._embedder.name, "dim": int(self._embedder.dim)})

    def close(self) -> None:
        """Give up this store's claim on an embedded directory (another process may then own it); idempotent.
        The store stays readable, and also gives the claim up when garbage-collected."""
        if self._claim is not None:
            self._claim.release()

    def _writable(self) -> None:
        if self.read_only_reason:
            raise StoreError(self.read_only_reason)
        if self._disk_failure:
            raise StoreError(f"the library's database could not write to the disk earlier ({self._disk_failure}); "
                             f"free some disk space and start the program again (this one cannot write any more)")

    def _step(self) -> int:
        if self._max_batch is None:
            self._max_batch = int(self._client.get_max_batch_size())
        return min(self._batch_size or self._max_batch, self._max_batch)

    # ---- writing -----------------------------------------------------------------------------------------------

    @guarded
    def add_document(self, parsed: ParsedDocument, progress: Progress | None = None, *,
                     ready: bool = True) -> DocumentRecord:
        """Embed and store every chunk of `parsed`, batch by batch; return its "ready" library record.

        Adding a document already complete in the store re-embeds nothing; chunks stored for this doc_id that
        `parsed` no longer has (say, after a change of chunking) are removed. On any failure, what was written
        for this doc_id is removed before the exception propagates. With `ready=False` the record stays
        "indexing" (invisible to readers) until commit_document: a caller with a second index to write (BM25)
        then never shows a document that one of its indexes lacks.

        While writing, the record carries this process's lease (vector_db.lease), renewed every batch, so that
        recovery in another process never takes the write for an interrupted one.

        Raises:
            StoreError: Chroma failed, or the chunks stored at the end are not the ones written (another
                process removed them).
        """
        self._writable()
        chunks = list({c.id: c for c in reversed(parsed.chunks)}.values())[::-1]  # first of duplicate ids wins
        chunks_col, lib = self._cols()
        existing = library.get_record(lib, parsed.doc_id)
        stored = set(sweep.chunk_ids_of(chunks_col, parsed.doc_id))
        new_ids = {c.id for c in chunks}
        if existing is not None and existing.status == READY and existing.chunks == len(chunks) and stored == new_ids:
            return existing
        # Milliseconds: Chroma's embedded storage keeps ~15 significant digits, and a record read back must
        # equal the one returned here.
        record = dataclasses.replace(record_for(parsed, round(time.time(), 3)), chunks=len(chunks))
        try:
            library.put_record(lib, record, lease.lease_fields())
            sweep.delete_ids(chunks_col, sorted(stored - new_ids), self._step())
            writing.write_chunks(chunks_col, self._embedder, chunks, self._step(), progress,
                                 renew=lambda: library.put_record(lib, record, lease.lease_fields()))
            writing.verify_written(chunks_col, lib, record)
            if not ready:
                return record
            done = dataclasses.replace(record, status=READY)
            library.put_record(lib, done)
        except BaseException:
            self._undo(parsed.doc_id)
            raise
        library.bump_generation(lib)
        return done

    @guarded
    def commit_document(self, doc_id: str, *, generation: int = 0) -> DocumentRecord:
        """Make a document added with `ready=False` visible, moving the generation to `generation` (from
        next_generation) unless another write moved it past that meanwhile.

        Raises:
            StoreError: the record or some of its chunks are gone (another process removed them).
        """
        self._writable()
        chunks_col, lib = self._cols()
        record = library.get_record(lib, doc_id)
        if record is None:
            raise StoreError(f"document {doc_id[:12]} was removed by another process before it was complete; "
                             f"add it again")
        writing.verify_written(chunks_col, lib, record)
        done = dataclasses.replace(record, status=READY)
        library.put_record(lib, done)
        library.bump_generation(lib, to=generation)
        return done

    @guarded
    def next_generation(self) -> int:
        """The generation a write finishing now would give the store (for an index saved just before it)."""
        return library.next_generation(self._cols()[1])

    def _undo(self, doc_id: str) -> None:
        """Remove a failed add's traces; if even that fails, recover() sweeps the "indexing" record later."""
        try:
            chunks_col, lib = self._cols()
            sweep.remove_document(chunks_col, lib, doc_id, self._step())
        except Exception as cleanup_error:  # the add's own exception is the one the caller must see
            log.warning("could not remove the partly indexed document %s (recover() will): %s", doc_id, cleanup_error)

    @guarded
    def delete_document(self, doc_id: str) -> int:
        """Remove a document's record and chunks; return how many chunks were removed (0 when unknown)."""
        self._writable()
        chunks_col, lib = self._cols()
        if library.get_record(lib, doc_id) is not None:  # the tombstone first: a kill after it leaves the record
            library.record_deleted(lib, [doc_id], library.DELETED, _by(), self._step())
        removed = sweep.remove_document(chunks_col, lib, doc_id, self._step())
        if self.shared:
            blobs.remove(self._originals(), [doc_id], self._step())
        if removed is None:
            return 0
        library.bump_generation(lib)
        return removed

    @guarded
    def clear(self) -> None:
        """Remove every document and chunk (the generation keeps growing, so other processes see the change)."""
        self._writable()
        _chunks_col, lib = self._cols()
        doc_ids = [r.doc_id for r in library.all_records(lib)]
        library.record_deleted(lib, doc_ids, library.CLEARED, _by(), self._step())
        for name in [self._name] + ([f"{self._name}-originals"] if self.shared else []):
            try:
                self._client.delete_collection(name)
            except NotFoundError:
                log.info("collection %s was already gone at %s", name, self.where)
        self._forget()
        library.remove_records(lib, doc_ids)
        library.bump_generation(self._cols()[1])

    # ---- originals and deletions -------------------------------------------------------------------------------

    @guarded
    def keep_original(self, doc_id: str, name: str, suffix: str, data: bytes) -> None:
        """Store the bytes of `doc_id`'s original (a shared store only: see the class docstring).

        Raises:
            StoreError: Chroma failed, or this store is not shared (an embedded library keeps its originals in
                its own data directory).
        """
        self._writable()
        if not self.shared:
            raise StoreError(f"the library at {self.where} is not shared: its originals stay in its data directory")
        blobs.put(self._originals(), doc_id, name, suffix, data)

    @guarded
    def original(self, doc_id: str) -> tuple[str, str, bytes] | None:
        """(name, suffix, bytes) of the stored original of `doc_id`; None when none is stored (or not shared)."""
        return blobs.get(self._originals(), doc_id) if self.shared else None

    @guarded
    def stored_originals(self) -> dict[str, int]:
        """{doc_id: size in bytes} of every stored original ({} when not shared)."""
        return blobs.stored(self._originals()) if self.shared else {}

    @guarded
    def deletions(self) -> dict[str, dict]:
        """{doc_id: {"why": "deleted" | "cleared", "by", "at"}} of every document this store recorded as removed
        (a document added again since is also listed: check the records first)."""
        return library.deletions(self._cols()[1])

    # ---- reading -----------------------------------------------------------------------------------------------

    def _records(self) -> list[DocumentRecord]:
        """Every record, re-read only when the generation moved (100 records cost ~7 ms, the generation
        ~0.5 ms). The generation is read first, so a write racing the read leaves a stale key that the next
        call notices."""
        lib = self._cols()[1]
        generation = self._generation()
        cached = self._records_cache
        if cached is None or cached[0] != generation:
            cached = (generation, library.all_records(lib))
            self._records_cache = cached
        return cached[1]

    def _ready(self) -> list[DocumentRecord]:
        return [r for r in self._records() if r.status == READY]

    @guarded
    def holds_records(self) -> bool:
        """True when the store holds any document record, ready or still "indexing": a first write cut short
        (killed before its commit) leaves one, a store that lost its data holds none."""
        return bool(self._records())

    @guarded
    def documents(self) -> list[DocumentRecord]:
        """Ready documents, sorted by file name (then by when they were added)."""
        return sorted(self._ready(), key=lambda r: (r.file_name.lower(), r.file_name, r.added_at))

    @guarded
    def get_document(self, doc_id: str) -> DocumentRecord | None:
        """The record of `doc_id` whatever its status ("indexing" or "ready"), or None."""
        return library.get_record(self._cols()[1], doc_id)

    @guarded
    def find_by_name(self, file_name: str) -> list[DocumentRecord]:
        """Ready documents called `file_name` (in any Unicode normal form: sweep.same_name), newest first."""
        wanted = sweep.same_name(file_name)
        return sweep.newest_first(r for r in self._ready() if sweep.same_name(r.file_name) == wanted)

    @guarded
    def count(self) -> int:
        """Chunks of ready documents."""
        return sum(r.chunks for r in self._ready())

    @guarded
    def generation(self) -> int:
        """A number that changes with every completed add, delete or clear, in this process or any other.

        It only grows within one writer; compare it for equality, not order, across processes."""
        return self._generation()

    def _generation(self) -> int:
        pinned = getattr(self._pin, "generation", None)
        if pinned is not None:
            return pinned
        if self._claim is None or not self._claim.writes_alone:  # a server, another process's directory, or let go
            return library.read_generation(self._cols()[1])
        # Only this process writes this directory (owner.py), and every generation write counts itself in
        # library.bumps() before and after: the value read while the count was n is current while it is n. (A
        # read costs a Chroma get, ~1 ms alone, ~4 ms of a question while the query is embedded.)
        count = library.bumps()
        seen = self._generation_seen
        if seen is not None and seen[0] == count:
            return seen[1]
        value = library.read_generation(self._cols()[1])
        self._generation_seen = (count, value)
        return value

    @guarded
    def live_generation(self) -> int:
        """The generation as stored now, even inside a pinned() block: what an index kept in step with the store
        must compare with before replacing itself (a pinned view may be older than what a writer published)."""
        return library.read_generation(self._cols()[1])

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Within the block, on this thread, every read takes the generation read once at its start: one
        consistent view for a retrieval, which read it four times (~1.5 ms each at 28,000 chunks). Other
        threads, and the next block, read it afresh, so a write is seen by the next question as before."""
        if getattr(self._pin, "generation", None) is not None:  # nested: the outer block's view
            yield
            return
        self._pin.generation = self.generation()
        try:
            yield
        finally:
            self._pin.generation = None

    @contextlib.contextmanager
    def unpinned(self) -> Iterator[None]:
        """Within the block, on this thread, reads see the store as it is now, even inside pinned(): for an index
        catching up to the live generation, whose content must be the live one too."""
        held = getattr(self._pin, "generation", None)
        self._pin.generation = None
        try:
            yield
        finally:
            self._pin.generation = held

    def _ready_ids(self) -> set[str]:
        return {r.doc_id for r in self._ready()}

    @guarded
    def chunk_counts(self) -> dict[str, int]:
        """{doc_id: chunks} of the ready documents as stored now, even inside a pinned() block (an index catching up
        to the live generation must see the live documents): one read of the records, no chunk is listed."""
        return {r.doc_id: r.chunks for r in library.all_records(self._cols()[1]) if r.status == READY}

    @guarded
    def chunk_ids(self) -> list[str]:
        """Ids of every stored chunk of a ready document."""
        ready, chunks_col = self._ready(), self._cols()[0]
        if not ready:
            return []
        if sum(r.chunks for r in ready) == chunks_col.count():
            # Nothing but ready documents' chunks is stored: one call for every id (~0.5 s at 100k chunks).
            return chunks_col.get(include=[])["ids"]
        return chunks_col.get(where=sweep.doc_where(sorted(r.doc_id for r in ready)), include=[])["ids"]

    def iter_chunks(self, batch: int = 2000) -> Iterator[Chunk]:
        """Every stored chunk of a ready document, rebuilt as Chunk, fetched `batch` at a time.

        A write during the iteration may be missed or half seen: a caller building an index from this compares
        generation() before and after.

        Raises:
            ValueError: batch < 1.
        """
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        with reaching(self.where):
            ready = self._ready_ids()
            include = ["documents", "metadatas"]
            pages = sweep.pages(self._cols()[0], include, min(batch, self._step())) if ready else iter(())
        while True:
            with reaching(self.where):
                got = next(pages, None)
            if got is None:
                return
            for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
                if meta["doc_id"] in ready:
                    yield chunk_from_stored(cid, text, meta)

    @guarded
    def document_chunks(self, doc_id: str) -> list[Chunk]:
        """Every stored chunk of one ready document, in reading order ([] for an unknown or unfinished one)."""
        if doc_id not in self._ready_ids():
            return []
        chunks_col = self._cols()[0]
        ids = sweep.chunk_ids_of(chunks_col, doc_id)
        out = []
        for start in range(0, len(ids), self._step()):
            got = chunks_col.get(ids=ids[start:start + self._step()], include=["documents", "metadatas"])
            out += [chunk_from_stored(cid, text, meta)
                    for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)]
        return sorted(out, key=lambda c: c.ordinal)

    @guarded
    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked; ids not stored (or of unready documents) are skipped."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        ready, step, found = self._ready_ids(), self._step(), {}
        for start in range(0, len(wanted), step):
            got = self._cols()[0].get(ids=wanted[start:start + step], include=["documents", "metadatas"])
            for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True):
                if meta["doc_id"] in ready:
                    found[cid] = chunk_from_stored(cid, text, meta)
        return [found[i] for i in ids if i in found]

    @guarded
    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of these chunk ids (ids not stored are left out); no embedding is computed."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        out: dict[str, np.ndarray] = {}
        step = self._step()
        for start in range(0, len(wanted), step):
            got = self._cols()[0].get(ids=wanted[start:start + step], include=["embeddings"])
            out.update((cid, np.asarray(vec, dtype=np.float32)) for cid, vec in zip(got["ids"], got["embeddings"],
                                                                                     strict=True))
        return out

    @guarded
    def query(self, vector: np.ndarray, n: int, filters: ChunkFilter | None = None) -> list[tuple[Chunk, float]]:
        """The `n` chunks nearest to `vector` as (chunk, cosine similarity), best first; [] when nothing matches.

        Raises:
            ValueError: `vector` does not have the embedder's dimension.
        """
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self._embedder.dim:
            raise ValueError(f"query vector has {vector.shape[0]} dimensions; the embedder makes {self._embedder.dim}")
        if n <= 0:
            return []
        return nearest(self._cols()[0], self._records(), vector, n, filters)

    # ---- repair ------------------------------------------------------------------------------------------------

    @guarded
    def recover(self) -> list[str]:
        """Sweep what an interrupted process left: half-indexed documents (unless their writer still runs),
        chunks without a record, damaged documents, and older duplicates of a file name (the newest stays); then
        probe the vector index and rebuild it from the stored texts when chunks cannot be found by vector search.
        Returns one message per repair. A read-only store repairs nothing (the owner does)."""
        if self.read_only_reason:
            return []
        chunks_col, lib = self._cols()
        messages = [self._finished] if self._finished else []
        self._finished = ""
        messages += sweep.repair(chunks_col, lib, self._step(), by=_by())
        if messages:
            library.bump_generation(lib)
        if self.shared:
            self._sweep_originals(lib)
        problem = vector_index.probe(chunks_col, documents=[(r.doc_id, r.chunks) for r in self._ready()])
        if problem:
            count = vector_index.rebuild(self._client, self._name, self._embedder, _COSINE, self._step())
            self._forget()
            messages.append(f"the vector index was damaged ({problem}): rebuilt it by embedding the {count} "
                            f"stored chunks again")
        return messages

    def _sweep_originals(self, lib) -> None:
        """Remove stored originals of documents recorded as deleted that have no record (a delete killed between
        its steps, or an interrupted write recovery removed); heads are read before records, so a write in
        progress (record first, original after) is never taken for one."""
        kept = blobs.stored(self._originals())
        if not kept:
            return
        recorded = {r.doc_id for r in library.all_records(lib)}
        gone = sorted(d for d in set(kept) & set(library.deletions(lib)) if d not in recorded)
        if gone:
            blobs.remove(self._originals(), gone, self._step())
            log.info("removed %d stored original(s) of deleted documents at %s", len(gone), self.where)


def _by() -> str:
    """Who removes documents, as their tombstones name it."""
    return f"{socket.gethostname()}, process {os.getpid()}"
