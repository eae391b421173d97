"""The plan's search queries in the documents' words: cleaned from what models really write, searched in step 3."""

from __future__ import annotations

import json

import pytest
from test_agentic_rag import FakeRetriever, gemini_agent, make_chunk, verify_json

from agentic_rag import Budgets, OfflineBrain, build_agent, make_gemini_brain
from agentic_rag.brains.model import MAX_SEARCH_QUERIES, search_queries
from agentic_rag.brains.prompts import PlanOut
from testing.gemini_stub import GeminiStub, StubReply, docagent_responder

QUESTION = "What was Acme's free cash flow in 2023?"
LINE_ITEM = "net cash provided by operating activities purchases of property and equipment"


@pytest.fixture
def retriever(fake_embedder):
    return FakeRetriever([
        make_chunk("d1", "acme_10k.pdf", "Free cash flow is a measure management discusses with investors.", page=2),
        make_chunk("d1", "acme_10k.pdf", "Net cash provided by operating activities 812; purchases of property and "
                   "equipment (215).", 1, page=48),
    ], fake_embedder)


def plan(question: str = QUESTION, **extra) -> str:
    return json.dumps({"intent": "a figure", "complexity": "simple", "question_type": "numeric",
                       "key_concepts": ["free cash flow"], "language": "en", "standalone_question": question,
                       "sub_questions": [question], **extra})


def searched(retriever) -> list[str]:
    return [call[0] for call in retriever.calls]


def test_cleaning_keeps_distinct_document_worded_queries():
    asked = (QUESTION,)
    assert search_queries([LINE_ITEM, f"  {LINE_ITEM.upper()} ", "", "   ", QUESTION.lower()], asked) == (LINE_ITEM,)
    assert len(search_queries([f"query {i}" for i in range(9)], asked)) == MAX_SEARCH_QUERIES
    assert len(search_queries(["x" * 1000], asked)[0]) < 1000
    assert search_queries([], asked) == ()


@pytest.mark.parametrize(("raw", "kept"), [
    (None, []), ("cash flow statement", ["cash flow statement"]), ([1, None, "capex", {"q": 1}], ["capex"]),
    ({"a": "b"}, []),
])
def test_plan_schema_reads_what_models_write(raw, kept):
    assert PlanOut.model_validate({"search_queries": raw}).search_queries == kept
    assert PlanOut.model_validate({}).search_queries == []


def test_scripted_plan_queries_are_searched_beside_the_sub_question(retriever):
    agent, chat = gemini_agent(retriever, [
        plan(search_queries=[LINE_ITEM, LINE_ITEM, "", QUESTION]),
        "Free cash flow was 812 - 215 = 597 [P2].",
        verify_json([("supported", 2)]),
    ])
    result = agent.ask(QUESTION)
    assert searched(retriever) == [QUESTION, LINE_ITEM]  # duplicates, blanks and the question itself dropped
    assert "in the documents' words: " + LINE_ITEM in result.trace[0]["summary"]
    assert result.trace[0]["details"]["doc_queries"] == [LINE_ITEM]
    assert "Net cash provided by operating activities 812" in chat.prompts[1]  # the line item reached the model
    assert "Cover each part" not in chat.prompts[1]  # a search query is not a part of the question to answer


def test_a_plan_without_search_queries_searches_the_sub_questions_only(retriever):
    agent, _ = gemini_agent(retriever, [plan(), "Free cash flow is discussed [P1].", verify_json([("supported", 1)])])
    result = agent.ask(QUESTION)
    assert searched(retriever) == [QUESTION] and result.trace[0]["details"]["doc_queries"] == []


def test_a_negation_question_searches_its_concept_not_the_plan_queries(retriever):
    question = "Which documents don't mention capex?"
    agent, _ = gemini_agent(retriever, [
        json.dumps({"question_type": "negation", "key_concepts": ["capex"], "standalone_question": question,
                    "sub_questions": ["capex"], "search_queries": ["capital expenditures"]}),
        "None of them [P1].", verify_json([("supported", 1)]),
    ])
    agent.ask(question)
    assert "capital expenditures" not in searched(retriever)


def test_offline_plans_have_no_search_queries(retriever, fake_embedder):
    result = build_agent(OfflineBrain(fake_embedder), retriever).ask(QUESTION)
    assert searched(retriever)[0] == QUESTION and result.trace[0]["details"]["doc_queries"] == []


@pytest.mark.parametrize("reply", [
    # chatty, fenced, duplicated with different case and spacing
    "Sure! Here is my plan:\n```json\n%s\n```\nI added {search terms} as asked.",
    # bare JSON with the field missing entirely
    "%s",
])
def test_the_real_gemini_client_against_the_stub(retriever, reply):
    body = json.loads(plan())
    if "Sure" in reply:
        body["search_queries"] = [LINE_ITEM, "  " + LINE_ITEM.title() + "  ", "cash flow statement", ""]
    with GeminiStub(responder=docagent_responder) as stub:
        stub.push(StubReply(text=reply % json.dumps(body)))
        brain = make_gemini_brain("AIzaSy-stub-key-42", model="gemini-3.8-flash", base_url=stub.base_url,
                                  timeout=5.0, max_retries=1, sleep=lambda s: None)
        result = build_agent(brain, retriever, budgets=Budgets()).ask(QUESTION)
    assert result.mode == "gemini" and result.trace[0]["llm_calls"] == 1 and result.warnings == ()
    expected = [QUESTION, LINE_ITEM, "cash flow statement"] if "Sure" in reply else [QUESTION]
    assert searched(retriever) == expected
    assert "search_queries" in stub.requests[0].system  # the plan prompt asks for them
