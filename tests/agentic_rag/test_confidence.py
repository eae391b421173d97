"""agentic_rag.confidence: the support share of checked claims, and an answer to "how many" that states no figure."""

from __future__ import annotations

import pytest

from agentic_rag.checks.claims import flag_answer, split_claims
from agentic_rag.confidence import support_share
from tests.helpers.agent import gemini_agent, plan_json, verify_json


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


def test_an_answer_to_how_many_that_states_no_figure_is_not_shown_as_likely(filing):
    q = "How many layers does the residual network have?"
    script = [plan_json(q, subs=[q, "residual networks optimize"]),
              "Deeper residual networks are easier to optimize than plain ones [P1].", verify_json([("supported", 1)])]
    agent, _ = gemini_agent(filing, script)
    result = agent.ask(q)
    assert result.claims and result.confidence_features["no_figure"] == 1.0 and result.confidence <= 0.3


@pytest.mark.parametrize("answer, capped", [
    ("The encoder is a stack of identical layers [P1].", True),
    ("The encoder is a stack of six identical layers [P1].", False),
    ("The encoder is composed of a stack of N = 6 identical layers [P1].", False),
])
def test_an_answer_to_how_many_must_state_a_figure(answer, capped):
    from agentic_rag.confidence import _states_no_count

    assert _states_no_count("How many layers does the Transformer encoder have?", split_claims(answer)) is capped


def test_offline_answers_and_refusals_are_estimated_by_their_own_weights():
    """The extractor's evidence is read with the weights fitted on offline runs (right far less often on
    documents nobody tuned on than a checked model answer); a model's answer with the same evidence keeps its
    own. A refusal offline is doubted more: the extractor also refuses when it reads the table badly."""
    from agentic_rag.confidence import Evidence, estimate

    seen = dict(support=1.0, fit=0.8, cosine=0.6, answered=1.0)
    offline, model = estimate(Evidence(**seen, offline=True)), estimate(Evidence(**seen))
    assert offline != model and 0.3 < offline < 0.97 and 0.3 < model < 0.97
    assert estimate(Evidence(refused=True, retrieval=0.5, offline=True)) < estimate(Evidence(refused=True, retrieval=0.5))
    # the engine's calculation over a table weighs on its own
    assert estimate(Evidence(**seen, computed=1.0, offline=True)) != offline
