"""Hybrid retrieval latency, ours against the reference design, measured side by side in one run.

    .venv/bin/python bench/retrieval.py --quick    # 2k and 10k chunks (~1-2 min)
    .venv/bin/python bench/retrieval.py            # 10k and 100k chunks
    .venv/bin/python bench/retrieval.py --chunks 1000000 --data-dir DIR   # one size: a million passages (filling
                                                   # takes ~40 min; DIR keeps the filled library for the next run)
    .venv/bin/python bench/retrieval.py --quality  # instead: hit@8 / MRR per strategy on real PDFs (~5 min)
    .venv/bin/python bench/retrieval.py --smoke    # 500 chunks, 8 queries, and the quality sweep on the sample
                                                   # corpus (evaluation.sample) in a temporary folder

Ours: HybridRetriever (freshness check + bm25s BM25 + OnnxEmbedder query embedding + Chroma query + RRF + chunk
fetch). Reference: rank_bm25.BM25Okapi over lower().split() tokens + sentence-transformers (torch) query encoding
+ the same Chroma query + the same RRF (chunk texts kept in memory, so no fetch). Both return the top 8 of 30
candidates per retriever. torch runs with whichever of its default threads or 1 thread is faster on this machine
(on a loaded 2-core machine its default threads can be several times slower), so the ratio is conservative. The store is filled through VectorStore.add_document (documents of 500 chunks) with
generated text (real English words from the model's vocabulary, Zipf-distributed, with years, amounts, percents
and codes) and hash-seeded random unit vectors: embedding 100k chunks for real takes an hour and is not what is
measured. Above 200k chunks the reference (rank_bm25 scoring every chunk in Python, ~2 s a query at a million)
answers a sample of REFERENCE_SAMPLE queries.

Each size also measures writes and opens in fresh processes, as the app and the CLI run them (testing/library_ops.py,
the filled library laid out as a data directory: Chroma in <size>/data/chroma, the keyword index in
<size>/data/bm25): an open, a one-page ingest with the real embedder, an open after a SIGKILL in the middle of a
write, a cold `cli.py search`, the disk the library takes and the RSS of each (--no-library skips them).

--smoke checks that the bench runs at all: the latency figures and the fresh-process figures at one tiny size, then
the --quality sweep over the five generated documents of evaluation.sample (nothing from ../shared/data). The last
line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from common import disk_mb, rss_mb  # noqa: E402  (bench/ is on sys.path when run as a script)

from advanced_retrieval import BM25Index, HybridRetriever, KeywordIndex, reciprocal_rank_fusion  # noqa: E402
from document_processor import (  # noqa: E402
    Chunk,
    Location,
    ParsedDocument,
    chunk_id,
    model_files,  # noqa: E402
)
from vector_db import OnnxEmbedder, VectorStore, make_client  # noqa: E402
from vector_db.embedder import MODEL_NAME  # noqa: E402

CHUNKS_PER_DOC = 500  # Chroma writes ~300 chunks/s here whatever the size; fewer documents, less overhead
CANDIDATES, TOP_K = 30, 8
FILL_BLOCK = 10 * CHUNKS_PER_DOC
REFERENCE_SAMPLE = 12  # queries the reference answers above 200k chunks


class HashVectors:
    """Stands in for the embedder while filling the store: a random unit vector seeded by the text's hash."""

    # the real embedder's name: the filled library then opens in the app, the CLI and KnowledgeBase like any other
    # (their query embedding is real; the stored vectors are these)
    dim, name = 384, f"{MODEL_NAME}/onnx-fp32"

    def embed(self, texts, progress=None):
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_query(self, text):
        return self.embed([text])[0]


def vocabulary() -> np.ndarray:
    words = [w.strip() for w in (model_files.model_dir() / "vocab.txt").read_text(encoding="utf-8").splitlines()]
    return np.array([w for w in words if w.isascii() and w.isalpha() and len(w) >= 3])


