"""The sample corpus behind evaluation/sets/sample.jsonl: five small documents with planted facts, written by code.

Facts live where the parser has to work for them: a DOCX table, PPTX speaker notes, two XLSX sheets, the pages
of a PDF, Markdown sections. The files are the same on every run, so their chunk ids are too.
"""

from __future__ import annotations

from pathlib import Path

SAMPLE_DATASET = Path(__file__).resolve().parent / "sets" / "sample.jsonl"  # the questions over this corpus

PDF_PAGES = (
    ("Field Report: Halden Turbine Survey 2024",
     "The survey inspected 37 turbines at the Halden wind farm in Norway",
     "between 3 June and 21 June 2024. It was led by Kari Nygaard."),
    ("Vibration results",
     "The median blade vibration across the fleet was 4.2 mm/s.",
     "Turbine H-19 exceeded the alarm limit of 11 mm/s and was shut down for 6 days."),
    ("Maintenance and findings",
     "The gearbox oil of every turbine was replaced with Optigear 320.",
     "The survey team did not find any corrosion on the towers.",
     "The next inspection is planned for March 2025."),
)

CONTRACT_PARAGRAPHS = (
    "This agreement between Halden Wind AS and Varberg Components AB covers spare parts for 2025.",
    "Payment is due within 45 days of delivery. Late deliveries incur a penalty of 0.5% per week.",
)
CONTRACT_TABLE = (
    ("Part", "Unit price", "Lead time"),
    ("Pitch bearing", "EUR 8,450", "14 weeks"),
    ("Yaw motor", "EUR 2,980", "6 weeks"),
    ("Blade sensor kit", "EUR 615", "3 weeks"),
)

SLIDES = (
    ("Quarterly review Q3 2024", "Halden Wind AS operations", ""),
    ("Availability", "Fleet availability reached 97.3% in Q3",
     "Mention that the new remote monitoring centre in Trondheim opens on 14 November."),
    ("Risks", "A crane shortage delays blade swaps until spring", "Stress that no injuries were reported."),
)

OUTPUT_ROWS = (
    ("Month", "Site", "MWh"),
    ("January", "Halden", 5120), ("February", "Halden", 4870), ("March", "Halden", 6315),
    ("January", "Smola", 3980), ("February", "Smola", 3710), ("March", "Smola", 4402),
)
STAFF_ROWS = (("Site", "Technicians", "Supervisor"), ("Halden", 12, "Ingrid Solberg"), ("Smola", 8, "Per Hansen"))

NOTES_MD = """# Operations notes

## Telemetry
The SCADA gateway listens on port 7443 and sends readings every 10 seconds.

## On-call
The on-call rota changes every Monday at 08:00. Call the duty engineer before restarting a turbine.
"""


def make_sample_corpus(folder: str | Path) -> list[Path]:
    """Write the five sample documents into `folder` (created if missing) and return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    writers = (
        ("field_report.pdf", _write_pdf), ("supplier_contract.docx", _write_docx),
        ("quarterly_review.pptx", _write_pptx), ("production.xlsx", _write_xlsx),
        ("operations_notes.md", _write_markdown),
    )
    paths = []
    for name, write in writers:
        write(folder / name)
        paths.append(folder / name)
    return paths


def _write_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Supply agreement"
    document.add_heading("Supply agreement", level=1)
    document.add_paragraph(CONTRACT_PARAGRAPHS[0])
    document.add_heading("Prices", level=2)
    table = document.add_table(rows=len(CONTRACT_TABLE), cols=len(CONTRACT_TABLE[0]))
    for r, row in enumerate(CONTRACT_TABLE):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("Terms", level=2)
    document.add_paragraph(CONTRACT_PARAGRAPHS[1])
    document.save(path)


def _write_pptx(path: Path) -> None:
    from pptx import Presentation

    deck = Presentation()
    for title, body, notes in SLIDES:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    deck.save(path)


def _write_xlsx(path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    output = book.active
    output.title = "Output"
    for row in OUTPUT_ROWS:
        output.append(row)
    staff = book.create_sheet("Staff")
    for row in STAFF_ROWS:
        staff.append(row)
    book.save(path)


def _write_markdown(path: Path) -> None:
    path.write_text(NOTES_MD, encoding="utf-8")


def _write_pdf(path: Path) -> None:
    path.write_bytes(text_pdf(PDF_PAGES))


def _pdf_escape(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf(pages: tuple[tuple[str, ...], ...]) -> bytes:
    """A minimal valid PDF: one page per tuple of lines, in Helvetica, with a correct xref table.

    Written by hand because pypdf reads but does not lay out text; the layout is a line every 18 points.
    """
    count = len(pages)
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(count))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, lines in enumerate(pages):
        text = " ".join(f"({_pdf_escape(line)}) Tj T*" for line in lines)
        stream = f"BT /F1 12 Tf 18 TL 72 720 Td {text} ET".encode("cp1252")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
                       "/Resources << /Font << /F1 3 0 R >> >> >>".encode())
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)
