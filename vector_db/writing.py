"""Writing one document's chunks: embedding batch by batch with progress, and checking what ended up stored."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from document_processor import Chunk
from vector_db import lease, library, sweep
from vector_db.client import StoreError
from vector_db.records import DocumentRecord, chunk_to_metadata

Progress = Callable[[str, int, int], None]


def verify_written(chunks_col, lib, record: DocumentRecord) -> None:
    """Raise StoreError unless the record and exactly `record.chunks` chunks of it are stored."""
    count = len(sweep.chunk_ids_of(chunks_col, record.doc_id))
    if count != record.chunks or library.get_record(lib, record.doc_id) is None:
        raise StoreError(f"{record.file_name}: {count} of its {record.chunks} chunks are stored after writing "
                         f"them all (another process removed them); add it again")


def write_chunks(chunks_col, embedder, chunks: list[Chunk], step: int, progress: Progress | None,
                 renew: Callable[[], None]) -> None:
    """Embed and upsert `chunks`, `step` at a time, renewing the writer's lease after each batch."""
    total = len(chunks)
    report = progress_reporter(progress, total, renew)
    report(0)  # the stage starts now: a rate measured from the first batch's end said "13 s left" for 2 min 43 s
    for start in range(0, total, step):
        batch = chunks[start:start + step]
        vectors = embedder.embed([c.index_text for c in batch], progress=lambda d, _t, s=start: report(s + d))
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(batch), embedder.dim):
            raise StoreError(f"embedder {embedder.name} returned shape {vectors.shape} "
                             f"for {len(batch)} texts; expected ({len(batch)}, {embedder.dim})")
        chunks_col.upsert(ids=[c.id for c in batch], embeddings=vectors, documents=[c.text for c in batch],
                          metadatas=[chunk_to_metadata(c) for c in batch])
        renew()
        report(start + len(batch))


def progress_reporter(progress: Progress | None, total: int,
                      renew: Callable[[], None]) -> Callable[[int], None]:
    """progress("embedding", done, total), called only when `done` moved, so a bar never sees repeats; renews the
    writer's lease when RENEW_SECONDS passed (embedding one batch can take minutes)."""
    last = [-1, time.monotonic()]

    def report(done: int) -> None:
        done = min(done, total)
        if time.monotonic() - last[1] >= lease.RENEW_SECONDS:
            last[1] = time.monotonic()
            renew()
        if progress is not None and done != last[0]:
            last[0] = done
            progress("embedding", done, total)

    return report
