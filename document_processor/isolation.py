"""Parsing in a child process with a deadline and a memory cap, so no file can hang or exhaust the app.

The child comes from a "forkserver" (the app is multithreaded, so a plain fork is unsafe). The server
imports the readers and loads the tokenizer once (`document_processor.worker`), so a child costs
milliseconds. The child sends ("started",), any number of ("progress", stage, done, total), then
("ok", ParsedDocument) or ("error", DocumentError) over a pipe; the parent kills it at the deadline.

OCR stretches the deadline: each ("progress", "ocr", page, pages) gives the file another `timeout_s` from
then, so a 300-page scan can finish while any one page that hangs is still killed. The child leads its own
process group and the parent kills the group, so a Tesseract process never outlives its parse.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import logging
import multiprocessing
import multiprocessing.forkserver
import os
import resource
import signal
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path

from document_processor.blocks import Progress, one_line
from document_processor.limits import MB, Limits
from document_processor.types import DocumentError, ParsedDocument

PRELOAD = ["document_processor.worker"]
STARTUP_TIMEOUT_S = 120.0  # the first child waits for the server to import everything; never counted as parse time
log = logging.getLogger(__name__)
_lock = threading.Lock()
_extra_preload: list[str] = []


def warm_up(extra_modules: tuple[str, ...] = ()) -> None:
    """Start the fork server now (it imports the readers once) instead of on the first file.

    `extra_modules` are imported once in the server too, for children that would otherwise import them.
    """
    with _lock:
        _extra_preload.extend(m for m in extra_modules if m not in _extra_preload)
    _context()
    multiprocessing.forkserver.ensure_running()


def _context():
    ctx = multiprocessing.get_context("forkserver")
    # Only effective before the server starts; later calls keep the running server as it is.
    ctx.set_forkserver_preload(PRELOAD + _extra_preload + list(_main_script_imports()))
    return ctx


@functools.lru_cache(maxsize=1)
def _main_script_imports() -> tuple[str, ...]:
    """Modules the main script imports at its top level, when the parent already has them.

    Each forkserver child re-runs a main *script* (Python 3.11 ignores "__main__" in the preload list);
    with these preloaded the re-run costs nothing (`streamlit run` would otherwise import Streamlit again
    for every file). A main run with -m (pytest) is not re-run, and neither is an interactive session.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or getattr(main, "__spec__", None) is not None:
        return ()
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError) as exc:
        log.debug("main script %s not scanned for imports: %s", path, exc)
        return ()
    names = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return tuple(n for n in names if n in sys.modules)  # imported fine here, so it imports fine in the server


def parse_isolated(source: bytes | str, name: str, limits: Limits, progress: Progress | None = None) -> ParsedDocument:
    """Parse bytes or a file path in a child process; DocumentError('timeout') when it takes too long.

    The child is killed and reaped on every way out: result, error, timeout, or an exception raised by
    `progress` in this process.
    """
    ctx = _context()
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=child_main, args=(sender, source, name, limits), name="docagent-parse", daemon=True)
    try:
        try:
            child.start()
        finally:
            sender.close()  # the child holds its own copy; ours must go so a dead child reads as EOF
        return _collect(receiver, child, name, limits, progress, source)
    finally:
        receiver.close()
        if child.is_alive():
            child.kill()
        _kill_group(child.pid)
        if child.pid is not None:
            child.join(10)


def _kill_group(pid: int | None) -> None:
    """Kill what the child started (Tesseract); the group is gone already when the child had nothing running."""
    if pid is None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):  # no group left: nothing still runs
        os.killpg(pid, signal.SIGKILL)


