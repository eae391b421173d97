"""advanced_retrieval.fusion: reciprocal rank fusion."""

from __future__ import annotations

import pytest

from advanced_retrieval import reciprocal_rank_fusion


def test_rrf_matches_hand_computed_scores():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a", "d"]], k=60)
    expected = {"a": 1 / 61 + 1 / 62, "c": 1 / 63 + 1 / 61, "b": 1 / 62, "d": 1 / 63}
    assert [cid for cid, _ in fused] == ["a", "c", "b", "d"]
    assert dict(fused) == pytest.approx(expected)


def test_rrf_weights_ties_and_duplicates():
    fused = dict(reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=10, weights=[1.0, 3.0]))
    assert fused == pytest.approx({"a": 1 / 11 + 3 / 12, "b": 1 / 12 + 3 / 11})
    assert reciprocal_rank_fusion([["x"], ["y"]]) == [("x", 1 / 61), ("y", 1 / 61)]  # tie: first seen first
    assert reciprocal_rank_fusion([["y"], ["x"]])[0][0] == "y"
    assert dict(reciprocal_rank_fusion([["a", "a", "b"]], k=0)) == {"a": 1.0, "b": 1 / 3}  # first position counts
    assert reciprocal_rank_fusion([]) == [] and reciprocal_rank_fusion([[], []]) == []
    with pytest.raises(ValueError, match="one per list"):
        reciprocal_rank_fusion([["a"]], weights=[1, 2])
    with pytest.raises(ValueError):
        reciprocal_rank_fusion([["a"]], k=-1)
