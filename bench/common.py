"""Helpers shared by bench/ingest.py and bench/quality.py: timing, the torch reference, knowledge bases in a
folder, and the FinanceBench questions as evaluation questions.

Generated corpora (HashVectors, texts, vocabulary, documents) come from bench/retrieval.py, imported as a
sibling module: the scripts are run as `python bench/NAME.py`, so bench/ is on sys.path.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

DATA = REPO.parent / "shared" / "data"
FINANCEBENCH = DATA / "bench" / "financebench_subset"


def seconds(fn: Callable):
    """(fn(), wall seconds)."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def torch_model(threads: int | None = None):
    """sentence-transformers on the bundled model files, on the CPU (the reference encoder)."""
    import torch
    from sentence_transformers import SentenceTransformer

    from document_processor import model_files

    if threads is not None:
        torch.set_num_threads(threads)
    return SentenceTransformer(str(model_files.model_dir()), device="cpu")


def fastest_torch_threads(model, sample: Sequence[str], batch_size: int = 32) -> dict[int, float]:
    """Set torch to its default thread count or 1, whichever encodes `sample` faster now; {threads: seconds}.

    On a loaded 2-core machine torch's default threads can be slower than one, so the reference gets the
    better of the two and the ratio against it is conservative.
    """
    import torch

    timing = {}
    for threads in sorted({torch.get_num_threads(), 1}, reverse=True):
        torch.set_num_threads(threads)
        model.encode(list(sample[:4]), batch_size=batch_size)  # warm-up
        timing[threads] = seconds(lambda: model.encode(list(sample), batch_size=batch_size))[1]
    torch.set_num_threads(min(timing, key=timing.get))
    return timing


def open_knowledge_base(root: Path, embedder, *, isolate: bool = True):
    """A KnowledgeBase whose store and BM25 index live under `root` (kept between runs if `root` is kept)."""
    from advanced_retrieval import KnowledgeBase
    from vector_db import VectorStore, make_client

    store = VectorStore(make_client(root / "data"), embedder)
    return KnowledgeBase(store, root / "bm25", embedder, isolate=isolate)


def financebench_questions(source: Path = FINANCEBENCH) -> list:
    """The subset's questions as evaluation.EvalQuestion, pages 1-based.

    FinanceBench's `evidence_page_num` is 0-based: for all 32 evidence passages of the 29 questions, the
    passage's words are found on pypdf page index `evidence_page_num` and not on the index before it
    (checked when this bench was written), so eval/financebench.py adds one.
    """
    sys.path.insert(0, str(REPO / "eval"))
    from financebench import convert_record

    from evaluation.dataset import parse_question

    lines = (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [parse_question(convert_record(json.loads(raw)), n) for n, raw in enumerate(lines, 1) if raw.strip()]


def median(values: Sequence[float]) -> float:
    """The median, 0.0 for no values."""
    return float(statistics.median(values)) if values else 0.0
