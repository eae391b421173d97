"""A real temporary Chroma store for the retrieval tests."""

from __future__ import annotations

import pytest

from vector_db import VectorStore, make_client


@pytest.fixture
def store(tmp_path, fake_embedder):
    yield VectorStore(make_client(tmp_path / "data"), fake_embedder)
