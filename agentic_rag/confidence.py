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
passage gets closer to the question, and falls further when the extractive reader finds a quote that answers
the question in the passages the model refused on (`found`; the weight is not fitted, since an offline refusal
never has one: it is set so that such a refusal shows about 30%, the share of the extractor's quotes that are
wrong on the eval sets being 15-40%).

The coefficients are fitted by `eval/calibrate.py` on the offline runs of eval/papers.jsonl and
eval/heldout.jsonl (57 questions) and checked on eval/sealed.jsonl, which nothing was tuned on; the figures are
in docs/performance.md. Model-written answers (Gemini, local models) use the same form: their claims are
checked by the model and by our own number, citation and page checks before `support` is computed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Fitted by eval/calibrate.py (see the module docstring); intercept first.
ANSWER_WEIGHTS = (-1.34, 0.96, 0.80, 0.98, 0.46, -2.40)  # bias, support, fit, cosine, answered, comparison
REFUSAL_WEIGHTS = (0.49, -0.30, -1.2)  # bias, best retrieval cosine, found (set, see above)
CAP = 0.97  # no answer is shown as certain: the checks cannot rule out every kind of error
SUPPORT_FLOOR = 0.3  # the most an answer none of whose claims checked out can show
REFUTED_CAP = 0.5  # the most an answer can show when a check proved one of its claims wrong (a figure, a page)


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
    found: float = 0.0  # a refusal: the extractor found an answering quote in the same passages
    refuted: float = 0.0  # an answer: a check proved one of its claims wrong
    no_figure: float = 0.0  # an answer to "how many / how much" that states no figure at all

    def to_dict(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def estimate(evidence: Evidence) -> float:
    """P(the answer is right | evidence), rounded to 0.01 and capped at CAP."""
    cap = CAP
    if evidence.refused:
        z = REFUSAL_WEIGHTS[0] + REFUSAL_WEIGHTS[1] * evidence.retrieval + REFUSAL_WEIGHTS[2] * evidence.found
    else:
        features = (evidence.support, evidence.fit, evidence.cosine, evidence.answered, evidence.comparison)
        z = ANSWER_WEIGHTS[0] + sum(w * x for w, x in zip(ANSWER_WEIGHTS[1:], features, strict=True))
        # A claim the checks refuted caps what the rest can earn: an answer with a figure its source does not
        # give is not "probably right" however well it fits the question (eval/replay.py measures this).
        # An answer to "how many / how much" that states no figure cannot be the answer, however it reads.
        cap = min(CAP, SUPPORT_FLOOR + (1 - SUPPORT_FLOOR) * evidence.support,
                  REFUTED_CAP if evidence.refuted else CAP, SUPPORT_FLOOR if evidence.no_figure else CAP)
    return round(min(cap, 1.0 / (1.0 + math.exp(-z))), 2)
