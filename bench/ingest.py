"""End-to-end ingestion throughput, ours against torch encoding of the same chunks, measured side by side.

    .venv/bin/python bench/ingest.py --smoke   # a 2-page and a 3-page generated PDF, empty and at 200 (a smoke run)
    .venv/bin/python bench/ingest.py --quick   # one paper + a 15-page generated PDF, store empty and at 2k chunks
    .venv/bin/python bench/ingest.py           # the four papers + a 100-page generated PDF, empty and at 10k

Ours: KnowledgeBase.ingest_file (hash, parse and chunk in the isolated child, embed with OnnxEmbedder in fp32,
in bf16 where the CPU has it (the app's default there) and int8, write to Chroma, update and save BM25), timed per stage: "parse" runs from the call to the store write
(hashing, duplicate check, parsing), "embed" is the embedder's own time, "store" the rest of the store write
(Chroma upserts, library records), "bm25" the rest until the file is indexed (BM25 update and save, the kept
original, the commit that makes the document visible). Reference: sentence-transformers
(torch, CPU, batch 32, the faster of default threads and 1) encoding the very same chunk texts, nothing else.
The ratio is our end-to-end chunks/s over the reference's encoding-only chunks/s. Each round ingests into a
fresh copy of the store; with --rounds > 1 every figure is the best round (the machine is shared, and the
fastest run is the one least disturbed). "At N stored chunks": the store and its BM25 index are pre-filled
with generated chunks and hash-seeded unit vectors through VectorStore.add_document, then the same files are
ingested on top. The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from common import DATA, fastest_torch_threads, open_knowledge_base, seconds, torch_model
from retrieval import HashVectors, documents, texts, vocabulary

from evaluation import text_pdf
from vector_db import OnnxEmbedder
from vector_db.embedder import bf16_unavailable

STAGES = ("parse", "embed", "store", "bm25")
LINES_PER_PAGE, LINE_CHARS = 38, 88  # what fits a Letter page at 12 pt Helvetica with a line every 18 pt


class TimedEmbedder:
    """The embedder, with the seconds spent in embed() added up."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.seconds = inner, inner.name, inner.dim, 0.0

    def embed(self, texts, progress=None):
        start = time.perf_counter()
        try:
            return self.inner.embed(texts, progress=progress)
        finally:
            self.seconds += time.perf_counter() - start

    def embed_query(self, text):
        return self.inner.embed_query(text)


class TimedStore:
    """The VectorStore, with each add_document's start and end times and its chunks' texts kept."""

    def __init__(self, inner):
        self._inner, self.spans, self.texts = inner, [], []

    def add_document(self, parsed, progress=None, **options):
        """VectorStore.add_document, timed; keyword options (ready=False: the commit comes later) passed on."""
        start = time.perf_counter()
        try:
            return self._inner.add_document(parsed, progress=progress, **options)
        finally:
            self.spans.append((start, time.perf_counter()))
            self.texts.extend(c.index_text for c in parsed.chunks)

    def __getattr__(self, name):
        return getattr(self._inner, name)


# -- the generated technical report ------------------------------------------------------------------------
_SUBJECTS = ("the ingestion pipeline", "the write-ahead log", "the HNSW graph", "the tokenizer", "each worker",
             "the retry policy", "the page cache", "the scheduler", "the embedding service", "the query planner",
             "the compaction job", "the replication stream", "the BM25 index", "the load balancer")
_OBJECTS = ("tail latency", "memory per shard", "disk seeks per query", "recall at 10", "the p99 write time",
            "CPU time per request", "the index size on disk", "cold-start time", "lock contention",
            "garbage-collection pauses", "network round trips", "the false-positive rate")
_VERBS = ("reduces", "bounds", "halves", "amortises", "increases", "stabilises", "hides", "dominates")
_TEMPLATES = (
    "{S} {v} {o} by {p}% when the batch size grows from {a} to {b} documents.",
    "In Table {t}, {s} sustains {n:,} requests per second at a p95 latency of {ms} ms on {c} cores.",
    "We configure {s} with a timeout of {a} s and at most {k} retries, following Section {sec}.",
    "Because {s} holds its lock for only {us} microseconds, {o} stays below {ms} ms even at {n:,} writers.",
    "Figure {t} shows that {o} grows linearly with the corpus, from {a} ms at 10k chunks to {b} ms at 1M.",
    "The default of {k} candidates per retriever was chosen after the sweep in Appendix {A}; {p}% fewer "
    "candidates cost {q}% of recall.",
    "{S} is restarted after {k} consecutive failures, and its state is rebuilt from the snapshot taken every "
    "{a} minutes.",
    "Unlike the baseline, {s} never rewrites a segment in place: a new version is written and the manifest "
    "is swapped atomically, so a crash leaves either the old or the new state.",
    "With quantised int8 weights, {s} needs {a} MB instead of {b} MB, and {o} changes by less than {q}%.",
    "Measured over {n:,} queries of the {A}-{t} workload, {o} fell from {b} ms to {a} ms ({p}% lower).",
)


