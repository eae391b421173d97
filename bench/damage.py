"""Damaged and lost stores: what `docs`, `search` and a reopen do after each kind of damage, and whether
`cli.py rebuild` gets the library back (issue 16, items 2, 7, 8, 9).

    .venv/bin/python bench/damage.py --smoke            # one case (lost sqlite, so the rebuild runs too), a small base
    .venv/bin/python bench/damage.py                    # every case, this checkout
    .venv/bin/python bench/damage.py --repo /tmp/old    # the same cases against another checkout (before figures)

The cases and the fresh-process steps are testing/damage.py's (tests/advanced_retrieval/library/test_restore.py runs them too). The
last line printed is one JSON object with every case.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from testing.damage import CASES, child, child_audit, cli_outcome  # noqa: E402

SMOKE_CASE = "sqlite deleted"  # its error asks for `cli.py rebuild`: every step of one_case runs
SMOKE_PARAGRAPHS = 20  # per base file (the full base: 300, so the HNSW index is on disk; not needed for the smoke case)


def one_case(base: Path, root: Path, name: str, repo: Path) -> dict:
    data = root / name.replace(" ", "-")
    shutil.copytree(base, data)
    CASES[name](data)
    out = {"case": name, "docs": cli_outcome(data, "docs", repo=repo),
           "search": cli_outcome(data, "search", "topic1 w5", repo=repo), "audit": child_audit(data, repo)}
    if "cli.py rebuild" in out["docs"]["stderr"] + out["search"]["stderr"]:
        out["rebuild"] = cli_outcome(data, "rebuild", repo=repo)
        out["after_rebuild"] = child_audit(data, repo)
    return out


def summary(case: dict) -> str:
    a, docs = case["audit"], case["docs"]
    shown = "traceback" if docs["traceback"] else (docs["stderr"][:90] or f"{docs['stdout_lines']} lines")
    seen = (f"{a['docs']} docs, {a['originals']} originals, consistent={a['consistent']}, "
            f"unreachable={a['unreachable']}" if a.get("opened") else f"open fails, {a.get('originals')} originals")
    after = case.get("after_rebuild")
    rebuilt = (f" | rebuild: {after.get('docs')} docs, consistent={after.get('consistent')}, "
               f"unreachable={after.get('unreachable')}" if after else "")
    return f"{case['case']:<28} docs: {shown} | {seen}{rebuilt}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="run the cases against this checkout (e.g. a worktree of an older commit)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only this case (repeatable)")
    parser.add_argument("--smoke", action="store_true",
                        help=f"only '{SMOKE_CASE}' (a rebuild too) on a base of {SMOKE_PARAGRAPHS} paragraphs per file")
    args = parser.parse_args(argv)
    repo = args.repo.resolve()
    names = args.case or ([SMOKE_CASE] if args.smoke else list(CASES))
    paragraphs = [str(SMOKE_PARAGRAPHS)] if args.smoke else []
    results = []
    with tempfile.TemporaryDirectory(prefix="damage-") as tmp:
        base = Path(tmp) / "base"
        made = child("build", str(base), *paragraphs, repo=repo)
        if made.returncode != 0:
            raise RuntimeError(f"building the base library failed: {made.stderr[-1500:]}")
        for name in names:
            results.append(one_case(base, Path(tmp), name, repo))
            print(summary(results[-1]), flush=True)
    print(json.dumps({"bench": "damage", "size": "smoke" if args.smoke else "full", "repo": str(repo),
                      "cases": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
