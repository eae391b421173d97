"""Scans made here: text drawn with a known font (DejaVu Sans from Debian's fonts-dejavu-core, else Pillow's own), saved
as an image or wrapped in an image-only PDF by Pillow; and how much of it OCR gave back."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader, PdfWriter

needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="Tesseract is not installed here (`make ocr` installs it; `make test`, and so CI, runs it first)")
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
PAGE_TEXT = [
    ["Lease agreement for the harbour office", "The tenant pays 1250 euros every month",
     "Notice period is three months in writing"],
    ["Second page of the signed contract", "The landlord repairs the roof before winter",
     "Both parties signed on the ninth of March"],
]


def font(size: int = 48):
    return ImageFont.truetype(str(DEJAVU), size) if DEJAVU.is_file() else ImageFont.load_default(size)


def scan_image(lines: list[str], size=(2480, 3508)) -> Image.Image:
    """An A4 page at 300 dpi with `lines` drawn in black, as a scanner would deliver it (greyscale)."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    for n, line in enumerate(lines):
        draw.text((240, 300 + 90 * n), line, font=font(), fill=0)
    return image


def scanned_pdf(pages: list[list[str]]) -> bytes:
    """An image-only PDF (no text layer), one scanned page per item."""
    images = [scan_image(lines) for lines in pages]
    buffer = io.BytesIO()
    images[0].save(buffer, format="PDF", save_all=True, append_images=images[1:], resolution=300)
    return buffer.getvalue()


def text_pdf(pages: list[str]) -> bytes:
    """A PDF with a real text layer (Helvetica), one page per item."""
    from tests.helpers.documents import make_pdf

    return make_pdf(pages)


def interleave(*sources: tuple[bytes, int]) -> bytes:
    """Pages (pdf bytes, page index) in the order given, as one PDF."""
    writer = PdfWriter()
    for data, index in sources:
        writer.add_page(PdfReader(io.BytesIO(data)).pages[index])
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def recall(expected: list[str], text: str) -> float:
    """Share of the expected words that OCR gave back (each found word counted once)."""
    found = words(text)
    hits = 0
    for word in words(" ".join(expected)):
        if word in found:
            found.remove(word)
            hits += 1
    return hits / max(len(words(" ".join(expected))), 1)


def page_texts(document) -> dict[int, str]:
    out: dict[int, str] = {}
    for chunk in document.chunks:
        out[chunk.location.page] = out.get(chunk.location.page, "") + "\n" + chunk.text
    return out
