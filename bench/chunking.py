"""Chunking time against block size: linear means doubling the input doubles the time (ratio ~2, not ~4).

    .venv/bin/python bench/chunking.py --smoke   # 16 KB and 32 KB in-process, plus a 64 KB log and 64 KB of words
                                                 # through the isolated parser (seconds)
    .venv/bin/python bench/chunking.py --quick   # 128 KB .. 1 MB in-process, plus the 5 MB log and 1 MB of words
                                                 # through the isolated parser as the app runs it (~1 min)
    .venv/bin/python bench/chunking.py           # 256 KB .. 8 MB in-process, plus the 50 MB single lines

Three shapes, each one block with no blank line, the case issue 16 found quadratic: unpunctuated words
(no sentence end, no line break), log lines (no blank line) and one line without spaces (base64). For each
size: CPU seconds of `parse_in_process` (read + chunk; CPU, not wall, because the machine is shared),
chunks made, seconds per MB and the ratio to the size before. A shape stops growing after a size over
60 s. Then whole files through `parse_file` with the default Limits (isolated child, 60 s, 2 GB), as the
app parses an upload: outcome, reason, wall seconds. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from document_processor import DocumentError, Limits, parse_file  # noqa: E402
from document_processor.chunking import TokenCounter  # noqa: E402
from document_processor.parsing import parse_in_process  # noqa: E402

KB = 1024
MB = 1024 * KB
WORDS = ("harbour", "crane", "ledger", "tariff", "vessel", "manifest", "berth", "pilot", "tug", "quay")
GIVE_UP_S = 60.0


def make(shape: str, size: int) -> bytes:
    """`size` bytes of one shape, generated (deterministic)."""
    rng = random.Random(size)
    if shape == "words":
        text = " ".join(rng.choice(WORDS) for _ in range(size // 6 + 1))
    elif shape == "log":
        text = "\n".join(f"2024-05-01T12:{i % 60:02d}:07 INFO worker-{i % 7} request {i} served in "
                         f"{rng.randrange(999)} ms path=/api/items/{i}" for i in range(size // 60 + 1))
    else:
        text = "QmFzZTY0IGRhdGEgd2l0aG91dCBhbnkgc3BhY2U" * (size // 39 + 1)
    return text[:size].encode()


def scaling(shape: str, sizes: list[int], counter: TokenCounter) -> list[dict]:
    """CPU seconds to read and chunk each size in this process; stops after the first size over GIVE_UP_S."""
    rows, before = [], None
    unbounded = Limits(max_chunks=10**9, max_bytes=10**10)
    for size in sizes:
        data = make(shape, size)
        started = time.process_time()
        doc = parse_in_process(data, f"{shape}.txt", unbounded, counter=counter)
        cpu = time.process_time() - started
        row = {"shape": shape, "bytes": size, "cpu_s": round(cpu, 3), "chunks": len(doc.chunks),
               "s_per_mb": round(cpu / (size / MB), 3),
               "ratio": round(cpu / before, 2) if before else None}
        rows.append(row)
        print(f"{shape:<6} {size / KB:>8,.0f} KB  {cpu:8.2f} s CPU  {row['s_per_mb']:6.2f} s/MB  "
              f"{len(doc.chunks):>7,} chunks  x{row['ratio'] or '-'} for x2 input", flush=True)
        before = cpu
        if cpu > GIVE_UP_S:
            print(f"{shape:<6} stopped: over {GIVE_UP_S:.0f} s", flush=True)
            break
    return rows


def as_the_app_does(files: list[tuple[str, str, int]]) -> list[dict]:
    """Whole files through parse_file with the default Limits (isolated child): outcome, reason, wall seconds."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape, size in files:
            path = Path(tmp) / name
            path.write_bytes(make(shape, size))
            started = time.perf_counter()
            try:
                doc = parse_file(path)
                outcome, reason = "ok", f"{len(doc.chunks):,} chunks"
            except DocumentError as error:
                outcome, reason = error.kind, error.reason
            wall = time.perf_counter() - started
            rows.append({"file": name, "bytes": size, "outcome": outcome, "reason": reason, "wall_s": round(wall, 1)})
            print(f"{name:<24} {size / MB:6.1f} MB  {outcome:<10} {wall:6.1f} s  {reason}", flush=True)
            path.unlink()
    return rows


def plan(smoke: bool, quick: bool) -> tuple[list[int], list[tuple[str, str, int]]]:
    """(in-process sizes, files through the app's parser: name, shape, bytes) for the size asked for."""
    if smoke:
        return [16 * KB, 32 * KB], [("server_64kb.log.txt", "log", 64 * KB), ("words_64kb.txt", "words", 64 * KB)]
    files = [("server_5mb.log.txt", "log", 5 * MB), ("words_1mb.txt", "words", MB)]
    if quick:
        return [128 * KB * 2**i for i in range(4)], files
    files += [("one_line_50mb.txt", "words", 50 * MB), ("base64_line_50mb.txt", "nospace", 50 * MB)]
    return [256 * KB * 2**i for i in range(6)], files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="16 KB and 32 KB, two 64 KB files as the app (seconds)")
    parser.add_argument("--quick", action="store_true", help="128 KB..1 MB and two files as the app (~1 min)")
    args = parser.parse_args()
    sizes, files = plan(args.smoke, args.quick)
    counter = TokenCounter()
    counter.counts(["warm up the tokenizer"])
    rows = [row for shape in ("words", "log", "nospace") for row in scaling(shape, sizes, counter)]
    app = as_the_app_does(files)
    largest = {shape: [r for r in rows if r["shape"] == shape][-1] for shape in ("words", "log", "nospace")}
    worst = max((r["ratio"] for r in rows if r["ratio"]), default=None)
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    print(json.dumps({"bench": "chunking", "size": size, "quick": args.quick, "sizes": rows, "largest": largest,
                      "worst_ratio_for_x2": worst, "as_the_app": app}))


if __name__ == "__main__":
    main()