def _sentence(rng: np.random.Generator) -> str:
    s, o = str(rng.choice(_SUBJECTS)), str(rng.choice(_OBJECTS))
    a, b = sorted(int(x) for x in rng.integers(2, 900, size=2))
    return str(rng.choice(_TEMPLATES)).format(
        S=s[0].upper() + s[1:], s=s, o=o, v=str(rng.choice(_VERBS)), p=int(rng.integers(3, 70)), a=a, b=b + 1,
        t=int(rng.integers(1, 12)), n=int(rng.integers(1_000, 250_000)), ms=round(float(rng.uniform(0.3, 90)), 1),
        c=int(rng.choice([2, 4, 8, 16])), k=int(rng.integers(2, 64)), sec=f"{rng.integers(2, 9)}.{rng.integers(1, 6)}",
        us=int(rng.integers(5, 400)), A=str(rng.choice(list("ABCDEF"))), q=round(float(rng.uniform(0.1, 5)), 1))


def _wrap(paragraph: str) -> list[str]:
    lines, line = [], ""
    for word in paragraph.split():
        if line and len(line) + 1 + len(word) > LINE_CHARS:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line else lines


def technical_pages(pages: int, seed: int = 11) -> tuple[tuple[str, ...], ...]:
    """`pages` pages of a systems report: numbered section headings, paragraphs of 3-7 sentences with figures."""
    rng = np.random.default_rng(seed)
    lines: list[str] = []
    section = 0
    while len(lines) < pages * LINES_PER_PAGE:
        if rng.random() < 0.15 or not lines:
            section += 1
            lines += ["", f"{section}. {str(rng.choice(_OBJECTS)).capitalize()} in {rng.choice(_SUBJECTS)}"]
        lines += _wrap(" ".join(_sentence(rng) for _ in range(int(rng.integers(3, 8))))) + [""]
    return tuple(tuple(lines[i:i + LINES_PER_PAGE]) for i in range(0, pages * LINES_PER_PAGE, LINES_PER_PAGE))


# -- measuring ---------------------------------------------------------------------------------------------
def prefilled(root: Path, embedder_name: str, size: int, words: np.ndarray) -> Path:
    """A folder holding a store of `size` generated chunks (vectors: hash-seeded, labelled `embedder_name`)
    and its saved BM25 index; made once, then copied for each measured ingestion."""
    folder = root / f"template-{embedder_name.replace('/', '_')}-{size}"
    if (folder / "ready").exists():
        return folder
    vectors = HashVectors()
    vectors.name = embedder_name  # the store refuses vectors labelled with another embedder
    kb = open_knowledge_base(folder, vectors)
    if size:
        (_, took) = seconds(lambda: [kb.store.add_document(d) for d in documents(texts(size, size, words), 0)])
        print(f"pre-filled {kb.store.count():,} chunks in {took:.0f} s", flush=True)
    quiet = logging.getLogger("advanced_retrieval.library.knowledge_base")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # opening warns that it "repaired" the BM25 index: here that is the intent
    try:
        open_knowledge_base(folder, vectors)  # builds and saves the BM25 index of the pre-filled store
    finally:
        quiet.setLevel(level)
    (folder / "ready").touch()
    return folder


def ingest_files(template: Path, work: Path, embedder, files: list[Path]) -> tuple[dict, list[str]]:
    """Ingest `files` into a fresh copy of `template`; seconds per stage, chunks, and the chunks' texts."""
    from vector_db import VectorStore, make_client
    from wiring import knowledge_base

    shutil.copytree(template, work)
    timed = TimedEmbedder(embedder)
    store = TimedStore(VectorStore(make_client(work / "data"), timed))
    kb, open_s = seconds(lambda: knowledge_base(store, work, embedder))
    fig = dict.fromkeys(("total", *STAGES), 0.0) | {"chunks": 0, "open_s": round(open_s, 3)}
    for path in files:
        indexed: list[float] = []
        start, spans = time.perf_counter(), len(store.spans)
        result = kb.ingest_file(path, progress=lambda _n, stage, done, _t, seen=indexed: seen.append(
            time.perf_counter()) if (stage, done) == ("indexing", 1) else None)
        if result.status != "indexed" or len(store.spans) != spans + 1:
            raise SystemExit(f"{path.name}: {result.status} {result.reason}")
        end = time.perf_counter()
        (add_start, add_end) = store.spans[-1]
        fig["total"] += end - start
        fig["parse"] += add_start - start
        fig["store"] += add_end - add_start
        fig["bm25"] += indexed[-1] - add_end
        fig["chunks"] += result.chunks
    fig["embed"] = timed.seconds
    fig["store"] -= timed.seconds
    fig["stored_after"] = store.count()
    return fig, store.texts


