"""Damaged and lost stores, the steps shared by bench/damage.py (the figures, also against an older checkout)
and tests/advanced_retrieval/library/test_restore.py (the checks). Every step runs in a fresh process, as a user's next start would:

    python testing/damage.py [--repo CHECKOUT] build|audit|cli DATA [ARGS...]

One base library (4 generated .txt files, ~1,150 chunks, so the HNSW index is written to disk; the tests'
deterministic hashing embedder) is built once; each case copies it, damages one file and runs, each in a fresh
process: `cli.py docs`, `cli.py search`, an audit (documents listed, kept originals left, `check()`, chunks
unreachable by vector search), then `cli.py rebuild` when the error asked for it, and the audit again.
`--repo` runs the product code of another checkout (its own packages come first on sys.path).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


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


def fake_embedder():
    """The hashing embedder; an older checkout (--repo) has it as its tests' FakeEmbedder."""
    try:
        from vector_db import HashingEmbedder
    except ImportError:
        from conftest import FakeEmbedder as HashingEmbedder  # the old checkout's tests/ is on sys.path

    return HashingEmbedder()


def open_kb(data: Path, **options):
    from wiring import open_knowledge_base

    return open_knowledge_base(data, embedder=fake_embedder(), environ={}, isolate=False, **options)


def audit(data: Path) -> dict:
    """What a fresh process finds: documents, kept originals, consistency, chunks vector search cannot reach."""
    originals = data / "originals"
    try:
        kb = open_kb(data)
    except Exception as error:  # the outcome measured: reported as data, not raised
        return {"opened": False, "error": f"{type(error).__name__}: {error}"[:400], "originals": _count(originals)}
    from testing.crash import unreachable_vectors

    unreachable = unreachable_vectors(kb)
    return {"opened": True, "docs": len(kb.documents()), "originals": _count(originals),
            "consistent": kb.check()["consistent"], "unreachable": sum(unreachable.values()),
            "messages": kb.recovery_messages}


def _count(folder: Path) -> int:
    return sum(1 for p in folder.iterdir() if p.is_file()) if folder.is_dir() else 0


def run_cli(data: Path, *argv: str) -> int:
    """cli.main with the hashing embedder (the library was built with it: the child has DOCAGENT_FAKE_EMBEDDER=1)."""
    import cli
    import wiring

    if hasattr(wiring, "default_embedder"):  # an older checkout (--repo), from before DOCAGENT_FAKE_EMBEDDER
        wiring.default_embedder = lambda data_dir, **_: fake_embedder()
    return cli.main(["--data-dir", str(data), *argv])


def child(*argv: str, repo: Path = REPO, timeout: float = 300) -> subprocess.CompletedProcess:
    """One step in a fresh Python, with `repo`'s product code."""
    env = {**os.environ, "DOCAGENT_FAKE_EMBEDDER": "1", "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    env.pop("CHROMA_HOST", None)
    return subprocess.run([sys.executable, str(Path(__file__).resolve()), "--repo", str(repo), *argv],
                          capture_output=True, text=True, timeout=timeout, env=env)


def cli_outcome(data: Path, *argv: str, repo: Path = REPO) -> dict:
    """Exit code, whether a traceback was printed, and the last line of stderr of one CLI command."""
    run = child("cli", str(data), *argv, repo=repo)
    lines = run.stderr.strip().splitlines()
    return {"exit": run.returncode, "traceback": "Traceback" in run.stderr, "stderr": lines[-1][:600] if lines else "",
            "stdout_lines": len(run.stdout.strip().splitlines())}


def child_audit(data: Path, repo: Path = REPO) -> dict:
    run = child("audit", str(data), repo=repo)
    if run.returncode != 0:
        return {"opened": False, "error": "audit crashed: " + run.stderr.strip()[-300:]}
    return json.loads(run.stdout.strip().splitlines()[-1])


# ---- the damage ------------------------------------------------------------------------------------------------

def _hnsw_dir(data: Path) -> Path:
    """The chunk collection's HNSW segment: the one with the largest level-0 file."""
    return max((data / "chroma").glob("*/data_level0.bin"), key=lambda p: p.stat().st_size).parent


def _postings(data: Path) -> Path:
    """The token ids of the largest segment the live keyword index names."""
    root = data / "bm25"
    manifest = json.loads((root / (root / "CURRENT").read_text().strip()).read_text())
    largest = max(manifest["segments"], key=lambda s: s["rows"])["name"]
    return root / "segments" / largest / "tok.npy"


def _flip(path: Path, at: int) -> None:
    raw = bytearray(path.read_bytes())
    raw[at % len(raw)] ^= 0xFF
    path.write_bytes(bytes(raw))


def _cut_links(folder: Path) -> None:
    """Zero every element's level-0 link count: ids and vectors still read back, but a search walks from the
    entry point to nowhere (Chroma's hnswlib header.bin: a 4-byte version, then offsetLevel0, max_elements,
    cur_element_count and size_data_per_element as 8-byte integers; each element's level-0 record starts with
    its 2-byte link count)."""
    per = int.from_bytes((folder / "header.bin").read_bytes()[28:36], "little")
    level0 = bytearray((folder / "data_level0.bin").read_bytes())
    for at in range(0, len(level0), per):
        level0[at:at + 2] = b"\0\0"
    (folder / "data_level0.bin").write_bytes(bytes(level0))


CASES = {
    "sqlite deleted": lambda d: (d / "chroma" / "chroma.sqlite3").unlink(),
    "sqlite emptied": lambda d: (d / "chroma" / "chroma.sqlite3").write_bytes(b""),
    "sqlite truncated": lambda d: os.truncate(d / "chroma" / "chroma.sqlite3", 200_000),
    "sqlite header garbled": lambda d: _garble_header(d / "chroma" / "chroma.sqlite3"),
    "hnsw dir deleted": lambda d: shutil.rmtree(_hnsw_dir(d)),
    "hnsw level0 truncated": lambda d: os.truncate(_hnsw_dir(d) / "data_level0.bin",
                                                   (_hnsw_dir(d) / "data_level0.bin").stat().st_size // 5),
    "hnsw links cut": lambda d: _cut_links(_hnsw_dir(d)),
    "bm25 postings truncated": lambda d: os.truncate(_postings(d), _postings(d).stat().st_size // 2),
    "bm25 postings byte flipped": lambda d: _flip(_postings(d), _postings(d).stat().st_size // 2),
}


def _garble_header(path: Path) -> None:
    with open(path, "r+b") as f:
        f.write(b"garbage-garbage-garbage")


def main(argv: list[str] | None = None) -> int:
    """One step (build, audit, cli) in this fresh process; see child."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout whose product code runs")
    parser.add_argument("step", choices=("build", "audit", "cli"))
    parser.add_argument("data", type=Path)
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    # The checkout's packages first; then this one's testing/ (an older checkout has none); then the older
    # checkout's tests/ (its FakeEmbedder, for fake_embedder).
    sys.path[:0] = [str(args.repo.resolve()), str(REPO), str(args.repo.resolve() / "tests")]
    if args.step == "build":
        build(args.data, paragraphs=int(args.rest[0]) if args.rest else 300)
        return 0
    if args.step == "audit":
        print(json.dumps(audit(args.data)))
        return 0
    return run_cli(args.data, *args.rest)


if __name__ == "__main__":
    sys.exit(main())
