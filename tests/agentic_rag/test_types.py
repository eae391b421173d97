"""agentic_rag.types: the budgets' validation."""

from __future__ import annotations

import pytest

from agentic_rag import Budgets


def test_region_budget_is_validated():
    with pytest.raises(ValueError, match="region_tokens"):
        Budgets(region_tokens=-1)
    assert Budgets(region_tokens=0).region_tokens == 0
