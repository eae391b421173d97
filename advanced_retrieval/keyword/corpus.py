"""What the BM25 index and its saved files share: the BM25 parameters, the format version and the error a saved
index that cannot be used raises. (bm25.py builds and searches an index; files.py and segments.py save and load
one; they import this module, not each other's callers.)"""

from __future__ import annotations

from dataclasses import dataclass

FORMAT_VERSION = 2  # 2: segments and a manifest naming them; 1 (still read): one set of files with bm25s's scores
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
