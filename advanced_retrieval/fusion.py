"""Reciprocal rank fusion: one pure function, fusing ranked lists by chunk id."""

from __future__ import annotations

from collections.abc import Sequence

# Cormack, Clarke & Büttcher (SIGIR 2009), "Reciprocal Rank Fusion outperforms Condorcet and individual rank
# learning methods": score(d) = Σ_lists w / (RRF_K + rank(d)), ranks counted from 1, k = 60.
RRF_K = 60


def reciprocal_rank_fusion(
    ranked_lists: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse ranked lists of chunk ids into one: score = Σ weight / (k + rank), ranks 1-based.

    An id counts once per list (at its first position). Ties keep the order in which ids were first seen
    (list by list), so the result is deterministic.

    Raises:
        ValueError: k < 0, or weights not one per list.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    weights = [1.0] * len(ranked_lists) if weights is None else list(weights)
    if len(weights) != len(ranked_lists):
        raise ValueError(f"{len(weights)} weights for {len(ranked_lists)} ranked lists; give one per list")
    scores: dict[str, float] = {}
    for weight, ranked in zip(weights, ranked_lists, strict=True):
        seen: set[str] = set()
        for rank, cid in enumerate(ranked, start=1):
            if cid not in seen:
                seen.add(cid)
                scores[cid] = scores.get(cid, 0.0) + weight / (k + rank)
    first_seen = {cid: i for i, cid in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], first_seen[item[0]]))
