"""Vector store and embedder timings: writes, queries with and without filters, scans, embedding speed.

    .venv/bin/python bench/bench_vector_db.py --smoke     # 500 chunks, 8 texts of this file embedded (seconds, plus
                                                          # the one-off ONNX export into a temporary folder)
    .venv/bin/python bench/bench_vector_db.py --quick     # 10k chunks, 48 texts embedded (~1-2 min)
    .venv/bin/python bench/bench_vector_db.py             # 100k chunks, 1000 texts embedded

Store timings use random unit vectors (the embedder is not what is measured there); embedding timings use
1000-character pieces of a real paper from ../shared/data when present (not with --smoke), else of this file's
own text. The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from advanced_retrieval import Filters  # noqa: E402
from document_processor import Chunk, Location, ParsedDocument, chunk_id  # noqa: E402
from vector_db import OnnxEmbedder, VectorStore, make_client  # noqa: E402


class RandomEmbedder:
    """Seeded random unit vectors: store timings without paying for a model."""

    dim, name = 384, "random-384"

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def embed(self, texts, progress=None):
        v = self.rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def embed_query(self, text):
        return self.embed([text])[0]


def corpus(total: int, docs: int = 100) -> list[ParsedDocument]:
    """`docs` documents of total/docs chunks each, alternately pdf and docx."""
    out = []
    for d in range(docs):
        doc_id, name, kind = f"doc{d:03d}", f"file{d:03d}", "pdf" if d % 2 == 0 else "docx"
        chunks = tuple(
            Chunk(chunk_id(doc_id, Location(page=i + 1), i, f"text {d} {i}"), doc_id, name, kind,
                  f"text {d} {i}", Location(page=i + 1), ("Heading",), i)
            for i in range(total // docs)
        )
        out.append(ParsedDocument(doc_id, name, kind, 1, name, "pages", len(chunks), chunks))
    return out


def timed(fn, repeat: int) -> float:
    """Median milliseconds of `repeat` calls."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_store(total: int, docs: int = 100) -> dict:
    """Write `total` chunks in `docs` documents, then time queries and scans; {label: ms} plus the write rate."""
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        embedder = RandomEmbedder()
        store = VectorStore(make_client(Path(tmp)), embedder)
        start = time.perf_counter()
        for doc in corpus(total, docs):
            store.add_document(doc)
        seconds = time.perf_counter() - start
        print(f"store: {store.count()} chunks written in {seconds:.1f} s ({store.count() / seconds:.0f} chunks/s)")
        figures.update(chunks=store.count(), write_s=round(seconds, 2), write_chunks_per_s=round(store.count() / seconds))
        queries = [embedder.embed_query("q") for _ in range(20)]
        it = iter(queries * 100)
        col = store._cols()[0]  # the raw collection, to time Chroma's own `where` for comparison
        half = Filters(file_types=("pdf",))
        one = Filters(doc_ids=("doc007",))
        rows = [
            ("query n=10, no filter", lambda: store.query(next(it), 10)),
            ("query n=10, half the docs (over-fetch path)", lambda: store.query(next(it), 10, half)),
            (f"query n=10, one doc of {docs} (where path)", lambda: store.query(next(it), 10, one)),
            ("raw Chroma where file_type=pdf n=10", lambda: col.query(query_embeddings=[next(it)], n_results=10,
                                                                      where={"file_type": "pdf"})),
            ("count()", store.count),
            ("generation()", store.generation),
        ]
        for label, fn in rows:
            figures[label] = round(timed(fn, 20), 2)
            print(f"store: {label}: {figures[label]:.1f} ms")
        scans = [("chunk_ids()", store.chunk_ids), ("iter_chunks() all", lambda: sum(1 for _ in store.iter_chunks())),
                 ("recover() on a clean store", store.recover)]
        for label, fn in scans:
            figures[label] = round(timed(fn, 1), 1)
            print(f"store: {label}: {figures[label]:.0f} ms")
    return figures


def sample_texts(count: int, shared: bool = True) -> list[str]:
    """1000-character pieces of real prose (the paper in ../shared/data when `shared` and present)."""
    paper = REPO.parent / "shared" / "data" / "papers" / "attention_is_all_you_need.pdf"
    if shared and paper.exists():
        from pypdf import PdfReader

        text = " ".join((page.extract_text() or "") for page in PdfReader(paper).pages)
    else:
        text = Path(__file__).read_text()
    text = " ".join(text.split())
    pieces = [text[i:i + 1000] for i in range(0, len(text) - 1000, 1000)]
    return [pieces[i % len(pieces)] for i in range(count)]


def bench_embedder(count: int, cache: Path, shared: bool = True) -> dict:
    """ONNX fp32 and int8 against sentence-transformers: chunks/s and cosine; the figures."""
    texts = sample_texts(count, shared)
    results, figures = {}, {"texts": count, "threads": os.cpu_count()}
    for quantized in (False, True):
        embedder = OnnxEmbedder(cache, quantized=quantized)
        embedder.embed(texts[:8])  # warm-up
        start = time.perf_counter()
        results[embedder.name] = embedder.embed(texts)
        figures[f"{embedder.name} chunks/s"] = round(count / (time.perf_counter() - start), 1)
        print(f"embed: {embedder.name}: {figures[f'{embedder.name} chunks/s']:.1f} chunks/s "
              f"({count} x 1000 chars, {os.cpu_count()} threads)")
    start = time.perf_counter()
    from sentence_transformers import SentenceTransformer

    from document_processor import model_files

    model = SentenceTransformer(str(model_files.model_dir()), device="cpu")
    figures["sentence-transformers load_s"] = round(time.perf_counter() - start, 1)
    print(f"embed: sentence-transformers import + load: {figures['sentence-transformers load_s']:.1f} s")
    model.encode(texts[:8])
    start = time.perf_counter()
    reference = model.encode(texts, batch_size=32, normalize_embeddings=True)
    figures["sentence-transformers torch chunks/s"] = round(count / (time.perf_counter() - start), 1)
    print(f"embed: sentence-transformers torch: {figures['sentence-transformers torch chunks/s']:.1f} chunks/s")
    for name, vectors in results.items():
        cos = (vectors * reference).sum(axis=1)
        figures[f"{name} cosine"] = {"min": round(float(cos.min()), 6), "mean": round(float(cos.mean()), 6)}
        print(f"embed: {name} vs sentence-transformers cosine: min {cos.min():.6f}, mean {cos.mean():.6f}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="500 chunks in 10 docs, 8 texts of this file (no ../shared data) instead of 100k, 1000")
    parser.add_argument("--quick", action="store_true", help="10k chunks and 48 texts instead of 100k and 1000")
    parser.add_argument("--cache", type=Path, default=None, help="ONNX model cache (default: a temporary folder)")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    store = bench_store(*{"smoke": (500, 10), "quick": (10_000, 100), "full": (100_000, 100)}[size])
    with tempfile.TemporaryDirectory() as tmp:
        embed = bench_embedder({"smoke": 8, "quick": 48, "full": 1000}[size], args.cache or Path(tmp),
                               shared=not args.smoke)
    print(json.dumps({"bench": "bench_vector_db", "size": size, "store": store, "embed": embed}))


if __name__ == "__main__":
    main()
