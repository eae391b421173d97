"""Show a cited passage where it stands in its original file: PDF page image, neighbours, slide, cell range.

A scanned page (and an image document) has no text layer to find the passage in, so it is read again with
OCR, exactly as parsing read it, and the passage is highlighted from the word boxes. Without Tesseract the
page still shows, unhighlighted.

No streamlit here: each function returns plain data (PNG bytes, strings, rows) the app puts on the page.
Every reader raises `SourceError` with a reason a person understands; the app then falls back to the
chunk's own text, so a missing or damaged original never breaks an answer.
"""

from __future__ import annotations

import contextlib
import csv
import ctypes
import io
import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from document_processor import format_value
from ui.helpers import match_spans

WINDOW = 24  # normalised characters per search window when the whole passage is not found verbatim
HIGHLIGHT_RGBA = (255, 214, 0, 90)  # translucent yellow, like a highlighter pen
MAX_TABLE_ROWS = 200
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp")
log = logging.getLogger(__name__)


class SourceError(Exception):
    """The original file cannot show this passage (missing, unreadable, page or sheet out of range)."""


@dataclass(frozen=True)
class PageImage:
    """A rendered PDF page: PNG bytes, its size in pixels, how many characters were highlighted, and the band
    around the highlight (so the viewer opens on the passage, the whole page a click away)."""

    png: bytes
    width: int
    height: int
    highlighted_chars: int
    page_count: int
    focus_png: bytes = b""  # the band of the page around the highlight (b"" when it covers most of the page)


def _normalise(text: str) -> tuple[str, list[int]]:
    """Lower-cased letters and digits of `text` (NFKC, so ligatures match) and each one's source index.

    Whitespace, hyphens and punctuation differ between extractors (pypdf vs pdfium, line-break hyphens),
    so matching only letters and digits finds the same passage whichever library read it.
    """
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch).lower():
            if c.isalnum():
                chars.append(c)
                origin.append(i)
    return "".join(chars), origin


def passage_char_indices(page_text: str, passage: str, window: int = WINDOW) -> list[int]:
    """Indices into `page_text` covered by `passage`: the whole passage if found, else its matching windows.

    Returns [] when nothing matches. Windows are consecutive `window`-character slices of the normalised
    passage; a chunk that runs onto the next page or was cleaned by the parser still lights up what is here.
    """
    page_norm, origin = _normalise(page_text)
    needle, _ = _normalise(passage)
    if not page_norm or not needle:
        return []
    hits: set[int] = set()
    at = page_norm.find(needle)
    if at >= 0:
        hits.update(range(at, at + len(needle)))
    else:
        for start in range(0, len(needle), window):
            piece = needle[start:start + window]
            if len(piece) < min(window, 8):  # a short tail matches anywhere; it proves nothing
                continue
            found = page_norm.find(piece)
            if found >= 0:
                hits.update(range(*_grow(page_norm, needle, found, start, len(piece))))
    return sorted({origin[i] for i in hits})


def _grow(page: str, needle: str, at: int, start: int, size: int) -> tuple[int, int]:
    """Extend a window match at page[at:] == needle[start:] both ways while the characters agree.

    Windows fall at fixed offsets, so the one holding the passage's last words on this page also holds
    words from the next page and never matches; growing the neighbouring matches recovers those words.
    """
    first, end, j = at, at + size, start + size
    while end < len(page) and j < len(needle) and page[end] == needle[j]:
        end, j = end + 1, j + 1
    k = start
    while first > 0 and k > 0 and page[first - 1] == needle[k - 1]:
        first, k = first - 1, k - 1
    return first, end


