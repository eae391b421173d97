"""Confidence: an estimate that the answer is right, from measured evidence, fitted on the project's eval sets.

A verbatim quote proves that the documents say something, not that it answers the question, so the share of
supported claims alone ("confidence 100%" beside a quote about working capital for a question about a capital
city) is not a confidence. The estimate combines, through a logistic model:

- support: the verified share of the claims (supported 1, partial 0.5, unsupported 0; a missing part counts
  as unsupported);
- fit: how much of what the question asks the claims and their cited passages hold (weighted concepts);
- cosine: how close in meaning the best claim is to the question (0 without an embedder);
- answered: the share of the sub-questions that got an answer;
- comparison: whether the question compares (side by side, an answer must get two things right).
A refusal is right when the documents really lack the answer: its estimate falls as the best retrieved
passage gets closer to the question.

The coefficients are fitted by `eval/calibrate.py` on the offline runs of eval/papers.jsonl and
eval/heldout.jsonl (57 questions) and checked on eval/sealed.jsonl, which nothing was tuned on; the figures are
in docs/performance.md. Model-written answers (Gemini, local models) use the same form: their claims are
checked by the model and by our own number, citation and page checks before `support` is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Fitted by eval/calibrate.py (see the module docstring); intercept first.
ANSWER_WEIGHTS = (-2.05, 0.89, 1.02, 1.20, 0.71, -1.88)  # bias, support, fit, cosine, answered, comparison
REFUSAL_WEIGHTS = (0.51, -0.32)  # bias, best retrieval cosine
CAP = 0.97  # no answer is shown as certain: the checks cannot rule out every kind of error


@dataclass(frozen=True)
class Evidence:
    """What the estimate is computed from (shown in the reasoning panel and in the JSON)."""

    support: float = 0.0
    fit: float = 0.0
    cosine: float = 0.0
    answered: float = 1.0
    comparison: float = 0.0
    refused: bool = False
    retrieval: float = 0.0  # the best retrieved passage's cosine to its query

    def to_dict(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def estimate(evidence: Evidence) -> float:
    """P(the answer is right | evidence), rounded to 0.01 and capped at CAP."""
    if evidence.refused:
        z = REFUSAL_WEIGHTS[0] + REFUSAL_WEIGHTS[1] * evidence.retrieval
    else:
        features = (evidence.support, evidence.fit, evidence.cosine, evidence.answered, evidence.comparison)
        z = ANSWER_WEIGHTS[0] + sum(w * x for w, x in zip(ANSWER_WEIGHTS[1:], features, strict=True))
    return round(min(CAP, 1.0 / (1.0 + math.exp(-z))), 2)
