"""What retrieval returns, how it can be narrowed, and how indexing reports its progress."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from document_processor import Chunk

STRATEGIES = ("auto", "hybrid", "vector", "bm25")
Progress = Callable[[str, str, int, int], None]  # (file_name, stage, done, total) while a file is indexed


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
    `page_chunks` are the other chunks of the same page (or slide) that ranked below this one: a page is one hit,
    and they travel with it as its context instead of taking places of their own (best first).
    """

    chunk: Chunk
    score: float
    rank: int
    vector_score: float | None = None
    bm25_score: float | None = None
    strategy: str = "hybrid"
    page_chunks: tuple[Chunk, ...] = ()


def page_key(chunk: Chunk) -> tuple:
    """What makes two chunks one place for ranking: the same document and page (or slide); else the chunk."""
    loc = chunk.location
    if loc.page is not None:
        return (chunk.doc_id, "page", loc.page)
    if loc.slide is not None:
        return (chunk.doc_id, "slide", loc.slide)
    return (chunk.id,)
