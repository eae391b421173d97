"""The agent: text rules, context, verification, the graph on the offline brain and on a scripted chat model,
and (once the real pieces exist) offline end to end on generated documents."""

from __future__ import annotations

import json
import re
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from advanced_retrieval import Filters, Hit
from agentic_rag import NOT_FOUND, OFFLINE_LABEL, Budgets, OfflineBrain, build_agent, make_gemini_brain
from agentic_rag.brains.model import parse_json
from agentic_rag.brains.offline import DEFAULT_QUOTES, QUOTE_LIMITS
from agentic_rag.brains.transport import content_text
from agentic_rag.checks.citations import cited_ids
from agentic_rag.checks.claims import flag_answer, split_claims
from agentic_rag.checks.verdicts import check_claim, offline_verdict
from agentic_rag.confidence import support_share
from agentic_rag.context import build_context, check_document, mentions
from agentic_rag.language.concepts import coverage, forms_of, near, query_concepts
from agentic_rag.language.question_rules import (
    analyze_question,
    classify,
    decompose,
    negation_target,
    resolve_follow_up,
)
from agentic_rag.language.quotes import find_quotes, units_of
from agentic_rag.language.text import detect_language, numbers, sentences
from agentic_rag.types import ContextBlock, Coverage, Verdict
from document_processor import Chunk, Location, chunk_id

SECRET = "AIzaTEST-not-a-real-key-0123456789"


# ---------------------------------------------------------------- fakes

def make_chunk(doc: str, file: str, text: str, ordinal: int = 0, heading=(), **loc) -> Chunk:
    location = Location(**loc)
    return Chunk(chunk_id(doc, location, ordinal, text), doc, file, file.rsplit(".", 1)[1], text, location,
                 tuple(heading), ordinal)


class FakeRetriever:
    """Word-count 'BM25' plus the fake embedder's cosine over hand-made chunks; records every call."""

    def __init__(self, chunks, embedder, delay: float = 0.0):
        self.chunks, self.embedder, self.delay = list(chunks), embedder, delay
        self.calls: list[tuple] = []
        self.threads: set[int] = set()
        self._lock = threading.Lock()

    def retrieve(self, query, k=8, strategy="auto", filters=None):
        with self._lock:
            self.calls.append((query, k, strategy, filters))
            self.threads.add(threading.get_ident())
        time.sleep(self.delay)
        wanted = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 3}
        qv = self.embedder.embed_query(query)
        scored = []
        for c in self.chunks:
            if filters is not None and not filters.allows(c):
                continue
            bm25 = float(sum(w in wanted for w in re.findall(r"\w+", c.index_text.lower())))
            cos = float(self.embedder.embed([c.index_text])[0] @ qv)
            if bm25 > 0 or cos > 0.2:
                scored.append((bm25 + cos, c, bm25, cos))
        scored.sort(key=lambda x: -x[0])
        return [Hit(c, s, i + 1, vector_score=cos, bm25_score=bm25 or None)
                for i, (s, c, bm25, cos) in enumerate(scored[:k])]

    def documents(self):
        docs: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            docs.setdefault(c.doc_id, []).append(c)
        return [SimpleNamespace(doc_id=d, file_name=cs[0].file_name, file_type=cs[0].file_type, chunks=cs)
                for d, cs in docs.items()]


class ScriptedChat(BaseChatModel):
    """A chat model that answers from a script (str, Exception, or fn(prompt_text) -> str) and records prompts.

    Usage is reported like Gemini's usage_metadata (4 characters a token), so budgets can be checked.
    """

    script: list = []
    prompts: list = []
    kwargs_seen: list = []
    delay: float = 0.0
    as_parts: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next(self, messages, kwargs) -> str:
        text = "\n".join(f"{m.type}: {m.content}" for m in messages)
        self.prompts.append(text)
        self.kwargs_seen.append(kwargs)
        time.sleep(self.delay)
        item = self.script.pop(0) if self.script else "{}"
        if isinstance(item, Exception):
            raise item
        return item(text) if callable(item) else item

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        out = self._next(messages, kwargs)
        usage = {"input_tokens": len(self.prompts[-1]) // 4, "output_tokens": len(out) // 4,
                 "total_tokens": (len(self.prompts[-1]) + len(out)) // 4}
        content = [{"type": "text", "text": out}] if self.as_parts else out
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=content, usage_metadata=usage))])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        out = self._next(messages, kwargs)
        pieces = re.findall(r"\S+\s*", out) or [out]
        for i, piece in enumerate(pieces):
            usage = ({"input_tokens": len(self.prompts[-1]) // 4, "output_tokens": len(out) // 4,
                      "total_tokens": 0} if i == 0 else None)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, usage_metadata=usage))


def plan_json(question: str, qtype="fact", subs=None, complexity="simple", concepts=()) -> str:
    return json.dumps({"intent": "find a fact", "complexity": complexity, "question_type": qtype,
                       "key_concepts": list(concepts), "language": "en", "standalone_question": question,
                       "sub_questions": subs or [question]})


def verify_json(verdicts, missing=()) -> str:
    return json.dumps({"claims": [{"claim": i + 1, "verdict": v, "evidence": e} for i, (v, e) in
                                  enumerate(verdicts)], "missing": list(missing)})


# ---------------------------------------------------------------- corpus

@pytest.fixture
def chunks():
    return [
        make_chunk("d1", "acme_report.pdf", "Acme Corp annual report. Revenue in 2023 was $5.2 million, up 12% "
                   "from 2022. The company employs 140 people.", page=3),
        make_chunk("d1", "acme_report.pdf", "The three pilot sites are Aarhus, Bilbao and Cork. Bilbao hosts the "
                   "wind-turbine test bench.", 1, page=4),
        make_chunk("d2", "globex_memo.docx", "Globex revenue reached $7.9 million in 2023. Globex complies with "
                   "GDPR since 2018.", paragraph=2),
        make_chunk("d3", "kickoff.pptx", "Kick-off agenda: the steering committee meets every Monday at 9:00.",
                   slide=2),
        make_chunk("d4", "budget.xlsx", "Region | Budget\nNorth | 410000\nSouth | 385000", sheet="Budget",
                   cells="A1:B3"),
    ]


@pytest.fixture
def retriever(chunks, fake_embedder):
    return FakeRetriever(chunks, fake_embedder)


@pytest.fixture
def offline_agent(retriever, fake_embedder):
    return build_agent(OfflineBrain(), retriever, embedder=fake_embedder)


# ---------------------------------------------------------------- text, rules

def test_sentences_keep_their_citation_and_numbers_normalise():
    assert sentences("Revenue rose 5%. [P2] Profit fell. Next line\nTable | 3") == [
        "Revenue rose 5%. [P2]", "Profit fell.", "Next line", "Table | 3"]
    assert numbers("It cost $1,200.50 in 2023 [P4], i.e. 3.0 units") == {"1200.5", "2023", "3"}
    assert cited_ids("a [P2] b [P1, P2] c [P3][P1] d [11]") == (2, 1, 3)
    assert detect_language("Wie hoch war der Umsatz im Jahr 2023?") == "de"
    assert detect_language("What was the revenue in 2023?") == "en"


@pytest.mark.parametrize("question, qtype", [
    ("What was Acme's revenue in 2023?", "numeric"),
    ("Which documents don't mention GDPR?", "negation"),
    ("Which files discuss the wind turbine?", "exhaustive"),
    ("Compare the revenue of Acme and Globex", "comparison"),
    ("Summarize the annual report", "summary"),
    ("List the pilot sites", "list"),
    ("Who chairs the steering committee?", "fact"),
])
def test_classify(question, qtype):
    assert classify(question) == qtype


