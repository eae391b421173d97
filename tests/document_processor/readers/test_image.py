"""document_processor.readers.image: images as documents (OCR), image bombs and broken images."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from document_processor import DocumentError, parse_bytes, parse_file
from tests.helpers.ocr import PAGE_TEXT, needs_tesseract, page_texts, recall, scan_image


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
