"""advanced_retrieval.query.plan: the strategy a query's tokens choose, and quoted phrases."""

from __future__ import annotations

import pytest

from advanced_retrieval import choose_strategy, plan_query
from advanced_retrieval.query.plan import quoted_phrases


@pytest.mark.parametrize(("query", "strategy", "boosted"), [
    ("What is ISO-9001?", "bm25", True),
    ("A1:F40", "bm25", True),
    ('"force majeure"', "bm25", True),
    ("What was revenue in 2022?", "hybrid", True),
    ("What is the EBITDA margin", "hybrid", True),
    ('the "net income" trend', "hybrid", True),
    ("how do small companies manage risk", "hybrid", False),  # "all" inside "small" is not a feature
    ("summarize all of them", "hybrid", False),
    ("WHAT IS THE REVENUE", "hybrid", False),  # shouting is not an acronym
    ("", "hybrid", False),
])
def test_auto_strategy_uses_token_features(query, strategy, boosted):
    plan = plan_query(query)
    assert plan.strategy == strategy
    assert (plan.keyword_weight > 1) == boosted
    assert choose_strategy(query) == (plan.strategy, plan.reason) and plan.reason


def test_quoted_phrases():
    assert quoted_phrases('find "net  income" and “cash flow” but not company\'s') == ("net income", "cash flow")
    assert quoted_phrases("no quotes") == ()
