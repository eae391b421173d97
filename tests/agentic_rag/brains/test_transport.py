"""agentic_rag.brains.transport: the API key never appears in results, logs, warnings or exports."""

from __future__ import annotations

import json
import logging
import warnings

import pytest

from testing.gemini_stub import StubReply
from tests.helpers.hostile import KEY, NOTES, gemini_agent
from ui import helpers as ui_helpers


@pytest.mark.parametrize("failure", [StubReply(status=500, message=f"bad key {KEY}"), StubReply(status=403),
                                     StubReply(raw=b'{"candidates": [')])
def test_the_api_key_never_appears_in_results_logs_warnings_or_exports(stub, kb, fake_embedder, caplog, failure):
    kb.ingest_bytes(NOTES[0][1], NOTES[0][0])
    stub.push(*[failure] * 6)
    caplog.set_level(logging.DEBUG)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = gemini_agent(stub, kb, fake_embedder).ask("When does the steering committee meet?")
    assert stub.requests and {r.api_key for r in stub.requests} == {KEY}  # the key was really sent
    assert result.mode == "offline" and result.warnings  # the failure was reported, as an offline answer
    exported = ui_helpers.conversation_markdown(
        [{"role": "user", "content": "When?"}, {"role": "assistant", "content": result.answer,
                                                  "answer": result}], "Gemini")
    texts = [json.dumps(result.to_dict()), exported, caplog.text, *(str(w.message) for w in caught),
             repr(result.trace)]
    for text in texts:
        assert KEY not in text and KEY[8:] not in text
