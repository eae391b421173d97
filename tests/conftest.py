"""Fixtures shared across the test folders: the public documents in ../shared (when present), the deterministic
hashing embedder (vector_db.HashingEmbedder: the one fake embedder, also the app's with DOCAGENT_FAKE_EMBEDDER=1),
a knowledge base as the app opens it, a real `chroma run` server, the damaged-library base and the agent's small
corpus. A folder's own conftest.py holds what only its tests use; plain helpers live in tests/helpers/."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO, SHARED_DATA

sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from testing import damage  # noqa: E402  (the cases and the fresh-process steps, shared with bench/damage.py)
from testing.chroma_server import CHROMA, ChromaServer  # noqa: E402
from tests.helpers.agent import FakeRetriever, make_chunk  # noqa: E402
from tests.helpers.library import open_kb  # noqa: E402


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or a skip: a user's clone has no ../shared."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (only the project's own machines have it)")
    return SHARED_DATA


@pytest.fixture
def fake_embedder():
    from vector_db import HashingEmbedder

    return HashingEmbedder()


@pytest.fixture
def kb(tmp_path, fake_embedder):
    """A knowledge base as the app opens it, in tmp_path/app/data (a test module may have its own `kb`)."""
    return open_kb(tmp_path / "app" / "data", fake_embedder)


@pytest.fixture
def chroma_server(tmp_path):
    if not CHROMA.exists():
        pytest.skip("the chroma command is not installed next to this Python")
    server = ChromaServer(tmp_path / "server-data")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A library of 4 text files (~1,150 chunks: enough for Chroma to write its HNSW index to disk)."""
    data = tmp_path_factory.mktemp("base") / "data"
    made = damage.child("build", str(data))
    assert made.returncode == 0, made.stderr[-2000:]
    return data


@pytest.fixture
def corpus(fake_embedder):
    return FakeRetriever([
        make_chunk("d1", "acme_report.pdf", "Revenue in 2023 was $5.2 million. Costs were flat.", page=3),
        make_chunk("d2", "notes.txt", "The steering committee meets every Monday.", lines=(1, 2)),
    ], fake_embedder)
