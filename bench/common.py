"""Helpers shared by bench/ingest.py and bench/quality.py: timing, the torch reference, knowledge bases in a
folder, and the FinanceBench questions as evaluation questions.

Generated corpora (HashVectors, texts, vocabulary, documents) come from bench/retrieval.py, imported as a
sibling module: the scripts are run as `python bench/NAME.py`, so bench/ is on sys.path.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
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


def rss_mb(pid: int | None = None) -> float:
    """A process's resident memory now (this one by default), in MB (Linux /proc)."""
    with open(f"/proc/{pid or 'self'}/status") as status:
        return round(next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024, 1)


def disk_mb(path: Path) -> float:
    """Bytes of the files at or under `path`, in MB."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return round(sum(p.stat().st_size for p in files) / 2**20, 1)


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
    from vector_db import VectorStore, make_client
    from wiring import knowledge_base

    store = VectorStore(make_client(root / "data"), embedder)
    return knowledge_base(store, root, embedder, isolate=isolate)


def financebench_questions(source: Path = FINANCEBENCH) -> list:
    """The subset's questions as evaluation.EvalQuestion, pages 1-based.

    FinanceBench's `evidence_page_num` is 0-based: for all 32 evidence passages of the 29 questions, the
    passage's words are found on pypdf page index `evidence_page_num` and not on the index before it
    (checked when this bench was written), so evaluation/financebench.py adds one.
    """
    from evaluation.dataset import parse_question
    from evaluation.financebench import convert_record

    lines = (source / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [parse_question(convert_record(json.loads(raw)), n) for n, raw in enumerate(lines, 1) if raw.strip()]


def median(values: Sequence[float]) -> float:
    """The median, 0.0 for no values."""
    return float(statistics.median(values)) if values else 0.0


def scores(ranks: list[int | None], depth: int = 10) -> dict:
    """hit@1, hit@5, hit@10 and MRR@`depth` of first-hit ranks (page-level retrieval benches)."""
    from evaluation import hit_at_k, mrr

    return {"hit1": round(hit_at_k(ranks, 1), 3), "hit5": round(hit_at_k(ranks, 5), 3),
            "hit10": round(hit_at_k(ranks, 10), 3), "mrr10": round(mrr(ranks, depth), 3)}


def paired(a: list[int | None], b: list[int | None], seed: int = 0, rounds: int = 10_000) -> dict:
    """b − a per question (reciprocal rank and hit@5): mean, bootstrap 95% interval, questions up / down."""
    import numpy as np

    rr = np.array([[1 / r if r else 0.0 for r in ranks] for ranks in (a, b)])
    h5 = np.array([[1.0 if r and r <= 5 else 0.0 for r in ranks] for ranks in (a, b)])
    picks = np.random.default_rng(seed).integers(0, len(a), size=(rounds, len(a)))
    out = {}
    for name, m in (("mrr10", rr), ("hit5", h5)):
        diff = m[1] - m[0]
        boot = diff[picks].mean(axis=1)
        out[name] = {"diff": round(float(diff.mean()), 3),
                     "ci95": [round(float(x), 3) for x in np.percentile(boot, [2.5, 97.5])],
                     "better": int((diff > 0).sum()), "worse": int((diff < 0).sum())}
    return out


def build_index(root: Path, embedder, pdfs: Sequence[Path]):
    """The knowledge base under `root` holding `pdfs` (already indexed files are skipped as duplicates).

    The cached BM25 index is always rebuilt from the store (~1 s): a saved index outlives tokenizer changes
    that forget to bump TOKENIZER_VERSION, and a stale one silently changed every bm25/hybrid figure once.
    """
    import shutil

    if (root / "bm25").exists():
        shutil.rmtree(root / "bm25")
    kb = open_knowledge_base(root, embedder)
    results, took = seconds(lambda: kb.ingest_many(pdfs))
    failed = [r for r in results if r.status == "failed"]
    if failed:
        raise SystemExit(f"could not index {', '.join(f'{r.file_name} ({r.reason})' for r in failed)}")
    print(f"{root.name}: {kb.store.count()} chunks of {len(pdfs)} files ready in {took:.0f} s", flush=True)
    return kb


CHROMIUM = Path("/usr/bin/chromium")  # Debian's chromium, which the browser benches drive through Playwright


def browser_missing() -> str | None:
    """What this machine lacks to run a browser bench (a system browser, Playwright), with how to install it."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing: install Debian's chromium (sudo apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed: .venv/bin/pip install -r requirements-dev.txt"
    return None


def start_streamlit(command: Sequence[str], cwd: Path, env: dict, log: Path,
                    wait_s: float) -> tuple[subprocess.Popen, str]:
    """Start the app (`command` + Streamlit's port and address options) on a free 127.0.0.1 port, its output in
    `log`; returns the process and its URL once /_stcore/health answers. Exits the bench with the reason when the
    server stops or does not answer within `wait_s`."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with open(log, "w") as out:
        proc = subprocess.Popen([*command, "--server.port", str(port), "--server.address", "127.0.0.1",
                                 "--server.headless", "true"], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"streamlit exited: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    proc.kill()
    sys.exit(f"streamlit did not answer within {wait_s} s")
