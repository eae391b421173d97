"""Reading PDF, DOCX, PPTX, XLSX/CSV and text files into citable chunks.

Heavy libraries (pypdf, python-docx, python-pptx, openpyxl, the tokenizer) load on the first parse, not on
import, so modules that only need the shared types stay light.
"""

from document_processor.api import parse_bytes, parse_file
from document_processor.blocks import format_value
from document_processor.limits import Limits
from document_processor.sniff import SUPPORTED_SUFFIXES, is_supported, sanitize_name
from document_processor.types import Chunk, DataTable, DocumentError, Location, ParsedDocument, chunk_id


def warm_up(extra_modules: tuple[str, ...] = ()) -> None:
    """Start the parsing fork server ahead of the first file (see isolation.warm_up)."""
    from document_processor.isolation import warm_up as _warm_up

    _warm_up(extra_modules)


__all__ = [
    "format_value",
    "SUPPORTED_SUFFIXES", "Chunk", "DataTable", "DocumentError", "Limits", "Location", "ParsedDocument", "chunk_id",
    "is_supported", "parse_bytes", "parse_file", "sanitize_name", "warm_up",
]
