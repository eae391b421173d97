"""The public entry points: parse a file or an upload's bytes into a ParsedDocument.

Policy: a file that cannot be read raises DocumentError(file_name, kind, reason) with a one-line reason and
nothing else happens, so a batch can report it and go on. Bad Limits raise ValueError when constructed.
"""

from __future__ import annotations

import os
from pathlib import Path

from document_processor.blocks import Progress
from document_processor.limits import Limits
from document_processor.sniff import check_size, file_type_for, sanitize_name
from document_processor.types import ParsedDocument

DEFAULT_LIMITS = Limits()


def parse_bytes(data: bytes, name: str, *, limits: Limits = DEFAULT_LIMITS, isolate: bool = True,
                progress: Progress | None = None) -> ParsedDocument:
    """Parse an upload (bytes + its file name) into chunks.

    Args:
        data: the file's bytes.
        name: the file name shown to people; sanitised (basename, no control characters, <= 200 chars).
        limits: size, time, memory and chunking bounds.
        isolate: parse in a child process with the time and memory limits (False: in this process, unbounded).
        progress: optional callback(stage, done, total), stage "reading" or "chunking".

    Raises:
        DocumentError: the file cannot be read; `kind` says why (see DocumentError.KINDS).
    """
    name = sanitize_name(name)
    data = bytes(data)
    file_type_for(name)
    check_size(name, len(data), limits)
    if not isolate:
        from document_processor.parsing import parse_in_process

        return parse_in_process(data, name, limits, progress)
    from document_processor.isolation import parse_isolated

    return parse_isolated(data, name, limits, progress)


def parse_file(path: str | os.PathLike, *, name: str | None = None, limits: Limits = DEFAULT_LIMITS,
               isolate: bool = True, progress: Progress | None = None) -> ParsedDocument:
    """Parse a file on disk; `name` overrides the displayed file name (default: the path's basename).

    Raises:
        DocumentError: the file cannot be read (see parse_bytes).
        OSError: the path does not exist or is not a readable file.
    """
    path = Path(path)
    name = sanitize_name(name if name is not None else path.name)
    file_type_for(name)
    size = path.stat().st_size  # FileNotFoundError for a missing path
    if not path.is_file():
        raise OSError(f"{path} is not a regular file")
    check_size(name, size, limits)
    if not isolate:
        from document_processor.parsing import parse_in_process

        return parse_in_process(path.read_bytes(), name, limits, progress)
    from document_processor.isolation import parse_isolated

    return parse_isolated(str(path), name, limits, progress)
