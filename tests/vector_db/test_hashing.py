"""vector_db.hashing: the one fake embedder."""

from __future__ import annotations

import numpy as np

from vector_db import HashingEmbedder


def test_hashing_embedder_is_deterministic_normalised_and_handles_empty():
    emb = HashingEmbedder()
    calls = []
    vectors = emb.embed(["alpha beta", "alpha beta", "gamma", ""], progress=lambda d, t: calls.append((d, t)))
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.allclose(vectors[0], vectors[1]) and calls == [(4, 4)]
    query = emb.embed_query("alpha")
    assert query.shape == (384,)
    assert float(vectors[0] @ query) > float(vectors[2] @ query)
    assert emb.embed([]).shape == (0, 384)
