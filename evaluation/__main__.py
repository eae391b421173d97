"""python -m evaluation DATASET.jsonl [--data-dir DIR] [--docs FOLDER] [--offline|--gemini] [--strategy S]...
[--json] [--min-hit5 X] [--min-mrr X] [--min-accuracy X] [--retrieval-only]: the same as `cli.py eval`."""

from __future__ import annotations

import argparse
from pathlib import Path

import wiring
from evaluation.command import eval_command


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run eval_command; its exit code."""
    parser = argparse.ArgumentParser(prog="python -m evaluation", description="Evaluate retrieval and answers.")
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--data-dir", type=Path, default=None, help="default: $DOCAGENT_DATA_DIR, else ./data")
    parser.add_argument("--docs", type=Path, help="index this folder first (duplicates are skipped)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", default=True, help="offline extractive answers (default)")
    mode.add_argument("--gemini", action="store_false", dest="offline", help="answer with Gemini (GOOGLE_API_KEY)")
    parser.add_argument("--strategy", action="append", dest="strategies", help="hybrid|vector|bm25|auto, repeatable")
    parser.add_argument("--k", type=int, default=10, help="retrieval depth for hit@k (default 10)")
    parser.add_argument("--json", action="store_true", help="the full report as JSON")
    parser.add_argument("--retrieval-only", action="store_true", help="measure retrieval, do not answer")
    for name in ("min-hit5", "min-mrr", "min-accuracy"):
        parser.add_argument(f"--{name}", type=float)
    args = parser.parse_args(argv)
    config = wiring.Config.from_env(data_dir=args.data_dir)
    return eval_command(args.dataset, config.data_dir, docs=args.docs, offline=args.offline,
                        strategies=tuple(args.strategies or ("hybrid",)), as_json=args.json,
                        min_hit5=args.min_hit5, min_mrr=args.min_mrr, min_accuracy=args.min_accuracy, k=args.k,
                        answers=not args.retrieval_only, config=config)


if __name__ == "__main__":
    raise SystemExit(main())
