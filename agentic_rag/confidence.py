"""Confidence: an estimate that the answer is right, from measured evidence, fitted on the project's eval sets.

A verbatim quote proves that the documents say something, not that it answers the question, so the share of
supported claims alone ("confidence 100%" beside a quote about working capital for a question about a capital
city) is not a confidence. The estimate combines, through a logistic model:

- support: the verified share of the claims (supported 1, partial 0.5, unsupported 0; a missing part counts
  as unsupported);
- fit: how much of what the question asks the claims and their cited passages hold (weighted concepts);
- cosine: how close in meaning the best claim is to the question (0 without an embedder);
- answered: the share of the sub-questions that got an answer;
- comparison: whether the question compares (side by side, an answer must get two things right), unless the answer
  states the engine's own calculation over a table (which read both sides: agentic_rag.tables.compute).
A refusal is right when the documents really lack the answer: its estimate falls as the best retrieved
passage gets closer to the question, and falls further when the extractive reader finds a quote that answers
the question in the passages the model refused on (`found`; the weight is not fitted, since an offline refusal
never has one: it is set so that such a refusal shows about 30%, the share of the extractor's quotes that are
wrong on the eval sets being 15-40%).

The coefficients are fitted by `evaluation/calibrate.py` on offline runs of four sets of different families and
answer rates: papers (20 questions, 85% answered right), heldout (37, office files and filings), a table set
written for tuning (45: filings, CSVs, sheets, decks) and FinanceBench (41 scored, filings, 15% right), so that
the estimate holds for documents the extractor reads badly as well as for those it reads well; they are checked
on the bundled table set and the sealed sets, which nothing was fitted on (docs/performance.md, "Fourth fit").
`computed` (the answer states the engine's calculation over a table) is a feature of its own: such an answer is
right or wrong as the query's row and column are, not as its quote's words are. Model-written answers (Gemini,
local models) use the same form: their claims are checked by the model and by our own number, citation and page
checks before `support` is computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from agentic_rag.checks import AnswerCheck, claim_fit, quote_body
from agentic_rag.checks.figures import calculations, figures
from agentic_rag.language.quotes import EMBED_CHARS, Ask, find_quotes
from agentic_rag.tables.compute import COMPUTED, is_rival
from agentic_rag.tables.plan import TableAsk
from agentic_rag.types import VERDICT_SCORE, Claim, ContextBlock, Draft

# Model-written answers (Gemini, local models): fitted by evaluation/calibrate.py on the first sets and measured on
# the realistic replays (testing.replay); intercept first. `computed` is not used for them.
ANSWER_WEIGHTS = (-1.34, 0.96, 0.80, 0.98, 0.46, -2.40, 0.0)  # bias, support, fit, cosine, answered, comparison, computed
REFUSAL_WEIGHTS = (0.49, -0.30, -1.2)  # bias, best retrieval cosine, found (set, see above)
# Offline (extractive) answers: fitted by evaluation/calibrate.py on the offline runs of papers, heldout, tables-dev
# and FinanceBench (see the module docstring), checked on tables, tables-fresh and sealed25.
OFFLINE_ANSWER_WEIGHTS = (-4.38, 0.82, 2.01, 3.01, 0.77, -2.50, 0.32)
OFFLINE_REFUSAL_WEIGHTS = (-1.18, -0.44, -1.2)
CAP = 0.97  # no answer is shown as certain: the checks cannot rule out every kind of error
SUPPORT_FLOOR = 0.3  # the most an answer none of whose claims checked out can show
REFUTED_CAP = 0.5  # the most an answer can show when a check proved one of its claims wrong (a figure, a page)
# The most an offline answer can show when the question asks for a figure worked out (a total, an average, a
# change) and the answer only quotes: right only where a document happens to print the result. Measured on the
# offline dev runs (papers, heldout, tables-dev, tables-dev2, FinanceBench: office files, filings, papers): 2 of
# 15 such answers right, against 76 of 121 other answers.
UNCOMPUTED_CAP = 0.4
# The most an answer computed from a table can show when another table reads the question almost as well and gives
# another figure (agentic_rag.tables.compute, "rival"): of two readings about as good, at most one is right. Measured
# offline: 8 of 12 such answers right on the tuning sets, 11 of 24 on the three held-out table sets (19 of 36).
RIVAL_CAP = 0.5
MAX_EMBEDDED_CLAIMS = 6  # claims whose cosine to the question is measured
CALCULATIONS = ("sum", "avg", "change")  # TableAsk operations whose answer is worked out, not read off
ANSWER_BASIS = "estimated chance the answer is right, from its checked claims"
REFUSAL_BASIS = "estimated chance the documents really lack the answer"
RETRIEVAL_BASIS = "retrieval scores (not verified)"


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
    uncomputed: float = 0.0  # an offline answer quoting passages for a question asking a calculation
    computed: float = 0.0  # the answer states the engine's own calculation over a table (its cells: 1)
    rival: float = 0.0  # ... and another table's calculation reads the question almost as well, another figure
    offline: bool = False  # written by the offline extractor (its own fitted weights), not by a model

    def to_dict(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def estimate(evidence: Evidence, *, answer_weights: Sequence[float] | None = None) -> float:
    """P(the answer is right | evidence), rounded to 0.01 and capped at CAP. `answer_weights`: other fitted
    weights, to measure them (evaluation/calibrate.py); by default those of the answer's kind (offline or a
    model's)."""
    cap = CAP
    if answer_weights is None:
        answer_weights = OFFLINE_ANSWER_WEIGHTS if evidence.offline else ANSWER_WEIGHTS
    refusal = OFFLINE_REFUSAL_WEIGHTS if evidence.offline else REFUSAL_WEIGHTS
    if evidence.refused:
        z = refusal[0] + refusal[1] * evidence.retrieval + refusal[2] * evidence.found
    else:
        features = (evidence.support, evidence.fit, evidence.cosine, evidence.answered, evidence.comparison,
                    evidence.computed)
        z = answer_weights[0] + sum(w * x for w, x in zip(answer_weights[1:], features, strict=True))
        # A claim the checks refuted caps what the rest can earn: an answer with a figure its source does not
        # give is not "probably right" however well it fits the question (eval/replay.py measures this).
        # An answer to "how many / how much" that states no figure cannot be the answer, however it reads.
        cap = min(CAP, SUPPORT_FLOOR + (1 - SUPPORT_FLOOR) * evidence.support,
                  REFUTED_CAP if evidence.refuted else CAP, SUPPORT_FLOOR if evidence.no_figure else CAP,
                  UNCOMPUTED_CAP if evidence.uncomputed else CAP, RIVAL_CAP if evidence.rival else CAP)
    return round(min(cap, 1.0 / (1.0 + math.exp(-z))), 2)


