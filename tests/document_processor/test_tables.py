"""document_processor.tables: every table the readers found, as data, with a header that may take several rows,
and the long tables of a file cut to what can be searched as text, never to what can be queried."""

from __future__ import annotations

import csv
import io

import docx
import openpyxl

from document_processor import Limits, parse_bytes


def _xlsx(rows) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Rates"
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_a_sheet_with_a_two_row_header_below_a_title_is_one_table_with_joined_column_names():
    data = _xlsx([["Average tax rates"], [], ["Income", "Single", None, "Married", None],
                  [None, 2006, 2007, 2006, 2007], ["20,000", "10.5%", "9.8%", "3.1%", "2.0%"],
                  ["40,000", "24.1%", "22.0%", "12.5%", "11.0%"]])
    (table,) = parse_bytes(data, "rates.xlsx", isolate=False).tables
    assert table.name == "Rates" and table.columns == ("Income", "Single 2006", "Single 2007", "Married 2006",
                                                       "Married 2007")
    assert table.rows == (("20,000", "10.5%", "9.8%", "3.1%", "2.0%"), ("40,000", "24.1%", "22.0%", "12.5%", "11.0%"))
    assert table.cell_label(1, 2) == "Rates!C6"  # the 2007 single rate of the 40,000 row


def test_a_label_printed_centred_over_its_group_of_years_names_every_column_of_the_group():
    # a statement as a PDF's table pass reads it: "Net Revenue" over the middle of its three years
    data = _xlsx([["Division", None, "Net Revenue", None, None, "Operating Profit", None],
                  [None, 2022, 2021, 2020, 2022, 2021, 2020],
                  ["FLNA", "23,291", "21,848", "19,608", "6,133", "5,633", "5,340"]])
    (table,) = parse_bytes(data, "divisions.xlsx", isolate=False).tables
    assert table.columns == ("Division", "Net Revenue 2022", "Net Revenue 2021", "Net Revenue 2020",
                             "Operating Profit 2022", "Operating Profit 2021", "Operating Profit 2020")


def test_a_footnote_mark_on_a_year_does_not_hide_where_the_next_group_starts():
    # "2022(a)" begins the second group as "2022" would: both labels still name their three years
    data = _xlsx([["Division", None, "Net Revenue", None, None, "Operating Profit/(Loss)", None],
                  [None, 2022, 2021, 2020, "2022(a)", 2021, 2020],
                  ["FLNA", "23,291", "19,608", "18,189", "6,135", "5,633", "5,340"]])
    (table,) = parse_bytes(data, "divisions.xlsx", isolate=False).tables
    assert table.columns == ("Division", "Net Revenue 2022", "Net Revenue 2021", "Net Revenue 2020",
                             "Operating Profit/(Loss) 2022(a)", "Operating Profit/(Loss) 2021",
                             "Operating Profit/(Loss) 2020")


def test_a_label_read_into_one_cell_of_its_group_names_the_bare_years_beside_it():
    # the table pass read "Net Revenue" into the cell of the middle year: one header row, the label on one column
    data = _xlsx([["Division", 2021, "Net Revenue 2020", 2019, "2021", "Operating Profit 2020", "2019(a)"],
                  ["FLNA", "19,608", "18,189", "17,078", "5,633", "5,340", "5,258"]])
    (table,) = parse_bytes(data, "divisions.xlsx", isolate=False).tables
    assert table.columns == ("Division", "Net Revenue 2021", "Net Revenue 2020", "Net Revenue 2019",
                             "Operating Profit 2021", "Operating Profit 2020", "Operating Profit 2019(a)")


def test_a_label_on_the_last_year_of_a_header_is_that_column_s_own():
    data = _xlsx([["Country", 2019, 2020, "2021 Forecast"], ["Chile", "1.5", "1.7", "2.0"]])
    (table,) = parse_bytes(data, "outlook.xlsx", isolate=False).tables
    assert table.columns == ("Country", "2019", "2020", "2021 Forecast")


def test_a_word_table_typed_as_one_row_of_tall_cells_becomes_a_row_per_line(tmp_path):
    document = docx.Document()
    grid = document.add_table(rows=2, cols=3)
    for cell, text in zip(grid.rows[0].cells, ["", "2006", "2007"], strict=True):
        cell.text = text
    labels, first, second = grid.rows[1].cells
    labels.text, first.text, second.text = "", "€", "€"
    for label, a, b in (("Gross Income", "24,960", "24,960"), ("Total Liability", "3,105", "2,206")):
        labels.add_paragraph(label)
        first.add_paragraph(a)
        second.add_paragraph(b)
    path = tmp_path / "cases.docx"
    document.save(path)
    parsed = parse_bytes(path.read_bytes(), "cases.docx", isolate=False)
    (table,) = parsed.tables
    assert table.columns == ("label", "2006 €", "2007 €")
    assert table.rows == (("Gross Income", "24,960", "24,960"), ("Total Liability", "3,105", "2,206"))
    assert any("| Total Liability | 3,105 | 2,206 |" in c.text for c in parsed.chunks)  # the passages too


def test_a_sheet_without_a_header_keeps_its_first_row_as_data_and_names_columns_by_letter():
    import datetime

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Dates"
    for month in range(1, 5):
        sheet.append([datetime.date(2013, month, 1), month * 3])
    out = io.BytesIO()
    book.save(out)
    (table,) = parse_bytes(out.getvalue(), "charts.xlsx", isolate=False).tables
    assert table.columns == ("column A", "column B")
    assert [r[1] for r in table.rows] == ["3", "6", "9", "12"]  # January is data, not the header
    assert table.cell_label(0, 1) == "Dates!B1"  # January's value, cited where it is


