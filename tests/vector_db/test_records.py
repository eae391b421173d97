"""vector_db.records: chunk and document metadata round trips."""

from __future__ import annotations

from document_processor import Chunk, Location
from vector_db import DocumentRecord
from vector_db.records import chunk_from_stored, chunk_to_metadata, record_from_metadata, record_to_metadata


def test_chunk_metadata_round_trip_is_exact():
    locations = [Location(page=3), Location(slide=2), Location(sheet="Revenue", cells="A1:F40"),
                 Location(sheet="Only"), Location(paragraph=12), Location(lines=(10, 24)), Location()]
    for loc in locations:
        chunk = Chunk("cid", "doc", "f.xlsx", "xlsx", "text ünï 東京", loc, ("A > B", "x\x1fy", ""), 7, "")
        assert chunk_from_stored("cid", chunk.text, chunk_to_metadata(chunk)) == chunk


def test_record_round_trip():
    record = DocumentRecord("d", "f.pdf", "pdf", 10, "", "pages", 3, 9, 1.5, "indexing")
    assert record_from_metadata(record_to_metadata(record)) == record
