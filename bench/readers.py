"""Readers beside a writer (issue 16, items 1, 5, 6): does opening, listing and searching wait for a write in
progress, even a frozen one; what latency a reader sees while a large ingest runs; and, with a Chroma server,
whether another program's `docs` (which recovers at open) leaves the writer's document whole.

    .venv/bin/python bench/readers.py                  # embedded; 10,000-chunk file, all-MiniLM-L6-v2
    .venv/bin/python bench/readers.py --server         # the same against a real `chroma run` on 127.0.0.1
    .venv/bin/python bench/readers.py --repo /tmp/old  # workers run another checkout (before figures)
    .venv/bin/python bench/readers.py --quick          # 2,000 chunks, hashing embedder slowed to 5 ms a text
    .venv/bin/python bench/readers.py --smoke          # 600 chunks beside 100, the same slowed hashing embedder

The writer is a child process ingesting one generated text file; while it embeds, `cli.py docs` and `cli.py
search` run in fresh processes (timed, killed after --timeout s), and a reader process runs hybrid queries
(p50/p95, errors). Then the writer is frozen with SIGSTOP and `docs` and `search` run again. Every step ends
with a figure; the last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = Path(os.environ.get("BENCH_REPO") or HERE.parent)
# The checkout measured first; this one's testing/; an older checkout's tests/ (its FakeEmbedder).
sys.path[:0] = [str(REPO), str(HERE.parent), str(REPO / "tests"), str(HERE)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def make_file(path: Path, chunks: int) -> None:
    """A text file of ~`chunks` chunks: one paragraph of 60 generated words each."""
    with open(path, "w", encoding="utf-8") as out:
        for p in range(chunks):
            words = " ".join(f"w{(p * 7 + k * 3 + len(path.name)) % 997}" for k in range(60))
            out.write(f"{path.stem} paragraph {p} {words}\n\n")


MODEL_CACHE = HERE.parent / "test-artifacts" / "model-cache"


def make_embedder():
    """$BENCH_EMBEDDER: "onnx" (all-MiniLM-L6-v2, the real cost of embedding) or "slow" (the tests' hashing
    embedder taking 5 ms per text, as fast as the real one on this machine but without its CPU load)."""
    try:
        from vector_db import HashingEmbedder
    except ImportError:  # an older checkout (--repo): its tests' FakeEmbedder
        from conftest import FakeEmbedder as HashingEmbedder

    if os.environ.get("BENCH_EMBEDDER", "onnx") == "onnx":
        from vector_db import OnnxEmbedder

        return OnnxEmbedder(MODEL_CACHE)

    class Slow(HashingEmbedder):
        def embed(self, texts, progress=None):
            out = []
            for start in range(0, len(texts), 32):  # progress as the real embedder reports it, batch by batch
                time.sleep(0.005 * len(texts[start:start + 32]))
                out.append(super().embed(texts[start:start + 32]))
                if progress is not None:
                    progress(min(start + 32, len(texts)), len(texts))
            return np.concatenate(out) if out else super().embed(texts)

    return Slow()


def open_kb(data: Path):
    from wiring import open_knowledge_base

    return open_knowledge_base(data, embedder=make_embedder(), environ=os.environ, isolate=False)


def writer(data: Path, file: Path) -> int:
    """Ingest `file`, printing a line per 1,000 chunks embedded and the result."""
    kb = open_kb(data)
    step = [0]

    def progress(name, stage, done, total):
        if stage == "embedding" and done > 0 and done >= step[0]:  # the writer also reports the stage's start (0)
            step[0] = done + 1000
            print(json.dumps({"embedding": done, "total": total}), flush=True)

    result = kb.ingest_file(file, progress=progress)
    print(json.dumps({"status": result.status, "chunks": result.chunks, "reason": result.reason}), flush=True)
    return 0


def reader(data: Path, seconds: float) -> int:
    """Hybrid queries for `seconds`: latencies and errors, as one JSON line."""
    started = time.monotonic()
    try:
        kb = open_kb(data)
    except Exception as error:  # measured: a reader that cannot even open
        print(json.dumps({"open_error": f"{type(error).__name__}: {error}"[:300]}))
        return 0
    opened = time.monotonic() - started
    times, errors = [], {}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        try:
            kb.retriever.retrieve(f"base paragraph {len(times)} w3", k=8, strategy="hybrid")
            times.append(time.monotonic() - t0)
        except Exception as error:  # counted: the figure measured
            key = f"{type(error).__name__}: {error}"[:160]
            errors[key] = errors.get(key, 0) + 1
    print(json.dumps({"open_s": round(opened, 2), "queries": len(times), "errors": errors, **_percentiles(times)}))
    return 0


def _percentiles(times: list[float]) -> dict:
    if not times:
        return {"p50_ms": None, "p95_ms": None}
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 1)}


def audit(data: Path) -> int:
    kb = open_kb(data)
    print(json.dumps({"docs": [(d.file_name, d.chunks) for d in kb.documents()], "stored": len(kb.store.chunk_ids()),
                      "repairs": kb.recovery_messages, "consistent": kb.check()["consistent"]}))
    return 0


def run_cli(data: Path, *argv: str) -> int:
    import cli
    import wiring

    if hasattr(wiring, "default_embedder"):  # an older checkout (--repo): no DOCAGENT_MODEL_DIR/FAKE_EMBEDDER seam
        embedder = make_embedder()
        wiring.default_embedder = lambda data_dir, **_: embedder
    return cli.main(["--data-dir", str(data), *argv])


# ---- the driver -----------------------------------------------------------------------------------------------

def spawn(*argv: str, env: dict, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *argv], env=env, text=True, **kwargs)


def timed(env: dict, timeout: float, *argv: str) -> dict:
    """Run one step in a fresh process: seconds taken, or 'blocked' when killed at `timeout`."""
    started = time.monotonic()
    proc = spawn(*argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate(timeout=30)
        return {"blocked": True, "seconds": timeout}
    lines = err.strip().splitlines()
    return {"blocked": False, "seconds": round(time.monotonic() - started, 2), "exit": proc.returncode,
            "stdout": out.strip().splitlines()[-1][:300] if out.strip() else "", "stderr": lines[-1][:300] if lines else ""}


def report_of(result: dict, what: str) -> dict:
    """The JSON line a step that reports itself printed last (the writer, the reader, the audit), or the 'blocked'
    figure; a step that crashed is a failure of the bench, not a figure, and raises."""
    if result["blocked"]:
        return {"blocked": True, "seconds": result["seconds"]}
    if result["exit"] != 0 or not result["stdout"]:
        raise RuntimeError(f"the {what} step failed (exit {result['exit']}): {result['stderr']}")
    return json.loads(result["stdout"])


def wait_for_embedding(proc: subprocess.Popen, log: list[str], timeout: float = 300) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            return False
        log.append(line)
        if line.startswith('{"embedding"') and json.loads(line)["embedding"] > 0:
            return True
    return False


# Per size: chunks in the file ingested, chunks already in the library, seconds of reader queries, step timeout.
SIZES = {"full": (10_000, 500, 15.0, 60.0), "quick": (2000, 500, 5.0, 60.0), "smoke": (600, 100, 1.0, 30.0)}


def scenario(root: Path, env: dict, sizes: tuple[int, int, float], timeout: float, server: bool) -> dict:
    chunks, base_chunks, reader_s = sizes
    data, big, base = root / "a", root / "big.txt", root / "base.txt"
    make_file(big, chunks)
    make_file(base, base_chunks)
    fig: dict = {"chunks": chunks, "base_library": report_of(timed(env, 900, "writer", str(data), str(base)), "writer")}
    log: list[str] = []
    proc = spawn("writer", str(data), str(big), env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        if not wait_for_embedding(proc, log):
            raise RuntimeError(f"the writer never started embedding: {log[-3:]}")
        os.kill(proc.pid, signal.SIGSTOP)  # a writer frozen mid-embedding, holding the write lock
        try:
            fig["docs_writer_frozen"] = timed(env, timeout, "cli", str(data), "docs")
            fig["search_writer_frozen"] = timed(env, timeout, "cli", str(data), "search", "base paragraph 7")
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        fig["docs_during_ingest"] = timed(env, timeout, "cli", str(data), "docs")
        if server:  # another program with its own data dir on the same server: it recovers at open
            fig["docs_other_dir_during_ingest"] = timed(env, timeout, "cli", str(root / "b"), "docs")
        fig["search_during_ingest"] = timed(env, timeout, "cli", str(data), "search", "base paragraph 7")
        fig["reader_during_ingest"] = report_of(timed(env, timeout + reader_s, "reader", str(data), str(reader_s)),
                                                "reader")
        fig["writer_still_running_after_reads"] = proc.poll() is None
        out, _ = proc.communicate(timeout=1800)
        fig["writer"] = json.loads((log + out.splitlines())[-1])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    fig["audit_after"] = report_of(timed(env, 600, "audit", str(root / "c" if server else data)), "audit")
    return fig


def start_server(root: Path):
    from testing.chroma_server import ChromaServer

    server = ChromaServer(root / "server-data")
    server.start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", nargs="?", choices=("writer", "reader", "audit", "cli"))
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.add_argument("--server", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true",
                        help="the smallest size (600 chunks, slowed hashing embedder): checks that the bench runs")
    parser.add_argument("--repo")
    parser.add_argument("--embedder", choices=("onnx", "slow"), help="default: onnx (--quick, --smoke: slow)")
    parser.add_argument("--timeout", type=float, help="seconds before a blocked step is killed (default 60, "
                                                      "--smoke: 30)")
    args = parser.parse_args(argv)
    if args.step == "writer":
        return writer(Path(args.rest[0]), Path(args.rest[1]))
    if args.step == "reader":
        return reader(Path(args.rest[0]), float(args.rest[1]))
    if args.step == "audit":
        return audit(Path(args.rest[0]))
    if args.step == "cli":
        return run_cli(Path(args.rest[0]), *args.rest[1:])
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    *sizes, timeout = SIZES[size]
    env = {**os.environ, "BENCH_REPO": str(Path(args.repo).resolve()) if args.repo else str(REPO),
           "BENCH_EMBEDDER": args.embedder or ("onnx" if size == "full" else "slow")}
    # The CLI's own embedder (wiring): the same vectors as the writer's, from the same model cache.
    env.update({"DOCAGENT_MODEL_DIR": str(MODEL_CACHE)} if env["BENCH_EMBEDDER"] == "onnx"
               else {"DOCAGENT_FAKE_EMBEDDER": "1"})
    with tempfile.TemporaryDirectory(prefix="readers-") as tmp:
        server = start_server(Path(tmp)) if args.server else None
        if server is not None:
            env.update(CHROMA_HOST="127.0.0.1", CHROMA_PORT=str(server.port))
        try:
            fig = scenario(Path(tmp), env, tuple(sizes), args.timeout or timeout, args.server)
        finally:
            if server is not None:
                server.stop()
    fig.update(bench="readers", size=size, mode="server" if args.server else "embedded", repo=env["BENCH_REPO"],
               embedder=env["BENCH_EMBEDDER"])
    for key, value in fig.items():
        print(f"{key}: {value}")
    print(json.dumps(fig))
    return 0


if __name__ == "__main__":
    sys.exit(main())
