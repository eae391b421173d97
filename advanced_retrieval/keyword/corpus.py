"""What the BM25 index and its saved files share: the tokenised corpus, the BM25 parameters, the format version
and the error a saved index that cannot be used raises. (bm25.py builds and searches an index; files.py saves and
loads one; both import this module, neither the other.)"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FORMAT_VERSION = 1
METHODS = ("lucene", "robertson", "atire")


class BM25IndexError(Exception):
    """A saved BM25 index that cannot be used (missing, from another version, or inconsistent); rebuild it."""


@dataclass(frozen=True)
class BM25Params:
    """Okapi BM25 parameters, named as bm25s names them. Raises ValueError for an unknown method."""

    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"
    idf_method: str | None = None  # None: the same as `method`

    def __post_init__(self):
        for value in (self.method, self.idf_method or self.method):
            if value not in METHODS:
                raise ValueError(f"unknown BM25 method {value!r}; allowed: {', '.join(METHODS)}")
        if self.k1 < 0 or not 0 <= self.b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={self.k1}, b={self.b}")

    @property
    def idf(self) -> str:
        return self.idf_method or self.method

    def scores_like(self, other: BM25Params) -> bool:
        """Whether both give the same scores: idf_method None means the method's own idf, so BM25Params() and the
        BM25Params(idf_method="lucene") a saved manifest reads back are the same parameters."""
        return (self.k1, self.b, self.method, self.idf) == (other.k1, other.b, other.method, other.idf)


def _ints() -> np.ndarray:
    return np.zeros(0, dtype=np.int32)


@dataclass(frozen=True, eq=False)
class Corpus:
    """The tokenised chunks: postings sorted by row, and per-row chunk id, document and file type."""

    chunk_ids: tuple[str, ...] = ()
    doc_names: tuple[str, ...] = ()  # doc_codes index into these
    type_names: tuple[str, ...] = ()
    doc_codes: np.ndarray = field(default_factory=_ints)
    type_codes: np.ndarray = field(default_factory=_ints)
    doc_len: np.ndarray = field(default_factory=_ints)  # tokens per chunk, repeats counted
    rows: np.ndarray = field(default_factory=_ints)
    tok: np.ndarray = field(default_factory=_ints)
    tf: np.ndarray = field(default_factory=_ints)
    vocab: dict = field(default_factory=dict)  # token -> id; never shrinks except when the index becomes empty