def texts(n: int, seed: int, words: np.ndarray) -> list[str]:
    """~150-word chunks: Zipf-distributed words, every 12th token a year, amount, percent or code."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(words) + 1)
    picks = words[rng.choice(len(words), size=(n, 150), p=p / p.sum())].astype(object)
    extras = [lambda r: str(r.integers(1990, 2026)), lambda r: f"${r.integers(1, 99):,},{r.integers(100, 999)}",
              lambda r: f"{r.random() * 40:.1f}%", lambda r: f"FY{r.integers(2015, 2026)}",
              lambda r: f"{r.choice(['10-K', '8-K', 'ISO-9001', 'Q3', 'A1:F40'])}"]
    for row in picks:
        for j in range(5, 150, 12):
            row[j] = extras[int(rng.integers(len(extras)))](rng)
    return [" ".join(row) + "." for row in picks]


def documents(chunk_texts: list[str], first_doc: int) -> list[ParsedDocument]:
    out = []
    for d in range(0, len(chunk_texts), CHUNKS_PER_DOC):
        doc_id, name = f"doc{first_doc + d // CHUNKS_PER_DOC:05d}", f"report{first_doc + d // CHUNKS_PER_DOC:05d}.pdf"
        chunks = tuple(Chunk(chunk_id(doc_id, Location(page=i + 1), i, t), doc_id, name, "pdf", t,
                             Location(page=i + 1), ("Annual report",), i, "Annual report")
                       for i, t in enumerate(chunk_texts[d:d + CHUNKS_PER_DOC]))
        out.append(ParsedDocument(doc_id, name, "pdf", 1000, name, "pages", len(chunks), chunks))
    return out


def queries(n: int, words: np.ndarray, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    mid = words[200:5000]
    return [f"what was the {' '.join(rng.choice(mid, size=4))} in {rng.integers(1990, 2026)}" for _ in range(n)]


def percentiles(fn, items, warmup: int = 3) -> tuple[float, float]:
    """(p50, p95) milliseconds of fn(item) over items, after a few warm-up calls."""
    for item in items[:warmup]:
        fn(item)
    times = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def seconds(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


class Reference:
    """The reference app's design: rank_bm25 over whitespace tokens, torch query encoding, same fusion."""

    def __init__(self, store, chunk_texts: Iterable[str], ids: list[str], model):
        from rank_bm25 import BM25Okapi

        self.store, self.ids, self.model = store, ids, model
        # the same tokens as lower().split(), interned so that a million chunks' token dicts fit in memory (one
        # string per word instead of one per occurrence; lookups and scores are the same)
        self.bm25 = BM25Okapi([sys.intern(w) for w in t.lower().split()] for t in chunk_texts)

    def bm25_top(self, query: str) -> list[str]:
        scores = self.bm25.get_scores(query.lower().split())
        return [self.ids[i] for i in np.argsort(-scores)[:CANDIDATES]]

    def retrieve(self, query: str) -> list[tuple[str, float]]:
        vector = self.model.encode(query, normalize_embeddings=True)
        dense = [c.id for c, _ in self.store.query(vector, CANDIDATES)]
        return reciprocal_rank_fusion([dense, self.bm25_top(query)])[:TOP_K]


def store_vector(query: str) -> np.ndarray:
    return HashVectors().embed_query(query)


