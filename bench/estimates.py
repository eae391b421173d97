"""How right "about N s left" is while a file is indexed: every progress report of a real ingestion is fed to the
queue's FileEstimate, and each estimate given after the first 10% of the file is compared with the time that was
really left. Side by side in one run: the estimate as it was (the embedding stage timed from its first report,
which came only after the first batch was embedded) and as it is (the stage reported at 0 and timed from its
start).

    .venv/bin/python bench/estimates.py            # 3 real PDFs from ../shared/data, all-MiniLM-L6-v2 on ONNX Runtime
    .venv/bin/python bench/estimates.py --batch    # 4 FinanceBench 10-Ks (600-1,760 passages, 18-55 s each)
    .venv/bin/python bench/estimates.py --smoke    # one generated text file, the hashing embedder (a smoke run)

Printed per file and, last, as one JSON line: estimates given after 10%, the share within 30% of the truth, the
median and the worst error, for the old and the new estimate.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import DATA, REPO  # noqa: E402  (bench/ is on sys.path when run as a script)

MODEL_CACHE = REPO / "test-artifacts" / "model-cache"
FILES = (DATA / "papers" / "attention_is_all_you_need.pdf", DATA / "papers" / "bert_1810.04805.pdf",
         DATA / "bench" / "financebench_subset" / "pdfs" / "AMCOR_2023Q4_EARNINGS.pdf")
BATCH = tuple(DATA / "bench" / "financebench_dev" / "pdfs" / f"{name}.pdf"
              for name in ("AMD_2015_10K", "NIKE_2023_10K", "3M_2022_10K", "PEPSICO_2022_10K"))
AFTER = 0.10  # estimates are judged once this share of the file is done
WITHIN = 0.30


def judged(reports: list[tuple[float, str, int, int]], end: float, old: bool) -> list[float]:
    """Relative errors |estimate - truth| / truth of the estimates given after AFTER of the file."""
    from advanced_retrieval.ingest.estimates import FileEstimate

    clock = [reports[0][0] if reports else 0.0]
    est = FileEstimate(clock=lambda: clock[0])
    est.started = est.stage_started = est.last = clock[0]
    errors = []
    for t, stage, done, total in reports:
        if old and stage == "embedding" and done == 0:
            continue  # the writer did not report the stage's start before this change
        clock[0] = t
        if old and stage != est.stage:  # the old estimate started a stage at its first report, whatever it said
            est.stage, est.stage_started = stage, t
        fraction = est.update(stage, done, total)
        left = est.seconds_left()
        truth = end - t
        if fraction >= AFTER and left is not None and truth > 1.0:
            errors.append(abs(left - truth) / truth)
    return errors


def summary(errors: list[float]) -> dict:
    if not errors:
        return {"estimates": 0}
    return {"estimates": len(errors), "within_30pct": round(sum(e <= WITHIN for e in errors) / len(errors), 3),
            "median_error": round(statistics.median(errors), 3), "worst_error": round(max(errors), 3)}


def run(files, embedder, root: Path) -> list[dict]:
    import wiring

    kb = wiring.open_knowledge_base(root, embedder=embedder, environ={})  # embedded Chroma, whatever the shell says
    rows = []
    for path in files:
        reports: list[tuple[float, str, int, int]] = []
        start = time.monotonic()
        result = kb.ingest_file(path, progress=lambda _name, s, d, t, r=reports: r.append((time.monotonic(), s, d, t)))
        end = time.monotonic()
        stages: dict[str, list[float]] = {}
        previous = start
        for t, stage, _done, _total in reports:  # seconds per stage, each counted from the report before it
            stages.setdefault(stage, [0.0])[0] += t - previous
            previous = t
        rows.append({"file": path.name, "state": result.status, "chunks": result.chunks,
                     "seconds": round(end - start, 2), "reports": len(reports),
                     "stage_seconds": {k: round(v[0], 2) for k, v in stages.items()},
                     "after_last_report": round(end - previous, 2),
                     "old": summary(judged(reports, end, old=True)), "new": summary(judged(reports, end, old=False))})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="one generated text file, the hashing embedder")
    parser.add_argument("--batch", action="store_true", help="four 10-K filings instead of the three PDFs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-estimates-") as tmp:
        root = Path(tmp)
        if args.smoke:
            from vector_db import HashingEmbedder

            path = root / "notes.txt"
            path.write_text("\n\n".join(f"Section {i} lists field observations, dates and places of the survey "
                                        f"number {i} in some detail." for i in range(300)))
            files, embedder = (path,), HashingEmbedder()
        else:
            chosen = BATCH if args.batch else FILES
            missing = [str(p) for p in chosen if not p.is_file()]
            if missing:
                sys.exit(f"missing documents (../shared/data is needed): {', '.join(missing)}")
            from vector_db import OnnxEmbedder

            files, embedder = chosen, OnnxEmbedder(MODEL_CACHE)
        rows = run(files, embedder, root / "data")
    print(f"{'file':40} {'chunks':>6} {'secs':>6}  old: within30 median worst   new: within30 median worst")
    for r in rows:
        o, n = r["old"], r["new"]
        print(f"{r['file'][:40]:40} {r['chunks']:>6} {r['seconds']:>6}  "
              f"{o.get('within_30pct', '-'):>8} {o.get('median_error', '-'):>6} {o.get('worst_error', '-'):>5}   "
              f"{n.get('within_30pct', '-'):>8} {n.get('median_error', '-'):>6} {n.get('worst_error', '-'):>5}")
    pooled = {}
    for which in ("old", "new"):
        n = sum(r[which].get("estimates", 0) for r in rows)
        within = sum(r[which].get("within_30pct", 0) * r[which].get("estimates", 0) for r in rows)
        pooled[which] = {"estimates": n, "within_30pct": round(within / n, 3) if n else None}
    print(f"all files: old within 30% {pooled['old']['within_30pct']} of {pooled['old']['estimates']}, "
          f"new {pooled['new']['within_30pct']} of {pooled['new']['estimates']}")
    print(json.dumps({"bench": "estimates", "size": "smoke" if args.smoke else ("batch" if args.batch else "full"),
                      "files": rows, "pooled": pooled}))


if __name__ == "__main__":
    main()
