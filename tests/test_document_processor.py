"""document_processor: structure-preserving reading, chunking within the token limit, and every bad input.

Documents are built in tmp_path with the libraries we parse with; facts are planted in one place only and
the tests assert that the chunk holding a fact says exactly where it came from.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io
import os
import random
import re
import sys
import time
import types
import zipfile
from pathlib import Path

import docx
import openpyxl
import pptx
import pytest
from openpyxl.chart import BarChart, Reference
from pptx.util import Inches
from pypdf import PdfWriter

from document_processor import (
    SUPPORTED_SUFFIXES,
    DocumentError,
    Limits,
    Location,
    chunk_id,
    is_supported,
    isolation,
    model_files,
    parse_bytes,
    parse_file,
    sanitize_name,
)
from document_processor.blocks import format_number, format_value
from document_processor.isolation import _death

MAX = model_files.MAX_TOKENS


# ---------------------------------------------------------------- builders

def make_pdf(pages: list[str | bytes]) -> bytes:
    """A minimal valid PDF, one Helvetica text page per str item (lines split on \\n); bytes are a raw
    content stream (an image-only page, say)."""
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for i, text in enumerate(pages):
        page_no, content_no = 4 + 2 * i, 5 + 2 * i
        kids.append(f"{page_no} 0 R")
        if isinstance(text, bytes):
            stream = text.decode("latin-1")
        else:
            escaped = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in text.split("\n")]
            stream = "BT /F1 10 Tf 14 TL 40 760 Td " + " ".join(f"({line}) Tj T*" for line in escaped) + " ET"
        objects[page_no] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_no} 0 R >>").encode()
        objects[content_no] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream".encode("latin-1")
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[n]:010d} 00000 n \n".encode() for n in range(1, size))
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def pdf_writer(data: bytes) -> PdfWriter:
    return PdfWriter(clone_from=io.BytesIO(data))


def to_bytes(writer: PdfWriter) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def technical_text(paragraphs: int, seed: int = 0) -> str:
    """Dense technical English with symbols, numbers and identifiers: many word pieces per character."""
    rng = random.Random(seed)
    words = ("the", "attention", "softmax(QK^T/sqrt(d_k))V", "encoder", "0x7f3a9c", "σ(W_h·h_{t-1})", "layer",
             "normalisation", "ε=1e-6", "https://example.org/a/b?c=d", "gradient", "BERT-base", "F1=91.3%",
             "tokenizer", "ResNet-152", "ℓ2-regularised", "mini-batch", "β1=0.9,", "CUDA_VISIBLE_DEVICES",
             "throughput", "(Table 3)", "3.14159", "convolution", "self-attention", "O(n²·d)")
    out = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(rng.randint(3, 7)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 22)))
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
        out.append(" ".join(sentences))
    return "\n\n".join(out)


def save_docx(document, path: Path) -> Path:
    document.save(str(path))
    return path


def chunk_with(doc, needle: str):
    found = [c for c in doc.chunks if needle in c.text]
    assert found, f"{needle!r} not in any chunk"
    return found[0]


def tokens(text: str) -> int:
    return model_files.count_tokens(text)


# ---------------------------------------------------------------- DOCX

@pytest.fixture
def report_docx(tmp_path) -> Path:
    document = docx.Document()
    document.add_heading("Quarterly Report", level=0)  # body element 1 (Title style)
    document.add_heading("3 Model", level=1)  # 2
    document.add_paragraph("The model section introduces the architecture.")  # 3
    document.add_heading("3.2 Attention", level=2)  # 4
    document.add_paragraph("Before the table we describe the metrics.")  # 5
    table = document.add_table(rows=3, cols=3)  # 6
    for r, row in enumerate([("Metric", "Value", "Unit"), ("Latency", "PLANTED-TABLE-42", "ms"),
                             ("Throughput", "1200", "req/s")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("After the table comes the discussion.")  # 7
    document.sections[0].header.paragraphs[0].text = "ACME Confidential Header"
    document.add_section()  # a second section linked to the same header: the header must appear once
    document.add_paragraph("Second section text.")  # 8
    return save_docx(document, tmp_path / "report.docx")


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


# ---------------------------------------------------------------- PPTX

@pytest.fixture
def deck_pptx(tmp_path) -> Path:
    presentation = pptx.Presentation()
    first = presentation.slides.add_slide(presentation.slide_layouts[1])
    first.shapes.title.text = "Overview"
    first.placeholders[1].text_frame.text = "Agenda and goals"
    second = presentation.slides.add_slide(presentation.slide_layouts[5])
    second.shapes.title.text = "Revenue drivers"
    group = second.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(2), Inches(3), Inches(1)).text_frame.text = "PLANTED-GROUP-9 inside a group"
    second.notes_slide.notes_text_frame.text = "Speaker says PLANTED-NOTE-7 here"
    third = presentation.slides.add_slide(presentation.slide_layouts[5])
    third.shapes.title.text = "Numbers"
    table = third.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    for (r, c), value in {(0, 0): "Region", (0, 1): "Sales", (1, 0): "North", (1, 1): "PLANTED-PPTX-TABLE"}.items():
        table.cell(r, c).text = value
    path = tmp_path / "deck.pptx"
    presentation.save(str(path))
    return path


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


# ---------------------------------------------------------------- XLSX / CSV

@pytest.fixture
def workbook_xlsx(tmp_path) -> Path:
    workbook = openpyxl.Workbook()
    summary = workbook.active
    summary.title = "Summary"
    summary.append(["Item", "Note"])
    summary.append(["total", "see the Revenue sheet"])
    revenue = workbook.create_sheet("Revenue")
    revenue.append(["Budget 2024"])  # a title row above the header
    revenue.append([])
    revenue.append(["Date", None, "Region", "Amount", "Share"])  # column B stays empty everywhere
    rows = [(dt.datetime(2024, 3, 1), "North", 0.1 + 0.2, 0.153), (dt.datetime(2024, 3, 2, 14, 30), "South", 5.0, 0.2),
            (dt.date(2024, 3, 3), "PLANTED-SHEET-5", 1234567.891, 0.5)]
    for date, region, amount, share in rows:
        revenue.append([date, None, region, amount, share])
        revenue.cell(revenue.max_row, 5).number_format = "0.0%"
    summary.append(["cash", 1234567.5])
    summary.cell(summary.max_row, 2).number_format = '"$"#,##0.00'
    summary.append(["loss", -2500])
    summary.cell(summary.max_row, 2).number_format = "#,##0;(#,##0)"
    chart = BarChart()  # a chart sheet without a chart trips openpyxl's own reader, so it gets one
    chart.add_data(Reference(revenue, min_col=4, min_row=3, max_row=6), titles_from_data=True)
    workbook.create_chartsheet("Chart1").add_chart(chart)
    path = tmp_path / "budget.xlsx"
    workbook.save(str(path))
    return path


def test_xlsx_second_sheet_cell_range_and_values(workbook_xlsx):
    doc = parse_file(workbook_xlsx, isolate=False)
    assert doc.unit_name == "sheets" and doc.units == 2  # the chart sheet has no cells
    planted = chunk_with(doc, "PLANTED-SHEET-5")
    assert planted.location.sheet == "Revenue"
    assert planted.location.cells == "A3:E6"  # header row 3 through the last data row, empty column B inside
    assert planted.heading_path == ("Revenue",)
    assert "| Date |  | Region | Amount | Share |" not in planted.text  # the empty column is dropped
    assert "| Date | Region | Amount | Share |" in planted.text
    assert "| 2024-03-01 | North | 0.3 | 15.3% |" in planted.text
    assert "| 2024-03-02 14:30 | South | 5 | 20.0% |" in planted.text
    assert "| 2024-03-03 | PLANTED-SHEET-5 | 1234567.891 | 50.0% |" in planted.text
    title = chunk_with(doc, "Budget 2024")
    assert title.location == Location(sheet="Revenue", cells="A1:A1")
    money = chunk_with(doc, "cash")  # as the sheet shows it: currency, separators, accounting negatives
    assert "| cash | $1,234,567.50 |" in money.text and "| loss | (2,500) |" in money.text


def test_xlsx_long_sheet_blocks_repeat_header_with_exact_ranges(tmp_path):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Data"
    sheet.append(["Id", "Name", "Comment"])
    for i in range(1, 301):
        sheet.append([i, f"name {i}", f"row {i} comment text that takes some room"])
    path = tmp_path / "long.xlsx"
    workbook.save(str(path))
    doc = parse_file(path, isolate=False)
    assert len(doc.chunks) > 3
    covered = []
    for chunk in doc.chunks:
        lines = chunk.text.split("\n")
        assert lines[0] == "| Id | Name | Comment |"
        first, last = (int(x) for x in re.fullmatch(r"A(\d+):C(\d+)", chunk.location.cells).groups())
        ids = [int(line.split(" | ")[0][2:]) for line in lines[2:]]
        assert ids == list(range(max(first, 2) - 1, last))  # row r holds id r-1; the header is row 1
        covered += ids
        assert tokens(chunk.index_text) <= MAX and len(chunk.text) <= 1000
    assert covered == list(range(1, 301))
    assert doc.chunks[0].location.cells.startswith("A1:") and doc.chunks[1].location.cells.startswith("A")


def test_a_csv_with_a_very_long_cell_is_read_and_split():
    data = ("id,notes\n1,PLANTED-LONG-CELL " + "the pump ran all night " * 9000 + "\n2,short\n").encode()
    doc = parse_bytes(data, "log.csv", isolate=False)
    assert len(doc.chunks) > 100 and chunk_with(doc, "PLANTED-LONG-CELL").location.sheet == "log"
    assert any("| 2 | short |" in c.text for c in doc.chunks)


def test_empty_workbook_and_csv_sheet_named_after_file(tmp_path):
    empty = tmp_path / "empty.xlsx"
    openpyxl.Workbook().save(str(empty))
    assert parse_file(empty, isolate=False).chunks == ()
    csv_bytes = "Name;City;Score\nRené;Zürich;7\nAnna;PLANTED-CSV;9\n".encode("cp1252")
    doc = parse_bytes(csv_bytes, "people.csv", isolate=False)
    chunk = chunk_with(doc, "PLANTED-CSV")
    assert chunk.location == Location(sheet="people", cells="A1:C3")
    assert "| René | Zürich | 7 |" in chunk.text and "| Name | City | Score |" in chunk.text


@pytest.mark.parametrize(("value", "number_format", "text"), [
    (3.0, "General", "3"), (0.1 + 0.2, "General", "0.3"), (1.0000000000000002, "General", "1"), (7, "", "7"),
    (1e20, "", "100000000000000000000"), (0.0000015, "", "0.0000015"), (0.25, "0%", "25%"), (-0.0, "", "0"),
    (1.0000000002, "General", "1"), (1234.5, "#,##0.00", "1,234.50"), (2.5, "#,##0", "3"), (-0.001, "0.00", "0.00"),
    (1234567, "#,##0", "1,234,567"), (5, "0.00", "5.00"), (1234.5, '"$"#,##0.00', "$1,234.50"),
    (1234.5, "[$€-407]#,##0", "€1,235"), (-1234, "#,##0;(#,##0)", "(1,234)"), (-1234.5, "$#,##0.00", "-$1,234.50"),
    (-5, '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', "($5.00)"),
    (-0.0001, "#,##0;(#,##0)", "0"), (0.256, "0.0%", "25.6%"), (1234567.891, "", "1234567.891"),
    (dt.datetime(2023, 12, 31), "", "2023-12-31"), (dt.datetime(2023, 12, 31, 8, 5, 9), "", "2023-12-31 08:05:09"),
    (dt.date(2020, 2, 29), "", "2020-02-29"), (True, "", "TRUE"), ("  two   words ", "", "two words"), (None, "", ""),
])
def test_values_render_as_people_read_them(value, number_format, text):
    assert format_value(value, number_format) == text


def test_format_number_has_no_float_noise():
    assert format_number(8.200000000000001) == "8.2" and format_number(1234567.891) == "1234567.891"


# ---------------------------------------------------------------- PDF

def test_pdf_fact_on_page_three_and_pages_never_mixed(tmp_path):
    ascii_text = lambda seed: technical_text(3, seed).encode("ascii", "replace").decode()  # noqa: E731  (Helvetica)
    pages = [ascii_text(p) + f"\nPage marker {p + 1}" for p in range(3)]
    pages[2] += "\nThe PLANTED-PDF-3 value is 17."
    doc = parse_bytes(make_pdf(pages), "three.pdf", isolate=False)
    assert (doc.unit_name, doc.units, doc.title) == ("pages", 3, "three")
    assert chunk_with(doc, "PLANTED-PDF-3").location == Location(page=3)
    squash = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    page_text = {p + 1: squash(t) for p, t in enumerate(pages)}
    for chunk in doc.chunks:
        assert squash(chunk.text) in page_text[chunk.location.page]  # one page per chunk, text from that page
        assert tokens(chunk.index_text) <= MAX


def test_pdf_outline_gives_heading_paths(tmp_path):
    writer = pdf_writer(make_pdf(["Intro text here.", "Methods\nWe measured things.", "Results\nPLANTED-OUTLINE"]))
    writer.add_outline_item(title="Methods", page_number=1)
    writer.add_outline_item(title="Results", page_number=2)
    doc = parse_bytes(to_bytes(writer), "outlined.pdf", isolate=False)
    assert chunk_with(doc, "Intro text").heading_path == ()
    assert chunk_with(doc, "We measured").heading_path == ("Methods",)
    assert chunk_with(doc, "PLANTED-OUTLINE").heading_path == ("Results",)


IMAGE_ONLY_PAGE = b"q 200 0 0 200 100 400 cm BI /W 2 /H 2 /BPC 8 /CS /G ID \xff\x00\x00\xff EI Q"


@pytest.mark.parametrize("pages", [[IMAGE_ONLY_PAGE, IMAGE_ONLY_PAGE], None])
def test_pdf_without_text_is_no_text(pages):
    if pages is None:
        writer = PdfWriter()
        writer.add_blank_page(width=200, height=200)
        data = to_bytes(writer)
    else:
        data = make_pdf(pages)
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, "scan.pdf", isolate=False)
    assert err.value.kind == "no_text" and err.value.reason == "no extractable text (scanned or image-only?)"
    assert str(err.value).startswith("scan.pdf: ")


def test_pdf_with_user_password_is_encrypted():
    writer = pdf_writer(make_pdf(["secret text"]))
    writer.encrypt(user_password="hunter2", owner_password="owner", algorithm="AES-256")
    with pytest.raises(DocumentError) as err:
        parse_bytes(to_bytes(writer), "locked.pdf", isolate=False)
    assert err.value.kind == "encrypted" and err.value.reason == "encrypted: needs a password"


def test_pdf_with_empty_user_password_opens():
    writer = pdf_writer(make_pdf(["open sesame PLANTED-AES"]))
    writer.encrypt(user_password="", owner_password="owner-only", algorithm="AES-256")
    data = to_bytes(writer)
    assert b"/Encrypt" in data
    assert chunk_with(parse_bytes(data, "aes.pdf", isolate=False), "PLANTED-AES").location == Location(page=1)


# ---------------------------------------------------------------- text and Markdown

def test_markdown_heading_paths_lines_and_fences():
    text = ("# Guide\n\nWelcome text.\n\n## Install\n\nRun the installer.\n\n```\n# not a heading\n```\n\n"
            "### Linux\n\nUse PLANTED-MD-1 on Linux.\n\nSetext Title\n============\n\nUnder setext.\n")
    doc = parse_bytes(text.encode(), "guide.md", isolate=False)
    assert doc.title == "Guide" and doc.unit_name == "lines"
    planted = chunk_with(doc, "PLANTED-MD-1")
    assert planted.heading_path == ("Guide", "Install", "Linux")
    assert planted.location.lines[0] <= 15 <= planted.location.lines[1]
    assert chunk_with(doc, "# not a heading").heading_path == ("Guide", "Install")
    assert chunk_with(doc, "Under setext").heading_path == ("Setext Title",)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "cp1252", "utf-8"])
def test_text_encodings(encoding):
    text = "Line one\nCafé crème at 5 €\n\nThird paragraph PLANTED-ENC\n"
    doc = parse_bytes(text.encode(encoding), "notes.txt", isolate=False)
    assert "Café crème at 5 €" in doc.chunks[0].text
    assert chunk_with(doc, "PLANTED-ENC").location == Location(lines=(1, 4))  # both paragraphs, one chunk


def test_undecodable_bytes_never_crash_and_binary_is_refused():
    assert parse_bytes(b"ok \x81\x8d text", "odd.txt", isolate=False).chunks[0].text.startswith("ok")
    with pytest.raises(DocumentError) as err:
        parse_bytes(bytes(range(256)) * 8, "blob.txt", isolate=False)
    assert err.value.kind == "wrong_type"


def test_markdown_pipe_table_rows_stay_whole_with_their_lines():
    rows = "\n".join(f"| k{i:03d} | {'value ' * 12}{i} |" for i in range(120))
    text = f"# Table\n\n| Key | Value |\n|-----|-------|\n{rows}\n"
    doc = parse_bytes(text.encode(), "table.md", isolate=False)
    keys = []
    for chunk in doc.chunks:  # the bare "# Table" heading lives on in every chunk's context, not as a chunk
        lines = chunk.text.split("\n")
        assert lines[0] == "| Key | Value |" and all(re.fullmatch(r"\| k\d{3} \| (value ){12}\d+ \|", x) for x in lines[2:])
        first_key = int(lines[2][3:6])
        assert chunk.location.lines[0] in (3, first_key + 5) and chunk.location.lines[1] == int(lines[-1][3:6]) + 5
        keys += [int(x[3:6]) for x in lines[2:]]
    assert keys == list(range(120))


def test_whitespace_only_text_is_an_empty_document():
    doc = parse_bytes(b"   \n\n  \n", "blank.txt", isolate=False)
    assert doc.chunks == () and doc.units == 4


# ---------------------------------------------------------------- chunking

def test_every_chunk_fits_the_embedder_on_long_technical_text():
    text = technical_text(120) + "\n\n" + "x" * 5000 + "\n\n" + "漢字仮名交じり文" * 400 + "\n\n" + technical_text(20, 1)
    doc = parse_bytes(text.encode(), "dense.md", isolate=False)
    counts = [tokens(c.index_text) for c in doc.chunks]
    assert max(counts) <= MAX
    assert sum(counts) / len(counts) > 150  # chunks are not needlessly tiny
    assert all(len(c.text) <= 1000 for c in doc.chunks)
    assert "x" * 5000 in "".join(c.text for c in doc.chunks)  # cut by characters, nothing lost


def test_chunks_overlap_within_limits_and_lines_are_exact():
    text = technical_text(40, seed=3)
    doc = parse_bytes(text.encode(), "long.txt", isolate=False)
    lines = text.split("\n")
    overlaps = []
    for a, b in zip(doc.chunks, doc.chunks[1:], strict=False):
        shared = max((n for n in range(1, min(len(a.text), len(b.text)) + 1) if a.text.endswith(b.text[:n])), default=0)
        overlaps.append(shared)
    assert max(overlaps) <= 200 and sum(1 for o in overlaps if o >= 20) >= len(overlaps) // 2
    for chunk in doc.chunks:
        first, last = chunk.location.lines
        assert chunk.text.split("\n")[0] in lines[first - 1] and chunk.text.split("\n")[-1] in lines[last - 1]


def test_ids_ordinals_and_doc_id_are_content_derived(report_docx):
    data = report_docx.read_bytes()
    one, two = parse_file(report_docx, isolate=False), parse_bytes(data, "report.docx", isolate=False)
    assert one.doc_id == hashlib.sha256(data).hexdigest() == two.doc_id
    assert [c.id for c in one.chunks] == [c.id for c in two.chunks]
    assert [c.ordinal for c in one.chunks] == list(range(len(one.chunks)))
    assert all(c.id == chunk_id(c.doc_id, c.location, c.ordinal, c.text) for c in one.chunks)
    assert all(c.file_name == "report.docx" and c.file_type == "docx" for c in one.chunks)


def test_progress_reports_reading_and_chunking(deck_pptx):
    calls = []
    parse_file(deck_pptx, isolate=False, progress=lambda stage, done, total: calls.append((stage, done, total)))
    assert {"reading", "chunking"} == {c[0] for c in calls}
    assert calls[-1][1] == calls[-1][2]


# ---------------------------------------------------------------- names, limits, suffixes

def test_names_are_sanitised():
    assert sanitize_name("../../etc/passwd.pdf") == "passwd.pdf"
    assert sanitize_name("C:\\Users\\me\\report.docx") == "report.docx"
    assert sanitize_name("bad\x00name\x1f.txt") == "badname.txt"
    long_name = sanitize_name("a" * 500 + ".pdf")
    assert len(long_name) <= 200 and long_name.endswith(".pdf")
    assert sanitize_name("") == "unnamed"
    doc = parse_bytes(b"hello", "../x/\x07evil.txt", isolate=False)
    assert doc.file_name == "evil.txt"


def test_supported_suffixes():
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".xlsm", ".csv", ".txt", ".md", ".markdown",
            ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"} == set(SUPPORTED_SUFFIXES)
    assert is_supported("A.PDF") and is_supported("notes.markdown") and not is_supported("x.doc")


@pytest.mark.parametrize("kwargs", [{"chunk_chars": 10}, {"overlap_chars": 900}, {"timeout_s": 0}, {"max_bytes": -1},
                                    {"max_memory_mb": 10}, {"max_zip_ratio": "big"}])
def test_bad_limits_raise_value_error_naming_the_rule(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        Limits(**kwargs)


# ---------------------------------------------------------------- bad input

def _docx_bytes() -> bytes:
    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("hello")
    document.save(buffer)
    return buffer.getvalue()


def _bomb(main_part: str, content_type: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", f'<Types><Override PartName="/{main_part}" ContentType="{content_type}"/></Types>')
        archive.writestr(main_part, b"\0" * (30 * 1024 * 1024))  # 30 MB of zeros deflate ~1000:1
    return buffer.getvalue()


BOMBS = {
    "bomb.docx": ("word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"),
    "bomb.xlsx": ("xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"),
    "bomb.pptx": ("ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_zip_bombs_are_refused_before_parsing(name):
    with pytest.raises(DocumentError) as err:
        parse_bytes(_bomb(*BOMBS[name]), name, isolate=False)
    assert err.value.kind == "zip_bomb" and "expands" in err.value.reason


def test_declared_total_over_the_limit_is_a_zip_bomb():
    with pytest.raises(DocumentError) as err:
        parse_bytes(_docx_bytes(), "big.docx", limits=Limits(max_zip_uncompressed=1000), isolate=False)
    assert err.value.kind == "zip_bomb" and "would expand" in err.value.reason


OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504


@pytest.mark.parametrize(("name", "data", "kind", "reason"), [
    ("virus.exe", b"MZ...", "unsupported", "unsupported file type '.exe'"),
    ("README", b"text", "unsupported", "without an extension"),
    ("empty.pdf", b"", "empty", "the file is empty (0 bytes)"),
    ("paper.docx", make_pdf(["x"]), "wrong_type", "the file is a PDF, not a Word document"),
    ("letter.pdf", _docx_bytes(), "wrong_type", "the file is a Word document, not a PDF"),
    ("sheet.xlsx", _docx_bytes(), "wrong_type", "not an Excel workbook"),
    ("notes.txt", make_pdf(["x"]), "wrong_type", "the file is a PDF, not a text file"),
    ("old.docx", OLE2 + "WordDocument".encode("utf-16-le") + b"\0\0", "wrong_type", "legacy Office format (.doc), save as .docx"),
    ("old.xlsx", OLE2 + "Workbook".encode("utf-16-le") + b"\0\0", "wrong_type", "legacy Office format (.xls), save as .xlsx"),
    ("locked.docx", OLE2 + "EncryptionInfo".encode("utf-16-le") + b"\0\0", "encrypted", "encrypted: needs a password"),
    ("cut.docx", _docx_bytes()[:3000], "corrupt", "damaged or truncated zip package"),
    ("junk.pptx", b"this is not a presentation", "corrupt", "not a PowerPoint presentation"),
    ("photo.pdf", b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "wrong_type", "the file is a PNG image, not a PDF"),
    ("notes.pdf", "Plain notes, saved as .pdf by mistake — ünïcode too.\n".encode() * 40, "wrong_type",
     "the file is plain text, not a PDF"),
    ("binary.pdf", bytes(range(256)) * 4, "corrupt", "damaged or unreadable file"),
    ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", "corrupt", "damaged or unreadable file"),
])
def test_bad_inputs_give_one_line_reasons(name, data, kind, reason):
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, name, isolate=False)
    assert err.value.kind == kind, err.value.reason
    assert reason in err.value.reason and "\n" not in err.value.reason
    assert err.value.file_name == name and str(err.value) == f"{name}: {err.value.reason}"


def test_a_file_that_chunks_into_too_many_passages_is_refused_before_embedding():
    data = "\n\n".join(f"Paragraph {i}: " + "harbour crane logistics " * 40 for i in range(60)).encode()
    assert len(parse_bytes(data, "ok.txt", isolate=False).chunks) > 50
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, "long.txt", limits=Limits(max_chunks=50), isolate=False)
    assert err.value.kind == "too_large"
    assert "passages, over the 50 limit" in err.value.reason and "split it into smaller files" in err.value.reason
    with pytest.raises(ValueError, match="max_chunks"):
        Limits(max_chunks=0)


def test_size_limit_is_checked_before_reading(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 5000)
    with pytest.raises(DocumentError) as err:
        parse_file(path, limits=Limits(max_bytes=1000))
    assert err.value.kind == "too_large" and "over the" in err.value.reason


def test_missing_file_or_directory_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        parse_file(tmp_path / "nope.pdf")
    (tmp_path / "folder.pdf").mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        parse_file(tmp_path / "folder.pdf")


def test_main_script_imports_are_preloaded_for_forkserver_children(tmp_path, monkeypatch):
    script = tmp_path / "launcher.py"
    script.write_text("import json\nfrom os import path\nimport not_a_module_here\nif True:\n    import csv\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__, fake_main.__spec__ = str(script), None
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    isolation._main_script_imports.cache_clear()
    try:
        assert isolation._main_script_imports() == ("json", "os")  # top level only, and importable here
    finally:
        isolation._main_script_imports.cache_clear()


# ---------------------------------------------------------------- isolation

def _forkserver_children() -> list[int]:
    """Live (non-zombie) processes whose parent is the fork server started by this test process."""
    def stat(pid):
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    servers = [p for p in pids if (s := stat(p)) and int(s[1]) == os.getpid()
               and b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes()]
    return [p for p in pids if (s := stat(p)) and int(s[1]) in servers and s[0] != "Z"]


def test_isolated_parse_matches_in_process(deck_pptx):
    calls = []
    isolated = parse_file(deck_pptx, progress=lambda *c: calls.append(c))
    assert isolated == dataclasses.replace(parse_file(deck_pptx, isolate=False), seconds=isolated.seconds)
    assert any(c[0] == "chunking" for c in calls)
    with pytest.raises(DocumentError) as err:
        parse_bytes(b"%PDF-1.4 nothing", "bad.pdf")
    assert err.value.kind == "corrupt"  # errors come back from the child with their kind


def test_every_file_is_read_by_a_child_of_one_warm_fork_server():
    """No file pays for an interpreter start: the readers are imported once, in the fork server, and every file
    is parsed in a fork of it (what that saves is measured in bench/, never asserted here)."""
    import multiprocessing.forkserver as fs

    from document_processor import isolation

    parse_bytes(b"warm the fork server", "warm.txt")
    server = fs._forkserver._forkserver_pid
    for _ in range(3):
        assert parse_bytes(b"tiny text", "tiny.txt").chunks
    assert server is not None and fs._forkserver._forkserver_pid == server
    assert "document_processor.worker" in isolation.PRELOAD


def test_slow_file_times_out_and_the_child_is_gone():
    parse_bytes(b"warm the fork server", "warm.txt")
    slow = technical_text(2500).encode()  # a few seconds of chunking, far beyond the limit
    with pytest.raises(DocumentError) as err:
        parse_bytes(slow, "slow.md", limits=Limits(timeout_s=0.3))
    assert err.value.kind == "timeout" and err.value.reason == "took longer than 0.3 s"
    deadline = time.monotonic() + 5
    while _forkserver_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _forkserver_children() == []


def test_memory_cap_gives_a_clear_reason(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_bytes(b"memory hungry line\n" * 3_500_000)  # 66 MB: reading, decoding and splitting need far more
    with pytest.raises(DocumentError) as err:
        parse_file(path, limits=Limits(max_memory_mb=256))
    assert err.value.kind == "too_large" and "MB of memory" in err.value.reason
    path.unlink()


class _DeadChild:
    def __init__(self, exitcode):
        self.exitcode = exitcode

    def join(self, timeout=None):
        return None


@pytest.mark.parametrize(("code", "kind", "words"), [(-9, "too_large", "out of memory"), (-11, "corrupt", "SIGSEGV"),
                                                     (1, "corrupt", "exit code 1")])
def test_a_child_that_dies_is_explained(code, kind, words):
    error = _death(_DeadChild(code), "x.pdf", Limits())
    assert error.kind == kind and words in error.reason
