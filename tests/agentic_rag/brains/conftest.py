"""The Gemini stub the brain tests talk to (test_local.py has its own OpenAI-compatible `stub`)."""

from __future__ import annotations

import pytest

from testing.gemini_stub import GeminiStub, docagent_responder


@pytest.fixture
def stub():
    with GeminiStub(responder=docagent_responder) as server:
        yield server