def test_negation_target_and_decomposition():
    assert negation_target("Which documents don't mention the GDPR?") == "GDPR"
    assert negation_target("Which files discuss 'wind turbines'?") == "wind turbines"
    assert negation_target("What is GDPR?") is None
    assert decompose(analyze_question("How does Acme's revenue growth compare to Globex's?")) == (
        "Acme's revenue growth", "Globex's revenue growth")
    assert decompose(analyze_question("Who is the CEO? When was the company founded?")) == (
        "Who is the CEO?", "When was the company founded?")
    assert decompose(analyze_question("What is the budget and who approved it?")) == (
        "What is the budget?", "who approved it (budget)?")  # a part that refers back names what it means
    assert decompose(analyze_question("Which documents don't mention GDPR?")) == ("GDPR",)
    simple = analyze_question("What was Acme's revenue in 2023?")
    assert simple.complexity == "simple" and decompose(simple) == ("What was Acme's revenue in 2023?",)


def test_follow_ups_are_rewritten_from_history():
    sites = [("Which are the three pilot sites?", '"The three pilot sites are Aarhus, Bilbao and Cork." [1]')]
    assert resolve_follow_up("and the second one?", sites) == "What about Bilbao?"
    assert resolve_follow_up("And the last one?", sites) == "What about Cork?"
    numbered = [("List the products", "1. Rocket [1]\n2. Anvil [2]\n3. Magnet [2]")]
    assert resolve_follow_up("and the second one?", numbered) == "What about Anvil?"
    speakers = [("Who is the first speaker at the 2024 summit?", "Dr. Lee [1]")]
    assert resolve_follow_up("and the second one?", speakers) == "Who is the second speaker at the 2024 summit?"
    revenue = [("What was Acme's revenue in 2023?", "$5.2 million [1]")]
    assert resolve_follow_up("what about 2022?", revenue) == "What was Acme's revenue in 2022?"
    assert resolve_follow_up("and Globex?", revenue) == "What was Globex's revenue in 2023?"
    assert resolve_follow_up("What is the capital of Peru?", revenue) is None
    assert resolve_follow_up("and the second one?", []) is None
    a = analyze_question("and the second one?", sites)
    assert a.follow_up and a.standalone == "What about Bilbao?" and "Bilbao" in a.key_concepts


# ---------------------------------------------------------------- context, verification

def _is_refusal_estimate(result) -> bool:
    """A refusal's confidence is the estimated chance the documents lack the answer, never certainty."""
    return (result.confidence_features.get("refused") is True and 0.0 < result.confidence < 0.8
            and "lack the answer" in result.confidence_basis)


def _hit(chunk, rank=1, cos=0.5, bm25=2.0):
    return Hit(chunk, 1.0 / rank, rank, vector_score=cos, bm25_score=bm25)


def test_context_is_fair_deduplicated_numbered_and_within_budget(chunks):
    a, b, c, d, _ = chunks
    blocks = build_context([("q1", (_hit(a, 1), _hit(b, 2), _hit(c, 3))), ("q2", (_hit(d, 1), _hit(a, 2)))], 10_000)
    assert [x.chunk for x in blocks] == [a, d, b, c]  # round-robin by rank: q1#1, q2#1, q1#2, (a again), q1#3
    assert [x.n for x in blocks] == [1, 2, 3, 4]
    assert blocks[0].queries == ("q1", "q2")  # found by both sub-questions, listed once
    long = make_chunk("d9", "long.txt", "word " * 2000, lines=(1, 80))
    tight = build_context([("q", (_hit(long), _hit(a, 2)))], 300)
    assert len(tight) == 1 and len(tight[0].chunk.text) < 300 * 4 and tight[0].chunk.text.endswith("…")
    assert build_context([], 1000) == () and build_context([("q", ())], 1000) == ()


def test_mentions_and_document_check(chunks):
    assert mentions("GDPR", "Globex complies with GDPR since 2018.")
    assert mentions("wind turbines", "the wind-turbine test bench")  # every word, light stemming
    assert not mentions("GDPR", "General data rules")
    memo = [c for c in chunks if c.doc_id == "d2"]
    assert check_document("d2", "globex_memo.docx", "GDPR", [], memo).mentioned  # found by scanning its chunks
    missed = check_document("d1", "acme_report.pdf", "GDPR", [], [c for c in chunks if c.doc_id == "d1"])
    assert not missed.mentioned and missed.chunks_checked == 2


def test_claims_are_split_without_framing():
    answer = (f"{OFFLINE_LABEL} — quoted.\n\n**Acme revenue**\nAcme earned $5.2 million in 2023 [P1]. "
              f"It employs 140 people [P2].\n- Bilbao hosts the test bench [P3]\n{NOT_FOUND}\nHere it is:")
    drafts = split_claims(answer)
    assert [d.citations for d in drafts] == [(1,), (2,), (3,)]
    assert drafts[0].text == "Acme earned $5.2 million in 2023."


def test_citations_pages_and_numbers_are_checked_whatever_the_brain_says(chunks):
    blocks = {1: ContextBlock(1, _hit(chunks[0])), 2: ContextBlock(2, _hit(chunks[2]))}
    ok = split_claims("Revenue in 2023 was $5.2 million [P1].")[0]
    assert check_claim(ok, Verdict(0, "supported", 1), blocks).verdict == "supported"
    ghost = split_claims("Revenue in 2023 was $5.2 million [P7].")[0]
    claim = check_claim(ghost, Verdict(0, "supported", 7), blocks)
    assert claim.verdict == "unsupported" and "[P7]" in claim.reason
    page = split_claims("On page 9 the report gives revenue of $5.2 million [P1].")[0]
    assert check_claim(page, Verdict(0, "supported", 1), blocks).verdict == "unsupported"
    number = split_claims("Revenue in 2023 was $6.1 million [P1].")[0]
    assert check_claim(number, Verdict(0, "supported", 1), blocks).verdict == "unsupported"
    elsewhere = split_claims("Globex employs 9,000 engineers across Europe [P1].")[0]  # words not in its passage
    assert check_claim(elsewhere, Verdict(0, "supported", 1), blocks).verdict in ("partial", "unsupported")
    coverage = (Coverage("d1", "acme_report.pdf", False), Coverage("d2", "globex_memo.docx", True))
    right = split_claims("acme_report.pdf does not mention GDPR at all.")[0]
    wrong = split_claims("globex_memo.docx does not mention GDPR at all.")[0]
    assert check_claim(right, Verdict(0, "unsupported"), blocks, coverage).verdict == "supported"
    assert check_claim(wrong, Verdict(0, "supported"), blocks, coverage).verdict == "unsupported"


def test_confidence_is_computed_from_verdicts_and_flags_are_visible():
    drafts = split_claims("Alpha grew fast [P1]. Beta shrank slowly [P2]. Gamma stayed flat [P3].")
    verdicts = ["supported", "partial", "unsupported"]
    from agentic_rag.types import Claim
    claims = [Claim(d.text, v, d.citations) for d, v in zip(drafts, verdicts, strict=True)]
    assert support_share(claims) == 0.5
    assert support_share(claims[:1]) == 1.0
    assert support_share(claims[:1], missing=1) == 0.5
    assert support_share([]) == 0.0
    flagged = flag_answer("Alpha grew fast [P1]. Beta shrank slowly [P2]. Gamma stayed flat [P3].", drafts, claims)
    assert "Gamma stayed flat [P3]. ⚠ (not supported" in flagged and "slowly [P2]. (⚠ only partly" in flagged
    assert "fast [P1]. Beta" in flagged


