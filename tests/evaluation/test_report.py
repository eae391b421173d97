"""evaluation.report: the text report and its thresholds."""

from __future__ import annotations

from evaluation import check_thresholds, format_report, run_eval
from tests.helpers.evaluation import KB, _scripted_case


def test_report_text_and_thresholds():
    questions, retriever, agent = _scripted_case()
    report = run_eval(questions, KB(retriever), agent, strategies=("hybrid",), dataset="hand")
    text = format_report(report)
    assert "hit@5" in text and "MRR@10" in text and "refusal accuracy" in text
    assert "q2" in text and "refused an answerable question" in text
    assert check_thresholds(report) == []
    assert check_thresholds(report, min_hit5=0.5, min_mrr=0.3, min_accuracy=0.6) == []
    failures = check_thresholds(report, min_hit5=0.9, min_mrr=0.9, min_accuracy=0.9)
    assert len(failures) == 3 and failures[0].startswith("hit@5 0.500 is below")
