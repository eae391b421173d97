"""docagent on the command line.

    python cli.py [--data-dir DIR] parse FILE_OR_DIR... [--json] [--timeout S]

Each command is one function `cmd_NAME(args) -> exit code` plus one row in COMMANDS. Only the standard
library and wiring (the composition root, itself light) are imported here; a command imports what it needs when
it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import wiring
from agentic_rag.language.text import inert_links
from wiring import DATA_DIR_ENV, DEFAULT_DATA_DIR

STRATEGY_CHOICES = ("auto", "hybrid", "vector", "bm25")  # advanced_retrieval.STRATEGIES, without importing it


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


class Refused(Exception):
    """A failure explained to the person (printed as "error: ...", exit 1), not a bug."""


def _open_kb(args: argparse.Namespace, embedder=None):
    """The knowledge base at --data-dir (or the CHROMA_* server); a bad CHROMA_* setting is Refused."""
    try:
        return wiring.open_library(args.config, embedder=embedder)
    except ValueError as error:
        raise Refused(f"bad configuration: {error}") from error


def cmd_ingest(args: argparse.Namespace) -> int:
    """Index files (directories are walked); one line per file; exit 1 when any failed."""
    kb = _open_kb(args)
    results = []
    for path in walk_paths(args.paths):
        result = kb.ingest_file(path)
        results.append(result)
        if not args.json:
            detail = (f"{result.chunks} chunks, {result.units} {result.unit_name}" if result.status in
                      ("indexed", "replaced") else result.reason)
            print(f"{result.status:<9} {result.file_name}  {detail}  {result.seconds:.1f} s", flush=True)
    if args.json:
        print(json.dumps([asdict(r) for r in results], ensure_ascii=False, indent=2))
    return 1 if any(r.status == "failed" for r in results) else 0


def _doc_filters(kb, names: list[str] | None):
    """Filters for --doc NAME_OR_ID options (None when none given); raises LookupError for an unknown one."""
    from advanced_retrieval import Filters

    if not names:
        return None
    ids = []
    for name in names:
        record = kb.find(name)
        if record is None:
            raise LookupError(f"no indexed document matches {name!r} (see `cli.py docs`)")
        ids.append(record.doc_id)
    return Filters(doc_ids=tuple(ids))


def cmd_search(args: argparse.Namespace) -> int:
    """Retrieve the best chunks for a query and print rank, file, location, scores and text."""
    kb = _open_kb(args)
    try:
        filters = _doc_filters(kb, args.doc)
    except LookupError as e:
        print(e, file=sys.stderr)
        return 2
    hits = kb.retriever.retrieve(args.query, k=args.k, strategy=args.strategy, filters=filters)
    rows = [{"rank": h.rank, "file": h.chunk.file_name, "doc_id": h.chunk.doc_id,
             "location": h.chunk.location.to_dict(), "label": h.chunk.location.label(), "score": h.score,
             "vector_score": h.vector_score, "bm25_score": h.bm25_score, "strategy": h.strategy,
             "text": h.chunk.text} for h in hits]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("no results")
    for r in rows:
        scores = " ".join(f"{k}={r[k]:.3f}" for k in ("score", "vector_score", "bm25_score") if r[k] is not None)
        text = " ".join(r["text"].split())
        print(f"{r['rank']:>2}. {r['file']}  {r['label']}  [{r['strategy']}] {scores}\n    {text[:300]}")
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    """List the indexed documents."""
    docs = _open_kb(args).documents()
    if args.json:
        print(json.dumps([asdict(d) for d in docs], ensure_ascii=False, indent=2))
        return 0
    if not docs:
        print("no documents indexed")
    for d in docs:
        print(f"{d.doc_id[:12]}  {d.file_type:<5} {d.units:>4} {d.unit_name:<10} {d.chunks:>5} chunks  {d.file_name}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    """Remove one document (by file name, doc_id or a unique doc_id prefix) from both indexes."""
    record = _open_kb(args).delete(args.name)
    if record is None:
        print(f"no indexed document matches {args.name!r}", file=sys.stderr)
        return 1
    print(f"deleted {record.file_name} ({record.chunks} chunks)")
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    """Remove every document; needs --yes."""
    if not args.yes:
        print("clear removes every document from the index; run again with --yes", file=sys.stderr)
        return 2
    _open_kb(args).clear()
    print("cleared")
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    """Index the kept originals again after the store lost its data or could not be read (the message of that
    error names this command); one line per file; exit 1 when any failed. A whole library does nothing."""
    def show(name: str, stage: str, done: int, total: int) -> None:
        if stage == "reading" and done == 0:
            print(f"reading   {name}", flush=True)

    try:
        kb = wiring.open_library(args.config, rebuild=True, rebuild_progress=None if args.json else show)
    except ValueError as error:
        raise Refused(f"bad configuration: {error}") from error
    if args.json:
        print(json.dumps([asdict(r) for r in kb.rebuilt], ensure_ascii=False, indent=2))
    for r in [] if args.json else kb.rebuilt:
        detail = f"{r.chunks} chunks" if r.status in ("indexed", "replaced") else r.reason
        print(f"{r.status:<9} {r.file_name}  {detail}", flush=True)
    tables = kb.fill_missing_tables()  # documents indexed before tables were kept, or a lost tables file
    if not args.json:
        for line in tables:
            print(f"tables    {line}", flush=True)
        print(f"rebuilt {sum(r.status != 'failed' for r in kb.rebuilt)} of {len(kb.rebuilt)} kept original(s); "
              f"the library holds {len(kb.documents())} document(s)")
    return 1 if any(r.status == "failed" for r in kb.rebuilt) else 0


def cmd_ask(args: argparse.Namespace) -> int:
    """Answer a question from the indexed documents, with citations, verification and the engine's trace."""
    embedder = wiring.make_embedder(args.config)
    kb = _open_kb(args, embedder)
    try:
        filters = _doc_filters(kb, args.doc)
    except LookupError as e:
        print(e, file=sys.stderr)
        return 2
    try:  # the provider, model and key come from the environment (wiring), --offline overrides them
        agent = wiring.make_agent(kb, embedder, args.config, model=args.model,
                                  provider="offline" if args.offline else None)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    streamed: list[str] = []

    def stream(text: str) -> None:
        streamed.append(text)
        print(text, end="", flush=True)

    result = agent.ask(args.question, filters=filters, strategy=args.strategy, k=args.k, verify=not args.no_verify,
                       on_token=None if args.json else stream)
    data = result.to_dict()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    shown = inert_links(data["answer"])  # an image or link a document talked the model into: text and address
    if not streamed:
        print(shown)
    elif "".join(streamed).strip() != shown.strip():
        # verification flagged claims, Gemini failed mid-stream and the offline answer replaced it, or a link
        print("\n\n--- the answer after checking ---\n" + shown)
    else:
        print()
    for c in data["citations"]:
        print(f"[{c['n']}] {c['file']}  {_label(c['location'])}")
    print(f"mode: {data['mode']}  confidence: {data['confidence']:.0%}  llm calls: {data['usage']['llm_calls']}  "
          f"{data['seconds']:.1f} s")
    for warning in data["warnings"]:
        print(f"warning: {warning}")
    return 0


