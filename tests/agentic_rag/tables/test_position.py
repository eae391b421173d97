"""Questions that point at a table by position ("the middle cell of the first table", "the last row under
Header1", "cell B7", "all the numbers in the table"): parsed by agentic_rag.tables.position, answered offline by
the engine from the cells they count to, through the real ingest and the real tables file."""

from __future__ import annotations

import openpyxl
import pytest

import wiring
from agentic_rag.tables.position import MIDDLE, Position, position_of


@pytest.mark.parametrize(("question", "expected"), [
    ("In the first table of grid.docx, what number sits in the middle cell?", Position(table=1, row=MIDDLE,
                                                                                         column=MIDDLE)),
    ("What do all the numbers in the second table add up to?", Position(table=2, whole=True)),
    ("What does the last row say under Header1?", Position(row=-1)),
    ("What is in cell B7 of the Budget sheet?", Position(sheet_row=7, letter="B")),
    ("What is the average of column C?", Position(letter="C")),
    ("What is the value in row 3, column 2?", Position(column=2, sheet_row=3)),
    ("What is in the top-left cell?", Position(row=1, column=1)),
    ("What does the second-to-last row hold?", Position(row=-2)),
    ("What is the total of the rightmost column?", Position(column=-1)),
])
def test_a_position_is_read_from_the_question(question, expected):
    assert position_of(question) == expected


@pytest.mark.parametrize("question", [
    "What was revenue in the first quarter of 2021?",  # a period, not a row
    "What was the bottom line in 2022?",
    "Which five products sold the most units?",
    "What were the top 5 regions by revenue?",
    "Name every value of the company.",
])
def test_words_that_count_other_things_point_at_no_position(question):
    assert position_of(question) is None


def _word_grid(document, rows):
    grid = document.add_table(rows=len(rows), cols=len(rows[0]))
    for row, cells in zip(grid.rows, rows, strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text


@pytest.fixture
def office(tmp_path, fake_embedder):
    """A Word file with three headerless number grids, a deck whose table's headers name nothing (Header1,
    Header2) and a workbook whose first column holds letters: tables only their positions describe."""
    import docx
    from pptx import Presentation
    from pptx.util import Inches

    document = docx.Document()
    document.add_paragraph("Grids used to check cell access.")
    for start in (1, 10, 100):  # 1..9, 10..18, 100..108
        _word_grid(document, [tuple(str(start + r * 3 + c) for c in range(3)) for r in range(3)])
        document.add_paragraph("Another grid follows.")
    document.save(tmp_path / "grids.docx")

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Placeholder text"
    rows = [("Header1", "Header2"), ("Lorem", "ipsum"), ("dolor", "sit"), ("consetetur", "amet"), ("sadipscing", "elitr")]
    shape = slide.shapes.add_table(len(rows), 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, cells in enumerate(rows):
        for c, text in enumerate(cells):
            shape.table.cell(r, c).text = text
    deck.save(tmp_path / "lorem.pptx")

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Letters"
    for i, letter in enumerate("ABCDEFGHIJ"):
        sheet.append([letter, i * 10, i * 100])
    book.save(tmp_path / "letters.xlsx")

    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    results = kb.ingest_many([tmp_path / "grids.docx", tmp_path / "lorem.pptx", tmp_path / "letters.xlsx"])
    assert [r.status for r in results] == ["indexed"] * 3, [r.reason for r in results]
    return wiring.build_for(wiring.ModelConfig("offline"), kb, fake_embedder)


def _computed(result) -> dict:
    return next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]


@pytest.mark.parametrize(("question", "figure", "table"), [
    ("In the first table of grids.docx, what number sits in the middle cell?", "5", "¶ 2 table 1"),
    ("In the second table of grids.docx, what number sits in the middle cell?", "14", "¶ 4 table 1"),
    ("What number is in the bottom-right cell of the last table of grids.docx?", "108", "¶ 6 table 1"),
    ("What do all the numbers in the second table of grids.docx add up to?", "126", "¶ 4 table 1"),
    ("In grids.docx, what is the sum of the third column of the first table?", "18", "¶ 2 table 1"),
])
def test_a_word_tables_cells_are_found_by_counting(office, question, figure, table):
    result = office.ask(question)
    computed = _computed(result)
    assert computed["table"] == f"grids.docx, {table}", computed
    assert f": {figure}" in result.answer, result.answer
    assert result.citations and result.citations[0].file == "grids.docx"


def test_the_last_row_under_a_header_is_read_from_the_table_with_that_header(office):
    result = office.ask("In the slide's table of lorem.pptx, what does the last row say under Header1?")
    assert _computed(result)["rows"][0][1] == "sadipscing", _computed(result)
    assert "sadipscing" in result.answer and "elitr" not in result.answer.split("[1]")[0]
    assert "Another table" not in result.answer  # no other table has a Header1 column


def test_a_sheet_cell_is_read_at_its_own_address(office):
    result = office.ask("On the Letters sheet of letters.xlsx, what is in cell C7?")
    computed = _computed(result)
    assert computed["rows"][0][1] == 600 and computed["cells"] == "Letters!C7", computed
    assert "600" in result.answer


def test_a_position_the_table_does_not_have_is_not_answered_from_another_cell(office):
    # an even number of rows has no middle one; a twentieth row is past the last
    for question in ("In the slide's table of lorem.pptx, what does the middle row say under Header2?",
                     "What is in row 20 of the Letters sheet of letters.xlsx?"):
        result = office.ask(question)
        assert _computed(result)["sql"] == "", (question, _computed(result))
