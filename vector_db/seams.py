"""What vector_db needs from the code that calls it: an embedder (OnnxEmbedder, HashingEmbedder, a test's own)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    """Turns texts into unit vectors of `dim` floats. `name` is written into the index, so that vectors of two
    different models are never mixed in one collection."""

    dim: int
    name: str

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """(len(texts), dim) float32 array of L2-normalised rows; progress(done, total) as batches finish."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dim,) float32 unit vector for a search query."""
        ...
