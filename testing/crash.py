"""Crash consistency steps, shared by bench/crash.py (the figures) and tests/advanced_retrieval/library/test_knowledge_base_reliability.py (the checks).

    python testing/crash.py worker DATA BATCH [--embedder fake|onnx] [--rerun] [--no-isolate]

One round: a fresh data dir; a child process (`crash.py worker`) opens the knowledge base and ingests a batch of
generated .txt/.docx/.pdf files; after a random delay (drawn over the time a full batch takes, measured first)
its whole process group gets SIGKILL. A second child (`crash.py worker --rerun`) then opens the same data dir
(which runs recovery), reports KnowledgeBase.check() and, per document, whether the chunks stored equal the
chunks the file parses into (no document half indexed), then re-ingests the batch and reports the same again.
A round passes when both reports are consistent and the re-run leaves every file of the batch indexed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

MODEL_CACHE = REPO / "test-artifacts" / "model-cache"
WORDS = ("ledger", "harbour", "falcon", "quartz", "meadow", "copper", "lantern", "orbit", "cedar", "glacier",
         "mosaic", "tundra", "violet", "ember", "sonnet", "prairie", "summit", "delta", "basalt", "juniper")


def sentence(rng: random.Random, n: int = 14) -> str:
    """A sentence of `n` words from a small vocabulary (so BM25 and vectors both have something to match)."""
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_batch(folder: Path, n_files: int, paragraphs: int, seed: int = 7) -> list[Path]:
    """`n_files` documents (.txt, .docx and .pdf in turn), each `paragraphs` paragraphs of generated text."""
    import docx

    from evaluation import text_pdf

    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n_files):
        paras = [f"Document {i} section {p}. " + " ".join(sentence(rng) for _ in range(6)) for p in range(paragraphs)]
        kind = ("txt", "docx", "pdf")[i % 3]
        path = folder / f"doc{i:02d}.{kind}"
        if kind == "txt":
            path.write_text("\n\n".join(paras), encoding="utf-8")
        elif kind == "docx":
            document = docx.Document()
            for para in paras:
                document.add_paragraph(para)
            document.save(path)
        else:
            path.write_bytes(text_pdf(tuple(tuple(paras[j:j + 4]) for j in range(0, len(paras), 4))))
        paths.append(path)
    return paths


def make_embedder(kind: str):
    """The deterministic hashing embedder of the tests ("fake") or all-MiniLM-L6-v2 on ONNX Runtime ("onnx")."""
    if kind == "fake":
        from vector_db import HashingEmbedder

        return HashingEmbedder()
    from vector_db import OnnxEmbedder

    return OnnxEmbedder(MODEL_CACHE)


def open_kb(data_dir: Path, embedder, *, isolate: bool = True):
    """The knowledge base over `data_dir`, built as wiring.open_knowledge_base builds it (same layout)."""
    from wiring import Config, open_knowledge_base

    chroma = Config.from_env(data_dir=data_dir).chroma  # a CHROMA_HOST given to this process (server mode)
    return open_knowledge_base(data_dir, embedder=embedder, environ=chroma, isolate=isolate)


def audit(kb, batch: list[Path]) -> dict:
    """check() plus, per indexed file, whether its stored chunks are exactly those it parses into."""
    from document_processor import parse_file

    report = kb.check()
    stored = set(kb.store.chunk_ids())
    docs = kb.documents()
    by_name = {d.file_name: d for d in docs}
    half = []
    for path in batch:
        record = by_name.get(path.name)
        if record is None:
            continue
        expected = {c.id for c in parse_file(path, isolate=False).chunks}
        if record.chunks != len(expected) or not expected <= stored:
            half.append(path.name)
    report.update(indexed=sorted(by_name), half_indexed=half, unreachable=unreachable_vectors(kb),
                  duplicate_names=len(docs) - len(by_name), ids_unique=len(stored) == report["chunks_in_store"])
    return report


def unreachable_vectors(kb) -> dict[str, int]:
    """Per document, how many of its stored chunks a vector search over that document does not return (a
    damaged HNSW index loses chunks that the library and BM25 still list); {} when all are reachable."""
    chunks_col = kb.store._cols()[0]
    missing = {}
    for record in kb.documents():
        try:
            found = chunks_col.query(query_embeddings=[[1.0] + [0.0] * (kb.store._embedder.dim - 1)],
                                     n_results=record.chunks, where={"doc_id": record.doc_id}, include=[])
            gap = record.chunks - len(found["ids"][0])
        except Exception as error:  # Chroma's "Error finding id" is exactly the damage looked for
            log_line = f"{type(error).__name__}: {error}"
            gap = record.chunks
            print(json.dumps({"vector_error": record.file_name, "error": log_line[:300]}), file=sys.stderr)
        if gap:
            missing[record.file_name] = gap
    return missing


def worker(args: argparse.Namespace) -> int:
    """The child: (on --rerun: audit first) ingest the batch, audit; one JSON line per audit."""
    batch = sorted(Path(args.batch).iterdir())
    kb = open_kb(Path(args.data), make_embedder(args.embedder), isolate=not args.no_isolate)
    print(json.dumps({"ready": True}), flush=True)
    ready = time.monotonic()
    if args.rerun:
        print(json.dumps({"after_restart": audit(kb, batch), "repairs": kb.recovery_messages}), flush=True)
    for path in batch:
        result = kb.ingest_file(path)
        print(json.dumps({"file": path.name, "status": result.status, "reason": result.reason,
                          "t": round(time.monotonic() - ready, 3)}), flush=True)
    print(json.dumps({"after_rerun": audit(kb, batch)}), flush=True)
    return 0


def worker_command(data: Path, batch: Path, embedder: str, *, rerun: bool = False, isolate: bool = True) -> list[str]:
    """The argv that runs `worker` in a fresh Python."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "worker", str(data), str(batch), "--embedder", embedder]
    return cmd + (["--rerun"] if rerun else []) + ([] if isolate else ["--no-isolate"])