def line_rects(boxes: Sequence[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Merge character boxes (left, top, right, bottom in pixels, reading order) into one box per line run."""
    rects: list[list[float]] = []
    for left, top, right, bottom in boxes:
        if rects:
            last = rects[-1]
            overlap = min(bottom, last[3]) - max(top, last[1])
            same_line = overlap > 0.5 * min(bottom - top, last[3] - last[1])
            if same_line and left >= last[0] - 2:
                last[:] = [min(last[0], left), min(last[1], top), max(last[2], right), max(last[3], bottom)]
                continue
        rects.append([left, top, right, bottom])
    return [tuple(r) for r in rects]


def render_page(path: Path, page_number: int, passage: str, width: int = 900) -> PageImage:
    """Page `page_number` of a PDF or an image document (TIFF pages included) with `passage` highlighted.

    Raises:
        SourceError: the file cannot be opened or has no such page.
    """
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return render_image_page(path, page_number, passage, width)
    return render_pdf_page(path, page_number, passage, width)


def render_plain(path: Path, page_number: int, width: int = 900) -> bytes:
    """PNG of page `page_number` of a PDF or an image document as it is, nothing found or highlighted: shown at
    once while OCR looks for the passage on a scan or a photo (seconds).

    Raises:
        SourceError: the file cannot be opened or has no such page.
    """
    if path.suffix.lower() in IMAGE_SUFFIXES:
        picture = _image_frame(path, page_number)[0].convert("RGB")
        picture.thumbnail((width, max(1, round(picture.height * width / max(picture.width, 1)))))
    else:
        with pdf_page(path, page_number) as (page, _count):
            picture = page.render(scale=width / max(page.get_width(), 1.0)).to_pil().convert("RGB")
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def _image_frame(path: Path, page_number: int):
    """(frame `page_number` of an image document, its number of frames)."""
    from document_processor import DocumentError
    from document_processor.readers.image import frame, open_image

    try:
        image = open_image(path.read_bytes(), path.name)
        count = getattr(image, "n_frames", 1)
        if not 1 <= page_number <= count:
            raise SourceError(f"the image has {count} pages, there is no page {page_number}")
        return frame(image, page_number - 1, path.name), count
    except (DocumentError, OSError) as error:
        raise SourceError(f"cannot open the image: {error}") from error


def render_pdf_page(path: Path, page_number: int, passage: str, width: int = 900) -> PageImage:
    """Render page `page_number` (1-based) of a PDF at about `width` pixels with `passage` highlighted.

    Raises:
        SourceError: the file cannot be opened or has no such page.
    """
    with pdf_page(path, page_number) as (page, count):
        image = page.render(scale=width / max(page.get_width(), 1.0)).to_pil().convert("RGBA")
        boxes = _passage_boxes(page, passage, image.size) or _scan_boxes(page, passage, image.size)
        return page_image(image, boxes, count)


@contextlib.contextmanager
def pdf_page(path: Path, page_number: int, what: str = "PDF", unit: str = "pages"):
    """(page `page_number` (1-based) of the PDF at `path`, its number of pages), open for the `with` block.

    Raises:
        SourceError: the file cannot be opened or has no such page (said of a `what` with `unit`).
    """
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError) as error:
        raise SourceError(f"cannot open the {what}: {error}") from error
    try:
        if not 1 <= page_number <= len(pdf):
            raise SourceError(f"the {what} has {len(pdf)} {unit}, there is no {unit[:-1]} {page_number}")
        yield pdf[page_number - 1], len(pdf)
    finally:
        pdf.close()


def render_image_page(path: Path, page_number: int, passage: str, width: int = 900) -> PageImage:
    """Page `page_number` (1-based; TIFFs have several) of an image with `passage` highlighted by OCR.

    Raises:
        SourceError: the image cannot be opened or has no such page.
    """
    from document_processor.readers import ocr

    picture, count = _image_frame(path, page_number)
    boxes = _ocr_boxes(lambda: ocr.recognise(picture), passage, picture.width)
    shown = picture.convert("RGBA")
    factor = min(1.0, width / max(shown.width, 1))
    if factor < 1.0:
        shown = shown.resize((max(1, round(shown.width * factor)), max(1, round(shown.height * factor))))
    boxes = [tuple(v * factor for v in box) for box in boxes]
    return page_image(shown, boxes, count)


def _scan_boxes(page, passage: str, size: tuple[int, int]) -> list[tuple[float, float, float, float]]:
    """Boxes of the passage on a page parsing read by OCR (none on a page with a good text layer)."""
    from document_processor.readers.pdf import ocr_pdf_page, page_needs_ocr

    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range().replace("\ufffe", "")
    finally:
        textpage.close()
    if not page_needs_ocr(page, text):
        return []
    return _ocr_boxes(lambda: ocr_pdf_page(page), passage, size[0])


def _ocr_boxes(read, passage: str, width: int) -> list[tuple[float, float, float, float]]:
    """Pixel boxes (for an image `width` wide) of the passage's characters in what `read()` recognises."""
    from document_processor.readers.ocr import OcrError, OcrUnavailable

    try:
        page = read()
    except (OcrUnavailable, OcrError) as error:  # the page is still shown, only not highlighted
        log.warning("no OCR highlight: %s", error)
        return []
    text, char_boxes = page.text_with_boxes()
    factor = width / max(page.width, 1)
    boxes = [char_boxes[i] for i in passage_char_indices(text, passage)]
    return [tuple(v * factor for v in box) for box in boxes if box is not None]


def _passage_boxes(page, passage: str, size: tuple[int, int]) -> list[tuple[float, float, float, float]]:
    """Pixel boxes of the passage's characters on the rendered page, in reading order."""
    return char_boxes(page, size, lambda text: passage_char_indices(text, passage))


def char_boxes(page, size: tuple[int, int], pick) -> list[tuple[float, float, float, float]]:
    """Pixel boxes (for an image of `size`) of the characters of the page's text layer at the indices
    `pick(page_text)` returns."""
    import pypdfium2.raw as pdfium_c

    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        # One character per index (get_text_range may insert or drop characters), so indices match char boxes.
        page_text = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage.raw, i) or 32) for i in range(count))
        boxes = []
        for index in pick(page_text):
            left, bottom, right, top = textpage.get_charbox(index)
            x1, y1 = to_device(page, size, left, top)
            x2, y2 = to_device(page, size, right, bottom)
            boxes.append((min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)))
        return boxes
    finally:
        textpage.close()


