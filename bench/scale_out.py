"""The scale-out candidate, measured: our retriever against Milvus Lite (in-engine BM25 + dense, fused by RRF).

    .venv/bin/python bench/scale_out.py [--data-dir DIR]    # the FinanceBench library bench/quality.py built
    .venv/bin/python bench/scale_out.py --generated 100000  # and 100k generated chunks with hash vectors (scale)
    .venv/bin/python bench/scale_out.py --smoke             # the sample corpus (evaluation.sample), a temp folder

The same chunks and the same vectors: every chunk of the cached FinanceBench library (<data-dir>/financebench, built
by bench/quality.py and never rebuilt here) is read from our Chroma store with its stored embedding and inserted into
a Milvus Lite file in a temporary folder (dense FLOAT_VECTOR, COSINE, FLAT index: Milvus Lite builds no other; the
text in a VARCHAR with Milvus's standard analyzer feeding a BM25 function into a SPARSE field). Each question is
embedded once; that vector serves all three retrievers, so latency excludes the query embedding:
  ours          HybridRetriever with bench/quality.py's "new" configuration (hybrid strategy), its keyword index
                built from the store into the temporary folder as every process builds its own copy today;
  milvus        hybrid_search: dense (top CANDIDATES) and BM25 (top CANDIDATES), RRFRanker(k=RRF_K), top DEPTH;
  milvus-dense  dense search only, top DEPTH;
  ours-main, ours-vector  quality.py's "main" configuration, hybrid and vector: what the engine's plain fusion and
                plain dense search should be compared with (our query understanding is not in Milvus).
Figures: page hit@1/@5/@10 and MRR@10 (evaluation.metrics, as bench/quality.py), per set (dev: 42 questions we tune
on; subset: 29 held out) and together; query p50/p95 ms; the process's RSS after opening our library and after
loading Milvus (Milvus Lite 3 is a pure-Python engine inside this process, faiss for the dense index: its latency
and memory are not a Milvus server's); disk of both stores; Milvus ingest
seconds (insert + flush + load, the BM25 and dense indexes built inside) against the time our per-process keyword
index takes to build from the store; a paired bootstrap (common.paired) of milvus minus ours. --generated N adds
scale without quality (generated()); --smoke runs it at 500 chunks. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import disk_mb, paired, rss_mb, scores, seconds
from quality import CONFIGS, DEPTH, question_sets, smoke_sets

from advanced_retrieval import HybridRetriever, KeywordIndex
from evaluation import first_hit_rank
from vector_db import OnnxEmbedder, VectorStore, make_client

CANDIDATES = 30  # per list before fusion, as HybridRetriever's default `candidates`
RRF_K = 60
BATCH = 1000
# ours: bench/quality.py's "new" configuration, hybrid; ours-main: its "main" (plain RRF of BM25 and vector lists);
# ours-vector: Chroma's vector search alone, the check on milvus-dense (same vectors: the two should agree).
OURS = {"ours": ("new", "hybrid"), "ours-main": ("main", "hybrid"), "ours-vector": ("main", "vector")}
RETRIEVERS = (*OURS, "milvus", "milvus-dense")


class QueryVectors:
    """The embedder with each question's vector computed once beforehand; a text not asked before is embedded
    (and counted in `misses`, whose embedding time then falls in the latency)."""

    def __init__(self, embedder, texts: list[str]):
        self._embedder, self.dim, self.name = embedder, embedder.dim, embedder.name
        self._vectors = {t: embedder.embed_query(t) for t in dict.fromkeys(texts)}
        self.misses = 0

    def embed(self, texts, progress=None):
        return self._embedder.embed(texts, progress)

    def embed_query(self, text: str):
        if text not in self._vectors:
            self.misses += 1
            self._vectors[text] = self._embedder.embed_query(text)
        return self._vectors[text]


def load_milvus(path: Path, store) -> tuple:
    """A Milvus Lite collection at `path` holding every chunk of `store` with its stored vector; (client, {id: chunk},
    seconds to read our store, seconds to insert + flush + load)."""
    started = time.perf_counter()
    chunks = list(store.iter_chunks())
    vectors = store.vectors([c.id for c in chunks])
    read_s = time.perf_counter() - started
    client, ingest_s = fill_milvus(path, chunks, vectors)
    return client, {c.id: c for c in chunks}, read_s, ingest_s


def fill_milvus(path: Path, chunks: list, vectors: dict) -> tuple:
    """A Milvus Lite collection "chunks" at `path` holding `chunks` with `vectors` ({id: vector}); (client, seconds
    to create, insert, flush and load it)."""
    from pymilvus import DataType, Function, FunctionType, MilvusClient

    started = time.perf_counter()
    client = MilvusClient(str(path))
    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=128)
    schema.add_field("text", DataType.VARCHAR, max_length=65535, enable_analyzer=True)
    schema.add_field("file_name", DataType.VARCHAR, max_length=512)
    schema.add_field("page", DataType.INT64)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=len(next(iter(vectors.values()))))
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                 output_field_names=["sparse"]))
    index = client.prepare_index_params()
    index.add_index("dense", index_type="FLAT", metric_type="COSINE")
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection("chunks", schema=schema, index_params=index)
    rows = [{"id": c.id, "text": c.text, "file_name": c.file_name,
             "page": c.location.page if c.location.page is not None else -1, "dense": vectors[c.id].tolist()}
            for c in chunks]
    for start in range(0, len(rows), BATCH):
        client.insert("chunks", rows[start:start + BATCH])
    client.flush("chunks")
    client.load_collection("chunks")
    return client, time.perf_counter() - started


def milvus_ids(client, text: str, vector, hybrid: bool | None) -> list[str]:
    """Top DEPTH chunk ids: hybrid (True), dense only (False) or BM25 only (None)."""
    from pymilvus import AnnSearchRequest, RRFRanker

    if hybrid is None:
        got = client.search("chunks", data=[text], anns_field="sparse", limit=DEPTH)
    elif not hybrid:
        got = client.search("chunks", data=[vector.tolist()], anns_field="dense", limit=DEPTH)
    else:
        requests = [AnnSearchRequest(data=[vector.tolist()], anns_field="dense", param={}, limit=CANDIDATES),
                    AnnSearchRequest(data=[text], anns_field="sparse", param={}, limit=CANDIDATES)]
        got = client.hybrid_search("chunks", requests, ranker=RRFRanker(RRF_K), limit=DEPTH)
    return [hit["id"] for hit in got[0]]


def run(root: Path, sets: dict[str, list], embedder, scratch: Path) -> dict:
    """Every figure over the library at `root` and the questions of `sets` ({set: questions})."""
    questions = [q for qs in sets.values() for q in qs]
    vectors = QueryVectors(embedder, [q.question for q in questions])
    store = VectorStore(make_client(root / "data"), vectors)
    keyword_index = KeywordIndex(scratch / "bm25")
    _, bm25_s = seconds(lambda: keyword_index.current(store))
    ours = {name: (HybridRetriever(store, keyword_index, vectors, **CONFIGS[config]), strategy)
            for name, (config, strategy) in OURS.items()}
    for retriever, strategy in ours.values():
        retriever.retrieve(questions[0].question, DEPTH, strategy)  # warm-up (threads, first store reads)
    rss_ours = rss_mb(os.getpid())
    client, chunks, read_s, ingest_s = load_milvus(scratch / "milvus.db", store)
    gc.collect()  # the rows built for the insert are garbage now; Milvus Lite 3 runs inside this process
    rss_after = rss_mb(os.getpid())
    milvus_ids(client, questions[0].question, vectors.embed_query(questions[0].question), True)  # warm-up
    ranks: dict = {name: [] for name in RETRIEVERS}
    took: dict = {name: [] for name in RETRIEVERS}
    for q in questions:
        vector = vectors.embed_query(q.question)
        for name, (retriever, strategy) in ours.items():
            hits, t = seconds(lambda q=q, r=retriever, s=strategy: [h.chunk for h in r.retrieve(q.question, DEPTH, s)])
            ranks[name].append(first_hit_rank(hits, q.gold))
            took[name].append(t)
        for name, hybrid in (("milvus", True), ("milvus-dense", False)):
            ids, t = seconds(lambda q=q, v=vector, h=hybrid: milvus_ids(client, q.question, v, h))
            ranks[name].append(first_hit_rank([chunks[i] for i in ids], q.gold))
            took[name].append(t)
    client.close()
    bounds, start = {}, 0
    for name, qs in sets.items():
        bounds[name], start = (start, start + len(qs)), start + len(qs)
    bounds["all"] = (0, len(questions))
    per_set = {s: {r: ranks[r][a:b] for r in RETRIEVERS} for s, (a, b) in bounds.items()}
    return {"chunks": len(chunks), "questions": {s: b - a for s, (a, b) in bounds.items()},
            "scores": {s: {r: scores(rk) for r, rk in by.items()} for s, by in per_set.items()},
            "paired": {s: {**{f"{r} - ours": paired(by["ours"], by[r]) for r in ("milvus", "milvus-dense")},
                           "milvus - ours-main": paired(by["ours-main"], by["milvus"])}
                       for s, by in per_set.items()},
            "latency_ms": {r: {"p50": round(1000 * statistics.median(t), 1),
                               "p95": round(1000 * sorted(t)[int(0.95 * (len(t) - 1))], 1)} for r, t in took.items()},
            "query_embeddings_in_latency": vectors.misses,
            "rss_mb": {"after_opening_ours": round(rss_ours), "after_loading_milvus": round(rss_after)},
            "disk_mb": {"chroma": disk_mb(root / "data"), "our_bm25_cache": disk_mb(scratch / "bm25"),
                        "milvus": disk_mb(scratch / "milvus.db")},
            "seconds": {"our_bm25_build": round(bm25_s, 1), "read_our_store": round(read_s, 1),
                        "milvus_ingest": round(ingest_s, 1)}, "ranks": ranks}


def generated(size: int, scratch: Path, n_queries: int = 30) -> dict:
    """Scale without quality: `size` generated chunks with hash vectors (bench/retrieval.py's corpus) in Milvus Lite
    (ingest, disk, RSS, BM25 / dense / hybrid p50 and p95) and in our BM25Index (build, search p50 and p95). Our
    whole hybrid retriever at 100k is measured by bench/retrieval.py (docs/performance.md)."""
    import numpy as np
    from retrieval import HashVectors, documents, queries, texts, vocabulary

    from advanced_retrieval import BM25Index

    words = vocabulary()
    chunks = [c for d in documents(texts(size, size, words), 0) for c in d.chunks]
    hashing = HashVectors()
    vectors = dict(zip([c.id for c in chunks], hashing.embed([c.text for c in chunks]), strict=True))
    qs = queries(n_queries, words)
    query_vectors = [hashing.embed_query(q) for q in qs]
    gc.collect()
    rss_before = rss_mb(os.getpid())
    index, bm25_s = seconds(lambda: BM25Index.build(chunks))
    gc.collect()
    rss_bm25 = rss_mb(os.getpid())
    client, ingest_s = fill_milvus(scratch / f"generated-{size}.db", chunks, vectors)
    del vectors
    gc.collect()
    rss_milvus = rss_mb(os.getpid())
    took: dict = {"our_bm25": [], "milvus_bm25": [], "milvus_dense": [], "milvus_hybrid": []}
    for q, v in zip(qs, query_vectors, strict=True):
        took["our_bm25"].append(seconds(lambda q=q: index.search(q, CANDIDATES))[1])
        for name, hybrid in (("milvus_bm25", None), ("milvus_dense", False), ("milvus_hybrid", True)):
            took[name].append(seconds(lambda q=q, v=v, h=hybrid: milvus_ids(client, q, v, h))[1])
    client.close()
    return {"chunks": size, "queries": n_queries,
            "latency_ms": {n: {"p50": round(1000 * float(np.percentile(t, 50)), 1),
                               "p95": round(1000 * float(np.percentile(t, 95)), 1)} for n, t in took.items()},
            "seconds": {"our_bm25_build": round(bm25_s, 1), "milvus_ingest": round(ingest_s, 1)},
            "rss_mb": {"generated_corpus": round(rss_before), "our_bm25_index": round(rss_bm25 - rss_before),
                       "milvus": round(rss_milvus - rss_bm25)},
            "disk_mb": {"milvus": disk_mb(scratch / f"generated-{size}.db")}}


def report(fig: dict) -> None:
    print(f"\n== {fig['chunks']} chunks, questions {fig['questions']} ==")
    for set_name, by in fig["scores"].items():
        for name, s in by.items():
            print(f"  {set_name:<7} {name:<13} hit@1 {s['hit1']:.3f}  hit@5 {s['hit5']:.3f}  hit@10 {s['hit10']:.3f}  "
                  f"MRR@10 {s['mrr10']:.3f}")
    for set_name, by in fig["paired"].items():
        for label, d in by.items():
            print(f"  {set_name:<7} {label:<20} " + ", ".join(
                f"{m} {v['diff']:+.3f} CI {v['ci95']} (+{v['better']}/-{v['worse']})" for m, v in d.items()))
    for key in ("latency_ms", "rss_mb", "disk_mb", "seconds"):
        print(f"  {key}: {fig[key]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-quality",
                        help="where bench/quality.py keeps its indexes and the exported model")
    parser.add_argument("--generated", type=int, default=0, metavar="N",
                        help="also N generated chunks with hash vectors in Milvus Lite and our BM25 (scale, no quality)")
    parser.add_argument("--smoke", action="store_true",
                        help="the five sample documents and their questions, indexed in a temporary folder")
    args = parser.parse_args()
    logging.getLogger("advanced_retrieval.library.knowledge_base").setLevel(logging.ERROR)
    try:
        import milvus_lite  # noqa: F401
        import pymilvus  # noqa: F401
    except ImportError as missing:
        print(json.dumps({"bench": "scale_out", "size": "smoke" if args.smoke else "full",
                          "skipped": f"{missing.name} is not installed (pip install -r requirements-dev.txt)"}))
        return
    with tempfile.TemporaryDirectory(prefix="bench-scale-out-") as tmp:
        scratch = Path(tmp)
        if args.smoke:
            from common import build_index

            (sets, paths), = smoke_sets(scratch / "documents").values()
            embedder = OnnxEmbedder(scratch / "models", quantized=False)
            build_index(scratch / "library", embedder, paths).close()
            root = scratch / "library"
        else:
            root = args.data_dir / "financebench"
            if not (root / "data").is_dir():
                sys.exit(f"{root} is absent: run bench/quality.py --only financebench first (or use --smoke)")
            sets, _ = question_sets()["financebench"]
            embedder = OnnxEmbedder(args.data_dir / "models", quantized=False)
        fig = run(root, sets, embedder, scratch)
        report(fig)
        size = 500 if args.smoke else args.generated
        if size:
            fig["generated"] = generated(size, scratch)
            print(f"\n== generated: {json.dumps(fig['generated'])}")
    print(json.dumps({"bench": "scale_out", "size": "smoke" if args.smoke else "full", "depth": DEPTH,
                      "candidates": CANDIDATES, "rrf_k": RRF_K, "load": os.getloadavg(), **fig}))


if __name__ == "__main__":
    main()
