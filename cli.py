"""docagent on the command line.

    python cli.py [--data-dir DIR] parse FILE_OR_DIR... [--json] [--timeout S]

Each command is one function `cmd_NAME(args) -> exit code` plus one row in COMMANDS. Only the standard
library is imported here; a command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

DATA_DIR_ENV = "DOCAGENT_DATA_DIR"
DEFAULT_DATA_DIR = "data"


def cmd_parse(args: argparse.Namespace) -> int:
    """Parse files (directories are walked) and report each one; exit 1 when any file failed."""
    import logging

    from document_processor import Limits

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # font quirks are noise here; failures are reported below
    limits = Limits(timeout_s=args.timeout)
    results = []
    for path in walk_paths(args.paths):
        result = parse_one(path, limits)
        results.append(result)
        if not args.json:
            print(format_result(result), flush=True)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    return 0 if all(r["status"] == "ok" for r in results) else 1


def walk_paths(paths: list[str]) -> Iterator[Path]:
    """Explicit paths as given; directories recursively in sorted order, every regular non-hidden file."""
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if not name.startswith(".") and (Path(root) / name).is_file():
                    yield Path(root) / name


def parse_one(path: Path, limits) -> dict:
    """One file's outcome as a JSON-ready dict; a bad file is a 'failed' entry, never an exception."""
    from document_processor import DocumentError, parse_file

    started = time.monotonic()
    entry = {"file": str(path), "status": "failed", "reason": "", "kind": "", "unit_name": "", "units": 0,
             "chunk_count": 0, "chunks": [], "seconds": 0.0}
    try:
        doc = parse_file(path, limits=limits)
    except DocumentError as exc:
        entry.update(reason=exc.reason, kind=exc.kind)
    except OSError as exc:
        entry.update(reason=exc.strerror or str(exc), kind="unreadable")
    else:
        entry.update(
            status="ok", title=doc.title, doc_id=doc.doc_id, unit_name=doc.unit_name, units=doc.units,
            chunk_count=len(doc.chunks), warnings=list(doc.warnings),
            chunks=[{"id": c.id, "text": c.text, "location": c.location.to_dict(), "label": c.location.label(),
                     "heading_path": list(c.heading_path)} for c in doc.chunks],
        )
    entry["seconds"] = round(time.monotonic() - started, 2)
    return entry


def format_result(entry: dict) -> str:
    """'ok      paper.pdf  15 pages  66 chunks  1.2 s' or 'failed  x.docx  reason  0.0 s'."""
    if entry["status"] == "ok":
        warnings = f"  ({len(entry['warnings'])} warnings)" if entry.get("warnings") else ""
        detail = f"{entry['units']} {entry['unit_name']}  {entry['chunk_count']} chunks{warnings}"
    else:
        detail = entry["reason"]
    return f"{entry['status']:<7} {entry['file']}  {detail}  {entry['seconds']:.1f} s"


def _parse_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="files or directories to parse")
    parser.add_argument("--json", action="store_true", help="print a JSON list with every chunk")
    parser.add_argument("--timeout", type=_positive_float, default=60.0, metavar="S",
                        help="seconds allowed per file (default 60)")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


# name -> (function, adds its arguments, one-line help). A new command is one function and one row here.
COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], int], Callable[[argparse.ArgumentParser], None], str]] = {
    "parse": (cmd_parse, _parse_arguments, "parse files and show their chunks (nothing is stored)"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with the global options and one subcommand per COMMANDS row."""
    parser = argparse.ArgumentParser(prog="cli.py", description="docagent: ask your documents.")
    parser.add_argument("--data-dir", metavar="DIR", default=None,
                        help=f"where the index lives (default: ${DATA_DIR_ENV} or ./{DEFAULT_DATA_DIR})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (function, add_arguments, help_text) in COMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        add_arguments(sub)
        sub.set_defaults(func=function)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the process exit code."""
    args = build_parser().parse_args(argv)
    args.data_dir = Path(args.data_dir or os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
