"""agentic_rag.checks.claims: claims split from an answer (framing, tables), and the one refusal rule."""

from __future__ import annotations

import pytest

from agentic_rag import NOT_FOUND, OFFLINE_LABEL
from agentic_rag.checks.claims import flag_answer, is_refusal, split_claims
from agentic_rag.checks.verdicts import check_claim
from agentic_rag.types import ContextBlock, Verdict
from tests.helpers.agent import TABLE_ANSWER, Q, _hit


def test_claims_are_split_without_framing():
    answer = (f"{OFFLINE_LABEL} — quoted.\n\n**Acme revenue**\nAcme earned $5.2 million in 2023 [P1]. "
              f"It employs 140 people [P2].\n- Bilbao hosts the test bench [P3]\n{NOT_FOUND}\nHere it is:")
    drafts = split_claims(answer)
    assert [d.citations for d in drafts] == [(1,), (2,), (3,)]
    assert drafts[0].text == "Acme earned $5.2 million in 2023."


def test_a_markdown_table_survives_checking_with_its_flags_beside_it(filing):
    drafts = split_claims(TABLE_ANSWER)
    assert [d.text for d in drafts] == ["Year: 2023, Adjusted EBITDA ($M): 2,117", "Year: 2022, Adjusted EBITDA "
                                        "($M): 2,311", "It rose 4.9%."]
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    claims = [check_claim(d, Verdict(i, "supported", 1), blocks, question=Q) for i, d in enumerate(drafts)]
    # "It rose 4.9%" shows no calculation (issue 23: no search over the passage's pairs of numbers): unsupported,
    # but not refuted, since the check cannot redo a calculation it is not shown
    assert [c.verdict for c in claims] == ["supported", "unsupported", "unsupported"]
    assert [c.refuted for c in claims] == [False, True, False]
    flagged = flag_answer(TABLE_ANSWER, drafts, claims)
    table = [ln for ln in flagged.splitlines() if ln.startswith("|")]
    assert table == [ln for ln in TABLE_ANSWER.splitlines() if ln.startswith("|")]  # rows untouched
    lines = flagged.splitlines()
    note = next(i for i, ln in enumerate(lines) if ln.startswith("- Row “2022 | 2,311”"))
    assert lines[note - 1] == "" and "not supported" in lines[note]


@pytest.mark.parametrize("answer", [
    "The provided passages do not contain information about the capital of Australia. They discuss working "
    "capital [P2].",
    "I couldn't find the capital of Australia in the documents.",
    "Unfortunately, the documents do not mention Australia.",
    "There is no information about Australia's capital in the passages [P1].",
])
def test_a_refusal_in_any_wording_claims_nothing(answer):
    assert is_refusal(answer) and split_claims(answer) == ()


def test_an_answer_is_not_taken_for_a_refusal_and_its_not_covered_part_is_not_a_claim():
    answer = "Revenue was $5.2 million [P1]. The passages do not mention the profit."
    assert not is_refusal(answer)
    assert [d.text for d in split_claims(answer)] == ["Revenue was $5.2 million."]


@pytest.mark.parametrize("answer", [
    "I could not find this in the documents.",
    "I couldn't find any information about the share price.",
    "The documents do not mention the CEO's salary.",
    "The provided documents don't contain this information.",
    "There is no information about the share price in the documents.",
    "This is not mentioned in the documents.",
    "I cannot answer this from the provided sources.",
    "Not enough information in the documents to answer.",
    "I don't know.",
    "",
    "   ",
    "offline (extractive) — quoted.\n\nI could not find this in the documents.\nClosest passages (not an answer): a.pdf p. 2.",
])
def test_refusals(answer):
    assert is_refusal(answer)


@pytest.mark.parametrize("answer", [
    "No. The Transformer does not use recurrence; it dispenses with it entirely [1].",
    "The survey team did not find any corrosion on the towers [2].",
    "BERT does not use a left-to-right language model [3].",
    "It uses 8 heads [1].",
    "No evidence of overfitting was reported for ResNet-110 [4].",
    # A partial answer: one part quoted with its citation, the other not found.
    '**Halden technicians**\n"Halden 12 Ingrid Solberg" [1]\n\n**Turbines**\nI could not find this in the documents.',
])
def test_negation_answers_are_not_refusals(answer):
    assert not is_refusal(answer)
