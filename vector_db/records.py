"""What the store keeps per document, and the flat Chroma metadata a Chunk or DocumentRecord becomes."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

from document_processor import Chunk, Location, ParsedDocument

READY = "ready"
INDEXING = "indexing"

# Chroma metadata holds only scalars, so a Location becomes one key per set field.
_LOCATION_KEYS = ("page", "slide", "sheet", "cells", "paragraph")


@dataclass(frozen=True)
class DocumentRecord:
    """One indexed file as the library lists it. `status` is "indexing" while being written, "ready" once complete."""

    doc_id: str
    file_name: str
    file_type: str
    size_bytes: int
    title: str
    unit_name: str
    units: int
    chunks: int
    added_at: float  # epoch seconds
    status: str = READY


def record_for(parsed: ParsedDocument, added_at: float, status: str = INDEXING) -> DocumentRecord:
    """The library record of `parsed`, written before its chunks."""
    return DocumentRecord(
        doc_id=parsed.doc_id, file_name=parsed.file_name, file_type=parsed.file_type,
        size_bytes=int(parsed.size_bytes), title=parsed.title, unit_name=parsed.unit_name,
        units=int(parsed.units), chunks=len(parsed.chunks), added_at=float(added_at), status=status,
    )


def record_to_metadata(record: DocumentRecord) -> dict:
    """Flat metadata for the library collection; `kind` tells records from the bookkeeping entries."""
    return {"kind": "document", **asdict(record)}


def record_from_metadata(meta: dict) -> DocumentRecord:
    """The DocumentRecord stored by record_to_metadata (Chroma drops empty values, so defaults fill them)."""
    defaults = {"title": "", "unit_name": "", "file_type": "", "status": READY}
    values = {f.name: meta.get(f.name, defaults.get(f.name)) for f in fields(DocumentRecord)}
    for name in ("size_bytes", "units", "chunks"):
        values[name] = int(values[name] or 0)
    values["added_at"] = float(values["added_at"] or 0.0)
    return DocumentRecord(**values)


def chunk_to_metadata(chunk: Chunk) -> dict:
    """Flat, scalar-only Chroma metadata from which chunk_from_stored rebuilds `chunk` exactly.

    heading_path is stored as a JSON list so that a heading containing any separator survives the trip.
    """
    meta = {
        "doc_id": chunk.doc_id, "file_name": chunk.file_name, "file_type": chunk.file_type,
        "ordinal": int(chunk.ordinal), "context": chunk.context, "heading_path": json.dumps(list(chunk.heading_path)),
    }
    loc = chunk.location
    for key in _LOCATION_KEYS:
        value = getattr(loc, key)
        if value is not None:
            meta[f"loc_{key}"] = value
    if loc.lines is not None:
        meta["loc_line_first"], meta["loc_line_last"] = int(loc.lines[0]), int(loc.lines[1])
    return meta


def chunk_from_stored(chunk_id: str, text: str | None, meta: dict) -> Chunk:
    """The Chunk that chunk_to_metadata flattened, from Chroma's id, document and metadata."""
    lines = None
    if "loc_line_first" in meta:
        lines = (int(meta["loc_line_first"]), int(meta["loc_line_last"]))
    location = Location(**{key: meta.get(f"loc_{key}") for key in _LOCATION_KEYS}, lines=lines)
    return Chunk(
        id=chunk_id, doc_id=meta["doc_id"], file_name=meta["file_name"], file_type=meta.get("file_type", ""),
        text=text or "", location=location, heading_path=tuple(json.loads(meta.get("heading_path") or "[]")),
        ordinal=int(meta.get("ordinal", 0)), context=meta.get("context", ""),
    )