def _wait_for_line(log: Path, prefix: str, proc: subprocess.Popen, timeout: float) -> bool:
    """Poll `log` until a line starts with `prefix` (True) or the process ends or time runs out (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(line.startswith(prefix) for line in log.read_text(errors="replace").splitlines()):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def run_and_kill(cmd: list[str], delay: float, log: Path) -> tuple[bool, int]:
    """Start `cmd` in its own process group; once it has opened the knowledge base, SIGKILL the group after
    `delay` s. Returns (killed while still running, files finished before the kill)."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_line(log, '{"ready"', proc, timeout=120)
        proc.wait(timeout=delay)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the parser children die with it, as in a power cut
        killed = True
    proc.wait(timeout=30)
    done = sum(1 for line in log.read_text(errors="replace").splitlines() if line.startswith('{"file"'))
    return killed, done


def rerun(cmd: list[str], timeout: float) -> dict:
    """Run the re-run worker to the end; its two audits (after restart, after re-run)."""
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"re-run worker failed ({out.returncode}): {out.stderr[-1500:]}")
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    merged = {}
    for line in lines:
        merged.update({k: v for k, v in line.items() if k in ("after_restart", "after_rerun", "repairs")})
    return merged


def round_ok(result: dict, batch: list[Path]) -> tuple[bool, bool]:
    """(consistent after restart, completed on re-run)."""
    def sound(a: dict) -> bool:
        return (a["consistent"] and not a["half_indexed"] and a["ids_unique"] and a["duplicate_names"] == 0
                and not a.get("unreachable"))

    restart, final = result["after_restart"], result["after_rerun"]
    return sound(restart), sound(final) and final["indexed"] == sorted(p.name for p in batch)


def one_round(root: Path, batch_dir: Path, embedder: str, delay: float, isolate: bool) -> dict:
    """Kill one ingestion after `delay` s, then restart and re-run; the round's outcome."""
    data = root / "data"
    root.mkdir(parents=True, exist_ok=True)
    killed, done = run_and_kill(worker_command(data, batch_dir, embedder, isolate=isolate), delay, root / "kill.log")
    result = rerun(worker_command(data, batch_dir, embedder, rerun=True, isolate=isolate), timeout=600)
    batch = sorted(batch_dir.iterdir())
    consistent, completed = round_ok(result, batch)
    return {"delay": round(delay, 2), "killed": killed, "files_done_before_kill": done, "consistent": consistent,
            "completed": completed, "repairs": result.get("repairs", []),
            "docs_after_restart": len(result["after_restart"]["indexed"])}


def main(argv: list[str] | None = None) -> int:
    """The worker, run in a fresh Python by worker_command."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker")
    w.add_argument("data")
    w.add_argument("batch")
    w.add_argument("--embedder", choices=("fake", "onnx"), default="fake")
    w.add_argument("--rerun", action="store_true")
    w.add_argument("--no-isolate", action="store_true")
    return worker(parser.parse_args(argv))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))  # run by path: the product packages live beside testing/
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    sys.exit(main())