def _collect(receiver, child, name: str, limits: Limits, progress: Progress | None, source=None) -> ParsedDocument:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    ocr_page = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not receiver.poll(remaining):
            took = f"OCR of page {ocr_page} took" if ocr_page else "took"
            raise DocumentError(name, "timeout", f"{took} longer than {limits.timeout_s:g} s")
        try:
            kind, *payload = receiver.recv()
        except EOFError:
            raise _death(child, name, limits, source) from None
        if kind == "started":
            deadline = time.monotonic() + limits.timeout_s
        elif kind == "progress":
            if payload[0] == "ocr":  # each OCR'd page may take a whole file's time (see the module docstring)
                ocr_page = payload[1]
                deadline = max(deadline, time.monotonic() + limits.timeout_s)
            if progress is not None:
                progress(*payload)
        elif kind == "ok":
            log.debug("%s parsed in a child, peak RSS %.0f MB", name, payload[1] / 1024)
            return payload[0]
        else:
            raise payload[0]


def _death(child, name: str, limits: Limits, source: bytes | str | None = None) -> DocumentError:
    """Why a child ended without an answer: killed for memory, crashed on a signal, or exited.

    A crash on a PDF is checked for a compression bomb (`source`: its bytes or path), the usual cause:
    pdfium aborts when a stream expands past the memory cap, and "crashed" would hide that.
    """
    child.join(5)
    code = child.exitcode
    if code == -signal.SIGKILL:
        return DocumentError(name, "too_large", f"reading it was killed, probably for running out of memory "
                                                f"(limit {limits.max_memory_mb} MB)")
    if code is not None and code < 0:
        bomb = _pdf_bomb(source, name, limits)
        if bomb is not None:
            return bomb
        return DocumentError(name, "corrupt", f"reading it crashed the parser ({signal.Signals(-code).name})")
    return DocumentError(name, "corrupt", f"the parser stopped without an answer (exit code {code})")


def _pdf_bomb(source: bytes | str | None, name: str, limits: Limits) -> DocumentError | None:
    """DocumentError('zip_bomb') when `source` is a PDF with a stream expanding past the memory cap."""
    from document_processor.sniff import flate_bomb, suffix_of

    if source is None or suffix_of(name) != ".pdf":
        return None
    try:
        data = source if isinstance(source, bytes) else Path(source).read_bytes()[: limits.max_bytes]
    except OSError as exc:
        log.warning("%s crashed the parser and could not be re-read to say why: %s", name, exc)
        return None
    found = flate_bomb(data, limits.max_memory_mb * MB)
    if found is None:
        return None
    return DocumentError(name, "zip_bomb", f"compression bomb: {found}, the memory limit for one file "
                                           "(the PDF reader ran out of memory on it)")


def child_main(sender, source: bytes | str, name: str, limits: Limits) -> None:
    """Runs in the child: cap memory, parse, send the outcome. Never raises.

    The child leads a new process group first, so the parent's kill reaches any Tesseract it starts.
    """
    from document_processor.parsing import parse_in_process  # preloaded by the server: costs nothing here

    # pypdf logs every font quirk as a warning; in a worker nobody reads them, and real failures still raise.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="openpyxl")  # "extension not supported" notes about unread features
    try:
        os.setpgid(0, 0)
        sender.send(("started",))
        cap = int(limits.max_memory_mb * MB)
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
        data = source if isinstance(source, bytes) else _read(source, name, limits)
        document = parse_in_process(data, name, limits, lambda *p: sender.send(("progress", *p)))
        outcome = ("ok", document, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    except DocumentError as exc:
        outcome = ("error", exc)
    except MemoryError:
        outcome = ("error", DocumentError(name, "too_large", f"needs more than {limits.max_memory_mb} MB of memory to read"))
    except Exception as exc:  # a bug of ours: reported as this file's failure, with the traceback on stderr
        traceback.print_exc(file=sys.stderr)
        outcome = ("error", DocumentError(name, "corrupt", f"unexpected error ({one_line(f'{type(exc).__name__}: {exc}', 160)})"))
    try:
        sender.send(outcome)
    finally:
        sender.close()


def _read(path: str, name: str, limits: Limits) -> bytes:
    from document_processor.sniff import check_size

    check_size(name, os.stat(path).st_size, limits)
    with open(path, "rb") as handle:
        return handle.read(limits.max_bytes + 1)
