"""source_viewer: passage search on a PDF page, rendering with highlights, slides, cell ranges, neighbours."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from document_processor import Chunk, Location
from tests.helpers.documents import write_pdf
from tests.helpers.ocr import PAGE_TEXT, needs_tesseract, scan_image, scanned_pdf
from ui import source_viewer as sv


def test_passage_found_despite_whitespace_hyphens_and_ligatures():
    page = "The encoder is composed of a stack of six identi-\ncal layers. Each layer has two sub-layers."
    passage = "composed of a stack of six identical layers"
    idx = sv.passage_char_indices(page, passage)
    assert page[idx[0]:idx[-1] + 1] == "composed of a stack of six identi-\ncal layers"
    assert sv.passage_char_indices("the ﬁnal result", "final result")[0] == 4


def test_passage_windows_light_up_the_part_that_is_on_this_page():
    page = "Alpha beta gamma delta epsilon zeta eta theta iota kappa."
    passage = "gamma delta epsilon zeta eta theta iota kappa. Continues on the next page with other words."
    idx = sv.passage_char_indices(page, passage, window=12)
    covered = page[idx[0]:idx[-1] + 1]
    assert covered.startswith("gamma") and "kappa" in covered


def test_passage_not_on_page_or_empty_gives_nothing():
    assert sv.passage_char_indices("completely different text here", "nothing in common whatsoever") == []
    assert sv.passage_char_indices("", "x") == [] and sv.passage_char_indices("abc", "") == []


def test_line_rects_merge_characters_of_one_line():
    boxes = [(10, 100, 16, 112), (16, 100, 22, 112), (22, 101, 28, 111), (10, 120, 16, 132)]
    assert sv.line_rects(boxes) == [(10, 100, 28, 112), (10, 120, 16, 132)]
    assert sv.line_rects([]) == []


def test_render_pdf_page_highlights_the_passage(tmp_path):
    pdf = tmp_path / "doc.pdf"
    write_pdf(pdf, [["First page says hello."], ["Intro line.", "The quarterly revenue grew by twelve percent.",
                                                 "Closing remarks follow."]])
    image = sv.render_pdf_page(pdf, 2, "The quarterly revenue grew by twelve percent.", width=600)
    assert image.page_count == 2 and image.width == 600
    assert image.highlighted_chars >= 35
    picture = Image.open(io.BytesIO(image.png)).convert("RGB")
    assert picture.size == (image.width, image.height)
    pixels = list(picture.get_flattened_data())
    yellow = sum(1 for r, g, b in pixels if _is_highlight(r, g, b))
    assert yellow > 500  # the translucent highlight is really drawn
    # Line 2's baseline is 740 - 16 = 724 pt from the bottom, i.e. 68 pt from the top; 12 pt glyphs sit above it.
    scale = 600 / 612
    band = picture.crop((60, int(54 * scale), 400, int(72 * scale)))
    assert sum(1 for px in band.get_flattened_data() if _is_highlight(*px)) > 0.5 * yellow
    above = picture.crop((60, 0, 400, int(50 * scale)))  # line 1 is not part of the passage
    assert not any(_is_highlight(*px) for px in above.get_flattened_data())


def test_the_viewer_opens_on_the_band_of_the_page_around_the_passage(tmp_path):
    pdf = tmp_path / "doc.pdf"
    write_pdf(pdf, [["Intro line."] + [f"Filler line {i} of the long page." for i in range(30)]
                    + ["The quarterly revenue grew by twelve percent.", "Closing remarks follow."]])
    image = sv.render_pdf_page(pdf, 1, "The quarterly revenue grew by twelve percent.", width=600)
    focus = Image.open(io.BytesIO(image.focus_png)).convert("RGB")
    assert focus.width == image.width and focus.height < 0.6 * image.height  # a band, not the page
    assert sum(1 for px in focus.get_flattened_data() if _is_highlight(*px)) > 300  # the highlight is in it
    whole = sv.render_pdf_page(pdf, 1, "words that are not there at all", width=600)
    assert whole.focus_png == b""  # nothing highlighted: the page itself is shown


def _is_highlight(r, g, b):
    return r > 240 and g > 225 and b < 190  # translucent yellow over white paper


def test_render_pdf_page_without_a_match_still_renders(tmp_path):
    pdf = tmp_path / "doc.pdf"
    write_pdf(pdf, [["Only this."]])
    image = sv.render_pdf_page(pdf, 1, "words that are not there at all", width=300)
    assert image.highlighted_chars == 0 and image.png.startswith(b"\x89PNG")


def test_render_pdf_page_errors_have_reasons(tmp_path):
    pdf = tmp_path / "doc.pdf"
    write_pdf(pdf, [["One page."]])
    with pytest.raises(sv.SourceError, match="no page 3"):
        sv.render_pdf_page(pdf, 3, "x")
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf at all")
    with pytest.raises(sv.SourceError, match="cannot open the PDF"):
        sv.render_pdf_page(bad, 1, "x")


def test_read_slide_text_and_notes(tmp_path):
    from pptx import Presentation

    deck = Presentation()
    for title, notes in (("Intro", ""), ("Results", "Mention the Q3 dip.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = f"{title} body text"
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    path = tmp_path / "deck.pptx"
    deck.save(path)
    slide = sv.read_slide(path, 2)
    assert slide.text == "Results\nResults body text" and slide.notes == "Mention the Q3 dip."
    assert sv.read_slide(path, 1).notes == ""
    with pytest.raises(sv.SourceError, match="no slide 5"):
        sv.read_slide(path, 5)


def test_a_slide_is_drawn_from_its_shapes_where_they_sit_with_the_asked_words_marked(tmp_path):
    from pptx import Presentation
    from pptx.util import Emu, Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    title = slide.shapes.add_textbox(Emu(457200), Emu(300000), Emu(8000000), Emu(800000))
    title.text_frame.text = "Results overview"
    box = slide.shapes.add_textbox(Emu(4572000), Emu(4800000), Emu(4000000), Emu(1200000))  # lower right
    box.text_frame.text = "Revenue dipped in the third quarter"
    box.text_frame.paragraphs[0].runs[0].font.size = Pt(20)
    path = tmp_path / "deck.pptx"
    deck.save(path)
    image = sv.render_slide(path, 1, ["revenue", "quarter"], width=900)
    assert image.page_count == 1 and image.width == 900 and image.height == round(6858000 * 900 / 9144000)
    assert image.highlighted_chars >= 2  # "Revenue" and "quarter"
    picture = Image.open(io.BytesIO(image.png)).convert("RGB")
    scale = 900 / 9144000
    lower_right = picture.crop((int(4572000 * scale), int(4800000 * scale), 900, int(6000000 * scale)))
    title_band = picture.crop((0, 0, 900, int(1100000 * scale)))
    assert sum(1 for px in lower_right.get_flattened_data() if _is_highlight(*px)) > 100  # marked where it sits
    assert not any(_is_highlight(*px) for px in title_band.get_flattened_data())  # no asked word in the title
    assert any(px != (255, 255, 255) for px in title_band.get_flattened_data())  # but the title is drawn
    with pytest.raises(sv.SourceError, match="no slide 3"):
        sv.render_slide(path, 3, [])


def test_read_cells_from_xlsx_puts_the_sheet_header_on_top(tmp_path):
    from openpyxl import Workbook

    book = Workbook()
    ws = book.active
    ws.title = "Revenue"
    ws.append(["Region", "Q1", "Q2", None])
    for row in (["North", 10, 12, "x"], ["South", 7, 9, "y"], ["East", 3, 4, "z"]):
        ws.append(row)
    path = tmp_path / "book.xlsx"
    book.save(path)
    table = sv.read_cells(path, "Revenue", "A3:C4")
    assert table.columns == ("Region", "Q1", "Q2")
    assert table.rows == (("South", "7", "9"), ("East", "3", "4"))
    whole = sv.read_cells(path, "Revenue", "A1:D2")
    assert whole.columns == ("Region", "Q1", "Q2", "D") and whole.rows == (("North", "10", "12", "x"),)
    with pytest.raises(sv.SourceError, match="no sheet named"):
        sv.read_cells(path, "Costs", "A1:B2")
    with pytest.raises(sv.SourceError, match="cell range"):
        sv.read_cells(path, "Revenue", "nonsense")


def test_read_cells_keeps_the_file_s_formats_row_numbers_and_letters_and_marks_the_asked_rows(tmp_path):
    from openpyxl import Workbook

    book = Workbook()
    ws = book.active
    ws.title = "Plan"
    ws["A1"] = "Budget 2024"
    ws.append([])
    ws.append([None, "Region", "Units", "Price", "Share"])
    ws.append([None, "North", 2500, 12.5, 0.62293333])
    ws.append([None, "South", 1500, 9.99, 0.37706667])
    for ref, fmt in (("C4", "#,##0"), ("D4", '"$"#,##0.00'), ("E4", "0.0%"), ("E5", "0.0%")):
        ws[ref].number_format = fmt
    path = tmp_path / "plan.xlsx"
    book.save(path)
    table = sv.read_cells(path, "Plan", "B3:E5")
    assert table.columns == ("Region", "Units", "Price", "Share") and table.letters == ("B", "C", "D", "E")
    assert table.first_row == 4 and table.rows[0] == ("North", "2,500", "$12.50", "62.3%")
    assert sv.matched_rows(table, ["south", "share"]) == {1} and sv.matched_rows(table, ["west"]) == set()
    assert sv.cited_cells("Plan!E4:E5; Other!C9; D4") == {"E4", "E5", "C9", "D4"}
    assert sv.cited_cells("Plan!E4:E5; Other!C9; D4", "Plan") == {"E4", "E5", "D4"}


def test_read_cells_from_csv_and_truncation(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("name,name,score\n" + "".join(f"n{i},m{i},{i}\n" for i in range(10)))
    table = sv.read_cells(path, None, None, max_rows=4)
    assert table.columns == ("name", "name (B)", "score") and len(table.rows) == 4 and table.truncated
    assert sv.column_letter(1) == "A" and sv.column_letter(28) == "AB"


def _chunk(ordinal, doc="d"):
    return Chunk(id=f"{doc}{ordinal}", doc_id=doc, file_name="f.docx", file_type="docx", text=f"para {ordinal}",
                 location=Location(paragraph=ordinal + 1), ordinal=ordinal)


def test_neighbours_by_ordinal_within_one_document():
    chunks = [_chunk(i) for i in range(5)] + [_chunk(2, doc="other")]
    near = sv.neighbours(list(reversed(chunks)), chunks[2], radius=1)
    assert [c.ordinal for c in near] == [1, 2, 3] and all(c.doc_id == "d" for c in near)
    assert sv.neighbours([], chunks[0]) == [chunks[0]]


def test_markdown_table_from_a_sheet_chunk():
    text = "Sheet budget\n| item | cost \\| EUR |\n| --- | ---: |\n| heat pumps | 2100000 |\n| insulation |\nafter"
    table = sv.markdown_table(text)
    assert table.columns == ("item", "cost | EUR")
    assert table.rows == (("heat pumps", "2100000"), ("insulation", ""))
    assert sv.markdown_table("no table here") is None
    assert sv.markdown_table("| only | header |") is None


def _yellow_rows(png: bytes) -> list[int]:
    """Rows of the rendered page where the highlighter's yellow shows."""
    picture = Image.open(io.BytesIO(png)).convert("RGB")
    pixels = picture.load()
    return [y for y in range(0, picture.height, 2)
            if any(r > 240 and g > 200 and b < 200 for r, g, b in (pixels[x, y] for x in range(0, picture.width, 3)))]