def cmd_outline(args: argparse.Namespace) -> int:
    """A document's outline: its sections with their levels, spans and passages; exit 1 for an unknown name."""
    kb = _open_kb(args)
    record = kb.find(args.name)
    if record is None:  # reading is harmless: a unique part of a file name will do
        like = [d for d in kb.documents() if args.name.casefold() in d.file_name.casefold()]
        record = like[0] if len(like) == 1 else None
    if record is None:
        print(f"no document named {args.name!r} (cli.py docs lists them)", file=sys.stderr)
        return 1
    outline = kb.outline(record.doc_id)
    if args.json:
        print(json.dumps({"file": record.file_name, **outline.to_dict()}, ensure_ascii=False, indent=2))
        return 0
    kind = {"headings": "its headings", "detected": "headings found in its text"}.get(outline.source, "")
    print(f"{record.file_name}: " + (f"{len(outline.all())} sections, from {kind}" if not outline.flat else
                                     f"no usable headings; {len(outline.sections)} {outline.source}, in order"))
    for section in outline.all():
        where = section.start if section.start == section.end else f"{section.start}–{section.end}"
        print(f"{'  ' * (section.level - 1)}{section.title}  ({where}; passages {section.first}–{section.last})")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Run a golden-question dataset, or a bundled set by name (evaluation.sets: its documents are linked from
    ../shared/data and indexed into a temporary library unless --data-dir is given), through retrieval and the
    engine; print the figures (see evaluation/)."""
    from evaluation import SETS, SetUnavailable, eval_command
    from evaluation.sets import scratch_dir

    # As `ask` does: the provider DOCAGENT_PROVIDER names; unset, Gemini with a key, else offline.
    try:
        model = wiring.model_config(args.config, provider="offline" if args.offline else None)
    except ValueError as e:
        print(f"{e} (or run with --offline)", file=sys.stderr)
        return 2
    strategies = tuple(args.strategy or ("hybrid",))
    with scratch_dir(Path(args.dataset).stem) as scratch:
        dataset, docs, config = Path(args.dataset), args.docs, args.config
        if args.dataset in SETS and not dataset.is_file():
            try:
                prepared = SETS[args.dataset].prepare(Path(scratch), quick=args.quick)
            except SetUnavailable as e:
                print(f"{e}: nothing to measure", file=sys.stderr)
                return 0
            dataset, docs = prepared.dataset, docs or prepared.docs
            if not args.data_dir_given:  # never the user's library: a set gets a library of its own
                config = wiring.replace_data_dir(config, Path(scratch) / "library")
        embedder = wiring.make_embedder(config)
        kb = _open_kb(argparse.Namespace(config=config), embedder)
        agent = wiring.build_for(model, kb, embedder) if not args.retrieval_only else None
        return eval_command(dataset, kb, agent, docs=docs, strategies=strategies, as_json=args.json,
                            min_hit5=args.min_hit5, min_mrr=args.min_mrr, min_accuracy=args.min_accuracy, k=args.k)


def _label(location: dict) -> str:
    from document_processor import Location

    return Location.from_dict(location).label()


def _parse_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="files or directories to parse")
    parser.add_argument("--json", action="store_true", help="print a JSON list with every chunk")
    parser.add_argument("--timeout", type=_positive_float, default=60.0, metavar="S",
                        help="seconds allowed per file (default 60)")


def _ingest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="files or directories to index")
    parser.add_argument("--json", action="store_true", help="print a JSON list of results")


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query")
    parser.add_argument("--strategy", choices=STRATEGY_CHOICES, default="auto")
    parser.add_argument("-k", type=int, default=8, help="number of results (default 8)")
    parser.add_argument("--doc", action="append", metavar="NAME", help="only this document (repeatable)")
    parser.add_argument("--json", action="store_true")


def _docs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


def _delete_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME_OR_ID")


def _clear_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--yes", action="store_true", help="confirm")


def _rebuild_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a JSON list of results")


def _ask_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("question")
    parser.add_argument("--offline", action="store_true", help="never call Gemini (extractive answers)")
    parser.add_argument("--model", default=None,
                        help="Gemini model (default: $DOCAGENT_GEMINI_MODEL, else wiring.DEFAULT_GEMINI_MODEL)")
    parser.add_argument("--strategy", choices=STRATEGY_CHOICES, default="auto")
    parser.add_argument("-k", type=int, default=8, help="passages given to the answer (default 8)")
    parser.add_argument("--doc", action="append", metavar="NAME", help="only this document (repeatable)")
    parser.add_argument("--no-verify", action="store_true", help="skip the verification step")
    parser.add_argument("--json", action="store_true")


def _outline_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME_OR_ID")
    parser.add_argument("--json", action="store_true")


def _eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", metavar="DATASET.jsonl|SET",
                        help="a JSONL file, or a bundled set: papers, heldout, sealed, sample, financebench")
    parser.add_argument("--docs", metavar="FOLDER", help="index this folder first (duplicates are skipped)")
    parser.add_argument("--offline", action="store_true", help="answer offline even when GOOGLE_API_KEY is set")
    parser.add_argument("--strategy", action="append", choices=STRATEGY_CHOICES,
                        help="retrieval strategy to measure (repeatable; answers use the first; default hybrid)")
    parser.add_argument("-k", type=int, default=10, help="chunks retrieved per question (default 10)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--retrieval-only", action="store_true", help="measure retrieval, do not answer")
    parser.add_argument("--quick", action="store_true", help="financebench: only the filings of at most 27 pages")
    for name in ("min-hit5", "min-mrr", "min-accuracy"):
        parser.add_argument(f"--{name}", type=float, metavar="X", help="exit 1 when below X (for CI)")


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
    "ingest": (cmd_ingest, _ingest_arguments, "index files: indexed | duplicate | replaced | failed per file"),
    "search": (cmd_search, _search_arguments, "retrieve the best passages for a query"),
    "docs": (cmd_docs, _docs_arguments, "list the indexed documents"),
    "delete": (cmd_delete, _delete_arguments, "remove one document from both indexes"),
    "outline": (cmd_outline, _outline_arguments, "show a document's sections (its outline)"),
    "ask": (cmd_ask, _ask_arguments, "answer a question with citations (Gemini with GOOGLE_API_KEY, else offline)"),
    "eval": (cmd_eval, _eval_arguments, "measure retrieval and answer quality on a golden-question dataset"),
    "clear": (cmd_clear, _clear_arguments, "remove every document"),
    "rebuild": (cmd_rebuild, _rebuild_arguments, "index the kept originals again after the store lost its data"),
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
    args.data_dir_given = args.data_dir is not None
    args.config = wiring.Config.from_env(data_dir=args.data_dir)  # the one reading of the environment
    args.data_dir = args.config.data_dir
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`cli.py docs --json | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush does not fail again
        return 141
    except Exception as error:
        if not isinstance(error, _expected_errors()):
            raise  # a bug: the traceback is what a report needs
        print(f"error: {error}", file=sys.stderr)
        return 1


def _expected_errors() -> tuple[type[BaseException], ...]:
    """Failures with a message meant for a person: the store unreachable or read-only, a bad CHROMA_* setting,
    another writer holding the library too long, an unusable saved index. Imported late (they pull in chromadb)."""
    from advanced_retrieval import BM25IndexError, LockTimeout
    from vector_db import StoreError

    return (Refused, StoreError, LockTimeout, BM25IndexError)


if __name__ == "__main__":
    sys.exit(main())