def test_years_over_figures_still_head_their_columns():
    data = _xlsx([["Region", 2022, 2023], ["North", 12400, 13950], ["South", 8730, 9120]])
    (table,) = parse_bytes(data, "regions.xlsx", isolate=False).tables
    assert table.columns == ("Region", "2022", "2023") and len(table.rows) == 2


def test_a_row_that_only_numbers_the_columns_is_not_data(tmp_path):
    document = docx.Document()
    grid = document.add_table(rows=4, cols=4)
    for row, cells in zip(grid.rows, [["No.", "Item", "Quantity", "Amount, EUR"], ["1", "2", "3", "4"],
                                      ["1", "Control panel", "2", "10 793,08"], ["2", "Cable, m", "40", "2 180,00"]],
                          strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    path = tmp_path / "estimate.docx"
    document.save(path)
    (table,) = parse_bytes(path.read_bytes(), "estimate.docx", isolate=False).tables
    assert table.rows == (("1", "Control panel", "2", "10 793,08"), ("2", "Cable, m", "40", "2 180,00"))


def _tall_table(tmp_path, labels, first, second):
    document = docx.Document()
    grid = document.add_table(rows=2, cols=3)
    for cell, text in zip(grid.rows[0].cells, ["", "2006", "2007"], strict=True):
        cell.text = text
    for cell, lines in zip(grid.rows[1].cells, (labels, first, second), strict=True):
        cell.text = lines[0]
        for line in lines[1:]:
            cell.add_paragraph(line)
    path = tmp_path / "tall.docx"
    document.save(path)
    (table,) = parse_bytes(path.read_bytes(), "tall.docx", isolate=False).tables
    return table


def test_tall_cells_of_different_lengths_split_as_far_as_their_lines_agree(tmp_path):
    """The figures block (same lines filled in every cell, a blank line after it) becomes rows; the notes under
    it, which the cells space differently, stay one row as written."""
    table = _tall_table(tmp_path, ["Gross Income", "Total Liability", "Net Cash Income", "", "Gain from Child",
                                   "Benefit (9 months)", "", "Total Gain"],
                        ["43,000", "5,836", "37,164"], ["43,000", "4,866", "38,134", "", "", "180", "", "", "1,650"])
    assert table.rows[:3] == (("Gross Income", "43,000", "43,000"), ("Total Liability", "5,836", "4,866"),
                              ("Net Cash Income", "37,164", "38,134"))
    assert table.rows[3] == ("Gain from Child Benefit (9 months) Total Gain", "", "180 1,650")


def test_tall_cells_that_disagree_inside_the_figures_stay_one_row(tmp_path):
    """A label broken over two lines shifts the figures after it: no pairing is made up."""
    table = _tall_table(tmp_path, ["Gross Income", "Income Tax", "liability", "Net Cash Income"],
                        ["43,000", "9,040", "37,164"], ["43,000", "8,600", "38,134"])
    assert len(table.rows) == 1


def test_a_table_of_figures_whose_first_row_counts_up_keeps_it():
    data = b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"
    (table,) = parse_bytes(data, "matrix.csv", isolate=False).tables
    assert table.rows[0] == ("1", "2", "3") and len(table.rows) == 3


def test_a_long_csv_is_queryable_whole_and_searched_by_its_first_rows(tmp_path):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["date", "station", "rain_mm"])
    for i in range(14_000):
        writer.writerow([f"2020-01-{i % 28 + 1:02d}", f"S{i % 7}", f"{i % 50 / 10:.1f}"])
    limits = Limits(max_chunks=300)
    parsed = parse_bytes(out.getvalue().encode(), "rain.csv", limits=limits, isolate=False)
    (table,) = parsed.tables
    assert len(table.rows) == 14_000 and table.columns == ("date", "station", "rain_mm")
    assert len(parsed.chunks) <= 300
    (warning,) = [w for w in parsed.warnings if "queried as a table" in w]
    assert warning.startswith("rain: all 14,000 rows can be queried as a table; only the first ")


def test_formulas_without_stored_results_are_read_as_empty_with_a_warning():
    book = openpyxl.Workbook()  # openpyxl stores formulas, never their results: as a generating program does
    sheet = book.active
    sheet.title = "Budget"
    sheet.append(["Item", "Amount"])
    sheet.append(["Rent", 1200])
    sheet.append(["Food", 450])
    sheet.append(["Total", "=SUM(B2:B3)"])
    out = io.BytesIO()
    book.save(out)
    parsed = parse_bytes(out.getvalue(), "budget.xlsx", isolate=False)
    assert parsed.tables[0].rows[-1] == ("Total", "")
    assert any(w.startswith("Budget: 1 formula cell(s) have no stored result") for w in parsed.warnings)


def test_a_row_of_nothing_but_a_footnote_mark_is_not_a_row_of_figures(tmp_path):
    # a statement's footnote mark set on a line of its own ("(3)" under a figure): no label, no figure; a
    # bracketed figure in a labelled row is still a negative number
    document = docx.Document()
    lines = [["(In thousands)", "2022", "2021"], ["Net revenues", "1,000", "900"], ["", "(3)", ""],
             ["Adjusted EBITDA", "300", "(12)"], ["", "(a)", "(b)"], ["Net income", "(1)", "41"]]
    grid = document.add_table(rows=len(lines), cols=3)
    for row, cells in zip(grid.rows, lines, strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    path = tmp_path / "release.docx"
    document.save(path)
    (table,) = parse_bytes(path.read_bytes(), "release.docx", isolate=False).tables
    assert table.rows == (("Net revenues", "1,000", "900"), ("Adjusted EBITDA", "300", "(12)"),
                          ("Net income", "(1)", "41"))
    assert len(table.row_locations) in (0, 3)
