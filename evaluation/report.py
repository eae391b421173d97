"""Turning an EvalReport into a text table, and checking it against thresholds for CI."""

from __future__ import annotations

from evaluation.metrics import HIGH_CONFIDENCE, LOW_CONFIDENCE, Calibration
from evaluation.runner import EvalReport, QuestionResult


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _counted(value: float | None, count: int, what: str) -> str:
    return f"{_num(value)}  ({count} {what})"


def format_report(report: EvalReport) -> str:
    """A readable plain-text report: retrieval table, answer metrics, cost, and one line per question."""
    lines = [_title(report), ""]
    lines += _retrieval_lines(report)
    if report.answers is not None:
        lines += [""] + _answer_lines(report)
    if report.calibration is not None:
        lines += [""] + calibration_lines(report.calibration)
    if len(report.by_family) > 1:
        lines += [""] + family_lines(report.by_family)
    lines += [""] + _question_lines(report)
    return "\n".join(lines)


def _title(report: EvalReport) -> str:
    how = f"answers {report.mode or 'not run'} (strategy {report.answer_strategy})" if report.answers else \
        "retrieval only"
    name = report.dataset or "dataset"
    return f"Evaluation of {name}: {len(report.questions)} questions, {how}, k={report.k}"


def _retrieval_lines(report: EvalReport) -> list[str]:
    if not report.retrieval or not report.retrieval[0].questions:
        return ["Retrieval: no question has a gold location"]
    ks = list(report.retrieval[0].hit_at)
    head = f"{'strategy':<10}" + "".join(f"{'hit@' + str(k):>8}" for k in ks) + f"{'MRR@10':>8}{'p50 ms':>8}"
    lines = [f"Retrieval ({report.retrieval[0].questions} questions with a gold location)", head]
    for m in report.retrieval:
        ms = None if m.seconds_p50 is None else m.seconds_p50 * 1000
        lines.append(f"{m.strategy:<10}" + "".join(f"{_num(m.hit_at[k]):>8}" for k in ks)
                     + f"{_num(m.mrr):>8}{_num(ms, 1):>8}")
    return lines


def _answer_lines(report: EvalReport) -> list[str]:
    a, c = report.answers, report.cost
    kinds = ", ".join(f"{kind} {p}/{n}" for kind, (p, n) in a.by_kind.items()) or "—"
    lines = [
        f"Answers ({a.answered} answered, {a.errors} with errors)",
        f"  accuracy            {_counted(a.accuracy, a.scored, 'scored')}",
        f"  key-fact accuracy   {_counted(a.key_fact_accuracy, a.key_fact_questions, 'with key facts')}",
        f"  refusal accuracy    {_counted(a.refusal_accuracy, a.unanswerable, 'unanswerable')}",
        f"  false refusals      {a.false_refusals}",
        f"  citation validity   {_counted(a.citation_validity, a.citations_scored, 'answers with citations')}",
        f"  claims supported    {_counted(a.claims_supported, a.claims, 'claims')}",
        f"  by kind             {kinds}",
    ]
    for label, value in (("item recall", a.item_recall), ("point recall", a.point_recall),
                         ("sections covered", a.section_coverage)):
        if value is not None:
            lines.append(f"  {label:<19} {_num(value)}")
    if c is not None:
        lines += [
            "Cost per question",
            f"  seconds p50 / p95   {_num(c.seconds_p50, 2)} / {_num(c.seconds_p95, 2)}"
            f"  (total {c.seconds_total:.1f} s)",
            f"  LLM calls           {_num(c.llm_calls_per_question, 1)}",
            f"  tokens in / out     {_num(c.input_tokens_per_question, 0)} / {_num(c.output_tokens_per_question, 0)}",
        ]
    return lines


