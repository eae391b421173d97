"""What is asked: a question naming a year is not answered by a sentence or a claim about another year (offline
quotes, and a model's answer through the real Gemini client against the stub); a span ("since 2020") is no single
year; "how many" is answered by a figure next to what is counted."""

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


ORION = ("Orion Freight reports its results each quarter. In the first quarter of 2023, Orion's revenue was $5.1 "
         "million on lower volumes.",
         "Orion Freight opened new routes in the spring. Revenue in the second quarter of 2023 was $5.9 million, "
         "Orion's best quarter.")


@pytest.fixture
def orion(fake_embedder):
    return FakeRetriever([make_chunk("d1", "orion.txt", text, lines=(2 * i + 1, 2 * i + 2))
                          for i, text in enumerate(ORION)], fake_embedder)


@pytest.mark.parametrize(("question", "figure", "other"), [
    ("What was Orion's revenue in the second quarter of 2023?", "$5.9 million", "$5.1 million"),
    ("What was Orion's revenue in Q1 2023?", "$5.1 million", "$5.9 million"),
])
def test_offline_quotes_the_sentence_of_the_asked_quarter_not_another(orion, fake_embedder, question, figure, other):
    result = build_agent(OfflineBrain(fake_embedder), orion).ask(question)
    assert figure in result.answer and other not in result.answer


def test_offline_says_it_did_not_find_a_quarter_the_document_does_not_cover(orion, fake_embedder):
    result = build_agent(OfflineBrain(fake_embedder), orion).ask("What was Orion's revenue in Q3 2023?")
    assert "$5.1 million" not in result.answer and "$5.9 million" not in result.answer


def test_a_model_claim_about_another_quarter_is_refuted(orion):
    def responder(request):
        if "You answer questions using ONLY" in request.system:
            n = next(line.split("]")[0].strip("[") for line in request.prompt.splitlines()
                     if line.startswith("[") and "orion.txt" in line and "lines 1" in line)
            return StubReply(text=f"In the first quarter of 2023, Orion's revenue was $5.1 million [{n}].")
        return docagent_responder(request)  # a credulous verifier
    with GeminiStub(responder=responder) as stub:
        brain = make_gemini_brain("k", model="gemini-3-flash", base_url=stub.base_url, timeout=5.0)
        result = build_agent(brain, orion).ask("What was Orion's revenue in the second quarter of 2023?")
    assert result.claims and all(c.refuted for c in result.claims)
    assert "another quarter than the question's (Q2 2023)" in result.claims[0].reason
    assert "⚠" in result.answer and result.confidence <= 0.5


TRANSFORMER = [
    ("3.2.3 Applications of Attention in our Model. The Transformer uses multi-head attention in three different "
     "ways: in encoder-decoder attention layers, the queries come from the previous decoder layer, and the memory "
     "keys and values come from the output of the encoder [10]."),
    ("The Transformer follows this overall architecture using stacked self-attention and point-wise, fully "
     "connected layers for both the encoder and decoder, shown in Figure 1."),
    ("3.1 Encoder and Decoder Stacks. Encoder: The encoder is composed of a stack of N = 6 identical layers. "
     "Each layer has two sub-layers."),
]


def test_how_many_is_answered_by_a_figure_next_to_what_is_counted(fake_embedder):
    """A sentence about encoder layers whose only figures are a section number and a citation holds more of the
    question's words; the sentence with the count next to 'layers' is the answer, and the other is not quoted."""
    corpus = FakeRetriever([make_chunk("d1", "transformer.pdf", text, page=i + 3)
                            for i, text in enumerate(TRANSFORMER)], fake_embedder)
    result = build_agent(OfflineBrain(fake_embedder), corpus).ask(
        "How many layers does the Transformer encoder have?")
    assert "N = 6 identical layers" in result.answer
    assert "three different ways" not in result.answer  # no sentence beside the count is quoted as an answer


def test_an_offline_quote_for_a_total_it_does_not_compute_is_shown_unsure(atlas, fake_embedder):
    """The documents give each year's budget, not their sum; quoting both is no total, whatever the words."""
    agent = build_agent(OfflineBrain(fake_embedder), atlas)
    total = agent.ask("What was the total budget of Project Atlas in 2020 and 2021?")
    assert "$4.2 million" in total.answer and total.confidence_features["uncomputed"] == 1.0
    assert total.confidence <= 0.4 and "closest passages" in total.answer
    one = agent.ask("What was the budget of Project Atlas in 2020?")  # read off, not worked out
    assert one.confidence_features["uncomputed"] == 0.0 and one.confidence > 0.5
