"""Crash consistency: SIGKILL an ingesting process at random moments, restart, check, re-run the batch.

    .venv/bin/python bench/crash.py --smoke              # 1 kill, fake embedder, 3 small files (.txt, .docx, .pdf)
    .venv/bin/python bench/crash.py --quick              # 5 kills, fake embedder (about a minute)
    .venv/bin/python bench/crash.py                      # 20 kills, the real OnnxEmbedder (all-MiniLM-L6-v2)
    .venv/bin/python bench/crash.py --embedder fake      # 20 kills, the deterministic hashing embedder

The rounds themselves (worker, kill, restart, audit) are testing/crash.py's, which tests/advanced_retrieval/library/test_knowledge_base_reliability.py
runs too; this script draws the kill times, runs the rounds and prints the tally. The last line printed is one
JSON object with the tally.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from testing.crash import MODEL_CACHE, make_batch, one_round, worker_command  # noqa: E402

__all__ = ["MODEL_CACHE", "REPO", "main", "run"]


def calibrate(root: Path, batch_dir: Path, embedder: str, isolate: bool) -> float:
    """Seconds an uninterrupted worker spends ingesting the batch (from "ready" to its last file, as the worker
    itself timed it: the audit after the batch is not part of the window kills are drawn from)."""
    root.mkdir(parents=True, exist_ok=True)
    log = root / "calibration.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(worker_command(root / "data", batch_dir, embedder, isolate=isolate), stdout=out,
                                stderr=subprocess.STDOUT)
    proc.wait(timeout=900)
    times = [json.loads(line)["t"] for line in log.read_text(errors="replace").splitlines()
             if line.startswith('{"file"')]
    if proc.returncode != 0 or not times:
        raise RuntimeError(f"calibration worker failed ({proc.returncode}): {log.read_text(errors='replace')[-1500:]}")
    return max(times)


def run(kills: int, n_files: int, paragraphs: int, embedder: str, seed: int, isolate: bool = True,
        echo=print) -> dict:
    """`kills` rounds; the tally."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="crash-") as tmp:
        batch_dir = Path(tmp) / "batch"
        make_batch(batch_dir, n_files, paragraphs)
        full = calibrate(Path(tmp) / "calibration", batch_dir, embedder, isolate)
        echo(f"ingesting {n_files} files takes {full:.1f} s after start-up; killing at random within it")
        rounds = []
        for i in range(kills):
            outcome = one_round(Path(tmp) / f"round{i:02d}", batch_dir, embedder, rng.uniform(0.0, full), isolate)
            rounds.append(outcome)
            echo(f"round {i + 1:>2}: kill at {outcome['delay']:5.2f} s, {outcome['files_done_before_kill']:>2} files "
                 f"done, {outcome['docs_after_restart']:>2} docs after restart, consistent={outcome['consistent']}, "
                 f"completed={outcome['completed']} {'; '.join(outcome['repairs'])}")
    return {"bench": "crash", "embedder": embedder, "files": n_files, "ingest_s": round(full, 2),
            "kills": sum(r["killed"] for r in rounds), "rounds": len(rounds),
            "consistent_after_restart": sum(r["consistent"] for r in rounds),
            "completed_on_rerun": sum(r["completed"] for r in rounds),
            "repaired_on_open": sum(bool(r["repairs"]) for r in rounds)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="1 kill, fake embedder, 3 files of 4 paragraphs")
    parser.add_argument("--quick", action="store_true", help="5 kills, fake embedder, 9 files")
    parser.add_argument("--kills", type=int, default=None)
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--paragraphs", type=int, default=12)
    parser.add_argument("--embedder", choices=("fake", "onnx"), default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    kills = args.kills or (1 if args.smoke else 5 if args.quick else 20)
    embedder = args.embedder or ("fake" if args.smoke or args.quick else "onnx")
    files = 3 if args.smoke else 9 if args.quick else args.files
    paragraphs = 4 if args.smoke else args.paragraphs
    tally = run(kills, files, paragraphs, embedder, args.seed)
    tally["size"] = "smoke" if args.smoke else "quick" if args.quick else "full"
    print(f"kills {tally['kills']}/{tally['rounds']}, consistent after restart {tally['consistent_after_restart']}, "
          f"completed on re-run {tally['completed_on_rerun']}, repaired on open {tally['repaired_on_open']}")
    print(json.dumps(tally))
    ok = tally["consistent_after_restart"] == tally["completed_on_rerun"] == tally["rounds"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
