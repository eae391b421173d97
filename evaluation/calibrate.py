"""Fit the confidence model (agentic_rag.confidence) on eval runs, and show how it holds on runs it was not fit on.

    .venv/bin/python cli.py --data-dir /tmp/papers eval papers --offline --json > /tmp/papers.json
    .venv/bin/python cli.py --data-dir /tmp/heldout eval heldout --offline --json > /tmp/heldout.json
    .venv/bin/python -m evaluation.calibrate --fit /tmp/papers.json /tmp/heldout.json [--check /tmp/sealed.json]
    .venv/bin/python -m evaluation.calibrate --by-family RUN.json ...   # fit on all families but one, check on it

Each run's questions carry the evidence the engine measured (answer.confidence_features) and whether the answer
was right (passed). Two logistic models are fitted by L2-regularised Newton steps (numpy only): one for answers
(support, fit, cosine, answered, comparison), one for refusals (best retrieval cosine). It prints the weights to paste into
agentic_rag/confidence.py, and for every run the reliability table and AUROC the fitted weights give.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from agentic_rag.confidence import ANSWER_WEIGHTS, REFUSAL_WEIGHTS, Evidence, estimate
from evaluation.dataset import family_of
from evaluation.metrics import auroc

ANSWER_FEATURES = ("support", "fit", "cosine", "answered", "comparison", "computed")
L2 = 0.3  # pulls weights towards 0: 57 questions do not carry many free parameters
BANDS = (0.0, 0.2, 0.5, 0.8, 1.0001)


def load(path: Path, *, with_family: bool = False) -> list:
    """(evidence, right) for each answered question of one `cli.py eval --json` output; with `with_family`,
    (evidence, right, family of documents)."""
    data = json.loads(path.read_text())
    out = []
    for q in data["questions"]:
        answer = q.get("answer") or {}
        features = answer.get("confidence_features")
        if features is None or q.get("passed") is None:
            continue
        # runs written before `offline` was recorded: the run's mode says it
        features = {"offline": answer.get("mode", data.get("mode")) == "offline", **features}
        row = (Evidence(**features), bool(q["passed"]))
        if with_family:
            asked = q.get("question") or {}
            row += (family_of((asked.get("doc") or [""])[0], asked.get("family", "")) or "other",)
        out.append(row)
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Logistic regression weights (bias first) by Newton's method with an L2 penalty on all but the bias."""
    x = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(x.shape[1])
    penalty = np.eye(x.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def matrices(rows: list[tuple[Evidence, bool]]) -> tuple[tuple, tuple]:
    answers = [(e, r) for e, r in rows if not e.refused]
    refusals = [(e, r) for e, r in rows if e.refused]
    xa = np.array([[getattr(e, f) for f in ANSWER_FEATURES] for e, _ in answers]).reshape(-1, len(ANSWER_FEATURES))
    xr = np.array([[e.retrieval] for e, _ in refusals]).reshape(-1, 1)
    return (xa, np.array([r for _, r in answers], float)), (xr, np.array([r for _, r in refusals], float))


def predict(rows, answer_w, refusal_w) -> list[tuple[float, bool]]:
    out = []
    for e, right in rows:
        if e.refused:
            z = refusal_w[0] + refusal_w[1] * e.retrieval + REFUSAL_WEIGHTS[2] * e.found  # found: set, not fitted
        else:
            z = answer_w[0] + sum(w * getattr(e, f) for w, f in zip(answer_w[1:], ANSWER_FEATURES, strict=True))
        out.append((float(1 / (1 + np.exp(-z))), right))
    return out


def report(name: str, scored: list[tuple[float, bool]]) -> None:
    print(f"\n{name}: {len(scored)} answers, {sum(r for _, r in scored)} right")
    for lo, hi in zip(BANDS, BANDS[1:], strict=False):
        band = [r for c, r in scored if lo <= c < hi]
        acc = f"{sum(band) / len(band):.3f}" if band else "  —  "
        print(f"  [{lo:.1f}, {min(hi, 1.0):.1f})  {len(band):3d} answers  accuracy {acc}")
    high = [r for c, r in scored if c >= 0.8]
    wrong = [c for c, r in scored if not r]
    area = auroc(scored)
    print(f"  AUROC {area if area is not None else float('nan'):.3f}; right when >= 0.8: "
          f"{(sum(high) / len(high)) if high else float('nan'):.3f} ({len(high)}); wrong below 0.5: "
          f"{(sum(c < 0.5 for c in wrong) / len(wrong)) if wrong else float('nan'):.3f} ({len(wrong)})")


def by_family(paths: list[Path]) -> None:
    """For each family of documents in the runs: the confidence as shipped (agentic_rag.confidence.estimate,
    its caps included), and as it would be with the answer weights fitted on the other families only."""
    rows = [row for p in paths for row in load(p, with_family=True)]
    for family in sorted({f for _, _, f in rows}):
        held = [(e, r) for e, r, f in rows if f == family]
        (xa, ya), _ = matrices([(e, r) for e, r, f in rows if f != family])
        weights = tuple(fit(xa, ya)) if len(set(ya)) > 1 else ANSWER_WEIGHTS
        report(f"{family}: as shipped", [(estimate(e), r) for e, r in held])
        report(f"{family}: answer weights fitted on the other families",
               [(estimate(e, answer_weights=weights), r) for e, r in held])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", nargs="+", type=Path, help="eval JSON outputs to fit on")
    parser.add_argument("--check", nargs="*", type=Path, default=[], help="eval JSON outputs only to check on")
    parser.add_argument("--by-family", nargs="+", type=Path, metavar="RUN", help="per-family reliability: shipped, "
                        "and with weights fitted on the other families")
    args = parser.parse_args(argv)
    if args.by_family:
        by_family(args.by_family)
        return 0
    if not args.fit:
        parser.error("give --fit RUN ... or --by-family RUN ...")
    runs = {p.name: load(p) for p in [*args.fit, *args.check]}
    train = [row for p in args.fit for row in runs[p.name]]
    (xa, ya), (xr, yr) = matrices(train)
    answer_w = fit(xa, ya) if len(ya) else np.zeros(1 + len(ANSWER_FEATURES))
    refusal_w = fit(xr, yr) if len(yr) else np.zeros(2)
    prefix = "OFFLINE_" if all(e.offline for p in args.fit for e, _ in runs[p.name]) else ""  # the weights they fit
    print(f"{prefix}ANSWER_WEIGHTS = (" + ", ".join(f"{w:.2f}" for w in answer_w) + ")  # bias, "
          + ", ".join(ANSWER_FEATURES))
    print(f"{prefix}REFUSAL_WEIGHTS = (" + ", ".join(f"{w:.2f}" for w in refusal_w) + f", {REFUSAL_WEIGHTS[2]})"
          "  # bias, best retrieval cosine, found (set, not fitted)")
    for name, rows in runs.items():
        report(name + (" (fitted on)" if any(p.name == name for p in args.fit) else " (not fitted on)"),
               predict(rows, answer_w, refusal_w))
    if len(args.fit) > 1:  # each fitted run predicted by weights fitted on the others
        for held in args.fit:
            rest = [row for p in args.fit if p != held for row in runs[p.name]]
            (xa, ya), (xr, yr) = matrices(rest)
            aw = fit(xa, ya) if len(ya) else answer_w
            rw = fit(xr, yr) if len(yr) > 1 and len(set(yr)) > 1 else refusal_w
            report(f"{held.name} predicted by weights fitted on the other runs", predict(runs[held.name], aw, rw))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