def to_device(page, size: tuple[int, int], x: float, y: float) -> tuple[int, int]:
    """PDF page coordinates to image pixels; pdfium applies the crop box and /Rotate as when rendering."""
    import pypdfium2.raw as pdfium_c

    dx, dy = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(page.raw, 0, 0, size[0], size[1], 0, x, y, ctypes.byref(dx), ctypes.byref(dy))
    return dx.value, dy.value


FOCUS_MARGIN = 0.12  # of the page's height, above and below the highlighted lines
FOCUS_MAX = 0.6  # a band taller than this share of the page is no crop: the whole page is shown


def page_image(image, boxes, page_count: int) -> PageImage:
    """The page with the boxes highlighted, and the band of it around them."""
    from PIL import Image

    png = _highlighted_png(image, boxes)
    focus = b""
    if boxes:
        margin = FOCUS_MARGIN * image.height
        top = max(0, int(min(b[1] for b in boxes) - margin))
        bottom = min(image.height, int(max(b[3] for b in boxes) + margin))
        if bottom - top <= FOCUS_MAX * image.height:
            buffer = io.BytesIO()
            Image.open(io.BytesIO(png)).crop((0, top, image.width, bottom)).save(buffer, format="PNG", optimize=True)
            focus = buffer.getvalue()
    return PageImage(png, image.width, image.height, len(boxes), page_count, focus)


def _highlighted_png(image, boxes) -> bytes:
    from PIL import Image, ImageDraw

    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for left, top, right, bottom in line_rects(boxes):
        draw.rectangle((left - 2, top - 2, right + 2, bottom + 2), fill=HIGHLIGHT_RGBA)
    buffer = io.BytesIO()
    Image.alpha_composite(image, overlay).convert("RGB").save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def neighbours(chunks: Sequence, target, radius: int = 1) -> list:
    """The chunks of one document within `radius` ordinals of `target`, in reading order (target included)."""
    near = [c for c in chunks if c.doc_id == target.doc_id and abs(c.ordinal - target.ordinal) <= radius]
    if not any(c.id == target.id for c in near):
        near.append(target)
    return sorted(near, key=lambda c: c.ordinal)


@dataclass(frozen=True)
class Slide:
    """The text on one slide (shapes and tables, in order) and its speaker notes."""

    number: int
    text: str
    notes: str


def read_slide(path: Path, number: int) -> Slide:
    """Slide `number` (1-based) of a PPTX: its text and notes.

    Raises:
        SourceError: the file cannot be read or has no such slide.
    """
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    try:
        slides = list(Presentation(str(path)).slides)
    except (PackageNotFoundError, KeyError, ValueError, OSError) as error:
        raise SourceError(f"cannot open the presentation: {error}") from error
    if not 1 <= number <= len(slides):
        raise SourceError(f"the presentation has {len(slides)} slides, there is no slide {number}")
    slide = slides[number - 1]
    lines = [line for shape in slide.shapes for line in _shape_lines(shape)]
    notes = slide.notes_slide.notes_text_frame.text if slide.has_notes_slide else ""
    return Slide(number, "\n".join(lines), (notes or "").strip())


