"""document_processor.readers.pptx: notes, groups, tables and slide titles."""

from __future__ import annotations

from document_processor import Location, parse_file
from tests.helpers.documents import chunk_with


def test_pptx_notes_groups_tables_and_slide_titles(deck_pptx):
    doc = parse_file(deck_pptx, isolate=False)
    assert (doc.unit_name, doc.units, doc.title) == ("slides", 3, "Overview")
    note = chunk_with(doc, "PLANTED-NOTE-7")
    assert note.location == Location(slide=2) and "Notes: Speaker says PLANTED-NOTE-7" in note.text
    assert note.heading_path == ("Revenue drivers",)
    assert chunk_with(doc, "PLANTED-GROUP-9").location == Location(slide=2)
    table = chunk_with(doc, "PLANTED-PPTX-TABLE")
    assert table.location == Location(slide=3) and "| Region | Sales |" in table.text
    assert chunk_with(doc, "Agenda and goals").location == Location(slide=1)