def torch_seconds(model, chunk_texts: list[str]) -> float:
    """Seconds sentence-transformers takes to encode `chunk_texts` (batch 32, unit vectors)."""
    return seconds(lambda: model.encode(chunk_texts, batch_size=32, normalize_embeddings=True))[1]


def best(runs: list[dict]) -> dict:
    """The run with the shortest total time, with its rates and each non-embedding stage's share of embedding."""
    run = dict(min(runs, key=lambda r: r["total"]))
    run.update(e2e_chunks_per_s=run["chunks"] / run["total"], embed_chunks_per_s=run["chunks"] / run["embed"],
               non_embed_over_embed=(run["parse"] + run["store"] + run["bm25"]) / run["embed"])
    out = {k: round(v, 3) if isinstance(v, float) else v for k, v in run.items()}
    out["share_of_embed"] = {s: round(run[s] / run["embed"], 3) for s in ("parse", "store", "bm25")}
    return out


def targets(figures: dict, embedders) -> dict:
    """Per embedder: the worst end-to-end ratio to torch and the worst non-embedding share, over every corpus
    and store size, against the targets (>= 3x torch, issue 28; <= 25% of the embedding time)."""
    out = {}
    for label in embedders:
        runs = [f for table in figures.values() for key, f in table.items() if key.startswith(f"{label}@")]
        worst_ratio = min(f["e2e_vs_torch"] for f in runs)
        worst_share = max(f["non_embed_over_embed"] for f in runs)
        out[label] = {"min_e2e_vs_torch": worst_ratio, "reaches_3x": worst_ratio >= 3,
                      "max_non_embed_share": worst_share, "within_25pct": worst_share <= 0.25}
    return out


def measure(corpora: dict[str, list[Path]], sizes, embedders: dict, model, rounds: int, root: Path) -> dict:
    """Best-of-`rounds` figures per corpus, store size and embedder, and the torch reference per corpus.

    Within a round every configuration runs back to back with the reference, so a change in the machine's
    load hits them alike.
    """
    from document_processor import parse_file

    parse_file(next(iter(corpora.values()))[0])  # starts the parsing fork server: a one-off, not per-file cost
    words = vocabulary()
    templates = {(size, label): prefilled(root, e.name, size, words) for size in sizes for label, e in embedders.items()}
    runs: dict[tuple, list[dict]] = {}
    torch_runs: dict[str, list[float]] = {}
    chunk_texts: dict[str, list[str]] = {}
    for r in range(rounds):
        for corpus, files in corpora.items():
            for (size, label), template in templates.items():
                fig, got = ingest_files(template, root / f"run{r}-{corpus}-{size}-{label}", embedders[label], files)
                runs.setdefault((corpus, size, label), []).append(fig)
                chunk_texts.setdefault(corpus, got)
                print(f"round {r + 1} {corpus} at {size:,} stored, {label}: {fig['chunks']} chunks in "
                      f"{fig['total']:.1f} s (embed {fig['embed']:.1f} s)", flush=True)
            torch_runs.setdefault(corpus, []).append(torch_seconds(model, chunk_texts[corpus]))
            print(f"round {r + 1} {corpus}: torch {torch_runs[corpus][-1]:.1f} s", flush=True)
    return {corpus: summary(corpus, sizes, embedders, runs, len(chunk_texts[corpus]) / min(torch_runs[corpus]))
            for corpus in corpora}


def summary(corpus: str, sizes, embedders: dict, runs: dict, torch_rate: float) -> dict:
    """One corpus's figures: the torch rate, and per store size and embedder the best run and its ratios."""
    out: dict = {"torch_chunks_per_s": round(torch_rate, 2)}
    for size in sizes:
        for label in embedders:
            fig = best(runs[(corpus, size, label)])
            fig["e2e_vs_torch"] = round(fig["e2e_chunks_per_s"] / torch_rate, 2)
            fig["embed_vs_torch"] = round(fig["embed_chunks_per_s"] / torch_rate, 2)
            out[f"{label}@{size}"] = fig
    return out


