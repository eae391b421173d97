"""OCR: scanned PDFs, mixed PDFs, images as documents, the refusal without Tesseract, bombs named as such.

The scans are made here: text drawn with a known font (DejaVu Sans from Debian's fonts-dejavu-core, else
Pillow's own), saved as an image or wrapped in an image-only PDF by Pillow, then read back.
"""

from __future__ import annotations

import io
import re
import shutil
import stat
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from pypdf import PdfReader, PdfWriter

from document_processor import DocumentError, Limits, parse_bytes, parse_file
from document_processor.readers import ocr as ocr_module
from document_processor.readers.ocr import OcrLog, OcrPage, Word, parse_tsv
from document_processor.readers.pdf import text_layer_problem
from document_processor.sniff import flate_bomb

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
    from test_document_processor import make_pdf

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


@pytest.fixture
def no_tesseract(monkeypatch, tmp_path):
    """The OCR command pointed at a binary that does not exist, as on a machine without tesseract-ocr."""
    monkeypatch.setattr(ocr_module, "TESSERACT_CMD", str(tmp_path / "missing" / "tesseract"))


# ---------------------------------------------------------------- scans, mixed PDFs, images

@needs_tesseract
def test_a_scanned_pdf_gives_back_its_words_on_their_pages():
    seen = []
    document = parse_bytes(scanned_pdf(PAGE_TEXT), "lease-scan.pdf", progress=lambda *p: seen.append(p))
    texts = page_texts(document)
    assert document.units == 2 and sorted(texts) == [1, 2]
    for number, lines in enumerate(PAGE_TEXT, start=1):
        assert recall(lines, texts[number]) >= 0.95, texts[number]
    assert "1250" in texts[1] and "roof" in texts[2] and "roof" not in texts[1]
    assert ("ocr", 1, 2) in seen and ("ocr", 2, 2) in seen  # per-page progress crosses the isolation pipe
    assert document.warnings == ()


@needs_tesseract
def test_a_mixed_pdf_is_ocrd_on_its_scanned_pages_only():
    typed = text_pdf(["Typed page one: the budget is approved.\n" + "Plain text layer words. " * 6,
                      "Typed page three: the audit starts in May.\n" + "Plain text layer words. " * 6])
    scans = scanned_pdf(PAGE_TEXT)
    data = interleave((typed, 0), (scans, 0), (typed, 1), (scans, 1))
    seen = []
    document = parse_bytes(data, "mixed.pdf", progress=lambda *p: seen.append(p))
    assert sorted(p[1] for p in seen if p[0] == "ocr") == [2, 4]
    texts = page_texts(document)
    assert "the budget is approved" in texts[1] and "the audit starts in May" in texts[3]
    assert recall(PAGE_TEXT[0], texts[2]) >= 0.95 and recall(PAGE_TEXT[1], texts[4]) >= 0.95


def test_a_good_text_layer_is_never_ocrd(no_tesseract):
    seen = []
    document = parse_bytes(text_pdf(["A page with a good text layer and enough words to count as one."]),
                           "typed.pdf", isolate=False, progress=lambda *p: seen.append(p))
    assert not any(p[0] == "ocr" for p in seen) and document.warnings == ()  # no OCR tried, none missed
    assert text_layer_problem("A page with a good text layer and enough words to count as one.") is None
    assert text_layer_problem("12") == "sparse"
    assert text_layer_problem("\ue000\ue013\ue021 " * 30 + "ab") == "garbage"
    assert text_layer_problem("#$%&'()*+ " * 20 + "abc") == "garbage"


@needs_tesseract
@pytest.mark.parametrize("suffix", [".png", ".jpg", ".webp", ".tiff"])
def test_an_image_is_a_document_and_each_tiff_page_a_page(tmp_path, suffix):
    images = [scan_image(lines, size=(1700, 700)) for lines in PAGE_TEXT]
    path = tmp_path / f"photo{suffix}"
    if suffix == ".tiff":
        images[0].save(path, save_all=True, append_images=images[1:], compression="tiff_deflate")
    else:
        images[0].convert("RGB").save(path, quality=92)
    document = parse_file(path)
    texts = page_texts(document)
    expected = PAGE_TEXT if suffix == ".tiff" else PAGE_TEXT[:1]
    assert document.file_type == "image" and document.unit_name == "pages" and document.units == len(expected)
    for number, lines in enumerate(expected, start=1):
        assert recall(lines, texts[number]) >= 0.9, texts[number]


