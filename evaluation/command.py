"""`eval` from a terminal: index a folder into the library, run a dataset, print, check thresholds.

Exit codes: 0 the evaluation ran (and met every threshold given), 1 a threshold failed, 2 the dataset or the
arguments are bad (or the store/model cannot be opened).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from evaluation.dataset import DatasetError, load_dataset
from evaluation.report import check_thresholds, format_report
from evaluation.runner import run_eval

OK, THRESHOLD_FAILED, BAD_INPUT = 0, 1, 2


def document_paths(folder: Path) -> list[Path]:
    """The readable files under `folder` (recursively, sorted); a single file is itself."""
    from document_processor import is_supported

    folder = Path(folder)
    if folder.is_file():
        return [folder]
    return sorted(p for p in folder.rglob("*") if p.is_file() and is_supported(p.name))


def index_folder(kb, folder: Path, err: TextIO) -> int:
    """Index every readable file of `folder` (duplicates are skipped by the KB); returns how many failed."""
    paths = document_paths(folder)
    if not paths:
        print(f"no readable documents in {folder}", file=err)
    results = kb.ingest_many(paths)
    for result in results:
        detail = f": {result.reason}" if result.reason else f" ({result.chunks} chunks)"
        print(f"  {result.status:<9} {result.file_name}{detail}", file=err)
    return sum(1 for r in results if r.status == "failed")


def eval_command(dataset: str | Path, kb, agent=None, *, docs: str | Path | None = None,
                 strategies: Sequence[str] = ("hybrid",), as_json: bool = False, min_hit5: float | None = None,
                 min_mrr: float | None = None, min_accuracy: float | None = None, k: int = 10,
                 out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run `dataset` against the library `kb` (indexing `docs` into it first), answering with `agent` (None:
    retrieval only), and print the report. The caller (cli.py, the composition root) opens both.

    Args:
        strategies: retrieval strategies to measure; answers use the first.
        out, err: where the report and the progress go (default stdout, stderr).

    Returns:
        0 when it ran and met the thresholds, 1 when a threshold failed, 2 for a bad dataset or arguments.
    """
    out, err = out or sys.stdout, err or sys.stderr
    try:
        questions = load_dataset(dataset)
    except DatasetError as exc:
        print(f"bad dataset: {exc}", file=err)
        return BAD_INPUT
    if docs is not None and not Path(docs).exists():
        print(f"--docs {docs} does not exist", file=err)
        return BAD_INPUT
    if docs is not None:
        print(f"indexing {docs}", file=err)
        index_folder(kb, Path(docs), err)
    try:
        report = run_eval(questions, kb, agent, strategies=strategies, k=k, dataset=Path(dataset).name,
                          progress=lambda done, total, q: print(f"  [{done}/{total}] {q[:70]}", file=err))
    except ValueError as exc:
        print(f"bad arguments: {exc}", file=err)
        return BAD_INPUT
    print(json.dumps(report.to_dict(), indent=2) if as_json else format_report(report), file=out)
    failures = check_thresholds(report, min_hit5=min_hit5, min_mrr=min_mrr, min_accuracy=min_accuracy)
    for failure in failures:
        print(f"threshold failed: {failure}", file=err)
    return THRESHOLD_FAILED if failures else OK
