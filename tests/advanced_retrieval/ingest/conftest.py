"""Fixtures of the ingestion queue's tests."""

from __future__ import annotations

import pytest

from tests.helpers.ingest import WAIT


@pytest.fixture
def stopper():
    """Register a queue to be stopped (its worker joined) when the test ends."""
    queues = []
    yield queues.append
    for queue in queues:
        queue.stop(WAIT)
