"""Nearest-chunk search with document filters, avoiding Chroma's slow `where` path when it can."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from document_processor import Chunk
from vector_db.records import READY, DocumentRecord, chunk_from_stored
from vector_db.sweep import doc_where

# Over-fetch limits, measured at 100k chunks: an unfiltered query for 10 costs ~3 ms, for 200 ~25 ms, for 400
# ~42 ms, for 1000 ~180 ms, while a `where` on doc_id costs ~80-330 ms whatever n. Beyond these limits a
# `where` query is used instead.
OVERFETCH = 20  # most candidates per wanted hit
MAX_CANDIDATES = 500  # most candidates in all
MARGIN = 2  # candidates fetched = MARGIN x the number expected to hold n allowed ones


class ChunkFilter(Protocol):
    """What query() reads from advanced_retrieval.Filters (vector_db cannot import it: imports go left to right)."""

    doc_ids: tuple[str, ...] | None
    file_types: tuple[str, ...] | None


def allowed_documents(records: Sequence[DocumentRecord], filters: ChunkFilter | None) -> dict[str, int]:
    """{doc_id: chunk count} of the ready documents that `filters` lets through."""
    doc_ids = None if filters is None else filters.doc_ids
    file_types = None if filters is None else filters.file_types
    return {
        r.doc_id: r.chunks for r in records
        if r.status == READY and (doc_ids is None or r.doc_id in doc_ids)
        and (file_types is None or r.file_type in file_types)
    }


def nearest(chunks_col, records: Sequence[DocumentRecord], vector: np.ndarray, n: int,
            filters: ChunkFilter | None) -> list[tuple[Chunk, float]]:
    """The `n` chunks of allowed documents nearest to `vector`, as (chunk, cosine similarity), best first.

    `records` are all library records, whatever their status. When the allowed documents hold a share f of
    the chunks, MARGIN*n/f unfiltered candidates are fetched and filtered here, provided that is at most
    OVERFETCH*n and MAX_CANDIDATES; otherwise, or when that falls short, Chroma is asked with a `where` on
    doc_id. Sizes come from the records: Chroma's count() alone costs ~9 ms at 100k chunks.
    """
    allowed = allowed_documents(records, filters)
    wanted = sum(allowed.values())
    if n <= 0 or wanted == 0:
        return []
    total = sum(r.chunks for r in records)
    everything = len(allowed) == len(records)  # the usual, unfiltered case: n candidates are enough
    fetch = n if everything else min(total, math.ceil(MARGIN * n * total / wanted))
    if everything or fetch <= min(n * OVERFETCH, MAX_CANDIDATES):
        hits = _ask(chunks_col, vector, fetch, None)
        kept = [(c, s) for c, s in hits if c.doc_id in allowed]
        if len(kept) >= n or len(hits) < fetch:  # fewer hits than asked: the whole collection was seen
            return kept[:n]
    return _ask(chunks_col, vector, min(n, wanted), doc_where(sorted(allowed)))[:n]


def _ask(chunks_col, vector: np.ndarray, k: int, where: dict | None) -> list[tuple[Chunk, float]]:
    got = chunks_col.query(query_embeddings=[vector], n_results=max(1, k), where=where,
                           include=["documents", "metadatas", "distances"])
    return [
        (chunk_from_stored(cid, text, meta), 1.0 - float(dist))
        for cid, text, meta, dist in zip(got["ids"][0], got["documents"][0], got["metadatas"][0],
                                         got["distances"][0], strict=True)
    ]
