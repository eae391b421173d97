"""Hostile and broken input: the whole public test corpus ingested in one batch, every file accounted for.

    .venv/bin/python bench/hostile.py --smoke   # 9 generated files, sound and broken, real embedder (a smoke run)
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
slowest files, peak memory, and one JSON object as the last line. --smoke reads nothing from ../shared: a few
files written into a temporary folder (a text PDF, the same cut in half, empty, garbage behind a PDF header, a
text file, binary bytes named .txt, a DOCX and an XLSX that are no zip archives, an unknown extension), and its
ONNX model is exported into the temp directory's bench cache rather than the repository's test-artifacts/.
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import rss_mb  # noqa: E402  (bench/ is on sys.path when run as a script)

from evaluation import text_pdf  # noqa: E402
from testing.crash import make_embedder, open_kb  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SMOKE_MODELS = Path(tempfile.gettempdir()) / "docagent-bench-models"  # as bench/ingest.py's --cache default


def corpus(quick: bool) -> list[Path]:
    """Every regular file of the corpus (quick: pdf_hard/ and office/), sorted."""
    roots = [DATA / "pdf_hard", DATA / "office"] if quick else [DATA]
    return sorted(p for root in roots for p in root.rglob("*") if p.is_file())


def smoke_corpus(folder: Path) -> list[Path]:
    """A few generated files, sound and broken, written into `folder` (the smoke run's corpus)."""
    rng = random.Random(3)
    pages = tuple((f"Section {n}: the hostile corpus smoke run.",
                   " ".join(rng.choice(("ledger", "harbour", "quartz", "meadow", "copper")) for _ in range(12)))
                  for n in range(1, 3))
    pdf = text_pdf(pages)
    files = {"report.pdf": pdf, "truncated.pdf": pdf[:len(pdf) // 2], "empty.pdf": b"",
             "garbage.pdf": b"%PDF-1.4\n" + rng.randbytes(4096), "notes.txt": "\n\n".join(pages[0]).encode(),
             "binary.txt": rng.randbytes(2048), "broken.docx": b"PK\x03\x04" + rng.randbytes(1024),
             "broken.xlsx": rng.randbytes(1024), "unknown.xyz": b"a file of a kind the app does not read"}
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return sorted(folder / name for name in files)


def make(kind: str, smoke: bool):
    """The embedder; a smoke run's ONNX model lives in the temp directory's cache (built there when missing)."""
    if smoke and kind == "onnx":
        from vector_db import OnnxEmbedder

        return OnnxEmbedder(SMOKE_MODELS)
    return make_embedder(kind)


def ingest_all(kb, files: list[Path], root: Path) -> list[dict]:
    """ingest_many one file at a time (same code path), with memory read after each; names relative to `root`."""
    rows = []
    for path in files:
        result = kb.ingest_many([path])[0]
        rows.append({"file": str(path.relative_to(root)), "status": result.status, "kind": result.kind,
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
    parser.add_argument("--quick", action="store_true", help="pdf_hard/ and office/ only")
    parser.add_argument("--smoke", action="store_true", help="a smoke run: 9 generated files, nothing from ../shared")
    parser.add_argument("--embedder", choices=("fake", "onnx"), default="onnx")
    args = parser.parse_args(argv)
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    if size != "smoke" and not DATA.is_dir():
        print(f"{DATA} is absent: nothing to ingest", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.ERROR)  # pypdf's per-page warnings are noise here; outcomes are printed
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        root = Path(tmp) / "corpus" if args.smoke else DATA
        files = smoke_corpus(root) if args.smoke else corpus(args.quick)
        kb = open_kb(Path(tmp) / "data", make(args.embedder, args.smoke))
        rows = ingest_all(kb, files, root)
        fig = verdict(rows, kb.limits.timeout_s)
        alive = kb.ingest_bytes(b"The hostile corpus run finished and the library still answers.", "alive.txt")
        hits = kb.retriever.retrieve("library still answers", k=3)
        fig.update(bench="hostile", size=size, embedder=args.embedder, wall_s=round(time.monotonic() - started, 1),
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