def test_json_replies_are_read_tolerantly():
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json('Sure! Here it is: {"a": {"b": 2}} hope that helps') == {"a": {"b": 2}}
    with pytest.raises(ValueError):
        parse_json("no json here")
    with pytest.raises(ValueError):
        parse_json('{"a": 1,,}')
    assert content_text([{"type": "text", "text": "Hel"}, "lo", {"type": "thinking", "thinking": "x"}]) == "Hello"


def test_bad_configuration_raises_with_the_allowed_values(retriever):
    with pytest.raises(ValueError):
        Budgets(llm_calls=-1)
    with pytest.raises(ValueError):
        Budgets(context_tokens=100)
    with pytest.raises(ValueError, match="API key"):
        make_gemini_brain("")
    with pytest.raises(ValueError, match="brain"):
        build_agent(object(), retriever)
    agent = build_agent(OfflineBrain(), retriever)
    with pytest.raises(ValueError, match="hybrid"):
        agent.ask("x", strategy="semantic")
    with pytest.raises(ValueError):
        agent.ask("x", k=0)


# ---------------------------------------------------------------- the graph, offline brain

STEPS = ["analyze", "decompose", "retrieve", "synthesize", "verify"]


def test_offline_answer_quotes_with_citation_location_trace_events_and_tokens(offline_agent):
    events, tokens = [], []
    result = offline_agent.ask("What was Acme's revenue in 2023?", on_event=lambda s, e: events.append((s, e)),
                               on_token=tokens.append)
    assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
    assert '"Revenue in 2023 was $5.2 million, up 12% from 2022." [1]' in result.answer
    assert "".join(tokens) == result.answer  # streamed, and nothing flagged
    data = result.to_dict()
    assert set(data) == {"answer", "mode", "citations", "claims", "confidence", "confidence_basis",
                         "confidence_features", "trace", "usage",
                         "seconds", "warnings"}
    assert data["citations"] == [{"n": 1, "file": "acme_report.pdf", "doc_id": "d1", "location": {"page": 3},
                                  "text": result.citations[0].text}]
    assert data["claims"][0]["verdict"] == "supported" and data["confidence_features"]["support"] == 1.0
    assert 0.5 < data["confidence"] < 1.0  # an estimate, never certainty
    assert [t["step"] for t in data["trace"]] == STEPS
    for entry in data["trace"]:
        assert {"step", "summary", "seconds", "llm_calls", "input_tokens", "output_tokens", "details"} <= set(entry)
        assert entry["llm_calls"] == 0
    assert data["trace"][0]["mode"] == OFFLINE_LABEL
    assert data["usage"] == {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0}
    assert [(s, e["status"]) for s, e in events] == [(s, st) for s in STEPS for st in ("started", "done")]
    top = data["trace"][2]["details"]["queries"][0]["top"][0]
    assert top["file"] == "acme_report.pdf" and top["location"] == "p. 3" and top["bm25_score"] > 0
    json.dumps(data)  # plain JSON all the way down
    assert result.analysis.question_type == "numeric" and result.sub_hits and result.sub_questions


PLANTED = [  # question, words the quote must contain, file, location
    ("What was Acme's revenue in 2023?", "$5.2 million", "acme_report.pdf", {"page": 3}),
    ("How many people does Acme employ?", "140 people", "acme_report.pdf", {"page": 3}),
    ("Which are the pilot sites?", "Aarhus, Bilbao and Cork", "acme_report.pdf", {"page": 4}),
    ("When does the steering committee meet?", "every Monday", "kickoff.pptx", {"slide": 2}),
    ("What budget does the North region have?", "North | 410000", "budget.xlsx",
     {"sheet": "Budget", "cells": "A1:B3"}),
    ("Since when does Globex comply with GDPR?", "since 2018", "globex_memo.docx", {"paragraph": 2}),
]
UNANSWERABLE = [
    "What is the boiling point of mercury on Mars?",
    "What was Initech's revenue in 2023?",
    "Who won the 1998 football world cup?",
    "What was Acme's revenue in 2031?",
    "How many employees does Globex have in Tokyo?",
]


@pytest.mark.parametrize("question, quote, file, location", PLANTED)
def test_planted_facts_are_quoted_with_the_right_place(offline_agent, question, quote, file, location):
    result = offline_agent.ask(question)
    assert NOT_FOUND not in result.answer
    assert quote in result.answer
    first = result.citations[0].to_dict()
    assert first["file"] == file and first["location"] == location
    assert result.confidence > 0.5


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_unanswerable_questions_are_refused(offline_agent, question):
    result = offline_agent.ask(question)
    assert NOT_FOUND in result.answer and result.claims == () and _is_refusal_estimate(result)
    assert '"' not in result.answer.split(NOT_FOUND)[1]  # no quote passed off as an answer
    assert result.to_dict()["citations"] == []


def test_negation_checks_every_document_within_the_users_filter(offline_agent, retriever):
    result = offline_agent.ask("Which documents don't mention GDPR?")
    assert result.analysis.question_type == "negation"
    per_doc = [c for c in retriever.calls if c[3] is not None and c[3].doc_ids is not None]
    assert sorted(c[3].doc_ids[0] for c in per_doc) == ["d1", "d2", "d3", "d4"]
    assert "Not mentioned in: acme_report.pdf, kickoff.pptx, budget.xlsx." in result.answer
    assert 'globex_memo.docx: "Globex complies with GDPR since 2018." [1]' in result.answer
    assert {c.verdict for c in result.claims} == {"supported"}
    assert [c.mentioned for c in result.coverage] == [False, True, False, False]
    retriever.calls.clear()
    narrowed = offline_agent.ask("Which documents don't mention GDPR?", filters=Filters(file_types=("pdf", "docx")))
    assert {c.file_name for c in narrowed.coverage} == {"acme_report.pdf", "globex_memo.docx"}
    assert all(c[3].file_types == ("pdf", "docx") for c in retriever.calls)
    exhaustive = offline_agent.ask("Which files mention the steering committee?")
    assert exhaustive.answer.index("Mentioned in") < exhaustive.answer.index("Not mentioned in")
    assert "kickoff.pptx" in exhaustive.answer.split("Not mentioned in")[0]


def test_follow_up_is_resolved_from_history(offline_agent):
    first = offline_agent.ask("Which are the three pilot sites?")
    second = offline_agent.ask("and the second one?", history=[("Which are the three pilot sites?", first.answer)])
    assert second.analysis.follow_up and second.analysis.standalone == "What about Bilbao?"
    assert '"Bilbao hosts the wind-turbine test bench." [1]' in second.answer


def test_comparison_is_answered_per_sub_question_concurrently(chunks, fake_embedder):
    slow = FakeRetriever(chunks, fake_embedder, delay=0.4)
    agent = build_agent(OfflineBrain(fake_embedder), slow)
    result = agent.ask("Compare the revenue of Acme and Globex")
    retrieve_seconds = next(t["seconds"] for t in result.trace if t["step"] == "retrieve")
    assert result.sub_questions == ("Acme revenue", "Globex revenue")
    assert len(slow.threads) == 2 and retrieve_seconds >= 0.0  # the two searches ran on two threads
    assert "**Acme revenue**" in result.answer and "**Globex revenue**" in result.answer
    assert "$5.2 million" in result.answer.split("**Globex")[0] and "$7.9 million" in result.answer.split("**Globex")[1]


def test_empty_inputs_give_empty_results(retriever, fake_embedder):
    agent = build_agent(OfflineBrain(), retriever)
    assert agent.ask("   ").to_dict()["answer"] == ""
    empty = build_agent(OfflineBrain(), FakeRetriever([], fake_embedder))
    result = empty.ask("What was Acme's revenue?")
    assert NOT_FOUND in result.answer and _is_refusal_estimate(result)
    negation = empty.ask("Which documents don't mention GDPR?")
    assert NOT_FOUND in negation.answer and negation.coverage == ()