def calibration_lines(cal: Calibration) -> list[str]:
    """The reliability table (accuracy per confidence band), AUROC and the two target shares."""
    lines = [f"Calibration ({cal.pairs} scored answers with a confidence, {cal.correct} right)",
             f"  {'confidence':<12}{'answers':>8}{'right':>7}{'accuracy':>10}{'mean conf':>11}"]
    for i, b in enumerate(cal.bands):
        band = f"[{b.low:.1f}, {b.high:.1f}" + ("]" if i == len(cal.bands) - 1 else ")")
        lines.append(f"  {band:<12}{b.count:>8}{b.correct:>7}{_num(b.accuracy):>10}{_num(b.mean_confidence):>11}")
    lines += [
        f"  AUROC (confidence vs right)   {_num(cal.auroc)}",
        f"  right when shown >= {HIGH_CONFIDENCE:.1f}      {_counted(cal.precision_high, cal.high, 'answers')}"
        "  target >= 0.9",
        f"  wrong shown < {LOW_CONFIDENCE:.1f}            {_counted(cal.wrong_low, cal.wrong, 'wrong answers')}"
        "  target: most",
    ]
    return lines


def family_lines(by_family: dict[str, Calibration]) -> list[str]:
    """One line per family of documents: answers, right, AUROC and the two target shares."""
    lines = ["Calibration by family of documents",
             f"  {'family':<10}{'answers':>8}{'right':>7}{'AUROC':>8}   {'right when >= 0.8':<20}wrong below 0.5"]
    for family, cal in by_family.items():
        lines.append(f"  {family:<10}{cal.pairs:>8}{cal.correct:>7}{_num(cal.auroc):>8}   "
                     f"{_counted(cal.precision_high, cal.high, 'answers'):<20}"
                     f"{_counted(cal.wrong_low, cal.wrong, 'wrong')}")
    return lines


def _question_lines(report: EvalReport) -> list[str]:
    strategies = [m.strategy for m in report.retrieval]
    width = min(max([len(r.question.id) for r in report.questions] + [2]), 24) + 2
    head = f"{'id':<{width}}{'kind':<16}" + "".join(f"{s[:8]:>9}" for s in strategies) + "   conf  result  reason"
    lines = ["Questions (rank of the first gold chunk per strategy; '-' none in top k)", head]
    for r in report.questions:
        lines.append(f"{r.question.id[:width - 2]:<{width}}{(r.question.kind or '-')[:15]:<16}"
                     + "".join(f"{_rank(r, s):>9}" for s in strategies)
                     + f"  {_confidence(r):>5}  {_verdict(r):<6}  {_reason(r)}")
    return lines


def _rank(result: QuestionResult, strategy: str) -> str:
    if strategy not in result.ranks:
        return ""
    rank = result.ranks[strategy]
    return "-" if rank is None else str(rank)


def _confidence(result: QuestionResult) -> str:
    return f"{result.answer.confidence:.2f}" if result.answer is not None else "-"


def _verdict(result: QuestionResult) -> str:
    return {True: "pass", False: "FAIL", None: "·"}[result.passed]


def _reason(result: QuestionResult) -> str:
    reason = result.reason
    if result.citations_valid is False:
        reason += f"; citations: {result.citation_reason}"
    return reason or "; ".join(result.errors)


def check_thresholds(report: EvalReport, min_hit5: float | None = None, min_mrr: float | None = None,
                     min_accuracy: float | None = None) -> list[str]:
    """The thresholds the report misses, one human line each (empty = all met).

    Retrieval thresholds apply to the answering (first) strategy. A threshold on a figure that was not measured
    (no gold locations, no answers) fails: CI should not pass on nothing.
    """
    failures = []
    primary = report.retrieval_for(report.answer_strategy)
    checks = (
        ("hit@5", min_hit5, primary.hit_at.get(5) if primary else None),
        ("MRR@10", min_mrr, primary.mrr if primary else None),
        ("accuracy", min_accuracy, report.answers.accuracy if report.answers else None),
    )
    for name, minimum, value in checks:
        if minimum is None:
            continue
        if value is None:
            failures.append(f"{name} was not measured (threshold {minimum:.3f})")
        elif value < minimum:
            failures.append(f"{name} {value:.3f} is below the threshold {minimum:.3f}")
    return failures