def support_share(claims: Sequence[Claim], missing: int = 0) -> float:
    """Mean verdict score (supported 1, partial 0.5, unsupported 0); each missing aspect counts as unsupported."""
    if not claims:
        return 0.0
    return round(sum(VERDICT_SCORE[c.verdict] for c in claims) / (len(claims) + missing), 2)


def retrieval_confidence(blocks: Sequence[ContextBlock]) -> float:
    """Unverified estimate from the top passages' scores: cosine clipped to [0, 1], BM25 squashed by s/(s+5)."""
    scores = []
    for b in list(blocks)[:3]:
        cos = max(0.0, min(1.0, b.hit.vector_score or 0.0))
        bm25 = b.hit.bm25_score or 0.0
        scores.append(max(cos, bm25 / (bm25 + 5.0) if bm25 > 0 else 0.0))
    return round(sum(scores) / len(scores), 2) if scores else 0.0


def assess(check: AnswerCheck, draft: Draft, blocks: Sequence[ContextBlock], *, question: str, qtype: str,
           sub_questions: int, embedder=None, answer_mode: str = "offline") -> Evidence:
    """The measured evidence the confidence is estimated from, for a checked answer.

    A refusal (no claims) is doubtful when the extractive reader finds a quote that answers the question in the
    very passages a model refused on (an offline refusal means it found none).
    """
    by_n = {b.n: b for b in blocks}
    retrieval = max((b.hit.vector_score or 0.0 for b in blocks), default=0.0)
    if not check.claims:
        found = answer_mode != "offline" and bool(blocks) and bool(
            find_quotes(question, qtype, blocks, embedder, limit=1))
        return Evidence(refused=True, retrieval=retrieval, found=float(found), offline=answer_mode == "offline")
    fits = [claim_fit(question, d, by_n) for d in check.drafts]
    cosine = 0.0
    if embedder is not None:
        texts = [quote_body(d.text)[:EMBED_CHARS] for d in check.drafts[:MAX_EMBEDDED_CLAIMS]]
        cosine = float(max(embedder.embed(texts) @ embedder.embed_query(question)))
    subs = max(1, sub_questions)
    return Evidence(support=support_share(check.claims, len(check.missing)), fit=sum(fits) / len(fits),
                    cosine=max(0.0, cosine),
                    answered=1.0 - min(1.0, len(draft.unanswered or check.missing) / subs), retrieval=retrieval,
                    comparison=float(qtype == "comparison" and not _computed(check, by_n)),
                    computed=float(_computed(check, by_n)),
                    rival=float(_computed(check, by_n) and any(is_rival(b.hit) for b in blocks)),
                    refuted=float(any(c.refuted for c in check.claims)),
                    no_figure=float(_states_no_count(question, check.drafts)),
                    uncomputed=float(answer_mode == "offline" and _uncomputed(question, qtype, check, by_n)),
                    offline=answer_mode == "offline")


def _computed(check: AnswerCheck, by_n) -> bool:
    """Whether the answer states the engine's own calculation over a table (a comparison the engine made from
    both cells, not one side quoted: the comparison weight measures the latter)."""
    return any(n in by_n and by_n[n].chunk.id.startswith(COMPUTED) for d in check.drafts for n in d.citations)


def _uncomputed(question: str, qtype: str, check: AnswerCheck, by_n) -> bool:
    """The question asks for a figure that is a total, an average or a change ("when does the menu change?" asks
    none), and the answer neither cites the engine's calculation over a table nor writes one out (the figure
    check recomputes a written calculation): it only quotes."""
    return (qtype in ("numeric", "comparison") and TableAsk.of(question).op in CALCULATIONS
            and not _computed(check, by_n)
            and not any(calculations(d.text) for d in check.drafts))


def _states_no_count(question: str, drafts) -> bool:
    """"How many / how much" answered without any figure. (Requiring the figure next to what is counted, as the
    extractor does, also capped right answers that name the counted thing differently, "92,000 employees" for
    "people": on the held-out set it lowered AUROC 0.764 -> 0.730 and caught no wrong answer, so it is not used.)"""
    return Ask.of(question).counts and not any(not f.year for d in drafts for f in figures(d.text))