@needs_tesseract
def test_an_image_without_text_is_no_text():
    buffer = io.BytesIO()
    Image.new("RGB", (400, 300), (200, 220, 240)).save(buffer, format="PNG")
    with pytest.raises(DocumentError) as err:
        parse_bytes(buffer.getvalue(), "sky.png")
    assert err.value.kind == "no_text" and err.value.reason == "OCR found no text in the image"


# ---------------------------------------------------------------- honest when absent or poor

def test_without_tesseract_a_scan_is_refused_with_the_command(no_tesseract):
    for data, name in ((scanned_pdf(PAGE_TEXT[:1]), "scan.pdf"), (_png(scan_image(["Hello"], (600, 200))), "a.png")):
        with pytest.raises(DocumentError) as err:
            parse_bytes(data, name, isolate=False)
        assert err.value.kind == "no_text", err.value.reason
        assert "Tesseract OCR is not installed; install it with: sudo apt-get install tesseract-ocr" in err.value.reason


def test_without_tesseract_a_mixed_pdf_keeps_its_text_pages_and_says_which_were_not_read(no_tesseract):
    typed = text_pdf(["Typed page: the budget is approved by the board of directors today."])
    document = parse_bytes(interleave((typed, 0), (scanned_pdf(PAGE_TEXT[:1]), 0)), "mixed.pdf", isolate=False)
    assert [c.location.page for c in document.chunks] == [1]
    assert len(document.warnings) == 1 and document.warnings[0].startswith("p. 2: scanned, not read (Tesseract")


@needs_tesseract
def test_a_low_mean_confidence_is_indexed_with_a_warning(monkeypatch):
    monkeypatch.setattr(ocr_module, "LOW_CONFIDENCE", 101.0)  # every real result is "low" against 101
    document = parse_bytes(scanned_pdf(PAGE_TEXT[:1]), "faint.pdf", isolate=False)
    assert document.chunks and len(document.warnings) == 1
    assert document.warnings[0].startswith("OCR confidence is low (mean ") and "p. 1" in document.warnings[0]


def test_confidence_warning_names_the_worst_pages():
    log = OcrLog()
    for page, confidence in ((1, 95.0), (2, 20.0), (3, 30.0)):
        log.record(page, OcrPage((Word("x", (0, 0, 1, 1), confidence, (1, 1, 1)),), 10, 10))
    assert log.warnings() == ["OCR confidence is low (mean 48/100; worst pp. 1, 2, 3): words may be misread or "
                              "missing, check the source before relying on it"]
    log.confidences.pop(2)
    log.confidences.pop(3)
    assert log.warnings() == []


