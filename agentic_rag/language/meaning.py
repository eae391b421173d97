"""Meaning by embedding: an embedder that remembers the vectors of the texts it embedded.

The offline brain and the confidence both embed the same quotes and claims again (a retry round, the verifier),
and embedding is the slow part of answering offline; one CachedEmbedder per engine is shared by both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from vector_db import Embedder

MEMO_SIZE = 4096


@dataclass(frozen=True)
class CachedEmbedder:
    """An embedder remembering the vectors of the texts it embedded: a retry round and the verifier look at
    the same quotes again, and embedding is the slow part of answering offline. At most MEMO_SIZE texts."""

    embedder: Embedder
    vectors: dict = field(default_factory=dict)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of `texts`, embedding only those not seen before."""
        new = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if new:
            if len(self.vectors) + len(new) > MEMO_SIZE:
                self.vectors.clear()
            self.vectors.update(zip(new, np.asarray(self.embedder.embed(new)), strict=True))
        return np.asarray([self.vectors[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """The query vector (not remembered: it is cheap, and a query may be embedded differently)."""
        return np.asarray(self.embedder.embed_query(text))


def remembering(embedder: Embedder | CachedEmbedder | None) -> CachedEmbedder | None:
    """`embedder` with a memory (unchanged when it already has one); None stays None."""
    if embedder is None or isinstance(embedder, CachedEmbedder):
        return embedder
    return CachedEmbedder(embedder)
