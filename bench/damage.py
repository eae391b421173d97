"""Damaged and lost stores: what `docs`, `search` and a reopen do after each kind of damage, and whether
`cli.py rebuild` gets the library back (issue 16, items 2, 7, 8, 9).

    .venv/bin/python bench/damage.py                    # every case, this checkout
    .venv/bin/python bench/damage.py --repo /tmp/old    # the same cases against another checkout (before figures)

One base library (4 generated .txt files, ~1,150 chunks, so the HNSW index is written to disk; the tests'
deterministic hashing embedder) is built once; each case copies it, damages one file and runs, each in a fresh
process: `cli.py docs`, `cli.py search`, an audit (documents listed, kept originals left, `check()`, chunks
unreachable by vector search), then `cli.py rebuild` when the error asked for it, and the audit again. The last
line printed is one JSON object with every case.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = Path(os.environ.get("DAMAGE_REPO") or HERE.parent)
sys.path[:0] = [str(REPO), str(REPO / "tests"), str(HERE)]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def _words(i: int, p: int) -> str:
    return " ".join(f"w{(i * 7 + p * 3 + k) % 97}" for k in range(60))


def build(data: Path, files: int = 4, paragraphs: int = 300) -> None:
    """A library of `files` generated text files of `paragraphs` paragraphs (~290 chunks each)."""
    kb = open_kb(data)
    for i in range(files):
        body = "\n\n".join(f"topic{i} paragraph {p} {_words(i, p)}" for p in range(paragraphs))
        result = kb.ingest_bytes(body.encode(), f"file{i}.txt")
        if result.status != "indexed":
            raise RuntimeError(f"building the base library: {result}")


def open_kb(data: Path, **options):
    from conftest import FakeEmbedder

    from wiring import open_knowledge_base

    return open_knowledge_base(data, embedder=FakeEmbedder(), environ=os.environ, isolate=False, **options)


def audit(data: Path) -> dict:
    """What a fresh process finds: documents, kept originals, consistency, chunks vector search cannot reach."""
    originals = data / "originals"
    try:
        kb = open_kb(data)
    except Exception as error:  # the outcome measured: reported as data, not raised
        return {"opened": False, "error": f"{type(error).__name__}: {error}"[:400], "originals": _count(originals)}
    import crash  # only now: it puts this checkout first on sys.path, and --repo may name another one

    unreachable = crash.unreachable_vectors(kb)
    return {"opened": True, "docs": len(kb.documents()), "originals": _count(originals),
            "consistent": kb.check()["consistent"], "unreachable": sum(unreachable.values()),
            "messages": kb.recovery_messages}


def _count(folder: Path) -> int:
    return sum(1 for p in folder.iterdir() if p.is_file()) if folder.is_dir() else 0


def run_cli(data: Path, *argv: str) -> int:
    """cli.main with the hashing embedder (the library was built with it)."""
    from conftest import FakeEmbedder

    import cli
    import wiring

    wiring.default_embedder = lambda data_dir, **_: FakeEmbedder()  # no seam for the CLI's embedder
    return cli.main(["--data-dir", str(data), *argv])


def child(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "DAMAGE_REPO": str(REPO)}
    return subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv], capture_output=True, text=True,
                          timeout=timeout, env=env)


def cli_outcome(data: Path, *argv: str) -> dict:
    """Exit code, whether a traceback was printed, and the last line of stderr of one CLI command."""
    run = child("cli", str(data), *argv)
    lines = run.stderr.strip().splitlines()
    return {"exit": run.returncode, "traceback": "Traceback" in run.stderr, "stderr": lines[-1][:600] if lines else "",
            "stdout_lines": len(run.stdout.strip().splitlines())}


def child_audit(data: Path) -> dict:
    run = child("audit", str(data))
    if run.returncode != 0:
        return {"opened": False, "error": "audit crashed: " + run.stderr.strip()[-300:]}
    return json.loads(run.stdout.strip().splitlines()[-1])


# ---- the damage ------------------------------------------------------------------------------------------------

def _hnsw_dir(data: Path) -> Path:
    """The chunk collection's HNSW segment: the one with the largest level-0 file."""
    return max((data / "chroma").glob("*/data_level0.bin"), key=lambda p: p.stat().st_size).parent


def _postings(data: Path) -> Path:
    return data / "bm25" / (data / "bm25" / "CURRENT").read_text().strip() / "postings.npz"


def _flip(path: Path, at: int) -> None:
    raw = bytearray(path.read_bytes())
    raw[at % len(raw)] ^= 0xFF
    path.write_bytes(bytes(raw))


CASES = {
    "sqlite deleted": lambda d: (d / "chroma" / "chroma.sqlite3").unlink(),
    "sqlite emptied": lambda d: (d / "chroma" / "chroma.sqlite3").write_bytes(b""),
    "sqlite truncated": lambda d: os.truncate(d / "chroma" / "chroma.sqlite3", 200_000),
    "sqlite header garbled": lambda d: _garble_header(d / "chroma" / "chroma.sqlite3"),
    "hnsw dir deleted": lambda d: shutil.rmtree(_hnsw_dir(d)),
    "hnsw level0 truncated": lambda d: os.truncate(_hnsw_dir(d) / "data_level0.bin",
                                                   (_hnsw_dir(d) / "data_level0.bin").stat().st_size // 5),
    "bm25 postings truncated": lambda d: os.truncate(_postings(d), _postings(d).stat().st_size // 2),
    "bm25 postings byte flipped": lambda d: _flip(_postings(d), _postings(d).stat().st_size // 2),
}


def _garble_header(path: Path) -> None:
    with open(path, "r+b") as f:
        f.write(b"garbage-garbage-garbage")


def one_case(base: Path, root: Path, name: str) -> dict:
    data = root / name.replace(" ", "-")
    shutil.copytree(base, data)
    CASES[name](data)
    out = {"case": name, "docs": cli_outcome(data, "docs"), "search": cli_outcome(data, "search", "topic1 w5"),
           "audit": child_audit(data)}
    if "cli.py rebuild" in out["docs"]["stderr"] + out["search"]["stderr"]:
        out["rebuild"] = cli_outcome(data, "rebuild")
        out["after_rebuild"] = child_audit(data)
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
    parser.add_argument("step", nargs="?", choices=("build", "audit", "cli"))
    parser.add_argument("data", nargs="?")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    parser.add_argument("--repo", help="run the cases against this checkout (e.g. a worktree of an older commit)")
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="only this case (repeatable)")
    args = parser.parse_args(argv)
    if args.step == "build":
        build(Path(args.data), paragraphs=int(args.rest[0]) if args.rest else 300)
        return 0
    if args.step == "audit":
        print(json.dumps(audit(Path(args.data))))
        return 0
    if args.step == "cli":
        return run_cli(Path(args.data), *args.rest)
    if args.repo:
        os.environ["DAMAGE_REPO"] = str(Path(args.repo).resolve())
        global REPO
        REPO = Path(args.repo).resolve()
    results = []
    with tempfile.TemporaryDirectory(prefix="damage-") as tmp:
        base = Path(tmp) / "base"
        made = child("build", str(base))
        if made.returncode != 0:
            raise RuntimeError(f"building the base library failed: {made.stderr[-1500:]}")
        for name in args.case or list(CASES):
            results.append(one_case(base, Path(tmp), name))
            print(summary(results[-1]), flush=True)
    print(json.dumps({"bench": "damage", "repo": str(REPO), "cases": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
