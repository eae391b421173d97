"""Periods: a question naming a year is not answered by a sentence or a claim about another year (offline quotes,
and a model's answer through the real Gemini client against the stub); a span ("since 2020") is no single year."""

from __future__ import annotations

import pytest

from agentic_rag import NOT_FOUND, OfflineBrain, build_agent, make_gemini_brain
from agentic_rag.language.text import asked_years, years_in
from testing.gemini_stub import GeminiStub, StubReply, docagent_responder
from tests.helpers.agent import FakeRetriever, make_chunk

ATLAS = ("Project Atlas was launched to modernise the regional freight network. The budget of Project Atlas in 2020 "
         "was $4.2 million, mostly spent on surveys. In 2021 the budget of Project Atlas rose to $6.8 million as "
         "construction began. For 2022 the committee approved $5.1 million.")


@pytest.mark.parametrize(("question", "years"), [
    ("What was the budget in 2021?", {"2021"}),
    ("Revenue in FY2022 vs FY2021?", {"2021", "2022"}),
    ("How did the budget change since 2020?", set()),
    ("Which projects started before 2019?", set()),
    ("What was the budget from 2019 to 2021?", set()),
    ("What is the budget?", set()),
])
def test_the_years_a_question_asks_about(question, years):
    assert asked_years(question) == frozenset(years)


def test_years_in_text():
    assert years_in("FY2021 and 1999, not 12021 or 2100") == {"2021", "1999"}


@pytest.fixture
def atlas(fake_embedder):
    return FakeRetriever([make_chunk("d1", "atlas.txt", ATLAS, lines=(1, 3))], fake_embedder)


@pytest.mark.parametrize(("year", "figure"), [("2021", "$6.8 million"), ("2022", "$5.1 million")])
def test_offline_quotes_the_sentence_of_the_asked_year_not_another(atlas, fake_embedder, year, figure):
    result = build_agent(OfflineBrain(fake_embedder), atlas).ask(f"What was the budget of Project Atlas in {year}?")
    assert figure in result.answer and "$4.2 million" not in result.answer
    assert [c.verdict for c in result.claims] == ["supported"]


def test_offline_says_it_did_not_find_a_year_the_document_does_not_cover(atlas, fake_embedder):
    result = build_agent(OfflineBrain(fake_embedder), atlas).ask("What was the budget of Project Atlas in 2019?")
    assert "$4.2 million" not in result.answer and "$6.8 million" not in result.answer
    assert NOT_FOUND in result.answer or "closest passages" in result.answer


def _answering(text):
    """The model writes `text`, its "[n]" citing the atlas passage in the form the prompt numbers it."""
    def responder(request):
        if "You answer questions using ONLY" in request.system:
            n = next(line.split("]")[0].strip("[") for line in request.prompt.splitlines()
                     if line.startswith("[") and "atlas.txt" in line)
            return StubReply(text=text.replace("[n]", f"[{n}]"))
        return docagent_responder(request)  # a credulous verifier: every claim "supported"
    return responder


def test_a_model_claim_about_another_year_is_refuted(atlas):
    with GeminiStub(responder=_answering("The budget of Project Atlas was $4.2 million in 2020 [n].")) as stub:
        brain = make_gemini_brain("k", model="gemini-3-flash", base_url=stub.base_url, timeout=5.0)
        result = build_agent(brain, atlas).ask("What was the budget of Project Atlas in 2021?")
    assert result.claims and all(c.refuted for c in result.claims)
    assert "the question asks about 2021" in result.claims[0].reason
    assert "⚠" in result.answer and result.confidence <= 0.5


def test_a_model_answer_for_the_asked_year_keeps_its_context_about_another(atlas):
    text = ("In 2021 the budget of Project Atlas was $6.8 million [n]. It had been $4.2 million in 2020 [n].")
    with GeminiStub(responder=_answering(text)) as stub:
        brain = make_gemini_brain("k", model="gemini-3-flash", base_url=stub.base_url, timeout=5.0)
        result = build_agent(brain, atlas).ask("What was the budget of Project Atlas in 2021?")
    assert [c.verdict for c in result.claims] == ["supported", "supported"]
    assert not any(c.refuted for c in result.claims) and result.confidence > 0.5