def test_without_verification_confidence_comes_from_retrieval_and_says_so(offline_agent):
    result = offline_agent.ask("What was Acme's revenue in 2023?", verify=False)
    assert result.claims == () and 0 < result.confidence <= 1
    assert result.confidence_basis == "retrieval scores (not verified)"
    assert any("estimated from retrieval scores" in w for w in result.warnings)
    assert result.trace[-1]["summary"].startswith("skipped")


def test_incomplete_answers_loop_back_to_retrieval_at_most_twice(chunks, fake_embedder):
    retriever = FakeRetriever(chunks, fake_embedder)
    agent = build_agent(OfflineBrain(), retriever)
    result = agent.ask("What was Acme's revenue in 2023? Who is the mayor of Atlantis?")
    steps = [t["step"] for t in result.trace]
    assert steps[:5] == STEPS and steps.count("retrieve") == 2  # the second round found nothing new
    assert retriever.calls[-1][0] == "Who is the mayor of Atlantis?" and retriever.calls[-1][1] == 16
    assert "$5.2 million" in result.answer and NOT_FOUND in result.answer
    assert result.confidence_features["support"] == 0.5  # one supported claim, one part missing
    assert result.confidence < 0.5
    assert steps.count("verify") <= 3


# ---------------------------------------------------------------- the graph, Gemini brain (scripted chat model)

def gemini_agent(retriever, script, *, budgets=None, delay=0.0, as_parts=False, max_retries=1, **kw):
    chat = ScriptedChat(script=list(script), prompts=[], kwargs_seen=[], delay=delay, as_parts=as_parts)
    brain = make_gemini_brain(SECRET, llm=chat, max_retries=max_retries, **kw)
    return build_agent(brain, retriever, budgets=budgets or Budgets()), chat


