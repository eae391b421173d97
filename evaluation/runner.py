"""Running a dataset: retrieval ranks per strategy straight from the retriever, answers through the real agent."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from advanced_retrieval import STRATEGIES
from agentic_rag import AnswerResult
from evaluation.dataset import EvalQuestion
from evaluation.metrics import (
    Calibration,
    calibration,
    check_citations,
    first_hit_rank,
    hit_at_k,
    is_refusal,
    mean,
    missing_groups,
    mrr,
    numbers_in,
    percentile,
    supported_claims,
)

MRR_CUTOFF = 10
HIT_KS = (1, 3, 5, 10)
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class QuestionResult:
    """What happened to one question. `ranks[strategy]` is the 1-based rank of the first gold chunk (None: none
    in the top k); it is empty when the question has no gold location. `passed` is None when nothing could be
    checked (an answerable question without answer groups, or no agent)."""

    question: EvalQuestion
    ranks: dict[str, int | None] = field(default_factory=dict)
    passed: bool | None = None
    reason: str = ""
    refused: bool | None = None
    citations_valid: bool | None = None
    citation_reason: str = ""
    answer: AnswerResult | None = None  # the engine's answer (None: not asked, or it failed)
    seconds: float = 0.0
    errors: tuple[str, ...] = ()
    coverage: dict | None = None  # whole-document questions: share of gold items, points and sections covered

    def to_dict(self) -> dict:
        return {
            "question": self.question.to_dict(), "ranks": dict(self.ranks), "passed": self.passed,
            "reason": self.reason, "refused": self.refused, "citations_valid": self.citations_valid,
            "citation_reason": self.citation_reason, "answer": self.answer.to_dict() if self.answer else {},
            "seconds": round(self.seconds, 4),
            "errors": list(self.errors), "coverage": self.coverage,
        }


@dataclass(frozen=True)
class RetrievalMetrics:
    """Page-level retrieval quality of one strategy over the questions that have a gold location."""

    strategy: str
    questions: int
    hit_at: dict[int, float | None]
    mrr: float | None
    seconds_p50: float | None

    def to_dict(self) -> dict:
        return {"strategy": self.strategy, "questions": self.questions,
                "hit_at": {str(k): v for k, v in self.hit_at.items()}, "mrr": self.mrr,
                "seconds_p50": self.seconds_p50}


@dataclass(frozen=True)
class AnswerMetrics:
    """Answer quality. Each rate is over the questions it applies to (the count beside it); None when none do.

    accuracy: pass rate over questions with answer groups or kind "unanswerable"; key_fact_accuracy: answers
    holding every group (a refusal fails); refusal_accuracy: unanswerable questions refused; false_refusals:
    answerable questions refused; citation_validity: answers whose every [n] is a real citation from a gold file;
    claims_supported: verified claims with verdict "supported", over all claims.
    """

    answered: int
    accuracy: float | None
    scored: int
    key_fact_accuracy: float | None
    key_fact_questions: int
    refusal_accuracy: float | None
    unanswerable: int
    false_refusals: int
    citation_validity: float | None
    citations_scored: int
    claims_supported: float | None
    claims: int
    errors: int
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)
    item_recall: float | None = None  # list questions: mean share of the gold items named
    point_recall: float | None = None  # summary and section questions: mean share of the gold points made
    section_coverage: float | None = None  # mean share of the gold sections named or read

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out["by_kind"] = {kind: {"passed": p, "scored": n} for kind, (p, n) in self.by_kind.items()}
        return out


@dataclass(frozen=True)
class CostMetrics:
    """Time and model use per answered question."""

    seconds_p50: float | None
    seconds_p95: float | None
    seconds_total: float
    llm_calls_per_question: float | None
    input_tokens_per_question: float | None
    output_tokens_per_question: float | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class EvalReport:
    """Everything one evaluation measured; `questions` keeps each full answer for inspection."""

    questions: tuple[QuestionResult, ...]
    retrieval: tuple[RetrievalMetrics, ...]
    answers: AnswerMetrics | None
    cost: CostMetrics | None
    k: int
    answer_strategy: str
    mode: str = ""
    dataset: str = ""
    calibration: Calibration | None = None
    by_family: dict[str, Calibration] = field(default_factory=dict)  # the same, per family of documents

    def retrieval_for(self, strategy: str) -> RetrievalMetrics | None:
        """The retrieval metrics of one strategy, or None when it was not run."""
        return next((m for m in self.retrieval if m.strategy == strategy), None)

    def to_dict(self) -> dict:
        """A JSON-able dict of every figure and every question's result."""
        return {
            "dataset": self.dataset, "k": self.k, "answer_strategy": self.answer_strategy, "mode": self.mode,
            "retrieval": [m.to_dict() for m in self.retrieval],
            "answers": self.answers.to_dict() if self.answers else None,
            "cost": self.cost.to_dict() if self.cost else None,
            "calibration": self.calibration.to_dict() if self.calibration else None,
            "calibration_by_family": {f: c.to_dict() for f, c in self.by_family.items()},
            "questions": [q.to_dict() for q in self.questions],
        }