def test_a_hanging_tesseract_is_stopped_with_a_reason(monkeypatch, tmp_path):
    script = tmp_path / "tesseract"
    script.write_text('#!/bin/sh\nif [ "$1" = --list-langs ]; then echo eng; exit 0; fi\nexec sleep 30\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(ocr_module, "TESSERACT_CMD", str(script))
    with pytest.raises(ocr_module.OcrError, match="OCR took longer than 0.5 s"):
        ocr_module.recognise(scan_image(["x"], (100, 100)), timeout_s=0.5)


def test_tsv_rows_become_words_with_character_boxes():
    tsv = ("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
           "4\t1\t1\t1\t1\t0\t10\t10\t200\t20\t-1\t\n"
           "5\t1\t1\t1\t1\t1\t10\t10\t40\t20\t96.5\tRent\n"
           "5\t1\t1\t1\t1\t2\t60\t10\t30\t20\t91\tdue\n"
           "5\t1\t1\t1\t1\t3\t95\t10\t5\t20\t3\t~\n"
           "5\t1\t1\t1\t2\t1\t10\t40\t50\t20\t88\tMarch\n"
           "5\t1\t2\t1\t1\t1\t10\t90\t30\t20\t90\tEnd\n")
    page = OcrPage(parse_tsv(tsv), 300, 200)
    text, boxes = page.text_with_boxes()
    assert text == "Rent due\nMarch\n\nEnd"  # the 3 % speck is gone; a new block is a new paragraph
    assert len(boxes) == len(text) and boxes[0] == (10, 10, 20, 30) and boxes[4] is None
    assert page.mean_confidence == pytest.approx((96.5 + 91 + 88 + 90) / 4)


# ---------------------------------------------------------------- bombs and broken images

def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def test_an_image_bomb_is_refused_by_its_size_and_a_broken_image_is_corrupt():
    header = _chunk(b"IHDR", struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0))
    bomb = b"\x89PNG\r\n\x1a\n" + header + _chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + _chunk(b"IEND", b"")
    with pytest.raises(DocumentError) as err:
        parse_bytes(bomb, "bomb.png", isolate=False)
    assert err.value.kind == "too_large" and "over the 150 megapixel limit" in err.value.reason
    with pytest.raises(DocumentError) as err:
        parse_bytes(b"\x89PNG\r\n\x1a\n" + b"junk" * 50, "broken.png", isolate=False)
    assert err.value.kind in ("corrupt", "no_text") and err.value.reason


def flate_bomb_pdf(megabytes: int) -> bytes:
    """A one-page PDF whose content stream inflates to `megabytes` MB of harmless path operators."""
    compressor = zlib.compressobj(9)
    piece = b"0 0 m " * ((1 << 20) // 6 + 1)
    data = b"".join(compressor.compress(piece[: 1 << 20]) for _ in range(megabytes)) + compressor.flush()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
               b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 5\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


@pytest.mark.slow
def test_a_flate_bomb_pdf_is_named_a_compression_bomb_not_a_crash():
    data = flate_bomb_pdf(1200)  # 1.2 GB of content stream, against a 512 MB cap
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, "bomb.pdf", limits=Limits(max_memory_mb=512))
    assert err.value.kind == "zip_bomb", err.value.reason
    assert err.value.reason.startswith("compression bomb: a compressed stream at byte ")
    assert flate_bomb(text_pdf(["An ordinary page."]), 512 << 20) is None


class _ScriptedPipe:
    """The parent's end of the parsing pipe, replaying messages; then silence, as when a page hangs."""

    def __init__(self, messages):
        self.messages = list(messages)

    def poll(self, timeout):
        return bool(self.messages)

    def recv(self):
        return self.messages.pop(0)


def test_a_page_that_hangs_in_ocr_is_named_in_the_timeout():
    from document_processor.isolation import _collect

    seen = []
    pipe = _ScriptedPipe([("started",), ("progress", "ocr", 1, 3), ("progress", "reading", 1, 3),
                          ("progress", "ocr", 2, 3)])
    with pytest.raises(DocumentError) as err:
        _collect(pipe, None, "long-scan.pdf", Limits(timeout_s=60), lambda *p: seen.append(p))
    assert err.value.kind == "timeout" and err.value.reason == "OCR of page 2 took longer than 60 s"
    assert seen == [("ocr", 1, 3), ("reading", 1, 3), ("ocr", 2, 3)]


@needs_tesseract
def test_a_low_confidence_scan_is_indexed_with_its_warning_on_the_result(monkeypatch, tmp_path, fake_embedder):
    from vector_db import VectorStore, make_client
    from wiring import knowledge_base

    monkeypatch.setattr(ocr_module, "LOW_CONFIDENCE", 101.0)  # every real result is "low" against 101
    store = VectorStore(make_client(tmp_path / "data"), fake_embedder)
    kb = knowledge_base(store, tmp_path, fake_embedder, isolate=False)  # the patch reaches the parser
    result = kb.ingest_bytes(scanned_pdf(PAGE_TEXT[:1]), "faint.pdf")
    assert result.status == "indexed" and len(result.warnings) == 1
    assert result.warnings[0].startswith("OCR confidence is low (mean ")
