"""document_processor.readers.ocr: scanned pages read back, the refusal without Tesseract, confidence, a hanging
Tesseract, its TSV."""

from __future__ import annotations

import io
import stat

import pytest
from PIL import Image

from document_processor import DocumentError, parse_bytes
from document_processor.readers import ocr as ocr_module
from document_processor.readers.ocr import OcrLog, OcrPage, Word, parse_tsv
from tests.helpers.ocr import PAGE_TEXT, needs_tesseract, page_texts, recall, scan_image, scanned_pdf


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


def test_without_tesseract_a_scan_is_refused_with_the_command(no_tesseract):
    for data, name in ((scanned_pdf(PAGE_TEXT[:1]), "scan.pdf"), (_png(scan_image(["Hello"], (600, 200))), "a.png")):
        with pytest.raises(DocumentError) as err:
            parse_bytes(data, name, isolate=False)
        assert err.value.kind == "no_text", err.value.reason
        assert "Tesseract OCR is not installed; install it with: sudo apt-get install tesseract-ocr" in err.value.reason


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


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