def run_eval(questions: Sequence[EvalQuestion], kb, agent, *, strategies: Sequence[str] = ("hybrid",),
             k: int = 10, progress: Progress | None = None, dataset: str = "") -> EvalReport:
    """Evaluate retrieval (every strategy, through `kb.retriever`) and answers (the agent, first strategy).

    Args:
        kb: anything with `.retriever.retrieve(query, k, strategy, filters)` returning ranked hits.
        agent: anything with `.ask(question, strategy=...)` returning an object with `.to_dict()`; None measures
            retrieval only.
        k: retrieval depth for hit@k (at least 10 chunks are fetched so MRR@10 is defined).
        progress: called as progress(done, total, question_text) after each question.

    A question whose retrieval or answer raises is recorded with the error and counted as failed; the rest go on.

    Raises:
        ValueError: an unknown strategy, no strategy, or k < 1.
    """
    strategies = tuple(dict.fromkeys(strategies))
    if not strategies or any(s not in STRATEGIES for s in strategies):
        raise ValueError(f"strategies must be some of {', '.join(STRATEGIES)}; got {', '.join(strategies) or 'none'}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    depth = max(k, MRR_CUTOFF)
    results, timings = [], {s: [] for s in strategies}
    for done, question in enumerate(questions, start=1):
        ranks, errors = _rank_question(kb.retriever, question, strategies, depth, timings)
        result = QuestionResult(question=question, ranks=ranks, errors=tuple(errors))
        if agent is not None:
            result = _answer_question(agent, result, strategies[0])
        results.append(result)
        if progress is not None:
            progress(done, len(questions), question.question)
    return _report(tuple(results), strategies, k, timings, agent is not None, dataset)


def _rank_question(retriever, question: EvalQuestion, strategies, depth: int, timings) -> tuple[dict, list[str]]:
    ranks, errors = {}, []
    if not question.gold:
        return ranks, errors
    for strategy in strategies:
        started = time.perf_counter()
        try:
            hits = retriever.retrieve(question.question, depth, strategy, None)
        except Exception as exc:  # one failing question is reported and the batch goes on
            errors.append(f"retrieval ({strategy}) failed: {type(exc).__name__}: {exc}")
            ranks[strategy] = None
            continue
        timings[strategy].append(time.perf_counter() - started)
        ranks[strategy] = first_hit_rank([hit.chunk for hit in hits], question.gold)
    return ranks, errors


def _answer_question(agent, result: QuestionResult, strategy: str) -> QuestionResult:
    question = result.question
    started = time.perf_counter()
    try:
        answer = agent.ask(question.question, strategy=strategy)
    except Exception as exc:  # one failing question is reported and the batch goes on
        error = f"answer failed: {type(exc).__name__}: {exc}"
        return replace(result, passed=False, reason=error, seconds=time.perf_counter() - started,
                        errors=(*result.errors, error))
    seconds = time.perf_counter() - started
    text = answer.answer
    refused = is_refusal(text)
    passed, reason = judge_answer(question, text, refused)
    covered = whole_document_coverage(question, answer)
    if covered is not None:
        passed, reason = judge_coverage(covered, refused)
    valid, why = check_citations(text, answer.citations, [g.file for g in question.gold])
    return replace(result, passed=passed, reason=reason, refused=refused, citations_valid=valid,
                    citation_reason=why, answer=answer, seconds=seconds, coverage=covered)


PASS_SHARE = 0.5  # a whole-document answer passes when it covers at least this share of its gold items or points


def whole_document_coverage(question: EvalQuestion, answer: AnswerResult) -> dict | None:
    """For a list, summary or section question: the share of its gold items and points the answer names, and of
    its gold sections the answer names or the engine read (the Reasoning's sections read); None for others.
    The engine's own line about what it read ("not read: ...") is not counted as naming anything."""
    if not (question.items or question.points or question.sections):
        return None
    text = "\n".join(line for line in answer.answer.splitlines() if not line.strip().startswith("*("))
    read = " ".join(s.get("title", "") for t in answer.trace if t.get("step") == "retrieve"
                    for s in ((t.get("details") or {}).get("reading") or {}).get("read", ()))

    def share(groups, where):
        return round(1 - len(missing_groups(where, groups)) / len(groups), 4) if groups else None

    return {"items": share(question.items, text), "points": share(question.points, text),
            "sections": share(question.sections, text + "\n" + read)}


def judge_coverage(covered: dict, refused: bool) -> tuple[bool, str]:
    if refused:
        return False, "refused a whole-document question"
    main = covered["items"] if covered["items"] is not None else covered["points"]
    if main is None:
        main = covered["sections"] or 0.0
    said = ", ".join(f"{k} {v:.0%}" for k, v in covered.items() if v is not None)
    return main >= PASS_SHARE, f"covers {said}"


def judge_answer(question: EvalQuestion, text: str, refused: bool) -> tuple[bool | None, str]:
    """Pass/fail of one answer with the reason; None when there is nothing to check it against."""
    if question.unanswerable:
        return (True, "refused, as expected") if refused else (False, "answered an unanswerable question")
    if refused:
        return False, "refused an answerable question"
    if not question.answer:
        return None, "answered (no key facts to check)"
    missing = missing_groups(text, question.answer)
    if missing and question.value is not None and len(missing) == 1 and missing[0] == question.answer[0] \
            and any(abs(n - abs(question.value)) <= max(question.tolerance, 1e-9) for n in numbers_in(text)):
        missing = []  # the gold figure, written another way (17606.0, 17,606.00; a fall of 14.1% for -14.07)
    if missing:
        return False, "missing " + "; ".join(" | ".join(group) for group in missing)
    return True, f"all {len(question.answer)} key fact(s) present"


def _report(results, strategies, k, timings, answered: bool, dataset: str) -> EvalReport:
    retrieval = tuple(_retrieval_metrics(results, s, k, timings[s]) for s in strategies)
    modes = sorted({r.answer.mode for r in results if r.answer is not None and r.answer.mode})
    return EvalReport(
        questions=results, retrieval=retrieval, answers=_answer_metrics(results) if answered else None,
        cost=_cost_metrics(results) if answered else None, k=k, answer_strategy=strategies[0],
        mode="+".join(modes), dataset=dataset, calibration=calibration(confidence_pairs(results)) if answered else None,
        by_family=_by_family(results) if answered else {},
    )


def _by_family(results: Sequence[QuestionResult]) -> dict[str, Calibration]:
    """The calibration of each family of documents (papers, filings, office files, scans) holding two or more
    scored answers: a confidence fitted on one family must be seen to hold on the others."""
    families = sorted({r.question.document_family for r in results} - {""})
    out = {}
    for family in families:
        found = calibration(confidence_pairs([r for r in results if r.question.document_family == family]))
        if found is not None and found.pairs >= 2:
            out[family] = found
    return out


def confidence_pairs(results: Sequence[QuestionResult]) -> list[tuple[float, bool]]:
    """(shown confidence, passed) of every scored question whose answer carries a confidence, refusals included."""
    return [(float(r.answer.confidence), bool(r.passed)) for r in results
            if r.passed is not None and r.answer is not None]


def _retrieval_metrics(results, strategy: str, k: int, seconds: list[float]) -> RetrievalMetrics:
    ranks = [r.ranks[strategy] for r in results if strategy in r.ranks]
    ks = sorted({*HIT_KS, k})
    return RetrievalMetrics(strategy=strategy, questions=len(ranks), hit_at={n: hit_at_k(ranks, n) for n in ks},
                            mrr=mrr(ranks, MRR_CUTOFF), seconds_p50=percentile(seconds, 50))


def _rate(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


def _answer_metrics(results: Sequence[QuestionResult]) -> AnswerMetrics:
    ok = [r for r in results if r.answer is not None]
    scored = [r for r in results if r.passed is not None]
    with_facts = [r for r in results if r.question.answer]
    unanswerable = [r for r in results if r.question.unanswerable]
    cited = [r.citations_valid for r in ok if r.citations_valid is not None]
    supported = [supported_claims(r.answer.claims) for r in ok]
    by_kind: dict[str, tuple[int, int]] = {}
    for r in scored:
        passed, total = by_kind.get(r.question.kind or "-", (0, 0))
        by_kind[r.question.kind or "-"] = (passed + bool(r.passed), total + 1)
    claims = sum(n for _, n in supported)
    shares = {k: [r.coverage[k] for r in ok if r.coverage and r.coverage.get(k) is not None]
              for k in ("items", "points", "sections")}
    return AnswerMetrics(
        answered=len(ok), accuracy=_rate([bool(r.passed) for r in scored]), scored=len(scored),
        key_fact_accuracy=_rate([bool(r.passed) for r in with_facts]), key_fact_questions=len(with_facts),
        refusal_accuracy=_rate([bool(r.refused) for r in unanswerable]), unanswerable=len(unanswerable),
        false_refusals=sum(1 for r in results if not r.question.unanswerable and r.refused),
        citation_validity=_rate(cited), citations_scored=len(cited),
        claims_supported=sum(s for s, _ in supported) / claims if claims else None, claims=claims,
        errors=sum(1 for r in results if r.errors), by_kind=dict(sorted(by_kind.items())),
        item_recall=mean(shares["items"]) if shares["items"] else None, point_recall=mean(shares["points"])
        if shares["points"] else None, section_coverage=mean(shares["sections"]) if shares["sections"] else None,
    )


def _cost_metrics(results: Sequence[QuestionResult]) -> CostMetrics:
    ok = [r for r in results if r.answer is not None]
    seconds = [r.seconds for r in ok]
    usage = [r.answer.usage for r in ok]
    return CostMetrics(
        seconds_p50=percentile(seconds, 50), seconds_p95=percentile(seconds, 95),
        seconds_total=sum(r.seconds for r in results),
        llm_calls_per_question=mean([float(u.llm_calls) for u in usage]),
        input_tokens_per_question=mean([float(u.input_tokens) for u in usage]),
        output_tokens_per_question=mean([float(u.output_tokens) for u in usage]),
    )