def stage(size: int, store, keyword: KeywordIndex, retriever, reference_model, words, qs) -> dict:
    """Every figure for one corpus size (the store already holds `size` chunks)."""
    chunk_list, scan_s = seconds(lambda: list(store.iter_chunks()))
    index, build_s = seconds(lambda: BM25Index.build(chunk_list))
    fig = {"chunks": size, "store_scan_s": round(scan_s, 2), "bm25_full_build_s": round(build_s, 2),
           "bm25_vocabulary": index.vocabulary_size}
    ids = [c.id for c in chunk_list]
    (reference, ref_build_s) = seconds(lambda: Reference(store, (c.text for c in chunk_list), ids, reference_model))
    fig["reference_bm25_build_s"] = round(ref_build_s, 2)
    chunk_list.clear()  # a million chunks' texts: gigabytes no longer needed
    gc.collect()
    with tempfile.TemporaryDirectory() as empty:  # catching up from nothing: every chunk read and tokenised
        caught_up = KeywordIndex(Path(empty))
        fig["bm25_open_catch_up_s"] = round(seconds(lambda: caught_up.open(store))[1], 2)
    keyword.publish(caught_up.snapshot())  # the library's own saved copy, which library_figures' processes find
    extra = documents(texts(CHUNKS_PER_DOC, 99, words), 90000)[0].chunks
    fig["bm25_rebuild_add_doc_s"] = round(seconds(lambda: index.with_chunks(extra, generation=1))[1], 3)
    fig["bm25_rebuild_delete_doc_s"] = round(seconds(lambda: index.without_documents(["doc00000"], generation=1))[1], 3)
    with tempfile.TemporaryDirectory() as tmp:
        fig["bm25_save_s"] = round(seconds(lambda: index.save(Path(tmp)))[1], 3)
        fig["bm25_load_s"] = round(seconds(lambda: BM25Index.load(Path(tmp)))[1], 3)
        grown = index.with_chunks(extra, generation=2)  # what a write saves once the library is on disk
        fig["bm25_save_after_add_s"] = round(seconds(lambda: grown.save(Path(tmp), "after-add.json"))[1], 3)
    fig["freshness_check_ms"] = round(percentiles(lambda _: keyword.current(store), list(range(50)))[0], 3)
    vectors = [store_vector(q) for q in qs]
    fig["chroma_query_p50_ms"], _ = percentiles(lambda v: store.query(v, CANDIDATES), vectors)
    fig["ours_bm25_p50_ms"], _ = percentiles(lambda q: index.search(q, CANDIDATES), qs)
    fig["reference_bm25_p50_ms"], _ = percentiles(reference.bm25_top, qs[:REFERENCE_SAMPLE], warmup=1)
    fig["ours_hybrid_p50_ms"], fig["ours_hybrid_p95_ms"] = percentiles(
        lambda q: retriever.retrieve(q, k=TOP_K, strategy="hybrid"), qs)
    fig["rss_mb"] = rss_mb()  # the store, both keyword indexes and the reference's, all in this process
    # a million chunks: rank_bm25 scores every chunk in Python (seconds a query), so a sample of the queries
    ref_qs = qs if size <= 200_000 else qs[:REFERENCE_SAMPLE]
    fig["reference_queries"] = len(ref_qs)
    fig["reference_hybrid_p50_ms"], fig["reference_hybrid_p95_ms"] = percentiles(reference.retrieve, ref_qs,
                                                                                 warmup=1)
    fig["hybrid_p50_ratio"] = round(fig["reference_hybrid_p50_ms"] / fig["ours_hybrid_p50_ms"], 1)
    fig["hybrid_p95_ratio"] = round(fig["reference_hybrid_p95_ms"] / fig["ours_hybrid_p95_ms"], 1)
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in fig.items()}


