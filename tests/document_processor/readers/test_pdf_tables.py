"""Tables on PDF pages (document_processor/pdf_tables.py): found, indexed with their headers, still highlighted.

The PDFs are written here: Helvetica text placed at exact positions, figures right-aligned as in a filing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from document_processor import parse_bytes
from document_processor.readers import pdf as read_pdf
from document_processor.readers.pdf_tables import looks_tabular
from tests.helpers.documents import make_pdf as pdf_of_streams
from ui import source_viewer as sv

_WIDTH = {**dict.fromkeys("0123456789$", 0.556), ",": 0.278, ".": 0.278, "(": 0.333, ")": 0.333}
TITLE = "CONSOLIDATED STATEMENTS OF OPERATIONS"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def placed(items: list[tuple[float, float, str]], size: int = 10) -> str:
    """A content stream drawing each (x, y, text); a negative x right-aligns a figure at -x."""
    ops = []
    for x, y, text in items:
        if x < 0:
            x = -x - size * sum(_WIDTH.get(ch, 0.5) for ch in text)
        ops.append(f"BT /F1 {size} Tf {x:.2f} {y:.2f} Td ({_escape(text)}) Tj ET")
    return "\n".join(ops)


def make_pdf(streams: list[str]) -> bytes:
    """One page per content stream, Helvetica as /F1 (tests/helpers/documents.py's builder, raw streams)."""
    return pdf_of_streams([stream.encode("latin-1") for stream in streams])


def statement_rows(count: int, start: int = 0) -> list[tuple[str, str, str]]:
    rows = [(f"Line item number {k} for products and services", f"{1000 + 7 * k:,}", f"({900 + 5 * k:,})")
            for k in range(start, start + count)]
    if start == 0:
        rows[3] = ("Adjusted EBITDA", "2,117", "2,018")
    return rows


def statement_page(rows, *, title: bool = True, header: bool = True, prose: str = "") -> str:
    items, y = [], 750.0
    if prose:
        items.append((50, y, prose))
        y -= 30
    if title:
        items += [(50, y, "ACME CORPORATION"), (50, y - 14, TITLE), (50, y - 28, "(In millions, except per share data)")]
        y -= 56
    if header:
        items += [(-400, y, "2023"), (-480, y, "2022")]
        y -= 20
    for label, first, second in rows:
        items += [(50, y, label), (-400, y, first), (-480, y, second)]
        y -= 14
    items.append((300, 40, "47"))
    return placed(items)


def prose_page(paragraphs: int = 3) -> str:
    words = ("revenue", "grew", "in", "every", "region", "as", "customers", "adopted", "the", "platform")
    lines = [" ".join(words[(k + j) % len(words)] for j in range(12)) for k in range(paragraphs * 8)]
    return placed([(50, 750 - 14 * k, line) for k, line in enumerate(lines)])


def table_chunks(doc):
    return [c for c in doc.chunks if c.text.startswith("| ")]


def test_long_statement_repeats_title_header_and_units_in_every_chunk():
    pdf = make_pdf([statement_page(statement_rows(45), prose="The results of operations were as follows:")])
    doc = parse_bytes(pdf, "acme.pdf", isolate=False)
    chunks = table_chunks(doc)
    assert len(chunks) >= 2
    for chunk in chunks:
        header = chunk.text.splitlines()[0]
        assert "2023" in header and "2022" in header and "In millions" in header
        assert chunk.heading_path[-1] == TITLE and TITLE in chunk.index_text
        assert chunk.location.page == 1
    rows = [line for c in chunks for line in c.text.splitlines()[2:]]
    assert "| Adjusted EBITDA | 2,117 | 2,018 |" in rows
    assert "| Line item number 40 for products and services | 1,280 | (1,100) |" in rows
    assert len(rows) == 45
    assert any("results of operations were as follows" in c.text for c in doc.chunks if c not in chunks)


def test_table_free_pdf_reads_exactly_as_without_the_table_pass(monkeypatch):
    pdf = make_pdf([prose_page(), prose_page(5), placed([(50, 700, "Figure 3 shows 12 results from 2021.")])])
    with_pass = parse_bytes(pdf, "prose.pdf", isolate=False)
    monkeypatch.setattr(read_pdf, "looks_tabular", lambda text: False)
    without = parse_bytes(pdf, "prose.pdf", isolate=False)
    assert [c.id for c in with_pass.chunks] == [c.id for c in without.chunks]
    assert not table_chunks(with_pass)


def test_statement_continued_on_the_next_page_keeps_its_header_and_title():
    first = statement_page(statement_rows(20))
    second = statement_page(statement_rows(12, start=20), title=False, header=False)
    doc = parse_bytes(make_pdf([first, second]), "acme.pdf", isolate=False)
    continued = [c for c in table_chunks(doc) if c.location.page == 2]
    assert continued
    for chunk in continued:
        assert chunk.text.splitlines()[0] == "| (In millions, except per share data) | 2023 | 2022 |"
        assert chunk.heading_path[-1] == TITLE
    assert "| Line item number 25 for products and services | 1,175 | (1,025) |" in continued[0].text


def test_a_page_whose_layout_fails_keeps_its_text_and_the_file_is_read(monkeypatch):
    def broken(textpage):
        raise ValueError("bad box")

    monkeypatch.setattr(read_pdf, "find_tables", broken)
    pdf = make_pdf([statement_page(statement_rows(8)), prose_page()])
    doc = parse_bytes(pdf, "acme.pdf", isolate=False)
    assert any("Adjusted EBITDA 2,117 2,018" in c.text for c in doc.chunks)
    assert any("p. 1: tables read as plain text (ValueError: bad box)" in w for w in doc.warnings)


def test_malformed_content_streams_do_not_fail_the_file():
    garbage = "BT /F1 10 Tf 50 700 Td (unclosed Tj ET q 1 0 0 cm Q Q Q BT /F9 Tf ) Tj"
    pdf = make_pdf([garbage, statement_page(statement_rows(6)), "\x00\xff" * 40])
    doc = parse_bytes(pdf, "odd.pdf", isolate=False)
    assert any("| Adjusted EBITDA | 2,117 | 2,018 |" in c.text for c in table_chunks(doc))


def test_table_chunks_are_highlighted_on_the_page_image(tmp_path: Path):
    path = tmp_path / "acme.pdf"
    path.write_bytes(make_pdf([statement_page(statement_rows(30))]))
    doc = parse_bytes(path.read_bytes(), path.name, isolate=False)
    for chunk in table_chunks(doc):
        rows = "\n".join(chunk.text.splitlines()[2:])
        image = sv.render_pdf_page(path, 1, chunk.text, width=300)
        assert image.highlighted_chars >= 0.9 * len(sv._normalise(rows)[0])


@pytest.mark.parametrize(("text", "expected"), [
    ("Net sales $ 34,229 $ 35,355\nCost of sales 19,232 18,795\nOperating income 6,539 7,369", True),
    ("In NIPS, pages 5998-6008, 2017.\nVaswani et al. 2017\nSee Table 2 and Figure 3", False),
    ("Page 12\n\n13\nIntroduction 2021 2022", False),
])
def test_only_pages_with_rows_of_figures_pay_for_the_layout_pass(text, expected):
    assert looks_tabular(text) is expected


def test_a_header_above_the_units_line_and_section_labels_heads_the_table():
    """Balance sheets print "December 31, 2023 2022", then "(In millions)", then "ASSETS" and "CURRENT ASSETS",
    then the first row: the years head the columns, the units the labels, the section names are rows."""
    items = [(120, 750, "CONSOLIDATED BALANCE SHEETS"), (50, 726, "December 31,"), (-400, 726, "2023"),
             (-480, 726, "2022"), (50, 713, "(In millions except par value)"), (50, 700, "ASSETS"),
             (60, 687, "CURRENT ASSETS")]
    y = 674
    for label, first, second in [("Cash and cash equivalents", "$6,006", "$8,555"),
                                 ("Short-term investments", "9,352", "9,595"), ("Inventories", "2,655", "2,675"),
                                 ("Total current assets", "18,013", "20,825")]:
        items += [(70, y, label), (-400, y, first), (-480, y, second)]
        y -= 13
    doc = parse_bytes(make_pdf([placed(items)]), "balance.pdf", isolate=False)
    [chunk] = table_chunks(doc)
    lines = chunk.text.splitlines()
    assert lines[0] == "| December 31, (In millions except par value) | 2023 | 2022 |"
    assert lines[2:4] == ["| ASSETS |  |  |", "| CURRENT ASSETS |  |  |"]
    assert "| Short-term investments | 9,352 | 9,595 |" in lines


def test_the_wrapped_cells_under_a_table_do_not_head_the_next_one():
    """Two tables of the same columns, the first's last row wrapping its cells onto two more lines, then a
    label line and the second table's rows: the wrapped cells are not the second table's header (it keeps the
    first one's, as a continuation). The label is too long to be read as a section name of the second table."""
    items = [(-420, 750, "2021"), (-500, 750, "2020"), (-580, 750, "2019")]
    y = 736
    for label in ("Discount rate", "Rate of compensation increase", "Medical trend"):
        items += [(50, y, label), (-420, y, "2.94%"), (-500, y, "2.74%"), (-580, y, "3.44%")]
        y -= 12
    items += [(390, y, "6.00% in 2022"), (470, y, "6.25% in 2021"), (550, y, "6.50% in 2020"),
              (50, y - 12, "Weighted average assumptions used to determine periodic cost:")]
    y -= 24
    for label in ("Discount rate", "Expected return on plan assets", "Rate of compensation increase"):
        items += [(50, y, label), (-420, y, "2.74%"), (-500, y, "3.44%"), (-580, y, "4.38%")]
        y -= 12
    doc = parse_bytes(make_pdf([placed(items)]), "assumptions.pdf", isolate=False)
    headers = [c.text.splitlines()[0] for c in table_chunks(doc)]
    assert headers and all("in 2022" not in h for h in headers), headers


def test_a_label_ending_in_a_word_that_needs_more_is_joined_to_the_next_line_whatever_its_case():
    """A cash flow statement in capitals wraps "EFFECT OF EXCHANGE RATE CHANGES ON CASH AND" over "CASH
    EQUIVALENTS", whose figures stand on the second line: one row, not a heading "... ON CASH AND" over a row
    "CASH EQUIVALENTS" (which a question for the cash and cash equivalents read as its figure)."""
    items = [(120, 750, "CONSOLIDATED STATEMENTS OF CASH FLOWS"), (50, 726, "Year Ended December 31,"),
             (-400, 726, "2017"), (-480, 726, "2016")]
    y = 710
    for label, first, second in [("Net cash provided by operating activities", "6,995", "8,792"),
                                 ("Net cash used in investing activities", "(2,385)", "(999)"),
                                 ("EFFECT OF EXCHANGE RATE CHANGES ON CASH AND", "", ""),
                                 ("CASH EQUIVALENTS", "242", "(6)"),
                                 ("Balance at end of year", "6,006", "8,555")]:
        items += [(50, y, label)] + [(x, y, v) for x, v in ((-400, first), (-480, second)) if v]
        y -= 13
    doc = parse_bytes(make_pdf([placed(items)]), "flows.pdf", isolate=False)
    [chunk] = table_chunks(doc)
    lines = chunk.text.splitlines()
    assert "| EFFECT OF EXCHANGE RATE CHANGES ON CASH AND CASH EQUIVALENTS | 242 | (6) |" in lines, lines
    assert not any(line.startswith("| CASH EQUIVALENTS") for line in lines), lines


def test_a_bank_balance_sheets_long_labels_stating_amounts_are_rows_not_prose():
    """A card issuer's balance sheet labels its rows at length, stating amounts of their own ("Card Member loans
    …, less reserves for credit losses: 2022, $3,747; 2021, $3,305"): still a table with its header of years and
    its "Total assets" row, not prose of a neighbouring column read across (the table was dropped, or kept from
    halfway down without its header)."""
    items = [(120, 750, "CONSOLIDATED BALANCE SHEETS"), (50, 726, "December 31 (Millions, except share data)"),
             (-400, 726, "2022"), (-480, 726, "2021"), (50, 713, "Assets")]
    y = 700
    for label, first, second in [
            ("Cash and due from banks (includes restricted cash of consolidated variable interest entities: "
             "2022, $5; 2021, $11)", "$5,510", "$1,292"),
            ("Card Member receivables, less reserves for credit losses: 2022, $229; 2021, $64", "57,384", "53,581"),
            ("Card Member loans held by consolidated entities, less reserves for credit losses: 2022, $3,747; 2021, "
             "$3,305", "104,217", "85,257"),
            ("Investment securities", "4,578", "2,591"),
            ("Premises and equipment, less accumulated depreciation and amortization: 2022, $9,850; 2021, $8,602",
             "5,215", "4,988"),
            ("Total assets", "$228,354", "$188,548")]:
        items += [(50, y, label), (-400, y, first), (-480, y, second)]
        y -= 13
    doc = parse_bytes(make_pdf([placed(items, size=7)]), "bank.pdf", isolate=False)
    [chunk] = table_chunks(doc)
    lines = chunk.text.splitlines()
    assert lines[0].endswith("| 2022 | 2021 |"), lines[0]
    assert "| Total assets | $228,354 | $188,548 |" in lines, lines
