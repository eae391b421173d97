"""What retrieval returns and how it can be narrowed."""

from __future__ import annotations

from dataclasses import dataclass

from document_processor import Chunk

STRATEGIES = ("auto", "hybrid", "vector", "bm25")


@dataclass(frozen=True)
class Filters:
    """Restrict retrieval to some documents (by doc_id) and/or file types ("pdf", "docx", ...). None = no limit."""

    doc_ids: tuple[str, ...] | None = None
    file_types: tuple[str, ...] | None = None

    def allows(self, chunk: Chunk) -> bool:
        if self.doc_ids is not None and chunk.doc_id not in self.doc_ids:
            return False
        return self.file_types is None or chunk.file_type in self.file_types


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk with every score, so callers can tell 'nothing relevant' from 'something relevant'.

    `score` is the fused (RRF) score, or the single retriever's score for vector/bm25 strategies.
    `vector_score` is cosine similarity in [-1, 1] (None when the chunk was not a vector candidate);
    `bm25_score` is the raw Okapi score (None when not a BM25 candidate). `rank` is 1-based.
    """

    chunk: Chunk
    score: float
    rank: int
    vector_score: float | None = None
    bm25_score: float | None = None
    strategy: str = "hybrid"
