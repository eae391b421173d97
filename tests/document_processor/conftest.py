"""Documents built with the libraries we parse with: a report (.docx) and a deck (.pptx), facts planted in one place
only."""

from __future__ import annotations

from pathlib import Path

import docx
import pptx
import pytest
from pptx.util import Inches

from tests.helpers.documents import save_docx


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