def report(fig: dict) -> None:
    print(f"\n== {fig['chunks']:,} chunks ==")
    print(f"  hybrid query p50/p95 (embedding included): ours {fig['ours_hybrid_p50_ms']:.1f}/"
          f"{fig['ours_hybrid_p95_ms']:.1f} ms, reference {fig['reference_hybrid_p50_ms']:.1f}/"
          f"{fig['reference_hybrid_p95_ms']:.1f} ms -> {fig['hybrid_p50_ratio']}x faster at p50, "
          f"{fig['hybrid_p95_ratio']}x at p95")
    print(f"  BM25 top-{CANDIDATES} p50: ours {fig['ours_bm25_p50_ms']:.2f} ms, rank_bm25 "
          f"{fig['reference_bm25_p50_ms']:.1f} ms; embedding p50: onnx {fig['onnx_query_embed_p50_ms']:.1f} ms, "
          f"torch {fig['torch_query_embed_p50_ms']:.1f} ms; Chroma top-{CANDIDATES} query p50 "
          f"{fig['chroma_query_p50_ms']:.1f} ms")
    print(f"  BM25 full build (tokenise + index) {fig['bm25_full_build_s']} s after a {fig['store_scan_s']} s store "
          f"scan; KeywordIndex.open catching up {fig['bm25_open_catch_up_s']} s (rank_bm25 build "
          f"{fig['reference_bm25_build_s']} s); adding a {CHUNKS_PER_DOC}-chunk document "
          f"{fig['bm25_rebuild_add_doc_s']} s, deleting one {fig['bm25_rebuild_delete_doc_s']} s; "
          f"save {fig['bm25_save_s']} s (then {fig['bm25_save_after_add_s']} s after the addition), load "
          f"{fig['bm25_load_s']} s; per-query freshness check "
          f"{fig['freshness_check_ms']} ms")
    print(f"  this process's RSS with the store, both keyword indexes and the reference: {fig['rss_mb']:.0f} MB; "
          f"reference timed on {fig['reference_queries']} queries")
    if "open_s" in fig:
        print(f"  fresh processes: open {fig['open_s']} s (whole command {fig['open_command_s']} s, peak RSS "
              f"{fig['open_rss_mb']} MB); "
              f"one-page ingest {fig['one_page_ingest_s']} s ({fig['one_page_chunks']} chunks); open after a "
              f"SIGKILL while {fig['killed_in']} {fig['open_after_kill_s']} s (repairs: "
              f"{'; '.join(fig['open_after_kill_repairs']) or 'none'}); cold `cli.py search` "
              f"{fig['cli_search_cold_s']} s; disk {fig['disk_mb']:.0f} MB")


