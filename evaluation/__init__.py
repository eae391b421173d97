"""Built-in evaluation: JSONL datasets of questions with gold pages and key facts, retrieval and answer metrics,
the bundled question sets (evaluation.sets) and the measurements built on them (replay, calibrate, financebench).

Nothing here opens a library or builds an engine: the composition root (cli.py `eval` and `replay`, the app's
Evaluate page) passes them in."""

from evaluation.command import document_paths, eval_command, index_folder
from evaluation.dataset import DatasetError, EvalQuestion, GoldSource, load_dataset, parse_dataset, parse_question
from evaluation.metrics import (
    alternative_in,
    check_citations,
    chunk_matches,
    citation_markers,
    first_hit_rank,
    has_key_facts,
    hit_at_k,
    is_refusal,
    missing_groups,
    mrr,
    numbers_in,
    percentile,
    supported_claims,
)
from evaluation.report import check_thresholds, format_report
from evaluation.runner import (
    AnswerMetrics,
    CostMetrics,
    EvalReport,
    QuestionResult,
    RetrievalMetrics,
    judge_answer,
    run_eval,
)
from evaluation.sample import SAMPLE_DATASET, make_sample_corpus, text_pdf
from evaluation.sets import SETS, Prepared, SetUnavailable

__all__ = [
    "SAMPLE_DATASET", "SETS", "AnswerMetrics", "CostMetrics", "DatasetError", "EvalQuestion", "EvalReport",
    "GoldSource", "Prepared", "QuestionResult", "RetrievalMetrics", "SetUnavailable", "document_paths",
    "eval_command", "index_folder", "alternative_in", "check_citations", "check_thresholds", "chunk_matches", "citation_markers",
    "first_hit_rank", "format_report", "has_key_facts", "hit_at_k", "is_refusal", "judge_answer", "load_dataset",
    "make_sample_corpus", "missing_groups", "mrr", "numbers_in", "parse_dataset", "parse_question", "percentile",
    "run_eval", "supported_claims", "text_pdf",
]
