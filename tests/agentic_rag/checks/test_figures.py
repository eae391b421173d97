"""agentic_rag.checks.figures: years, units and arithmetic from cited numbers; a number nobody stated."""

from __future__ import annotations

import pytest

from agentic_rag.checks.claims import split_claims
from agentic_rag.checks.figures import arithmetic_errors, unexplained
from agentic_rag.checks.verdicts import check_claim
from agentic_rag.types import ContextBlock, Verdict
from tests.helpers.agent import Q, _hit


@pytest.mark.parametrize("claim", [
    "Adjusted EBITDA was $2,018 million vs $2,117 million in fiscal 2022 [P1].",  # years are periods
    "Adjusted EBITDA rose 4.9% from 2022 to 2023 [P1].",  # a computed change
    "Adjusted EBITDA grew by $99 million [P1].",  # a computed difference, with a scale word
    "The Adjusted EBITDA margin was 20.2% in 2023 [P1].",  # a ratio to net sales
    "Adjusted EBITDA was about $2.1 billion in 2023 [P1].",  # rounded and rescaled
    "(2,117 - 2,018) / 2,018 = 4.9% [P1].",
])
def test_years_units_and_arithmetic_from_cited_numbers_are_not_absent_numbers(filing, claim):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    checked = check_claim(split_claims(claim)[0], Verdict(0, "supported", 1), blocks, question=Q)
    assert checked.verdict == "supported", checked.reason


def test_a_number_nobody_stated_or_wrong_arithmetic_is_caught(filing):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    made_up = check_claim(split_claims("Adjusted EBITDA was 2,311 in 2023 [P1].")[0], Verdict(0, "supported", 1),
                          blocks, question=Q)
    assert made_up.verdict == "unsupported" and "2,311" in made_up.reason
    wrong = check_claim(split_claims("EBITDA rose 2,117 - 2,018 = 89 million [P1].")[0],
                        Verdict(0, "supported", 1), blocks, question=Q)
    assert wrong.verdict == "unsupported" and "recomputed: 99" in wrong.reason
    assert arithmetic_errors("99 / 2,018 = 4.9%") == []
    assert unexplained("It has six layers", "The encoder has 6 layers.") == []
    assert unexplained("It has 6 layers", "The encoder has six layers.") == []
    assert unexplained("It has 7 heads", "8 heads, 6 layers, 512 dimensions, 10,500 and 9,800") == ["7"]
