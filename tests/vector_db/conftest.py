"""A temporary embedded Chroma and a VectorStore on it."""

from __future__ import annotations

import pytest

from vector_db import VectorStore, make_client


@pytest.fixture
def client(tmp_path):
    return make_client(tmp_path)


@pytest.fixture
def store(client, fake_embedder):
    return VectorStore(client, fake_embedder)