SLIDE_INK, SLIDE_FRAME, SLIDE_PICTURE = (34, 34, 34), (200, 200, 200), (236, 236, 236)


def render_slide(path: Path, number: int, terms: Sequence[str], width: int = 900) -> PageImage:
    """Slide `number` (1-based) drawn from its shapes where they sit: each text box's text wrapped in its frame,
    tables as grids, pictures as grey boxes, and every word of `terms` highlighted. Not the slide's design (that
    needs LibreOffice), but the passage where it is on the slide.

    Raises:
        SourceError: the file cannot be read or has no such slide.
    """
    from PIL import Image, ImageDraw
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    try:
        deck = Presentation(str(path))
        slides = list(deck.slides)
    except (PackageNotFoundError, KeyError, ValueError, OSError) as error:
        raise SourceError(f"cannot open the presentation: {error}") from error
    if not 1 <= number <= len(slides):
        raise SourceError(f"the presentation has {len(slides)} slides, there is no slide {number}")
    emu_w, emu_h = int(deck.slide_width or 9144000), int(deck.slide_height or 6858000)
    scale = width / emu_w
    image = Image.new("RGBA", (width, max(1, round(emu_h * scale))), (255, 255, 255, 255))
    draw = ImageDraw.Draw(image)
    wanted = {t.lower() for t in terms if t.strip()}
    boxes: list[tuple[float, float, float, float]] = []
    for shape in _flat_shapes(slides[number - 1].shapes):
        if shape.left is None or shape.top is None or shape.width is None or shape.height is None:
            continue
        frame = (shape.left * scale, shape.top * scale, (shape.left + shape.width) * scale,
                 (shape.top + shape.height) * scale)
        if getattr(shape, "has_table", False) and shape.has_table:
            _draw_table(draw, frame, [[c.text for c in row.cells] for row in shape.table.rows], wanted, boxes)
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame and shape.text_frame.text.strip():
            size = _font_points(shape.text_frame) * 12700 * scale  # points -> EMU -> pixels
            _draw_text(draw, frame, shape.text_frame.text, max(9.0, size), wanted, boxes)
        elif shape.shape_type is not None and "PICTURE" in str(shape.shape_type):
            draw.rectangle(frame, fill=SLIDE_PICTURE, outline=SLIDE_FRAME)
    return PageImage(_highlighted_png(image, boxes), image.width, image.height, len(boxes), len(slides))


def _flat_shapes(shapes):
    for shape in shapes:
        if getattr(shape, "shapes", None) is not None:  # a group: its members
            yield from _flat_shapes(shape.shapes)
        else:
            yield shape


def _font_points(text_frame) -> float:
    """The first explicit run size in the frame (points), else 18: a body text's usual size."""
    for paragraph in text_frame.paragraphs:
        for run in paragraph.runs:
            if run.font.size is not None:
                return run.font.size.pt
    return 18.0


def _font(pixels: float):
    from PIL import ImageFont

    return ImageFont.load_default(size=max(8, round(pixels)))


def _draw_text(draw, frame, text: str, size: float, wanted: set[str], boxes: list, pad: float = 4.0) -> None:
    """Text wrapped to the frame's width from its top left; words in `wanted` add their boxes to `boxes`."""
    font = _font(size)
    left, top, right, bottom = frame
    line_height = size * 1.25
    y = top + pad
    for paragraph in text.split("\n"):
        x = left + pad
        for word in paragraph.split():
            w = draw.textlength(word + " ", font=font)
            if x + w > right - pad and x > left + pad:
                x, y = left + pad, y + line_height
            draw.text((x, y), word, font=font, fill=SLIDE_INK)
            if wanted and any(match_spans(word, wanted)):  # the same matching as the passage's text marks
                boxes.append((x, y, x + draw.textlength(word, font=font), y + size * 1.1))
            x += w
        y += line_height
    draw.rectangle(frame, outline=SLIDE_FRAME)