def filled_store(root: Path, size: int, words: np.ndarray) -> tuple[VectorStore, KeywordIndex]:
    """A store under `root` holding `size` generated chunks (kept between runs when `root` is kept)."""
    store = VectorStore(make_client(root / "data"), HashVectors())
    have, start = store.count(), time.perf_counter()
    while have < size:  # blocks of FILL_BLOCK chunks: a million texts at once would need ~10 GB of strings
        block = min(FILL_BLOCK, size - have)
        for doc in documents(texts(block, size + have, words), have // CHUNKS_PER_DOC):
            store.add_document(doc)
        have += block
        if have % (10 * FILL_BLOCK) == 0 or have == size:
            print(f"  {have:,} chunks stored ({time.perf_counter() - start:.0f} s)", flush=True)
    if time.perf_counter() - start > 1:
        print(f"store filled to {store.count():,} chunks through VectorStore.add_document "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
    return store, KeywordIndex(root / "data" / "bm25")  # where the app finds it (wiring.knowledge_base)


OPS = REPO / "testing" / "library_ops.py"


def op(kind: str, data_dir: Path, *extra: str | Path) -> dict:
    """testing/library_ops.py KIND in a fresh process: its JSON figures, with the whole command's wall seconds."""
    command = [sys.executable, str(OPS), kind, str(data_dir), *map(str, extra)]
    done, wall = seconds(lambda: subprocess.run(command, capture_output=True, text=True, timeout=3600))
    if done.returncode != 0:
        raise RuntimeError(f"{kind} failed ({done.returncode}): {done.stderr[-2000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "command_s": round(wall, 2)}


def killed_while_writing(data_dir: Path, path: Path, after_s: float = 1.0) -> str:
    """Start indexing `path` in a fresh process and SIGKILL it `after_s` seconds into the store's write; returns
    the stage it was in."""
    command = [sys.executable, str(OPS), "die-writing", str(data_dir), str(path)]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 3600
        for line in child.stdout:
            if line.startswith("WRITING"):
                time.sleep(after_s)
                break
            if time.monotonic() > deadline:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    return line.split()[-1] if line.startswith("WRITING") else f"never wrote: {line.strip()!r}"


def one_page(path: Path, words: np.ndarray, seed: int) -> Path:
    """A one-page text file (~450 words): what a person adds to a large library in one go."""
    path.write_text("\n\n".join(texts(3, seed, words)), encoding="utf-8")
    return path


def library_figures(root: Path, size: int, words: np.ndarray, query: str) -> dict:
    """Writes and opens of the filled library at `root`/data, each in a fresh process as the app and the CLI run:
    the first open (keyword index built from the store and saved), a plain open, a one-page ingest (real
    embedder), an open after a SIGKILL in the middle of a write, a cold `cli.py search`; the disk it takes."""
    data = root / "data"
    files = root / "files"
    files.mkdir(exist_ok=True)
    fig = {}
    op("open", data)  # the first also exports the model into the data directory (a cold start's one-off)
    plain = op("open", data)
    fig["open_s"], fig["open_command_s"], fig["open_rss_mb"] = plain["open_s"], plain["command_s"], plain["peak_rss_mb"]
    page = op("ingest", data, one_page(files / f"page-{size}-{time.time_ns()}.txt", words, time.time_ns() % 2**31))
    if page["status"] != "indexed":
        raise RuntimeError(f"the one-page ingest was {page['status']}: {page['reason']}")
    fig["one_page_ingest_s"], fig["one_page_chunks"] = page["ingest_s"], page["chunks"]
    big = files / f"long-{size}-{time.time_ns()}.txt"
    big.write_text("\n\n".join(texts(600, time.time_ns() % 2**31, words)), encoding="utf-8")
    fig["killed_in"] = killed_while_writing(data, big)
    after = op("open", data)
    fig["open_after_kill_s"], fig["open_after_kill_command_s"] = after["open_s"], after["command_s"]
    fig["open_after_kill_repairs"] = after["repairs"]
    search = [sys.executable, str(REPO / "cli.py"), "--data-dir", str(data), "search", query, "--json"]
    runs = [seconds(lambda: subprocess.run(search, capture_output=True, text=True, timeout=3600, check=True))[1]
            for _ in range(2)]
    fig["cli_search_cold_s"] = round(min(runs), 2)
    fig["disk_mb"] = disk_mb(root)
    return fig


def fastest_torch_threads(model, qs: list[str]) -> int:
    """Set torch to its default thread count or to 1, whichever encodes a query faster here; returns it."""
    import torch

    default = torch.get_num_threads()
    timing = {}
    for threads in {default, 1}:
        torch.set_num_threads(threads)
        timing[threads] = percentiles(lambda q: model.encode(q), qs)[0]
    best = min(timing, key=timing.get)
    torch.set_num_threads(best)
    print("torch query encoding p50: " + ", ".join(f"{t} thread(s) {ms:.1f} ms" for t, ms in timing.items())
          + f" -> reference uses {best}", flush=True)
    return best


SHARED = REPO.parent / "shared" / "data"
FINANCEBENCH = SHARED / "bench" / "financebench_subset"
PAPER_QUESTIONS = REPO / "evaluation" / "sets" / "papers.jsonl"
SWEEP = (("vector", "vector", 1.0), ("bm25", "bm25", 1.0), ("hybrid w=1", "hybrid", 1.0),
         ("hybrid w=2", "hybrid", 2.0), ("hybrid w=3", "hybrid", 3.0), ("auto (w=2)", "auto", 2.0))
Gold = list[tuple[str, str, set[int]]]  # (question, file name, 1-based evidence pages)


def financebench_gold() -> Gold:
    """FinanceBench subset questions (its evidence pages are 0-based)."""
    out = []
    for line in (FINANCEBENCH / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        out.append((record["question"], f"{record['doc_name']}.pdf", {e["evidence_page_num"] + 1
                                                                        for e in record["evidence"]}))
    return out


def papers_gold(path: Path = PAPER_QUESTIONS) -> Gold:
    """evaluation/sets/papers.jsonl questions (or another set's, `path`) answered on one page set of one document
    (multi-document ones left out)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if isinstance(record.get("doc"), str) and record.get("pages"):
            out.append((record["question"], record["doc"], set(record["pages"])))
    return out


def score_config(kb, embedder, strategy: str, weight: float, gold: Gold, k: int) -> tuple[int, int, float]:
    """(page hits, document hits, sum of reciprocal page ranks) at k over the questions, without filters."""
    retriever = HybridRetriever(kb.store, kb.keyword_index, embedder, keyword_weight=weight)
    page_hits, doc_hits, reciprocal = 0, 0, 0.0
    for question, file_name, pages in gold:
        hits = retriever.retrieve(question, k=k, strategy=strategy)
        ranks = [h.rank for h in hits if h.chunk.file_name == file_name and h.chunk.location.page in pages]
        page_hits += bool(ranks)
        doc_hits += any(h.chunk.file_name == file_name for h in hits)
        reciprocal += 1 / ranks[0] if ranks else 0.0
    return page_hits, doc_hits, reciprocal


def quality_set(root: Path, embedder, pdfs: list[Path], gold: Gold, k: int) -> dict[str, tuple[int, int, float]]:
    from wiring import knowledge_base

    kb = knowledge_base(VectorStore(make_client(root / "data"), embedder), root, embedder)
    results, ingest_s = seconds(lambda: kb.ingest_many(pdfs))
    print(f"{root.name}: indexed {sum(r.status == 'indexed' for r in results)}/{len(results)} PDFs, "
          f"{kb.store.count()} chunks in {ingest_s:.0f} s; {len(gold)} questions", flush=True)
    return {name: score_config(kb, embedder, strategy, weight, gold, k) for name, strategy, weight in SWEEP}


def quality_sets() -> list[tuple[str, list[Path], Callable[[], Gold]]]:
    """FinanceBench subset (11 SEC PDFs) and the single-paper questions of evaluation/sets/papers.jsonl (4 papers),
    those present here."""
    sets = [("financebench", sorted((FINANCEBENCH / "pdfs").glob("*.pdf")), financebench_gold)]
    sets.append(("papers", sorted((SHARED / "papers").glob("*.pdf")), papers_gold))
    return [(name, pdfs, gold) for name, pdfs, gold in sets if pdfs and (name != "papers" or PAPER_QUESTIONS.exists())]


def smoke_quality_sets(folder: Path) -> list[tuple[str, list[Path], Callable[[], Gold]]]:
    """--smoke: the five sample documents (evaluation.sample) written into `folder`, with their paged questions."""
    from evaluation import SAMPLE_DATASET, make_sample_corpus

    return [("sample", make_sample_corpus(folder), lambda: papers_gold(SAMPLE_DATASET))]


def sweep(root: Path, embedder, sets, k: int) -> dict:
    """Page hit@k, document hit@k and page MRR@k per strategy and BM25 weight over `sets`, each indexed under
    `root`; printed per configuration and returned as the figures."""
    totals: dict[str, list[float]] = {}
    n = 0
    for name, pdfs, gold_fn in sets:
        gold = gold_fn()
        n += len(gold)
        for config, counts in quality_set(root / name, embedder, pdfs, gold, k).items():
            totals[config] = [a + b for a, b in zip(totals.get(config, [0, 0, 0.0]), counts, strict=True)]
    table = {c: {"page_hit": round(p / n, 3), "doc_hit": round(d / n, 3), "mrr": round(r / n, 3)}
             for c, (p, d, r) in totals.items()}
    for config, fig in table.items():
        print(f"  {config:<11} page hit@{k} {fig['page_hit']:.3f}  doc hit@{k} {fig['doc_hit']:.3f}  "
              f"page MRR@{k} {fig['mrr']:.3f}")
    return {"sets": [s[0] for s in sets], "questions": n, "k": k, "configs": table}


def quality(cache: Path | None, k: int = 8) -> None:
    """The sweep over the real sets with the real embedder, as one JSON line."""
    sets = quality_sets()
    if not sets:
        print(f"{SHARED} is absent: no quality sweep")
        return
    with tempfile.TemporaryDirectory() as tmp:
        embedder = OnnxEmbedder(cache or Path(tmp) / "models")
        figures = sweep(Path(tmp), embedder, sets, k)
    print(json.dumps({"bench": "retrieval-quality", **figures}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2k and 10k chunks instead of 10k and 100k")
    parser.add_argument("--chunks", type=int, default=None, metavar="N",
                        help="one size instead: N generated chunks (1000000: the million-passage figures)")
    parser.add_argument("--no-library", action="store_true",
                        help="skip the writes and opens in fresh processes (one-page ingest, open after a kill, "
                             "cold CLI search)")
    parser.add_argument("--queries", type=int, default=None, help="queries per measurement (default 30 / 60)")
    parser.add_argument("--cache", type=Path, default=None, help="ONNX model cache (default: a temporary folder)")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="keep the filled stores here and reuse them next time (default: a temporary folder)")
    parser.add_argument("--quality", action="store_true",
                        help="instead: retrieval quality per strategy on FinanceBench + papers (real embedder)")
    parser.add_argument("--smoke", action="store_true",
                        help="500 chunks and 8 queries, then the quality sweep on the sample corpus, all in a "
                             "temporary folder: checks that the bench runs")
    args = parser.parse_args()
    if args.quality:
        quality(args.cache)
        return
    run = "smoke" if args.smoke else "quick" if args.quick else "full"
    sizes = {"smoke": (CHUNKS_PER_DOC,), "quick": (2_000, 10_000), "full": (10_000, 100_000)}[run]
    if args.chunks:
        run, sizes = "chunks", (args.chunks,)
    words = vocabulary()
    qs = queries(args.queries or {"smoke": 8, "quick": 30, "full": 60, "chunks": 60}[run], words)
    from sentence_transformers import SentenceTransformer

    torch_model = SentenceTransformer(str(model_files.model_dir()), device="cpu")
    torch_threads = fastest_torch_threads(torch_model, qs[:10])
    with tempfile.TemporaryDirectory() as tmp:
        onnx = OnnxEmbedder(args.cache or Path(tmp) / "models")
        figures = []
        for size in sizes:
            store, keyword = filled_store((args.data_dir or Path(tmp)) / str(size), size, words)
            retriever = HybridRetriever(store, keyword, onnx, candidates=CANDIDATES)
            fig = stage(size, store, keyword, retriever, torch_model, words, qs)
            fig["onnx_query_embed_p50_ms"], _ = percentiles(onnx.embed_query, qs)
            fig["torch_query_embed_p50_ms"], _ = percentiles(lambda q: torch_model.encode(q), qs)
            store.close()  # the fresh processes below open the library as its owner
            del store, keyword, retriever
            gc.collect()
            if not args.no_library:
                fig.update(library_figures((args.data_dir or Path(tmp)) / str(size), size, words, qs[0]))
            figures.append(fig)
            report(fig)
        out = {"bench": "retrieval", "size": run, "quick": args.quick, "queries": len(qs),
               "torch_threads": torch_threads, "stages": figures}
        if args.smoke:
            out["quality"] = sweep(Path(tmp) / "quality", onnx, smoke_quality_sets(Path(tmp) / "sample"), TOP_K)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
