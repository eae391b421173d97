"""`eval` from a terminal: open the knowledge base, index a folder, run a dataset, print, check thresholds.

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


def open_knowledge_base(data_dir: Path, embedder, config=None):
    """The KnowledgeBase over `data_dir`, laid out as the app and the CLI lay it out (Chroma as `config` says)."""
    import wiring

    config = config or wiring.Config.from_env(data_dir=data_dir)
    return wiring.open_knowledge_base(data_dir, embedder=embedder, environ=config.chroma)


def make_agent(kb, embedder, config=None, *, offline: bool = True, model: str | None = None,
               provider: str | None = None):
    """The agent the app would use: offline extractive, or a model (with its offline fallback).

    `config` is the wiring.Config (default: the environment's); `provider` is answering_provider's; `model` the
    Gemini model (default DOCAGENT_GEMINI_MODEL, else wiring.DEFAULT_GEMINI_MODEL)."""
    import wiring

    config = config or wiring.Config.from_env()
    return wiring.make_agent(kb, embedder, config, model=model, provider="offline" if offline else provider)


def answering_provider(offline: bool, provider: str | None, config) -> str:
    """Which model answers: "offline" when asked; else `provider`, else $DOCAGENT_PROVIDER, else Gemini.

    Raises ValueError (from wiring.model_config) for a provider that cannot answer as configured (Gemini
    without a key, a local server without a model, an unknown name)."""
    import wiring

    if offline:
        return "offline"
    return wiring.model_config(config, provider=provider or config.provider_given or "gemini").provider


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


def eval_command(dataset: str | Path, data_dir: str | Path, docs: str | Path | None = None, offline: bool = True,
                 strategies: Sequence[str] = ("hybrid",), as_json: bool = False, min_hit5: float | None = None,
                 min_mrr: float | None = None, min_accuracy: float | None = None, *, k: int = 10,
                 answers: bool = True, api_key: str | None = None, model_dir: str | Path | None = None,
                 embedder=None, out: TextIO | None = None, err: TextIO | None = None,
                 gemini_model: str | None = None, provider: str | None = None, config=None) -> int:
    """Run `dataset` against the library in `data_dir` (indexing `docs` first) and print the report.

    Args:
        offline: answer with the offline extractive brain; False answers with `provider` (else
            DOCAGENT_PROVIDER, else Gemini with `api_key`, default: the GOOGLE_API_KEY or GEMINI_API_KEY
            environment variable); a local model is configured by DOCAGENT_LOCAL_BASE_URL/MODEL/API_KEY.
        strategies: retrieval strategies to measure; answers use the first.
        answers: False measures retrieval only (no agent).
        api_key: the Gemini key (default: config's, i.e. GOOGLE_API_KEY or GEMINI_API_KEY).
        model_dir: where the ONNX model is cached (default config's); `embedder` replaces it (tests).
        config: the wiring.Config (default: wiring.Config.from_env(data_dir=data_dir)).
        gemini_model: the Gemini model (default DOCAGENT_GEMINI_MODEL, else wiring.DEFAULT_GEMINI_MODEL).
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
    config = _config(config, data_dir, api_key, model_dir)
    try:
        chosen = answering_provider(offline or not answers, provider, config)
    except ValueError as exc:
        print(f"{exc} (or run with --offline)", file=err)
        return BAD_INPUT
    import wiring

    embedder = embedder if embedder is not None else wiring.make_embedder(config)
    kb = open_knowledge_base(Path(data_dir), embedder, config)
    if docs is not None:
        print(f"indexing {docs}", file=err)
        index_folder(kb, Path(docs), err)
    agent = make_agent(kb, embedder, config, offline=chosen == "offline", model=gemini_model,
                       provider=chosen) if answers else None
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


def _config(config, data_dir, api_key: str | None, model_dir):
    """`config` (default the environment's) with this run's data directory, key and model cache."""
    from dataclasses import replace

    import wiring

    config = config or wiring.Config.from_env(data_dir=data_dir)
    changes = {"data_dir": Path(data_dir)}
    if api_key is not None:
        changes["gemini_key"] = api_key
    if model_dir:
        changes["model_dir"] = Path(model_dir)
    return replace(config, **changes)