def _draw_table(draw, frame, rows: list[list[str]], wanted: set[str], boxes: list) -> None:
    if not rows or not rows[0]:
        return
    left, top, right, bottom = frame
    cell_w, cell_h = (right - left) / len(rows[0]), (bottom - top) / len(rows)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            cell = (left + c * cell_w, top + r * cell_h, left + (c + 1) * cell_w, top + (r + 1) * cell_h)
            _draw_text(draw, cell, text, min(18.0, cell_h * 0.5), wanted, boxes, pad=3.0)


def _shape_lines(shape) -> list[str]:
    if getattr(shape, "has_table", False) and shape.has_table:
        return [" | ".join(cell.text for cell in row.cells) for row in shape.table.rows]
    if getattr(shape, "shapes", None) is not None:  # a group: its members, in order
        return [line for member in shape.shapes for line in _shape_lines(member)]
    if shape.has_text_frame and shape.text_frame.text.strip():
        return [shape.text_frame.text.strip()]
    return []


@dataclass(frozen=True)
class Table:
    """A cell range as strings: column names (unique, never empty) and rows."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    truncated: bool = False
    first_row: int = 0  # the sheet's row number of rows[0] (0: not read from a sheet)
    letters: tuple[str, ...] = ()  # the sheet's column letter of each column


def read_cells(path: Path, sheet: str | None, cells: str | None, max_rows: int = MAX_TABLE_ROWS) -> Table:
    """The range `cells` ('B2:F40') of `sheet` in an XLSX or CSV, with the sheet's header row on top.

    The header is the sheet's header row (`header_row`) when the range starts below it, else the range's first
    row. Values read as the file shows them (number formats applied), as the sheet reader indexed them.
    Raises:
        SourceError: unreadable file, unknown sheet or malformed range.
    """
    rows = _csv_rows(path) if path.suffix.lower() == ".csv" else _xlsx_rows(path, sheet)
    if not rows:
        raise SourceError("the sheet is empty")
    first_row, last_row, first_col, last_col = _bounds(cells, rows)
    top = header_row(rows)
    header = rows[top - 1] if first_row > top else rows[first_row - 1]
    body_start = first_row if first_row > top else first_row + 1
    body = [r[first_col - 1:last_col] for r in rows[body_start - 1:last_row]]
    columns = _unique_columns(header[first_col - 1:last_col], first_col, last_col)
    width = len(columns)
    shaped = tuple(tuple((list(r) + [""] * width)[:width]) for r in body[:max_rows])
    letters = tuple(column_letter(n) for n in range(first_col, first_col + width))
    return Table(columns, shaped, truncated=len(body) > max_rows, first_row=body_start, letters=letters)


def header_row(rows: Sequence[Sequence[str]]) -> int:
    """The sheet's header: its first row with two or more filled cells (as the sheet reader takes it), 1-based;
    a title above the table ('Budget 2024' in A1) is not the header."""
    return next((n for n, row in enumerate(rows, start=1) if sum(1 for c in row if str(c).strip()) >= 2), 1)


def matched_rows(table: Table, terms: Sequence[str]) -> set[int]:
    """Indexes of the rows that hold the most of `terms` (at least one): the rows a question was about."""
    wanted = [t.lower() for t in terms if t.strip()]
    if not wanted:
        return set()
    counts = [sum(1 for t in wanted if any(t in cell.lower() for cell in row)) for row in table.rows]
    best = max(counts, default=0)
    return {i for i, n in enumerate(counts) if n == best} if best else set()


def _xlsx_rows(path: Path, sheet: str | None) -> list[list[str]]:
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = load_workbook(str(path), read_only=True, data_only=True)
    except (InvalidFileException, KeyError, ValueError, OSError) as error:
        raise SourceError(f"cannot open the workbook: {error}") from error
    try:
        if sheet is not None and sheet not in book.sheetnames:
            raise SourceError(f"the workbook has no sheet named {sheet!r}")
        ws = book[sheet] if sheet is not None else book.worksheets[0]
        return [[format_value(cell.value, getattr(cell, "number_format", "") or "") for cell in row]
                for row in ws.iter_rows()]  # as the file shows them (and as they were indexed): 62.3%, $12.50
    finally:
        book.close()


def _csv_rows(path: Path) -> list[list[str]]:
    try:
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError as error:
        raise SourceError(f"cannot read the file: {error}") from error
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    return [list(row) for row in csv.reader(io.StringIO(text), dialect)]


_RANGE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?$")


def _bounds(cells: str | None, rows: list[list[str]]) -> tuple[int, int, int, int]:
    """(first_row, last_row, first_col, last_col), 1-based and inclusive; the whole sheet when cells is None."""
    if not cells:
        return 1, len(rows), 1, max(len(r) for r in rows)
    match = _RANGE.match(cells.strip())
    if not match:
        raise SourceError(f"cannot read the cell range {cells!r}")
    col1, row1, col2, row2 = match.groups()
    first_col, last_col = _column_number(col1), _column_number(col2 or col1)
    first_row, last_row = int(row1), int(row2 or row1)
    return min(first_row, last_row), max(first_row, last_row), min(first_col, last_col), max(first_col, last_col)


def _column_number(letters: str) -> int:
    number = 0
    for ch in letters.upper():
        number = number * 26 + ord(ch) - ord("A") + 1
    return number


def column_letter(number: int) -> str:
    """1 -> 'A', 27 -> 'AA'."""
    letters = ""
    while number > 0:
        number, rest = divmod(number - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _unique_columns(header: Sequence[str], first_col: int, last_col: int) -> tuple[str, ...]:
    """Header cells as column names; blanks become the column letter and repeats get a suffix."""
    names: list[str] = []
    for offset in range(last_col - first_col + 1):
        raw = header[offset].strip() if offset < len(header) else ""
        name = raw or column_letter(first_col + offset)
        while name in names:
            name += f" ({column_letter(first_col + offset)})"
        names.append(name)
    return tuple(names)


def markdown_table(text: str) -> Table | None:
    """The first pipe table in a chunk's text ('| a | b |' lines) as a Table, or None when there is none.

    Sheet chunks are indexed as Markdown tables; when the original workbook is not stored this still shows
    the cited cells as a table. The first row is the header; '---' separator rows are dropped.
    """
    rows: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells if c):
            continue
        rows.append(cells)
    if len(rows) < 2:
        return None
    width = max(len(r) for r in rows)
    columns = _unique_columns(rows[0], 1, width)
    return Table(columns, tuple(tuple((r + [""] * width)[:width]) for r in rows[1:]))


_CITED_RANGE = re.compile(r"(?:(?P<sheet>[^!;]+)!)?(?P<cells>[A-Z]{1,3}\d+(?::[A-Z]{1,3}\d+)?)")


def cell_ranges(cells: str) -> list[tuple[str | None, str]]:
    """(sheet, range) for each sheet range a computed passage names, widened to start at column A so the rows'
    labels show beside the cells read ("FAM!C2; FAM!C39" -> [("FAM", "A2:C2"), ("FAM", "A39:C39")]); a PDF
    table's "row 13, column ..." names none."""
    out = []
    for part in cells.split(";"):
        m = _CITED_RANGE.fullmatch(part.strip())
        if m:
            first, _, last = m.group("cells").partition(":")
            last = last or first
            out.append((m.group("sheet"), f"A{first.lstrip('ABCDEFGHIJKLMNOPQRSTUVWXYZ')}:{last}"))
    return out


def cited_cells(cells: str, sheet: str | None = None, limit: int = 2000) -> set[str]:
    """Every cell a computed passage names on `sheet` (any sheet when None) ("FAM!C2:C4; FAM!E9" ->
    {"C2", "C3", "C4", "E9"}), at most `limit`: the cells the viewer marks."""
    out: set[str] = set()
    for part in cells.split(";"):
        m = _CITED_RANGE.fullmatch(part.strip())
        if not m or (sheet is not None and m.group("sheet") not in (None, sheet)):
            continue
        try:
            first_row, last_row, first_col, last_col = _bounds(m.group("cells"), [])
        except SourceError:
            continue
        for row in range(first_row, last_row + 1):
            for col in range(first_col, last_col + 1):
                if len(out) >= limit:
                    return out
                out.add(f"{column_letter(col)}{row}")
    return out


def computed_row_label(text: str) -> str:
    """The row a computed passage read, as the table prints it ("Net earnings" from "Net earnings, 2021 to 2022:
    from 20,878 to 17,941 ..."): what to highlight on the page."""
    lines = text.splitlines()
    result = lines[1] if len(lines) > 1 else ""
    return result.split(":", 1)[0].split(",", 1)[0].strip()
