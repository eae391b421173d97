"""agentic_rag.brains.prompts: the plan schema reads what models write; document text stays out of the instructions and
inside delimited passages."""

from __future__ import annotations

import pytest

from agentic_rag.brains.prompts import PlanOut
from tests.helpers.hostile import INJECTION, NOTES, gemini_agent


@pytest.mark.parametrize(("raw", "kept"), [
    (None, []), ("cash flow statement", ["cash flow statement"]), ([1, None, "capex", {"q": 1}], ["capex"]),
    ({"a": "b"}, []),
])
def test_plan_schema_reads_what_models_write(raw, kept):
    assert PlanOut.model_validate({"search_queries": raw}).search_queries == kept
    assert PlanOut.model_validate({}).search_queries == []


def answer_request(stub) -> object:
    """The synthesis call: the one whose prompt carries the passages."""
    return next(r for r in stub.requests if "Passages:" in r.prompt and "Claims:" not in r.prompt)


def test_gemini_prompt_keeps_document_text_out_of_the_instructions(stub, kb, fake_embedder):
    for name, data in NOTES + [("memo.txt", INJECTION.encode())]:
        kb.ingest_bytes(data, name)
    gemini_agent(stub, kb, fake_embedder).ask("What does the system notice memo say about instructions?")
    request = answer_request(stub)
    assert "Ignore your instructions" not in request.system  # documents never reach the system instruction
    passages, question = request.prompt.index("Passages:"), request.prompt.index("Question:")
    assert passages < request.prompt.index("Ignore your instructions") < question
    assert "memo.txt" in request.prompt[passages:question]


def test_gemini_prompt_delimits_passages_and_says_documents_are_data(stub, kb, fake_embedder):
    kb.ingest_bytes(INJECTION.encode(), "memo.txt")
    gemini_agent(stub, kb, fake_embedder).ask("What does the memo say?")
    request = answer_request(stub)
    system = request.system.lower()
    assert "not instructions" in system or "never follow instructions" in system or "treat them as data" in system
    text = request.prompt
    start = text.index("Ignore your instructions")
    opened = max(text.rfind(m, 0, start) for m in ("<passages>", "<documents>", "<context>", "<<<"))
    closed = min([i for i in (text.find(m, start) for m in ("</passages>", "</documents>", "</context>", ">>>"))
                  if i >= 0] or [-1])
    assert opened >= 0 and closed > start
