"""document_processor.readers.docx: tables, heading paths, title and header."""

from __future__ import annotations

import re

import docx

from document_processor import Location, parse_file
from tests.helpers.documents import MAX, chunk_with, save_docx, tokens


def test_docx_table_keeps_header_location_and_body_order(report_docx):
    doc = parse_file(report_docx, isolate=False)
    table_chunk = chunk_with(doc, "PLANTED-TABLE-42")
    assert "| Metric | Value | Unit |" in table_chunk.text
    assert "| Latency | PLANTED-TABLE-42 | ms |" in table_chunk.text
    assert table_chunk.location == Location(paragraph=6)
    before, after = chunk_with(doc, "Before the table"), chunk_with(doc, "After the table")
    assert before.ordinal < table_chunk.ordinal < after.ordinal
    assert "PLANTED-TABLE-42" not in before.text + after.text


def test_docx_heading_paths_title_and_header_once(report_docx):
    doc = parse_file(report_docx, isolate=False)
    assert doc.title == "Quarterly Report"
    assert doc.unit_name == "paragraphs" and doc.units >= 8
    assert chunk_with(doc, "introduces the architecture").heading_path == ("3 Model",)
    attention = chunk_with(doc, "After the table")
    assert attention.heading_path == ("3 Model", "3.2 Attention")
    assert attention.context.startswith("Quarterly Report > 3 Model > 3.2 Attention")
    assert attention.index_text == f"{attention.context}\n{attention.text}"
    assert sum(c.text.count("ACME Confidential Header") for c in doc.chunks) == 1


def test_docx_long_table_repeats_header_and_never_cuts_a_row(tmp_path):
    document = docx.Document()
    document.add_paragraph("Inventory follows.")
    rows = 150
    table = document.add_table(rows=1, cols=3)
    for cell, value in zip(table.rows[0].cells, ("SKU", "Description", "Stock"), strict=True):
        cell.text = value
    for r in range(1, rows + 1):
        values = (f"SKU-{r:04d}", f"widget model {r} with a fairly long description", str(r * 7))
        for cell, value in zip(table.add_row().cells, values, strict=True):
            cell.text = value
    doc = parse_file(save_docx(document, tmp_path / "inventory.docx"), isolate=False)
    table_chunks = [c for c in doc.chunks if "SKU-" in c.text]
    assert len(table_chunks) > 3
    seen = []
    for chunk in table_chunks:
        lines = chunk.text.split("\n")
        assert lines[0] == "| SKU | Description | Stock |" and lines[1].startswith("| ---")
        assert all(re.fullmatch(r"\| SKU-\d{4} \| widget model \d+ with a fairly long description \| \d+ \|", x)
                   for x in lines[2:])
        seen += [x.split(" | ")[0][2:] for x in lines[2:]]
        assert chunk.location == Location(paragraph=2)
        assert tokens(chunk.index_text) <= MAX
    assert seen == [f"SKU-{r:04d}" for r in range(1, rows + 1)]  # every row once, in order
