"""Step 3, retrieve: sub-questions searched concurrently, the plan's search queries in the documents' words searched
beside them, an exhaustive check that reads the whole document."""

from __future__ import annotations

import json

import pytest

from advanced_retrieval import Hit
from agentic_rag import Budgets, OfflineBrain, build_agent, make_gemini_brain
from testing.gemini_stub import GeminiStub, StubReply, docagent_responder
from tests.helpers.agent import FakeRetriever, gemini_agent, make_chunk, verify_json
from tests.helpers.plan_queries import LINE_ITEM, QUESTION


def test_comparison_is_answered_per_sub_question_concurrently(chunks, fake_embedder):
    slow = FakeRetriever(chunks, fake_embedder, delay=0.4)
    agent = build_agent(OfflineBrain(fake_embedder), slow)
    result = agent.ask("Compare the revenue of Acme and Globex")
    retrieve_seconds = next(t["seconds"] for t in result.trace if t["step"] == "retrieve")
    assert result.sub_questions == ("Acme revenue", "Globex revenue")
    assert len(slow.threads) == 2 and retrieve_seconds >= 0.0  # the two searches ran on two threads
    assert "**Acme revenue**" in result.answer and "**Globex revenue**" in result.answer
    assert "$5.2 million" in result.answer.split("**Globex")[0] and "$7.9 million" in result.answer.split("**Globex")[1]


def test_an_exhaustive_check_reads_the_whole_document_when_its_best_hits_miss_the_concept():
    """With a real store a record's `chunks` is a count; "N passages checked" must count passages really read."""
    from types import SimpleNamespace

    from agentic_rag.steps.retrieve import _cover

    filler = [make_chunk("d1", "long.txt", f"Paragraph {i} on harbour logistics and cranes.", i, lines=(i, i))
              for i in range(30)]
    late = make_chunk("d1", "long.txt", "A footnote mentions the penguin colony once.", 30, lines=(31, 31))
    hits = [Hit(chunk=c, score=1.0, rank=i + 1, strategy="hybrid") for i, c in enumerate(filler[:8])]
    record = SimpleNamespace(doc_id="d1", file_name="long.txt", chunks=31)
    reader = SimpleNamespace(document_chunks=lambda doc_id: [*filler, late] if doc_id == "d1" else [])
    found = _cover(reader, record, "penguin colony", hits)
    assert found.mentioned and found.hit.chunk == late and found.chunks_checked == 31
    absent = _cover(reader, record, "glacier", hits)
    assert not absent.mentioned and absent.chunks_checked == 31  # all 31 read, not 8 hits passed off as 31
    no_reader = _cover(SimpleNamespace(), record, "glacier", hits)
    assert not no_reader.mentioned and no_reader.chunks_checked == 8  # only what was read is claimed

    def broken(doc_id):
        raise OSError("store went away")

    assert _cover(SimpleNamespace(document_chunks=broken), record, "glacier", hits).chunks_checked == 8


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