@needs_tesseract
def test_a_scanned_pdf_page_highlights_the_ocr_passage(tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(scanned_pdf(PAGE_TEXT))
    image = sv.render_page(path, 2, "The landlord repairs the roof before winter", width=600)
    assert image.page_count == 2 and image.highlighted_chars > 20
    rows = _yellow_rows(image.png)
    # the second line of page 2 is drawn at y = 390..440 of a 2480-pixel-wide scan: 94..107 at 600 wide
    assert rows and min(rows) >= 85 and max(rows) <= 115, rows
    plain = sv.render_page(path, 2, "words that are on no page at all", width=600)
    assert plain.highlighted_chars == 0


@needs_tesseract
def test_an_image_document_page_highlights_the_ocr_passage(tmp_path):
    path = tmp_path / "letters.tiff"
    pages = [scan_image(lines, size=(1700, 700)) for lines in PAGE_TEXT]
    pages[0].save(path, save_all=True, append_images=pages[1:])
    image = sv.render_page(path, 2, "Both parties signed on the ninth of March", width=850)
    assert image.page_count == 2 and image.width == 850 and image.highlighted_chars > 20
    rows = _yellow_rows(image.png)
    assert rows and min(rows) >= 230 and max(rows) <= 275, rows  # third line: y 480..530 at half size
    with pytest.raises(sv.SourceError, match="no page 3"):
        sv.render_page(path, 3, "x")


def test_a_text_pdf_page_is_never_ocrd_by_the_viewer(tmp_path, monkeypatch):
    from document_processor.readers import ocr

    monkeypatch.setattr(ocr, "TESSERACT_CMD", str(tmp_path / "no-tesseract"))
    pdf = tmp_path / "typed.pdf"
    write_pdf(pdf, [["A typed page with a good text layer and quite a few words on it."]])
    assert sv.render_page(pdf, 1, "not on this page at all, anywhere").highlighted_chars == 0
    assert sv.render_page(pdf, 1, "good text layer").highlighted_chars > 0


def test_a_computed_passage_names_the_sheet_ranges_and_the_row_it_read():
    from ui.source_viewer import cell_ranges, computed_row_label

    assert cell_ranges("FAM!C2; FAM!C39") == [("FAM", "A2:C2"), ("FAM", "A39:C39")]  # with the rows' labels
    assert cell_ranges("cars!E22:E400") == [("cars", "A22:E400")]
    assert cell_ranges("A5:A9") == [(None, "A5:A9")]
    assert cell_ranges('report.pdf, p. 47 table 1, row 13, column "2022"') == []
    text = ("Computed by the engine from report.pdf, p. 47 table 1:\nNet earnings, 2021 to 2022: from 20,878 to 17,941"
            "\nCells: x\nQuery: SELECT 1")
    assert computed_row_label(text) == "Net earnings"


def test_a_scan_or_a_photo_is_shown_as_it_is_without_waiting_for_ocr(tmp_path, monkeypatch):
    """render_plain is what the viewer shows at once while OCR looks for the passage: it never runs OCR."""
    from document_processor.readers import ocr

    def no_ocr(*_args, **_kwargs):
        raise AssertionError("render_plain ran OCR")

    monkeypatch.setattr(ocr, "recognise", no_ocr)
    photo = tmp_path / "letters.tiff"
    pages = [scan_image(lines, size=(1700, 700)) for lines in PAGE_TEXT]
    pages[0].save(photo, save_all=True, append_images=pages[1:])
    shown = Image.open(io.BytesIO(sv.render_plain(photo, 2, width=850)))
    assert shown.size == (850, 350)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scanned_pdf(PAGE_TEXT))
    assert Image.open(io.BytesIO(sv.render_plain(scan, 2, width=600))).width == 600
    with pytest.raises(sv.SourceError, match="no page 3"):
        sv.render_plain(photo, 3)
    with pytest.raises(sv.SourceError, match="no page 9"):
        sv.render_plain(scan, 9)
