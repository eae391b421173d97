"""A question set over documents in ../shared/data: link them into one docs folder, index them, evaluate.

eval/heldout.py and eval/sealed.py are each a list of documents and a dataset; this is what runs them. Without
../shared the runner says so and exits 0 (nothing to measure on a user's clone).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def document_paths(documents: Mapping[str, str], shared: Path) -> list[Path]:
    """The set's documents under `shared` (the ../shared/data folder), in a stable order."""
    return [shared / folder / name for name, folder in documents.items()]


def link_documents(documents: Mapping[str, str], shared: Path, folder: Path) -> Path:
    """Symlink every document of the set into `folder` (one flat docs folder for `eval --docs`); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in document_paths(documents, shared):
        link = folder / path.name
        if not link.exists():
            link.symlink_to(path)
    return folder


def arguments(description: str, argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--shared", type=Path, default=SHARED, help="the ../shared/data folder")
    parser.add_argument("--data-dir", type=Path, help="index folder (default: a temp folder, deleted after)")
    parser.add_argument("--strategy", action="append", dest="strategies", help="hybrid, vector, bm25 (repeatable)")
    parser.add_argument("--gemini", action="store_true", help="answer with Gemini (GOOGLE_API_KEY) not offline")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    return parser.parse_args(argv)


def run(name: str, dataset: Path, documents: Mapping[str, str], description: str,
        argv: list[str] | None = None) -> int:
    """Link the documents, index them, run the set, print the report; the exit code of eval_command."""
    sys.path.insert(0, str(REPO))
    from evaluation import eval_command

    args = arguments(description, argv)
    missing = [p for p in document_paths(documents, args.shared) if not p.is_file()]
    if missing:
        print(f"{name} documents not found under {args.shared} ({len(missing)} missing, e.g. {missing[0]});"
              " nothing to measure", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as scratch:
        docs = link_documents(documents, args.shared, Path(scratch) / "docs")
        return eval_command(dataset, args.data_dir or Path(scratch) / "index", docs=docs,
                            offline=not args.gemini, strategies=tuple(args.strategies or ("hybrid",)),
                            as_json=args.json)
