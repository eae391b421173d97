"""Concurrent load: N threads of `search` and offline `ask` against one knowledge base, for a fixed time each.

    .venv/bin/python bench/load.py --smoke            # 200 chunks, N = 1, 4, 1 s each (a smoke run, embedded only)
    .venv/bin/python bench/load.py --quick            # 2k chunks, N = 1, 4, 16, 4 s each (about a minute)
    .venv/bin/python bench/load.py                    # 10k chunks, N = 1, 4, 16, 20 s each
    .venv/bin/python bench/load.py --quick --server   # the same against a real `chroma run` on 127.0.0.1,
                                                      # then a 3 s outage under load and the recovery

Each thread alternates KnowledgeBase.retriever.retrieve(query, k=8) ("search") and Agent.ask(query) with the
OfflineBrain ("ask"), as Streamlit tabs share one st.cache_resource knowledge base. The store is filled with
generated chunks and hash-seeded vectors (bench/retrieval.py); queries are embedded by the real all-MiniLM-L6-v2
(ONNX), so a search costs what it costs in the app. Printed per N: operations/s, p50/p95 latency per kind and
errors (must be 0). The last line printed is one JSON object with every figure. A smoke run exports its ONNX
model into the temp directory's bench cache (as bench/ingest.py's --cache default), not the repository's
test-artifacts/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from crash import MODEL_CACHE, REPO  # noqa: F401  (sets sys.path and the offline environment)
from retrieval import HashVectors, filled_store, queries, vocabulary

SMOKE_MODELS = Path(tempfile.gettempdir()) / "docagent-bench-models"
SIZES = {"smoke": (200, 1.0, [1, 4]), "quick": (2000, 4.0, [1, 4, 16]), "full": (10_000, 20.0, [1, 4, 16])}


class OnnxQueries(HashVectors):
    """Hash vectors for the generated chunks (embedding 10k chunks for real is not what is measured), the real
    model for queries; keeps HashVectors' name so the store accepts it."""

    def __init__(self, cache: Path = MODEL_CACHE):
        from vector_db import OnnxEmbedder

        self._onnx = OnnxEmbedder(cache)

    def embed_query(self, text):
        return self._onnx.embed_query(text)


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) of `values` in milliseconds, 0.0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))], 1)


def hammer(kb, agent, qs: list[str], n: int, seconds: float) -> dict:
    """`n` threads, each alternating search and ask for `seconds`; latencies, counts and errors."""
    latencies: dict[str, list[float]] = {"search": [], "ask": []}
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def work(offset: int) -> None:
        i = offset
        while time.monotonic() < stop:
            q = qs[i % len(qs)]
            kind = "search" if i % 2 == 0 else "ask"
            start = time.perf_counter()
            try:
                kb.retriever.retrieve(q, k=8) if kind == "search" else agent.ask(q)
            except Exception as e:  # counted and reported: the figure this bench exists for
                with lock:
                    errors.append(f"{kind}: {type(e).__name__}: {e}")
            else:
                with lock:
                    latencies[kind].append(time.perf_counter() - start)
            i += 1

    started = time.monotonic()
    threads = [threading.Thread(target=work, args=(t * 7,)) for t in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    done = sum(len(v) for v in latencies.values())
    return {"threads": n, "seconds": round(wall, 1), "ops": done, "ops_per_s": round(done / wall, 2),
            **{f"{k}_p50_ms": percentile(v, 50) for k, v in latencies.items()},
            **{f"{k}_p95_ms": percentile(v, 95) for k, v in latencies.items()},
            "errors": len(errors), "first_error": errors[0] if errors else ""}


def outage(kb, agent, qs: list[str], server, down_s: float = 3.0) -> dict:
    """4 threads under load while the server is stopped for `down_s` and started again: what they saw."""
    result: dict = {}
    runner = threading.Thread(target=lambda: result.update(hammer(kb, agent, qs, 4, down_s + 8)))
    runner.start()
    time.sleep(2)
    server.stop()
    time.sleep(down_s)
    server.start()
    runner.join()
    after = hammer(kb, agent, qs, 4, 3)
    return {"errors_during_outage": result["errors"], "error_example": result["first_error"][:160],
            "clear_error": "cannot reach Chroma at" in result["first_error"],
            "errors_after_restart": after["errors"], "ops_after_restart": after["ops"]}


def open_server(root: Path):
    from testing.chroma_server import ChromaServer

    server = ChromaServer(root / "server-data")
    server.start()
    return server


def run(size: int, seconds: float, levels: list[int], use_server: bool, cache: Path = MODEL_CACHE) -> dict:
    from agentic_rag import OfflineBrain, build_agent
    from vector_db import VectorStore, make_client
    from wiring import knowledge_base

    with tempfile.TemporaryDirectory(prefix="load-") as tmp:
        root, server = Path(tmp), None
        filled_store(root, size, vocabulary())  # embedded fill: fast; the server copies it below when asked
        embedder = OnnxQueries(cache)
        if use_server:
            server = open_server(root)
            client = make_client(root, host="127.0.0.1", port=server.port)
            store = VectorStore(client, embedder)
            for doc in _documents_of(VectorStore(make_client(root / "data"), HashVectors())):
                store.add_document(doc)
        else:
            store = VectorStore(make_client(root / "data"), embedder)
        try:
            kb = knowledge_base(store, root, embedder, isolate=False)
            agent = build_agent(OfflineBrain(embedder), kb.retriever, embedder=embedder)
            qs = queries(200, vocabulary())
            hammer(kb, agent, qs, 1, 1.0)  # warm-up: model session, caches
            rows = []
            for n in levels:
                rows.append(hammer(kb, agent, qs, n, seconds))
                r = rows[-1]
                print(f"N={n:>2}: {r['ops_per_s']:6.2f} ops/s  search p50/p95 {r['search_p50_ms']}/{r['search_p95_ms']}"
                      f" ms  ask p50/p95 {r['ask_p50_ms']}/{r['ask_p95_ms']} ms  errors {r['errors']}", flush=True)
            fig = {"bench": "load", "mode": "server" if server else "embedded", "chunks": store.count(),
                   "seconds_per_level": seconds, "levels": rows}
            if server:
                fig["outage"] = outage(kb, agent, qs, server)
                print(f"outage: {fig['outage']}", flush=True)
            return fig
        finally:
            if server:
                server.stop()


def _documents_of(store) -> list:
    """The generated documents of an embedded store, rebuilt as ParsedDocuments (to copy them to the server)."""
    from document_processor import ParsedDocument

    by_doc: dict[str, list] = {}
    for chunk in store.iter_chunks():
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    return [ParsedDocument(d, cs[0].file_name, "pdf", 1000, cs[0].file_name, "pages", len(cs), tuple(cs))
            for d, cs in by_doc.items()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2k chunks, 4 s per level")
    parser.add_argument("--smoke", action="store_true", help="a smoke run: 200 chunks, N = 1 and 4, 1 s per level")
    parser.add_argument("--server", action="store_true", help="against a real `chroma run` on 127.0.0.1")
    parser.add_argument("--chunks", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    args = parser.parse_args(argv)
    name = "smoke" if args.smoke else "quick" if args.quick else "full"
    (size, seconds, levels) = SIZES[name]
    fig = run(args.chunks or size, args.seconds or seconds, levels, args.server,
              SMOKE_MODELS if args.smoke else MODEL_CACHE)
    fig["size"] = name
    errors = sum(r["errors"] for r in fig["levels"])
    fig["total_errors"] = errors
    fig["median_ops_per_s"] = statistics.median(r["ops_per_s"] for r in fig["levels"])
    print(json.dumps(fig))
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
