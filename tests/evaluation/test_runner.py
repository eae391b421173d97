"""evaluation.runner: run_eval's figures with scripted collaborators."""

from __future__ import annotations

import dataclasses
import json

import pytest

from evaluation import EvalReport, check_thresholds, format_report, run_eval
from tests.helpers.evaluation import KB, _scripted_case


def test_run_eval_figures_by_hand():
    questions, retriever, agent = _scripted_case()
    seen = []
    report = run_eval(questions, KB(retriever), agent, strategies=("hybrid", "bm25"), k=5,
                      progress=lambda done, total, q: seen.append((done, total, q)), dataset="hand")
    assert seen[-1] == (5, 5, "boom?") and len(seen) == 5
    hybrid = report.retrieval_for("hybrid")
    assert hybrid.questions == 4  # the unanswerable question has no gold
    assert hybrid.hit_at[1] == 0.25 and hybrid.hit_at[5] == 0.5  # q2 at 1, q1 at 2, q4 past 10, q5 errored
    assert hybrid.mrr == pytest.approx((1 + 0.5) / 4)
    assert {c[1] for c in retriever.calls} == {10}  # at least 10 fetched so MRR@10 is defined
    by_id = {r.question.id: r for r in report.questions}
    assert by_id["q1"].ranks == {"hybrid": 2, "bm25": 2} and by_id["q1"].passed
    assert by_id["q2"].passed is False and by_id["q2"].reason == "refused an answerable question"
    assert by_id["q3"].passed and by_id["q3"].refused
    assert by_id["q4"].passed and by_id["q4"].citations_valid is False  # [2] does not exist
    assert by_id["q5"].passed is False and "KeyError" in by_id["q5"].reason and by_id["q5"].errors
    a = report.answers
    assert (a.accuracy, a.scored) == (3 / 5, 5)
    assert (a.key_fact_accuracy, a.key_fact_questions) == (2 / 4, 4)
    assert (a.refusal_accuracy, a.unanswerable, a.false_refusals) == (1.0, 1, 1)
    assert (a.citation_validity, a.citations_scored) == (0.5, 2)
    assert (a.claims_supported, a.claims) == (0.5, 2)
    assert a.errors == 1 and a.by_kind["precision"] == (2, 3)
    assert report.cost.llm_calls_per_question == pytest.approx(6 / 4)
    assert agent.asked[0] == ("heads?", "hybrid")
    assert report.mode == "offline (extractive)"
    json.dumps(report.to_dict())  # JSON-able, every question's full answer included
    assert report.to_dict()["questions"][0]["answer"]["answer"] == "It uses 8 heads [1]."


def test_retrieval_only_and_empty_and_bad_arguments():
    questions, retriever, _ = _scripted_case()
    report = run_eval(questions, KB(retriever), None)
    assert report.answers is None and report.cost is None
    assert check_thresholds(report, min_accuracy=0.1) == ["accuracy was not measured (threshold 0.100)"]
    assert "retrieval only" in format_report(report)
    empty = run_eval([], KB(retriever), None)
    assert isinstance(empty, EvalReport) and empty.questions == () and empty.retrieval[0].mrr is None
    assert "no question has a gold location" in format_report(empty)
    with pytest.raises(ValueError, match="strategies must be"):
        run_eval(questions, KB(retriever), None, strategies=("semantic",))
    with pytest.raises(ValueError, match="k must be"):
        run_eval(questions, KB(retriever), None, k=0)


def test_run_eval_reports_calibration_in_text_and_json():
    questions, retriever, agent = _scripted_case()
    agent.answers["heads?"] = dataclasses.replace(agent.answers["heads?"], confidence=0.9)  # right
    agent.answers["price?"] = dataclasses.replace(agent.answers["price?"], confidence=0.0)  # wrong: refused an answerable question
    agent.answers["salary?"] = dataclasses.replace(agent.answers["salary?"], confidence=0.1)  # right: refused, as expected
    agent.answers["layers?"] = dataclasses.replace(agent.answers["layers?"], confidence=0.85)  # right; q5 raises, so it has no confidence and is left out
    report = run_eval(questions, KB(retriever), agent, strategies=("hybrid",), dataset="hand")
    cal = report.calibration
    assert (cal.pairs, cal.correct, cal.high, cal.precision_high) == (4, 3, 2, 1.0)
    assert cal.auroc == 1.0 and cal.wrong_low == 1.0
    assert [b.count for b in cal.bands] == [2, 0, 0, 2]
    data = json.loads(json.dumps(report.to_dict()))
    assert data["calibration"]["auroc"] == 1.0 and data["calibration"]["bands"][0]["correct"] == 1
    text = format_report(report)
    assert "Calibration (4 scored answers with a confidence, 3 right)" in text
    assert "[0.8, 1.0]" in text and "AUROC" in text and "0.90  pass" in text
    assert run_eval(questions, KB(retriever), None).calibration is None


def test_a_run_without_answers_leaves_calibration_empty():
    # Every AnswerResult carries a confidence; only a retrieval-only run has none to calibrate.
    questions, retriever, _ = _scripted_case()
    report = run_eval(questions, KB(retriever), None)
    assert report.calibration is None and "Calibration" not in format_report(report)


def test_calibration_is_reported_per_family_of_documents(tmp_path, capsys):
    from evaluation.calibrate import main as calibrate

    questions, retriever, agent = _scripted_case()
    families = ["paper", "paper", "filing", "filing", "filing"]
    questions = [dataclasses.replace(q, family=f) for q, f in zip(questions, families, strict=True)]
    report = run_eval(questions, KB(retriever), agent, k=5)
    assert sorted(report.by_family) == ["filing", "paper"]
    assert sum(c.pairs for c in report.by_family.values()) == report.calibration.pairs
    assert "Calibration by family of documents" in format_report(report)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["calibration_by_family"]["paper"]["pairs"] == report.by_family["paper"].pairs
    assert {q["question"]["family"] for q in data["questions"]} == {"paper", "filing"}
    run = tmp_path / "run.json"
    run.write_text(json.dumps(data))
    assert calibrate(["--by-family", str(run)]) == 0
    printed = capsys.readouterr().out
    assert "paper: as shipped" in printed and "filing: answer weights fitted on the other families" in printed


@pytest.mark.parametrize(("file", "family"), [("3M_2022_10K.pdf", "filing"), ("attention.pdf", "paper"),
                                              ("scan_page.PNG", "scan"), ("budget.xlsx", "office"), ("", "")])
def test_the_family_of_a_question_is_read_off_its_gold_file(file, family):
    from evaluation.dataset import family_of

    assert family_of(file) == family
    assert family_of(file, "office") == "office"  # a set's own family wins