def report(figures: dict) -> None:
    for corpus, table in figures.items():
        print(f"\n== {corpus}: torch (sentence-transformers) {table['torch_chunks_per_s']:.1f} chunks/s ==")
        for key, f in table.items():
            if key == "torch_chunks_per_s":
                continue
            share = f["share_of_embed"]
            print(f"  {key:<11} {f['chunks']} chunks into {f['stored_after'] - f['chunks']:,} stored: "
                  f"end to end {f['e2e_chunks_per_s']:.1f} chunks/s = {f['e2e_vs_torch']}x torch (embedding "
                  f"alone {f['embed_vs_torch']}x); parse {share['parse']:.0%}, store {share['store']:.0%}, "
                  f"bm25 {share['bm25']:.0%} of the embedding time ({f['non_embed_over_embed']:.0%} together)")


def generated_report(folder: Path, pages: int, seed: int = 11) -> Path:
    """A `pages`-page generated report written into `folder` as a text PDF."""
    path = folder / f"generated_report_{pages}p.pdf"
    path.write_bytes(text_pdf(technical_pages(pages, seed)))
    return path


def corpora(size: str, folder: Path) -> dict[str, list[Path]]:
    """The papers (one in quick mode) and the generated report (15 or 100 pages), written into `folder`; in
    smoke mode a generated 2-page PDF stands in for the paper (nothing read from ../shared) and the report
    has 3 pages."""
    if size == "smoke":
        return {"paper-standin-2p": [generated_report(folder, 2, seed=5)], "generated-3p": [generated_report(folder, 3)]}
    papers = sorted((DATA / "papers").glob("*.pdf"))
    if not papers:
        raise SystemExit(f"no PDFs in {DATA / 'papers'}")
    pages = 15 if size == "quick" else 100
    return {"papers": papers[1:2] if size == "quick" else papers, f"generated-{pages}p": [generated_report(folder, pages)]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one paper, 15 generated pages, up to 2k stored")
    parser.add_argument("--smoke", action="store_true",
                        help="a smoke run: two small generated PDFs, up to 200 stored, nothing from ../shared")
    parser.add_argument("--rounds", type=int, default=None, help="rounds, best kept (default 2 full, else 1)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-models",
                        help="ONNX model cache (exported once)")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    sizes = {"smoke": (0, 200), "quick": (0, 2_000), "full": (0, 10_000)}[size]
    rounds = args.rounds or (2 if size == "full" else 1)
    model = torch_model()
    sample = texts({"smoke": 8, "quick": 32, "full": 64}[size], 5, vocabulary())
    threads = fastest_torch_threads(model, sample)
    print("torch encoding a sample: " + ", ".join(f"{t} thread(s) {s:.1f} s" for t, s in threads.items()), flush=True)
    # fp32 arithmetic (onnxruntime), the same model in bfloat16 (OpenVINO; the app's default where the CPU has it),
    # int8 weights (onnxruntime): see vector_db/embedder.py
    embedders = {"fp32": OnnxEmbedder(args.cache, runtime="onnxruntime")}
    if bf16_unavailable() is None:
        embedders["bf16"] = OnnxEmbedder(args.cache, runtime="openvino-bf16")
    else:
        print(f"bf16: not measured ({bf16_unavailable()})", flush=True)
    embedders["int8"] = OnnxEmbedder(args.cache, quantized=True)
    for embedder in embedders.values():  # a session's first runs allocate its buffers; torch was warmed up too
        embedder.embed(sample)
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        figures = measure(corpora(size, Path(tmp)), sizes, embedders, model, rounds, Path(tmp))
    report(figures)
    verdict = targets(figures, embedders)
    for label, v in verdict.items():
        print(f"{label}: end to end at least {v['min_e2e_vs_torch']}x torch (target 3x: "
              f"{'met' if v['reaches_3x'] else 'missed'}); parse+store+bm25 at most "
              f"{v['max_non_embed_share']:.0%} of embedding (target 25%: {'met' if v['within_25pct'] else 'missed'})")
    print(json.dumps({"bench": "ingest", "size": size, "quick": args.quick, "rounds": rounds, "torch_threads_s": threads,
                      "targets": verdict, "corpora": figures}))


if __name__ == "__main__":
    main()
