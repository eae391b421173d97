"""One file, in this process: checks, the reader for its type, chunking, the ParsedDocument."""

from __future__ import annotations

import hashlib
import time
from pathlib import PurePosixPath

from document_processor.blocks import Progress, Reading, one_line
from document_processor.chunking import TokenCounter, chunk_blocks, least_pieces
from document_processor.limits import Limits
from document_processor.readers.docx import read_docx
from document_processor.readers.image import read_image
from document_processor.readers.pdf import read_pdf
from document_processor.readers.pptx import read_pptx
from document_processor.readers.sheets import read_csv, read_xlsx
from document_processor.readers.text import read_markdown, read_txt
from document_processor.sniff import check_content, check_size, file_type_for
from document_processor.tables import data_tables, searchable_part
from document_processor.types import Chunk, DocumentError, ParsedDocument, chunk_id

MAX_TRIMS = 4  # passes that cut long tables further until their passages fit the limit

READERS = {
    "pdf": read_pdf, "docx": read_docx, "pptx": read_pptx, "xlsx": read_xlsx,
    "csv": read_csv, "txt": read_txt, "md": read_markdown, "image": read_image,
}


def parse_in_process(data: bytes, name: str, limits: Limits, progress: Progress | None = None,
                     counter: TokenCounter | None = None) -> ParsedDocument:
    """Check, read and chunk `data` here, with no time or memory limit (see isolation for those).

    `name` must already be sanitised. Raises DocumentError for any file that cannot be read.
    """
    started = time.monotonic()
    file_type = file_type_for(name)
    check_size(name, len(data), limits)
    check_content(name, file_type, data, limits)
    if progress is not None:
        progress("reading", 0, 1)
    reading = read_blocks(file_type, data, name, progress)
    title = reading.title or PurePosixPath(name).stem
    tables = data_tables(reading.blocks)  # every row, before long tables are cut to what can be searched as text
    share = 1.0
    for _ in range(MAX_TRIMS):  # a table's rows chunk into more passages than their characters suggest
        searched = searchable_part(reading, limits, share)
        # Known without tokenizing: a 50 MB line is refused for its size in seconds, not after minutes of chunking.
        _refuse_if_too_many(name, least_pieces(searched.blocks, limits.chunk_chars), limits, at_least=True)
        pieces = chunk_blocks(searched.blocks, title, chunk_chars=limits.chunk_chars,
                              overlap_chars=limits.overlap_chars, counter=counter, progress=progress)
        if len(pieces) <= limits.max_chunks or searched is reading:
            break
        share *= 0.9 * limits.max_chunks / len(pieces)
    reading = searched
    _refuse_if_too_many(name, len(pieces), limits)
    doc_id = hashlib.sha256(data).hexdigest()
    chunks = tuple(
        Chunk(id=chunk_id(doc_id, p.location, i, p.text), doc_id=doc_id, file_name=name, file_type=file_type,
              text=p.text, location=p.location, heading_path=p.heading_path, ordinal=i, context=p.context)
        for i, p in enumerate(pieces)
    )
    return ParsedDocument(doc_id=doc_id, file_name=name, file_type=file_type, size_bytes=len(data), title=title,
                          unit_name=reading.unit_name, units=reading.units, chunks=chunks,
                          seconds=round(time.monotonic() - started, 3), warnings=reading.warnings,
                          tables=tables)


def _refuse_if_too_many(name: str, pieces: int, limits: Limits, *, at_least: bool = False) -> None:
    if pieces > limits.max_chunks:
        raise DocumentError(name, "too_large", f"the file gives {'at least ' if at_least else ''}{pieces:,} passages, "
                            f"over the {limits.max_chunks:,} limit (indexing would take about "
                            f"{pieces / 50 / 60:.0f} minutes); split it into smaller files")


def read_blocks(file_type: str, data: bytes, name: str, progress: Progress | None = None) -> Reading:
    """Run the reader for `file_type`; a library's unexpected exception becomes DocumentError('corrupt')."""
    try:
        return READERS[file_type](data, name, progress)
    except DocumentError:
        raise
    except MemoryError:
        raise
    except RecursionError:
        raise DocumentError(name, "corrupt", "the file's structure is nested too deeply to read") from None
    except Exception as exc:  # every library fails in its own way on damaged files; the reason keeps its words
        raise DocumentError(name, "corrupt", f"damaged or unreadable file ({one_line(f'{type(exc).__name__}: {exc}', 160)})") from exc