def test_simple_question_takes_three_calls_streams_and_counts_tokens(retriever):
    q = "What was Acme's revenue in 2023?"
    agent, chat = gemini_agent(retriever, [
        plan_json(q, "numeric", concepts=["Acme", "revenue", "2023"]),
        "Acme's revenue in 2023 was $5.2 million [P1].",
        verify_json([("supported", 1)]),
    ], as_parts=True)
    tokens = []
    result = agent.ask(q, on_token=tokens.append)
    assert result.mode == "gemini" and result.warnings == ()
    assert result.answer == "Acme's revenue in 2023 was $5.2 million [1]."
    assert "".join(tokens) == result.answer and len(tokens) > 3
    assert result.usage.llm_calls == 3 == len(chat.prompts)
    assert result.usage.input_tokens == sum(len(p) // 4 for p in chat.prompts)
    assert [t["llm_calls"] for t in result.trace] == [1, 0, 0, 1, 1]
    assert "one call shared with decompose" in result.trace[0]["summary"]
    plan_prompt, answer_prompt, verify_prompt = chat.prompts
    assert "You plan how to answer" in plan_prompt and q in plan_prompt
    assert "[P1] acme_report.pdf, p. 3" in answer_prompt and "Revenue in 2023 was $5.2 million" in answer_prompt
    assert "Answer in English" in answer_prompt
    assert "1. Acme's revenue in 2023 was $5.2 million. (cites [P1])" in verify_prompt
    assert chat.kwargs_seen[0]["response_mime_type"] == "application/json"
    assert "response_json_schema" in chat.kwargs_seen[2] and "$defs" not in json.dumps(chat.kwargs_seen[2])
    assert result.claims[0].verdict == "supported" and result.confidence > 0.5
    assert result.citations[0].location == Location(page=3)


def test_fabricated_citations_and_pages_are_flagged_and_lower_confidence(retriever):
    q = "What was Acme's revenue in 2023?"
    answer = ("Acme's revenue in 2023 was $5.2 million [P1]. According to page 12, profits doubled [P1]. "
              "Acme also opened an office in Lima [P7].")
    agent, _ = gemini_agent(retriever, [plan_json(q), answer,
                                        verify_json([("supported", 1), ("supported", 1), ("supported", 7)])],
                            budgets=Budgets(max_loops=0))
    result = agent.ask(q)
    assert [c.verdict for c in result.claims] == ["supported", "unsupported", "unsupported"]
    assert "Lima. ⚠ (not supported by the cited passages)" in result.answer and "[7]" not in result.answer
    assert "doubled [1]. ⚠ (not supported" in result.answer
    assert result.confidence_features["support"] == round(1 / 3, 2) and result.confidence < 0.5
    assert [c.n for c in result.citations] == [1]  # [P7] points at nothing and is not listed


def test_verifier_feedback_sends_the_agent_back_to_retrieval_within_the_call_budget(retriever):
    q = "What was Acme's revenue in 2023 and how many people work there?"
    script = [plan_json(q, subs=["Acme revenue 2023"], complexity="complex"),
              "Acme's revenue in 2023 was $5.2 million [P1].",
              verify_json([("supported", 1)], missing=["number of Acme employees"]),
              "Acme's revenue in 2023 was $5.2 million [P1]. Acme employs 140 people [P1].",
              verify_json([("supported", 1), ("supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask(q)
    assert [t["step"] for t in result.trace] == STEPS + ["retrieve", "synthesize", "verify"]
    assert result.trace[5]["details"]["received"]["queries"] == ["number of Acme employees"]
    # The search for what was missing found no passage the answer had not seen: no second answer call.
    assert result.usage.llm_calls == 3 and result.mode == "gemini"
    assert "*Not found in the documents:* number of Acme employees." in result.answer


def test_call_budget_ends_the_loop_and_says_so(retriever):
    q = "What was Acme's revenue in 2023?"
    missing = verify_json([("partial", 1)], missing=["the profit"])
    script = [plan_json(q), "Acme earned $5.2 million in 2023 [P1].", missing,
              "Acme earned $5.2 million in 2023 [P1]. The profit is not given [P2].", missing]
    agent, chat = gemini_agent(retriever, script, budgets=Budgets(llm_calls=4))
    result = agent.ask(q)
    # Another round is an answer and its check: with one call left it is not started, so the answer Gemini
    # wrote is the one Gemini checked (never an answer checked offline because the budget ran out).
    assert result.usage.llm_calls == 3 == len(chat.prompts)
    assert result.trace[-1]["step"] == "verify" and result.trace[-1]["mode"] == "gemini"
    assert "searching again" not in result.trace[-1]["summary"]
    assert result.mode == "gemini" and result.answer.startswith("Acme earned")
    assert "*Not found in the documents:* the profit." in result.answer  # the partial answer says what is missing


@pytest.mark.parametrize("failing_step", [0, 1, 2])
def test_a_failing_gemini_step_finishes_the_question_offline(retriever, failing_step):
    q = "What was Acme's revenue in 2023?"
    boom = ConnectionError(f"connection refused (key={SECRET})")
    script = [plan_json(q), "Acme earned $5.2 million in 2023 [P1].", verify_json([("supported", 1)])]
    script[failing_step:failing_step + 1] = [boom, boom]  # the first try and its one retry
    agent, chat = gemini_agent(retriever, script)
    events = []
    result = agent.ask(q, on_event=lambda s, e: events.append((s, e["status"])))
    dumped = json.dumps(result.to_dict())
    assert SECRET not in dumped and SECRET not in repr(result)
    assert any("could not be reached" in w and OFFLINE_LABEL in w for w in result.warnings)
    assert ("analyze", "fallback") in events or failing_step > 0
    assert len(chat.prompts) == failing_step + 2  # no Gemini call after the failure
    if failing_step < 2:
        assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
        assert '"Revenue in 2023 was $5.2 million, up 12% from 2022." [1]' in result.answer
    else:
        assert result.mode == "gemini" and result.trace[-1]["mode"] == OFFLINE_LABEL
    assert "Error" not in result.answer and "refused" not in result.answer


def test_malformed_json_is_retried_then_code_fenced_json_is_accepted(retriever):
    q = "What was Acme's revenue in 2023?"
    script = ['{"intent": "x", "complexity": ', "```json\n" + plan_json(q) + "\n```",
              "Acme earned $5.2 million in 2023 [P1].", "Sure:\n" + verify_json([("Supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask(q)
    assert result.mode == "gemini" and result.warnings == () and result.usage.llm_calls == 4
    assert result.trace[0]["llm_calls"] == 2 and result.claims[0].verdict == "supported"


def test_a_plan_malformed_twice_falls_back_to_the_rules_and_the_model_still_answers(retriever):
    history = [(f"question {i}?", f"answer {i}") for i in range(5)]
    script = ["not json", 'Sure! {"intent": "x", "sub_questions": [} and more prose }',
              "Acme earned $5.2 million in 2023 [P1].", verify_json([("supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask("What was Acme's revenue in 2023?", history=history)
    assert any("malformed JSON" in w and "rules" in w for w in result.warnings)
    assert result.mode == "gemini" and result.answer == "Acme earned $5.2 million in 2023 [1]."
    assert result.trace[0]["mode"] == "rules" and result.analysis.source == "rules"
    assert "question 1?" not in chat.prompts[0] and all(f"question {i}?" in chat.prompts[0] for i in (2, 3, 4))


def test_wall_time_budget_stops_calling_gemini(retriever):
    q = "What was Acme's revenue in 2023?"
    agent, chat = gemini_agent(retriever, [plan_json(q), "Acme earned $5.2 million [P1].",
                                           verify_json([("supported", 1)])],
                               budgets=Budgets(seconds=2.5), delay=1.0)
    result = agent.ask(q)
    assert any("time budget" in w for w in result.warnings)
    assert len(chat.prompts) < 3 and NOT_FOUND not in result.answer


def test_rate_limits_are_not_retried_past_the_retry_window(retriever):
    from google.genai.errors import ClientError

    q = "What was Acme's revenue in 2023?"
    limited = ClientError(429, {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}})
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the waits really pass (the window is wall time); they are recorded
        waits.append(seconds)
        time.sleep(seconds)

    agent, chat = gemini_agent(retriever, [limited] * 10, max_retries=5,
                               budgets=Budgets(retry_seconds=2.0, llm_calls=20), sleep=sleep)
    result = agent.ask(q)
    assert waits and sum(waits) <= 2.0  # every wait fitted in the 2 s retry window of the failing step
    assert result.mode == "offline" and any("rate limited (HTTP 429)" in w for w in result.warnings)
    assert len(chat.prompts) == len(waits) + 1 <= 4


# ---------------------------------------------------------------- offline end to end on generated documents

def write_pdf(path, pages: list[list[str]]) -> None:
    """A small valid PDF: Helvetica text lines per page, with a correct xref table."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", None, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        ops = "BT /F1 11 Tf 72 720 Td 14 TL " + " ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '" for line in lines) + " ET"
        objects.append(b"<< /Length %d >>\nstream\n" % len(ops) + ops.encode("latin-1") + b"\nendstream")
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 3 0 R >> >> >>" % len(objects))
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{k} 0 R" for k in kids).encode(), len(kids))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))


@pytest.fixture
def knowledge_base(tmp_path, fake_embedder):
    """The real KnowledgeBase (Chroma + BM25) over five generated files of five types."""
    import wiring
    vector_db = pytest.importorskip("vector_db")
    import docx
    import openpyxl
    import pptx

    write_pdf(tmp_path / "annual_report.pdf", [
        ["Annual report 2023", "Northwind Ltd had 87 employees at year end."],
        ["Results", "Northwind revenue in 2023 was 12.4 million euros.", "Operating margin reached 9 percent."],
    ])
    document = docx.Document()
    document.add_heading("Project review", level=1)
    document.add_paragraph("The three pilot sites are Aarhus, Bilbao and Cork.")
    document.add_paragraph("Bilbao hosts the wind-turbine test bench for the project.")
    document.save(tmp_path / "review.docx")
    deck = pptx.Presentation()
    for title, body in (("Kick-off", "The steering committee meets every Monday at 9:00."),
                        ("Compliance", "Contoso has complied with GDPR since 2018.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text, slide.placeholders[1].text = title, body
    deck.save(tmp_path / "kickoff.pptx")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    for row in (("Region", "Budget"), ("North", 410000), ("South", 385000)):
        sheet.append(row)
    book.save(tmp_path / "budget.xlsx")
    (tmp_path / "notes.txt").write_text("Meeting notes\nThe cafeteria menu changes every Friday.\n"
                                        "Visitor parking is free after 18:00.\n")
    store = vector_db.VectorStore(vector_db.make_client(tmp_path / "data"), fake_embedder)
    kb = wiring.knowledge_base(store, tmp_path, fake_embedder, isolate=False)
    results = kb.ingest_many([tmp_path / n for n in ("annual_report.pdf", "review.docx", "kickoff.pptx",
                                                    "budget.xlsx", "notes.txt")])
    assert [r.status for r in results] == ["indexed"] * 5, [r.reason for r in results]
    yield kb


E2E_FACTS = [
    ("What was Northwind's revenue in 2023?", "12.4 million euros", "annual_report.pdf", {"page": 2}),
    ("How many employees did Northwind have?", "87 employees", "annual_report.pdf", {"page": 1}),
    ("When does the steering committee meet?", "every Monday at 9:00", "kickoff.pptx", {"slide": 1}),
    ("What is the budget of the South region?", "South | 385000", "budget.xlsx", {"sheet": "Budget"}),
    ("When does the cafeteria menu change?", "every Friday", "notes.txt", {"lines": [1, 3]}),
    ("Which are the three pilot sites?", "Aarhus, Bilbao and Cork", "review.docx", {"paragraph": 1}),
]


@pytest.mark.slow
def test_end_to_end_offline_on_generated_documents(knowledge_base, fake_embedder):
    agent = build_agent(OfflineBrain(), knowledge_base.retriever, embedder=fake_embedder)
    for question, quote, file, location in E2E_FACTS:
        result = agent.ask(question)
        assert quote in result.answer, (question, result.answer)
        cited = result.to_dict()["citations"][0]
        assert cited["file"] == file and location.items() <= cited["location"].items(), (question, cited)
        assert quote.split()[0] in cited["text"] and result.confidence >= 0.5
    for question in ("What is the boiling point of mercury on Mars?", "Who won the 1998 football world cup?",
                     "What was Contoso's revenue in 2031?"):
        refused = agent.ask(question)
        assert NOT_FOUND in refused.answer and refused.citations == () and _is_refusal_estimate(refused), question

    first = agent.ask("Which are the three pilot sites?")
    follow = agent.ask("and the second one?", history=[("Which are the three pilot sites?", first.answer)])
    assert follow.analysis.standalone == "What about Bilbao?"
    assert "Bilbao hosts the wind-turbine test bench" in follow.answer

    negation = agent.ask("Which documents don't mention GDPR?")
    assert sorted(c.file_name for c in negation.coverage if not c.mentioned) == [
        "annual_report.pdf", "budget.xlsx", "notes.txt", "review.docx"]
    assert "Not mentioned in: " in negation.answer and "kickoff.pptx" in negation.answer.split("Mentioned in:")[1]
    assert negation.citations[0].location == Location(slide=2)
    assert all(c.chunks_checked >= 1 for c in negation.coverage)
    assert {c.verdict for c in negation.claims} == {"supported"}


def test_context_is_trimmed_to_the_token_budget_and_says_so(fake_embedder):
    long = [make_chunk(f"d{i}", f"report{i}.txt", f"Revenue section {i}. " + "Revenue grew again. " * 150,
                       lines=(1, 40)) for i in range(6)]
    q = "How did revenue develop?"
    agent, chat = gemini_agent(FakeRetriever(long, fake_embedder),
                               [plan_json(q), "Revenue grew again [P1].", verify_json([("supported", 1)])],
                               budgets=Budgets(context_tokens=1500))
    result = agent.ask(q)
    answer_prompt = chat.prompts[1]
    assert len(answer_prompt) / 4 <= 1500
    assert any("Context budget (1500 tokens) reached" in w for w in result.warnings)
    assert result.trace[3]["input_tokens"] <= 1500


def test_callbacks_run_on_the_callers_thread(offline_agent):
    threads = set()
    offline_agent.ask("What was Acme's revenue in 2023?", on_event=lambda s, e: threads.add(threading.get_ident()),
                      on_token=lambda t: threads.add(threading.get_ident()))
    assert threads == {threading.get_ident()}  # a UI may draw from them directly


def test_answer_language_follows_the_question(retriever):
    q = "Wie hoch war der Umsatz von Acme im Jahr 2023?"
    plan = json.loads(plan_json(q))
    plan["language"] = "de"
    agent, chat = gemini_agent(retriever, [json.dumps(plan), "Der Umsatz betrug 2023 $5.2 million [P1].",
                                           verify_json([("supported", 1)])])
    result = agent.ask(q)
    assert result.analysis.language == "de" and "Answer in German" in chat.prompts[1]


def test_a_gemini_refusal_is_not_retried_without_new_passages(retriever):
    q = "Who is the mayor of Atlantis?"
    agent, chat = gemini_agent(retriever, [plan_json(q), f"{NOT_FOUND} The passages cover Acme's finances."])
    result = agent.ask(q)
    assert NOT_FOUND in result.answer and _is_refusal_estimate(result)
    assert len(chat.prompts) == 2 and result.usage.llm_calls == 2  # no verify call: nothing was claimed
    assert [t["step"] for t in result.trace].count("synthesize") == 1  # a refusal misses nothing to search for


def test_unverified_refusal_has_zero_confidence(offline_agent):
    result = offline_agent.ask("What is the boiling point of mercury on Mars?", verify=False)
    assert NOT_FOUND in result.answer and result.confidence == 0.0


def test_wrapped_pdf_lines_are_quoted_whole_and_their_own_references_are_not_citations(fake_embedder):
    text = ("Results\nOn the ImageNet dataset we evaluate residual nets with a depth of up to 152 layers, 8\n"
            "times deeper than VGG nets [41] but still having lower com-\nplexity. Other text follows here.")
    agent = build_agent(OfflineBrain(), FakeRetriever([make_chunk("r", "resnet.pdf", text, page=1)], fake_embedder))
    result = agent.ask("How deep were the residual nets evaluated on ImageNet?")
    quote = ('"On the ImageNet dataset we evaluate residual nets with a depth of up to 152 layers, 8 times deeper '
             'than VGG nets [41] but still having lower complexity." [1]')
    assert quote in result.answer
    assert [c.n for c in result.citations] == [1] and result.claims[0].citations == (1,)
    assert result.claims[0].verdict == "supported" and "⚠" not in result.answer


def test_a_retry_round_looks_deeper_and_fills_the_missing_part(chunks, fake_embedder):
    noise = [make_chunk(f"n{i}", f"noise{i}.txt", f"When does it start? When does it end? Does it? When? ({i})",
                        lines=(1, 1)) for i in range(10)]
    retriever = FakeRetriever(chunks + noise, fake_embedder)
    agent = build_agent(OfflineBrain(), retriever)
    result = agent.ask("What was Acme's revenue in 2023? When does the steering committee meet?")
    rounds = [t for t in result.trace if t["step"] == "retrieve"]
    assert len(rounds) == 2 and rounds[1]["details"]["received"]["queries"] == [
        "When does the steering committee meet?"] and rounds[1]["details"]["received"]["k"] == 16
    assert NOT_FOUND not in result.answer
    assert "every Monday at 9:00" in result.answer.split("**When does the steering committee meet**")[1]
    assert result.confidence_features["support"] == 1.0 and result.confidence > 0.5


# ---------------------------------------------------------------- offline extraction: matching, units, gate, verdicts

def _block(n, chunk, queries=(), rank=1):
    return ContextBlock(n, _hit(chunk, rank), tuple(queries))


def _concept(question, word):
    return next(c for c in query_concepts(question) if c.text == word)


@pytest.mark.parametrize("question, word, passage", [
    ("What are the default values of beta1 and beta2?", "beta1", "defaults are α = 0.001, β1 = 0.9, β2 = 0.999"),
    ("How many layers does BERT-LARGE have?", "LARGE", "BERTLARGE (L=24, H=1024, A=16)"),
    ("Which corpora were used to pre-train BERT?", "corpora", "For the pre-training corpus we use books"),
    ("Which corpora were used to pre-train BERT?", "pre", "BERT is pretrained on books"),
    ("What was JnJ's revenue?", "JnJ", "Johnson & Johnson reported sales of $94.9 billion"),
    ("What was the FY2022 revenue?", "FY2022", "Sales in fiscal 2022 rose"),
    ("What was the FY22 revenue?", "FY22", "Sales in 2022 rose"),
    ("What was Q22023 revenue?", "Q22023", "In the second quarter of 2023"),
    ("How many units in the US?", "US", "sold in the U.S. market"),
    ("What were the 10,000 steps for?", "10,000", "for the first 10000 steps"),
    ("What was Best Buy's revenue?", "Best", "BESTBUY 2023 10K"),
    ("Which corpora were used?", "corpora", "we use the BooksCorpus and Wikipedia"),
    ("What was J&J's revenue?", "J", "Johnson & Johnson reported sales"),
    ("What was the revenue in 2023?", "revenue", "Net sales in 2023 were $4.2 billion"),
    ("What was the COGS in 2023?", "COGS", "Cost of goods sold rose in 2023"),
    ("What percentage of tokens are masked?", "percentage", "we mask 15% of all tokens"),
    ("Who supplies the heat pumps?", "supplies", "The heat pump supplier is Nordvarme AS"),
    ("Who produces the turbines?", "produces", "Its producer, Vestas, ships them"),
    ("Who is the supplier of the pumps?", "supplier", "Nordvarme AS supplies the pumps"),
])
def test_a_concept_matches_the_ways_documents_spell_it(question, word, passage):
    assert _concept(question, word).met(forms_of(passage)), (word, sorted(forms_of(passage)))


@pytest.mark.parametrize("question, word, passage", [
    ("What was JnJ's revenue?", "JnJ", "Jones reported sales"),
    ("What was the FY2022 revenue?", "FY2022", "Sales in fiscal 2021 rose"),
    ("What was the COGS in 2023?", "COGS", "Cost of sales rose"[:4] + " of goods"),
    ("What top-1 accuracy does it reach?", "1", "a top-5 error of 3.57%"),
    ("Which fact was checked?", "fact", "one factor was checked"),
    ("How many were numb?", "numb", "the number of patients"),
])
def test_a_concept_does_not_match_what_merely_looks_alike(question, word, passage):
    assert not _concept(question, word).met(forms_of(passage))


def test_question_concepts_weigh_names_focus_and_light_words():
    concepts = {c.text: c for c in query_concepts("How many identical layers make up the Transformer's encoder?")}
    assert "How" not in concepts and "many" not in concepts
    assert concepts["Transformer"].specific and not concepts["encoder"].specific
    assert concepts["layers"].focus and concepts["identical"].focus and not concepts["encoder"].focus
    assert concepts["make"].weight < concepts["encoder"].weight < concepts["layers"].weight
    # Capitals that start a sentence, or fill a Title Case question, are not names; acronyms and digits are.
    assert not _concept("Which port? Round your answer.", "Round").specific
    title = {c.text: c.specific for c in query_concepts("What Is The Highest Real Growth Of Revenue In 2019?")}
    assert title == {"Highest": False, "Real": False, "Growth": False, "Revenue": False, "2019": True}
    assert not _concept("What was Q2 revenue?", "Q2").specific  # a period may be "three months ended ..."
    assert query_concepts("") == () and forms_of("") == frozenset()
    assert coverage(query_concepts("the of and"), forms_of("anything")) == 0.0


def test_a_number_must_stand_next_to_what_is_counted():
    layers = query_concepts("How many layers?")
    assert near(layers, "The encoder is composed of a stack of N = 6 identical layers.")
    assert not near(layers, "a multi-layer encoder described in Vaswani et al. (2017) and in a library")
    assert not near(layers, "step_num · warmup_steps−1.5 ) (3) for all layers")  # formula and equation numbers
    assert not near(layers, "12 layers", exclude=frozenset({"12"}))  # a number the question gives
    heads = [c for c in query_concepts("How many attention heads?") if c.focus]
    for count in ("In this work we employ h = 8 parallel attention layers, or heads.", "attention heads: 8"):
        assert near(heads, count, counting=True)
    measure = "While single-head attention is 0.9 BLEU worse than the best setting"
    assert near(heads, measure) and not near(heads, measure, counting=True)  # a measure, not a count of heads


def test_a_window_stating_the_count_gets_its_cosine_even_when_it_lacks_the_other_words(monkeypatch):
    from agentic_rag.language.quotes import EMBED_TOP, Ask, Window, add_cosine

    ask = Ask.of("How many attention heads does the base Transformer use?")
    block = ContextBlock(1, Hit(make_chunk("d", "a.pdf", "x", page=1), 1.0, 1))
    wordy = [Window(block, (), own=0.8, score=2.0 - i / 100, number=True) for i in range(EMBED_TOP + 2)]
    count = Window(block, (), own=0.5, score=1.0, number=True, near=True)
    calls = []

    class Embedder:
        def embed(self, texts):
            calls.append(list(texts))
            return np.ones((len(texts), 3)) / np.sqrt(3)

        def embed_query(self, text):
            return np.ones(3) / np.sqrt(3)

    monkeypatch.setattr("agentic_rag.language.quotes.render", lambda w: f"window {w.score}")  # units are left empty here
    out = add_cosine(ask, [*wordy, count], Embedder())
    assert len(calls[0]) == EMBED_TOP + 1  # the best EMBED_TOP by words, and the one stating the count
    assert next(w for w in out if w.near).cosine is not None
    assert sum(w.cosine is not None for w in out) == EMBED_TOP + 1


def test_units_keep_rows_with_their_header_and_sentences_whole():
    sheet = "| Site | Technicians | Supervisor |\n| --- | --- | --- |\n| Halden | 12 | Ingrid |\n| Smola | 8 | Per |"
    units = units_of(sheet)
    assert [u.text for u in units] == ["| Halden | 12 | Ingrid |", "| Smola | 8 | Per |"]
    assert {u.header for u in units} == {"| Site | Technicians | Supervisor |"}
    pdf = ("Results\nOn the ImageNet dataset we evaluate residual nets with a depth of up to 152\nlayers. See the "
           "note.\n3\nWe report two model sizes:\nBASE (L=12) and LARGE (L=24).\nTransformer (big) 28.4 41.8 2.3\n"
           "Label Smoothing During training, we employed label smoothing of value ls = 0.1.")
    texts = [u.text for u in units_of(pdf)]
    assert "On the ImageNet dataset we evaluate residual nets with a depth of up to 152 layers." in texts
    assert "3" not in texts  # a footnote mark is not a sentence
    assert "We report two model sizes: BASE (L=12) and LARGE (L=24)." in texts  # a lead-in keeps what it leads to
    assert "Transformer (big) 28.4 41.8 2.3" in texts  # a flattened table row stays a row of its own
    assert texts[-1] == "Label Smoothing During training, we employed label smoothing of value ls = 0.1."
    flattened = " ".join(f"Model{i} {i}.1 {i}.2 {i}.3" for i in range(60)) + " and the answer is 42"
    pieces = units_of(flattened)
    assert len(pieces) > 3 and all(len(u.text) <= 300 for u in pieces)
    assert pieces[0].cut_after and not pieces[0].cut_before and pieces[-1].cut_before and not pieces[-1].cut_after
    assert units_of("") == []


ADAM = ("Algorithm 1: Adam, our proposed algorithm for stochastic optimization. Good default settings for the "
        "tested machine learning problems are α = 0.001, β1 = 0.9, β2 = 0.999 and ε = 10−8. All operations on "
        "vectors are element-wise.")


@pytest.mark.parametrize("question, passage, file, wanted", [
    ("What are the default values of beta1 and beta2 in Adam?", ADAM, "adam.pdf", "β2 = 0.999"),
    ("What was JnJ's revenue in FY2022?", "Worldwide sales were $94.9 billion in fiscal 2022, an increase of "
     "1.3%.", "JOHNSON_JOHNSON_2022_10K.pdf", "$94.9 billion"),
    ("How many parallel attention heads does the base model employ?", "Multi-head attention allows the model to "
     "attend jointly. In this work we employ h = 8 parallel attention layers, or heads. Each has dk = 64.",
     "attention.pdf", "h = 8 parallel attention layers"),
])
def test_alias_matching_answers_what_the_old_gate_refused(question, passage, file, wanted):
    block = _block(1, make_chunk("d", file, passage, page=2))
    quotes = _quotes(question, classify(question), [block])
    assert quotes and quotes[0][0] == 1 and wanted in quotes[0][1], quotes


def test_a_sheet_row_is_quoted_with_its_header_not_the_header_alone():
    sheet = make_chunk("x", "staff.xlsx", "| Site | Technicians | Supervisor |\n| --- | --- | --- |\n"
                       "| Halden | 12 | Ingrid Solberg |\n| Smola | 8 | Per Hansen |", sheet="Staff", cells="A1:C3")
    quotes = _quotes("Who is the supervisor at the Smola site?", "fact", [_block(1, sheet)])
    assert quotes[0] == (1, "| Site | Technicians | Supervisor | … | Smola | 8 | Per Hansen |")
    assert all("Ingrid" not in q for _, q in quotes)


def test_a_long_sentence_is_quoted_whole_and_a_flattened_table_by_its_piece():
    long = ("During training we used a schedule that was tuned over many weeks on several clusters, with a warm-up "
            "phase, a plateau, checkpoint averaging over the last twenty checkpoints, gradient clipping, mixed "
            "precision, an exponential moving average of the weights, a careful choice of batch sizes for each of "
            "the language pairs we report on, and after all of that the label smoothing value we settled on was "
            "0.1.")
    assert 400 < len(long) < 600  # the old quotes stopped at 400 characters, before the answer
    quotes = _quotes("What label smoothing value was used?", "fact", [_block(1, make_chunk(
        "p", "paper.pdf", long, page=8))])
    assert quotes == [(1, long)]
    table = " ".join(f"Model{i} {i}.1 {i}.2 {i}.3" for i in range(60)) + " and label smoothing of value 0.1"
    quotes = _quotes("What label smoothing value was used?", "fact", [_block(1, make_chunk(
        "p", "paper.pdf", table, page=8))])
    assert quotes and quotes[0][1].startswith("… ") and "label smoothing of value 0.1" in quotes[0][1]


def _quotes(question, qtype, blocks, embedder=None):
    """What the offline brain would quote for `question` from `blocks` (language.quotes.find_quotes)."""
    return find_quotes(question, qtype, blocks, embedder, limit=QUOTE_LIMITS.get(qtype, DEFAULT_QUOTES))


def test_off_topic_passages_are_refused_not_quoted(fake_embedder):
    acme = [_block(1, make_chunk("a", "acme.pdf", "Acme Corp annual report. Revenue in 2023 was $5.2 million, up "
                                 "12% from 2022. The company employs 140 people.", page=3))]
    def quotes(question, qtype, blocks):
        return _quotes(question, qtype, blocks, fake_embedder)

    assert quotes("What was the share price of Acme at the end of 2023?", "fact", acme) == []  # no focus
    assert quotes("How much did the Acme audit cost?", "numeric", acme) == []
    assert quotes("What was Initech's revenue in 2023?", "numeric", acme) == []  # a name nobody holds
    assert quotes("What was Acme's revenue in 2023?", "numeric", acme)[0][1].startswith("Revenue in 2023")
    assert quotes("", "fact", acme) == [] and quotes("What was Acme's revenue?", "fact", []) == []


def test_a_document_that_names_what_is_asked_about_wins_over_one_that_does_not():
    blocks = [_block(1, make_chunk("a", "acme.pdf", "Revenue in 2023 was $5.2 million.", page=3)),
              _block(2, make_chunk("g", "globex.docx", "Globex revenue reached $7.9 million in 2023.",
                                   paragraph=2), rank=2)]
    quotes = _quotes("What was Globex's revenue in 2023?", "numeric", blocks)
    assert quotes[0] == (2, "Globex revenue reached $7.9 million in 2023.")


def _verdict(question, answer_line, chunk, embedder=None):
    draft = split_claims(answer_line)[0]
    return offline_verdict(0, draft, {1: _block(1, chunk, (question,))}, (question,), embedder)


def test_offline_verification_judges_whether_a_quote_answers_the_question(fake_embedder):
    acme = make_chunk("a", "acme.pdf", "Acme Corp annual report. Revenue in 2023 was $5.2 million, up 12% from "
                      "2022. The company employs 140 people.", page=3)
    q = "What was Acme's revenue in 2023?"
    assert _verdict(q, '"Revenue in 2023 was $5.2 million, up 12% from 2022." [P1]', acme).verdict == "supported"
    beside = _verdict(q, '"The company employs 140 people." [P1]', acme)
    assert beside.verdict == "unsupported" and "does not answer" in beside.reason  # verbatim, yet beside the point
    partly = _verdict("How many people did Acme employ in 2023 across its Danish and Spanish sites?",
                      '"The company employs 140 people." [P1]', acme)
    assert partly.verdict == "partial"
    no_number = _verdict("How many people does Acme employ?", '"Acme Corp annual report." [P1]', acme)
    assert no_number.verdict != "supported"
    made_up = _verdict(q, '"Revenue in 2023 was $6.1 million." [P1]', acme)
    assert made_up.verdict != "supported"  # not in the passage, however relevant
    row = make_chunk("x", "staff.xlsx", "| Site | Supervisor |\n| --- | --- |\n| Halden | Ingrid |\n| Smola | Per |",
                     sheet="Staff")
    assert _verdict("Who is the supervisor at Smola?", '"| Site | Supervisor | … | Smola | Per |" [P1]', row,
                    fake_embedder).verdict == "supported"  # the pieces around '…' are each verbatim


def test_a_quote_of_several_sentences_is_one_claim_and_its_own_page_references_are_not_checked(chunks):
    drafts = split_claims(f'{OFFLINE_LABEL} — quoted.\n\n"First it rose. Then it fell, said the “board”." [P2]')
    assert len(drafts) == 1 and drafts[0].citations == (2,)
    report = make_chunk("d1", "acme_report.pdf", "Revenue grew, as shown on page 9 of the appendix.", page=3)
    blocks = {1: _block(1, report)}
    quoted = split_claims('"Revenue grew, as shown on page 9 of the appendix." [P1]')[0]
    assert check_claim(quoted, Verdict(0, "supported", 1), blocks).verdict == "supported"
    claimed = split_claims("Page 9 of the report says revenue grew [P1].")[0]
    assert check_claim(claimed, Verdict(0, "supported", 1), blocks).verdict == "unsupported"


def test_confidence_drops_when_a_quote_does_not_answer(chunks, fake_embedder):
    brain = OfflineBrain(fake_embedder)
    blocks = [_block(1, chunks[0], ("What was Acme's revenue in 2023?",))]
    good = split_claims('"Revenue in 2023 was $5.2 million, up 12% from 2022." [P1]')
    bad = split_claims('"The company employs 140 people." [P1]')
    verdicts, _ = brain.verify(good + bad, blocks, question="What was Acme's revenue in 2023?").value
    claims = [check_claim(d, v, {1: blocks[0]}) for d, v in zip(good + bad, verdicts, strict=True)]
    assert [c.verdict for c in claims] == ["supported", "unsupported"] and support_share(claims) == 0.5


def test_the_embedder_is_asked_once_per_text(chunks, fake_embedder):
    brain = OfflineBrain(fake_embedder)
    blocks = [_block(i + 1, c, ("What was Acme's revenue in 2023?",), rank=i + 1) for i, c in enumerate(chunks)]
    analysis = analyze_question("What was Acme's revenue in 2023?")
    brain.answer(analysis, (analysis.standalone,), blocks)
    first = fake_embedder.texts_embedded
    brain.answer(analysis, (analysis.standalone,), blocks)  # a retry round sees the same passages again
    assert first > 0 and fake_embedder.texts_embedded == first


def test_decomposition_keeps_each_part_whole():
    def subs(q):
        return decompose(analyze_question(q))

    assert subs("How many layers, what hidden size and how many heads does BERT-LARGE have?") == (
        "How many layers, what hidden size does BERT-LARGE have?", "how many heads does BERT-LARGE have?")
    assert subs("How many layers do the base encoder and BERT-BASE each have?") == (
        "How many layers do the base encoder have?", "How many layers do BERT-BASE have?")
    assert subs("Over how many steps is the rate increased when training A and when pre-training B?") == (
        "Over how many steps is the rate increased when training A?",
        "Over how many steps is the rate increased when pre-training B?")
    assert subs("What is the FY2018 capex for 3M? Give a response by relying on the cash flow statement.") == (
        "What is the FY2018 capex for 3M?",)
    assert subs("Calculate the ratio. Round your answer to two decimals.") == (
        "Calculate the ratio. Round your answer to two decimals.",)


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


# ---------------------------------------------------------------- a saved answer

def test_an_answer_record_round_trips_through_json_whole(offline_agent):
    """What a saved conversation keeps: the answer read back equals the one given, hits and analysis included."""
    import json

    from agentic_rag import answer_from_record, answer_record

    result = offline_agent.ask("Which documents do not mention revenue?")
    assert result.sub_hits and result.analysis is not None and result.coverage
    again = answer_from_record(json.loads(json.dumps(answer_record(result))))
    assert again == result
    older = {"answer": "x [1]", "mode": "offline", "citations": [c.to_dict() for c in result.citations]}
    assert answer_from_record(older).citations == result.citations  # a record without the new fields still reads
