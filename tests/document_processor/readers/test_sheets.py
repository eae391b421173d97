"""document_processor.readers.sheets: workbooks and CSV files, cell ranges and values as people read them."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import openpyxl
import pytest
from openpyxl.chart import BarChart, Reference

from document_processor import Location, parse_bytes, parse_file
from tests.helpers.documents import MAX, chunk_with, tokens


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


def test_a_package_with_loosely_written_part_names_is_read_and_said_so():
    """Some writers store "xl\\worksheets\\sheet1.xml" and "[content_types].xml"; Excel opens such files."""
    import io
    import zipfile

    book = openpyxl.Workbook()
    book.active.title = "Plate"
    book.active.append(["Cycle", "A1"])
    book.active.append([1, 11698.24])
    clean = io.BytesIO()
    book.save(clean)
    loose = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(clean.getvalue())) as source, zipfile.ZipFile(loose, "w") as out:
        for info in source.infolist():
            name = info.filename.replace("/", "\\")
            name = "[content_types].xml" if name == "[Content_Types].xml" else name.replace("sharedStrings", "sharedstrings")
            out.writestr(name, source.read(info.filename))
    parsed = parse_bytes(loose.getvalue(), "plate.xlsx")
    assert "11698.24" in " ".join(c.text for c in parsed.chunks)
    assert any("names its parts loosely" in w for w in parsed.warnings)
