"""The deterministic hashing embedder: the one fake embedder of the project (tests, benches, demos).

Product code, not a test helper: the app selects it with DOCAGENT_FAKE_EMBEDDER=1 (wiring.make_embedder), so the
app, the tests and the benches all build libraries with the very same vectors and embedder name.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence

import numpy as np


class HashingEmbedder:
    """Bag-of-words hashing into 384 dimensions: same text, same unit vector; shared words raise the cosine.

    `calls` and `texts_embedded` count the work done (tests check that a duplicate re-embeds nothing). `delay`
    seconds per text, with progress after each (DOCAGENT_FAKE_EMBED_DELAY), let a browser test catch a file
    mid-embedding.
    """

    dim = 384
    name = "hashing-384"

    def __init__(self, delay: float = 0.0) -> None:
        self.calls = 0
        self.texts_embedded = 0
        self.delay = delay

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[0] = 1.0  # a text with no words still needs a valid unit vector
            return v
        return v / norm

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """(n, 384) float32, L2-normalised rows; calls progress(done, total) at the end (after each text when
        slowed down by `delay`)."""
        for done in range(1, len(texts) + 1 if self.delay > 0 else 1):
            time.sleep(self.delay)
            if progress is not None:
                progress(done, len(texts))
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """(384,) float32 unit vector."""
        return self._vector(text)
