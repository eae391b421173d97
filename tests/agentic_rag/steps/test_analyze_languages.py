"""A question in another language than the documents (issue 25, item 8), with the real Gemini client against the
local stub and offline: the plan is told the documents' language and searches in it, the answer keeps the
question's language, a claim in another language than its passage is judged on meaning and figures (not English
word overlap), and offline mode says it cannot match across languages."""

from __future__ import annotations

import json
import re

import pytest

from agentic_rag import Budgets, OfflineBrain, build_agent, make_gemini_brain
from agentic_rag.brains.prompts import plan_messages
from agentic_rag.language.text import language_of
from agentic_rag.steps.analyze import documents_language
from testing.gemini_stub import GeminiStub, StubReply
from tests.helpers.agent import FakeRetriever, make_chunk

ENGLISH = [
    make_chunk("e1", "attention.pdf", "The encoder is composed of a stack of N = 6 identical layers. Each layer has "
               "two sub-layers: a multi-head self-attention mechanism and a feed-forward network.", page=3),
    make_chunk("e2", "attention.pdf", "The decoder is also composed of a stack of N = 6 identical layers, with a "
               "third sub-layer that performs attention over the output of the encoder stack.", 1, page=3),
    make_chunk("e3", "report.docx", "The company was founded in 1998 and the report covers the year 2023 for all "
               "of its sites in the north of the country.", paragraph=1),
]
GERMAN = [
    make_chunk("g1", "bericht.pdf", "Der Umsatz stieg im Jahr 2023 auf 5,2 Millionen Euro. Die Firma hat 140 "
               "Mitarbeiter und ist in der Region tätig.", page=1),
    make_chunk("g2", "bericht.pdf", "Die drei Standorte sind Aarhus, Bilbao und Cork, und sie werden von der "
               "Zentrale aus geleitet.", 1, page=2),
]


@pytest.mark.parametrize(("question", "asked"), [
    ("Wie viele Schichten hat der Encoder des Transformers?", "de"),
    ("Combien de couches a l'encodeur du Transformer ?", "fr"),
])
def test_a_question_in_another_language_is_searched_in_the_documents_language_and_answered_in_its_own(
        fake_embedder, question, asked):
    plans, answers = [], []

    def responder(request):
        if "You plan how to answer" in request.system:
            plans.append(request.prompt)
            told = "written in English" in request.prompt
            return StubReply(text=json.dumps({  # as Gemini writes a plan when told where to search
                "intent": "number of encoder layers", "complexity": "simple", "question_type": "fact",
                "key_concepts": ["encoder", "layers"], "language": asked, "standalone_question": question,
                "sub_questions": ["How many layers does the Transformer encoder have?" if told else question],
                "search_queries": ["encoder stack of identical layers"] if told else []}))
        if "You answer questions using ONLY" in request.system:
            answers.append(request.system)
            n = re.search(r"^\[P(\d+)\][^\n]*\n[^\n]*encoder is composed", request.prompt, re.MULTILINE)
            cite = f"[P{n.group(1)}]" if n else "[P1]"
            text = {"de": f"Der Encoder besteht aus einem Stapel von N = 6 identischen Schichten {cite}.",
                    "fr": f"L'encodeur est composé d'une pile de N = 6 couches identiques {cite}."}[asked]
            return StubReply(text=text)
        claims = re.findall(r"^(\d+)\. ", request.prompt, re.MULTILINE)
        return StubReply(text=json.dumps({"claims": [{"claim": int(i), "verdict": "supported", "evidence": 1}
                                                     for i in claims], "missing": []}))

    retriever = FakeRetriever(ENGLISH, fake_embedder)
    with GeminiStub(responder=responder) as stub:
        brain = make_gemini_brain("stub-key", model="gemini-3.8-flash", base_url=stub.base_url, timeout=5.0)
        result = build_agent(brain, retriever, budgets=Budgets(), embedder=fake_embedder).ask(question)
    assert "The documents are written in English, the question is not" in plans[0]
    assert any(q.startswith("How many layers") or "encoder stack" in q for q, *_ in retriever.calls)
    assert {"de": "German", "fr": "French"}[asked] in answers[0]  # "Answer in German."
    assert result.mode == "gemini" and "N = 6" in result.answer and "[1]" in result.answer
    assert [c.verdict for c in result.claims] == ["supported"], result.claims  # not "partial" for want of English
    assert not result.warnings


def test_a_wrong_figure_in_another_language_is_still_refuted(fake_embedder):
    def responder(request):
        if "You plan how to answer" in request.system:
            return StubReply(text=json.dumps({"intent": "x", "complexity": "simple", "question_type": "fact",
                                              "key_concepts": ["encoder"], "language": "de",
                                              "standalone_question": "Wie viele Schichten hat der Encoder?",
                                              "sub_questions": ["encoder layers"],
                                              "search_queries": ["encoder stack identical layers"]}))
        if "You answer questions using ONLY" in request.system:
            return StubReply(text="Der Encoder besteht aus einem Stapel von N = 8 identischen Schichten [P1].")
        claims = re.findall(r"^(\d+)\. ", request.prompt, re.MULTILINE)  # a credulous verifier
        return StubReply(text=json.dumps({"claims": [{"claim": int(i), "verdict": "supported", "evidence": 1}
                                                     for i in claims], "missing": []}))

    with GeminiStub(responder=responder) as stub:
        brain = make_gemini_brain("stub-key", model="gemini-3.8-flash", base_url=stub.base_url, timeout=5.0)
        result = build_agent(brain, FakeRetriever(ENGLISH, fake_embedder), budgets=Budgets(),
                             embedder=fake_embedder).ask("Wie viele Schichten hat der Encoder?")
    assert [c.verdict for c in result.claims] == ["unsupported"] and result.claims[0].refuted, result.claims
    assert "8" in result.claims[0].reason


def test_offline_says_it_cannot_match_a_question_across_languages(fake_embedder):
    agent = build_agent(OfflineBrain(), FakeRetriever(ENGLISH, fake_embedder), embedder=fake_embedder)
    result = agent.ask("Wie viele Schichten hat der Encoder des Transformers?")
    assert any("The question is in German and the documents are in English" in w for w in result.warnings)
    same = agent.ask("How many layers does the Transformer encoder have?")
    assert not any("documents are in" in w for w in same.warnings)


def test_the_documents_language_is_told_from_their_first_chunks_and_a_mixed_library_is_not_guessed(fake_embedder):
    assert documents_language(FakeRetriever(ENGLISH, fake_embedder)) == "en"
    assert documents_language(FakeRetriever(GERMAN, fake_embedder)) == "de"
    half = [ENGLISH[0], GERMAN[0]]  # one English, one German document: no language for two thirds of them
    assert documents_language(FakeRetriever(half, fake_embedder)) == ""


def test_the_plan_is_told_the_documents_language_only_when_the_question_is_in_another():
    german = plan_messages("Wie hoch war der Umsatz im Jahr 2023?", (), "en")[1][1]
    assert "The documents are written in English, the question is not" in german
    assert german.endswith("Question: Wie hoch war der Umsatz im Jahr 2023?")
    assert "written in" not in plan_messages("What was revenue in 2023?", (), "en")[1][1]
    assert "written in" not in plan_messages("Wie hoch war der Umsatz im Jahr 2023?", (), "")[1][1]
    english_over_german = plan_messages("What was the revenue in 2023 and how many staff are there?", (), "de")
    assert "The documents are written in German" in english_over_german[1][1]
    assert language_of("12,5 % 2023 4.200") == ""  # figures alone say no language
