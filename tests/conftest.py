"""Shared fixtures: the public documents in ../shared (when present) and a deterministic fake embedder."""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or a skip: a user's clone has no ../shared."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (only the project's own machines have it)")
    return SHARED_DATA


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder: same text, same unit vector; shared words raise cosine."""

    dim = 384
    name = "fake-hashing-384"

    def __init__(self):
        self.calls = 0
        self.texts_embedded = 0

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        n = np.linalg.norm(v)
        if n == 0:
            v[0] = 1.0
            return v
        return v / n

    def embed(self, texts, progress=None):
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def embed_query(self, text):
        return self._vector(text)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()
