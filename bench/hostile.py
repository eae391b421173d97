"""Hostile and broken input: the whole public test corpus ingested in one batch, every file accounted for.

    .venv/bin/python bench/hostile.py --quick   # pdf_hard/ and office/ only (~100 files), real embedder
    .venv/bin/python bench/hostile.py           # every file under ../shared/data (papers, office, pdf_hard,
                                                # FinanceBench PDFs, manifests), real embedder

Through KnowledgeBase.ingest_many with isolated parsing (default Limits: 60 s and 2 GB per file), as the app
ingests. For each file: status, kind, reason, seconds, and this process's resident memory after it
(each parsing child is capped separately by Limits.max_memory_mb). A file
passes when it is indexed, or refused with a non-empty reason and a kind other than "error" (an unexpected
exception); the run passes when every file does, no file took longer than its bound (the timeout plus 15 s, plus 0.1 s per chunk it indexed:
embedding time grows with the text), and the
knowledge base still indexes and answers a search afterwards. Printed: the tally by outcome and kind, the
slowest files, peak memory, and one JSON object as the last line.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from testing.crash import make_embedder, open_kb  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def rss_mb() -> float:
    """This process's resident memory now, in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def corpus(quick: bool) -> list[Path]:
    """Every regular file of the corpus (quick: pdf_hard/ and office/), sorted."""
    roots = [DATA / "pdf_hard", DATA / "office"] if quick else [DATA]
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file())


def ingest_all(kb, files: list[Path]) -> list[dict]:
    """ingest_many one file at a time (same code path), with memory read after each."""
    rows = []
    for path in files:
        result = kb.ingest_many([path])[0]
        rows.append({"file": str(path.relative_to(DATA)), "status": result.status, "kind": result.kind,
                     "reason": result.reason, "chunks": result.chunks, "seconds": round(result.seconds, 2),
                     "rss_mb": rss_mb()})
        print(f"{result.status:<9} {result.kind or '-':<11} {result.chunks:5} ch {result.seconds:6.1f} s  "
              f"{rows[-1]['rss_mb']:7.0f} MB  "
              f"{rows[-1]['file']}  {result.reason[:90]}", flush=True)
    return rows


def time_bound(row: dict, timeout: float) -> float:
    """Seconds a file may take: the parse timeout plus 15 s, plus 0.1 s per chunk indexed (embedding grows with
    the text, so a long, legitimate document is not a hang: 10 chunks/s is well under the slowest measured)."""
    return timeout + 15 + 0.1 * row["chunks"]


def verdict(rows: list[dict], timeout: float) -> dict:
    """The tally and whether every file is accounted for, in bounded time."""
    accounted = [r for r in rows if r["status"] in ("indexed", "duplicate", "replaced")
                 or (r["status"] == "failed" and r["reason"] and r["kind"] != "error")]
    by_outcome = collections.Counter(r["status"] if r["status"] != "failed" else f"refused:{r['kind']}" for r in rows)
    slowest = sorted(rows, key=lambda r: -r["seconds"])[:5]
    return {"files": len(rows), "accounted_for": len(accounted), "by_outcome": dict(sorted(by_outcome.items())),
            "max_seconds": max((r["seconds"] for r in rows), default=0.0),
            "max_refusal_seconds": max((r["seconds"] for r in rows if r["status"] == "failed"), default=0.0),
            "over_time_bound": [r["file"] for r in rows if r["seconds"] > time_bound(r, timeout)],
            "slowest": [(r["file"], r["seconds"], r["chunks"]) for r in slowest],
            "peak_rss_mb": max((r["rss_mb"] for r in rows), default=0.0)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--embedder", choices=("fake", "onnx"), default="onnx")
    args = parser.parse_args(argv)
    if not DATA.is_dir():
        print(f"{DATA} is absent: nothing to ingest", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.ERROR)  # pypdf's per-page warnings are noise here; outcomes are printed
    files = corpus(args.quick)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        kb = open_kb(Path(tmp) / "data", make_embedder(args.embedder))
        rows = ingest_all(kb, files)
        fig = verdict(rows, kb.limits.timeout_s)
        alive = kb.ingest_bytes(b"The hostile corpus run finished and the library still answers.", "alive.txt")
        hits = kb.retriever.retrieve("library still answers", k=3)
        fig.update(bench="hostile", embedder=args.embedder, wall_s=round(time.monotonic() - started, 1),
                   alive=alive.status == "indexed" and bool(hits) and hits[0].chunk.file_name == "alive.txt",
                   consistent=kb.check()["consistent"], documents=len(kb.documents()))
    print("\nby outcome: " + ", ".join(f"{k} {v}" for k, v in fig["by_outcome"].items()))
    print(f"accounted for {fig['accounted_for']}/{fig['files']}, slowest {fig['max_seconds']} s, slowest refusal "
          f"{fig['max_refusal_seconds']} s, peak memory {fig['peak_rss_mb']} MB (this process), alive {fig['alive']}, "
          f"consistent {fig['consistent']}")
    print(json.dumps(fig))
    ok = fig["accounted_for"] == fig["files"] and not fig["over_time_bound"] and fig["alive"] and fig["consistent"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
