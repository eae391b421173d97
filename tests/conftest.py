"""Shared fixtures: the public documents in ../shared (when present) and the deterministic hashing embedder
(vector_db.HashingEmbedder: the one fake embedder, also the app's with DOCAGENT_FAKE_EMBEDDER=1)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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


@pytest.fixture
def fake_embedder():
    from vector_db import HashingEmbedder

    return HashingEmbedder()
