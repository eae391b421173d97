"""document_processor.readers.pdf: pages, outlines, encryption, pages without text, and which pages of a mixed PDF are
OCR'd."""

from __future__ import annotations

import io
import re

import pytest
from pypdf import PdfWriter

from document_processor import DocumentError, Location, parse_bytes
from document_processor.readers.pdf import text_layer_problem
from tests.helpers.documents import MAX, chunk_with, make_pdf, technical_text, tokens
from tests.helpers.ocr import PAGE_TEXT, interleave, needs_tesseract, page_texts, recall, scanned_pdf, text_pdf


def pdf_writer(data: bytes) -> PdfWriter:
    return PdfWriter(clone_from=io.BytesIO(data))


def to_bytes(writer: PdfWriter) -> bytes:
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_pdf_fact_on_page_three_and_pages_never_mixed(tmp_path):
    ascii_text = lambda seed: technical_text(3, seed).encode("ascii", "replace").decode()  # noqa: E731  (Helvetica)
    pages = [ascii_text(p) + f"\nPage marker {p + 1}" for p in range(3)]
    pages[2] += "\nThe PLANTED-PDF-3 value is 17."
    doc = parse_bytes(make_pdf(pages), "three.pdf", isolate=False)
    assert (doc.unit_name, doc.units, doc.title) == ("pages", 3, "three")
    assert chunk_with(doc, "PLANTED-PDF-3").location == Location(page=3)
    squash = lambda s: re.sub(r"\s+", "", s)  # noqa: E731
    page_text = {p + 1: squash(t) for p, t in enumerate(pages)}
    for chunk in doc.chunks:
        assert squash(chunk.text) in page_text[chunk.location.page]  # one page per chunk, text from that page
        assert tokens(chunk.index_text) <= MAX


def test_pdf_outline_gives_heading_paths(tmp_path):
    writer = pdf_writer(make_pdf(["Intro text here.", "Methods\nWe measured things.", "Results\nPLANTED-OUTLINE"]))
    writer.add_outline_item(title="Methods", page_number=1)
    writer.add_outline_item(title="Results", page_number=2)
    doc = parse_bytes(to_bytes(writer), "outlined.pdf", isolate=False)
    assert chunk_with(doc, "Intro text").heading_path == ()
    assert chunk_with(doc, "We measured").heading_path == ("Methods",)
    assert chunk_with(doc, "PLANTED-OUTLINE").heading_path == ("Results",)


IMAGE_ONLY_PAGE = b"q 200 0 0 200 100 400 cm BI /W 2 /H 2 /BPC 8 /CS /G ID \xff\x00\x00\xff EI Q"


@pytest.mark.parametrize("pages", [[IMAGE_ONLY_PAGE, IMAGE_ONLY_PAGE], None])
def test_pdf_without_text_is_no_text(pages):
    if pages is None:
        writer = PdfWriter()
        writer.add_blank_page(width=200, height=200)
        data = to_bytes(writer)
    else:
        data = make_pdf(pages)
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, "scan.pdf", isolate=False)
    # the reason says what the reading found, never guesses "scanned" for a page without an image
    reason = err.value.reason
    assert err.value.kind == "no_text", reason
    if pages:  # OCR read them (or says it cannot run here: tesseract missing)
        assert "OCR read its 2 pages and found no words" in reason or "scanned images" in reason, reason
    else:
        assert reason == "no text found: its pages hold no text layer and no image to read (blank, or damaged)"
    assert str(err.value).startswith("scan.pdf: ")


def test_pdf_with_user_password_is_encrypted():
    writer = pdf_writer(make_pdf(["secret text"]))
    writer.encrypt(user_password="hunter2", owner_password="owner", algorithm="AES-256")
    with pytest.raises(DocumentError) as err:
        parse_bytes(to_bytes(writer), "locked.pdf", isolate=False)
    assert err.value.kind == "encrypted" and err.value.reason == "encrypted: needs a password"


def test_pdf_with_empty_user_password_opens():
    writer = pdf_writer(make_pdf(["open sesame PLANTED-AES"]))
    writer.encrypt(user_password="", owner_password="owner-only", algorithm="AES-256")
    data = to_bytes(writer)
    assert b"/Encrypt" in data
    assert chunk_with(parse_bytes(data, "aes.pdf", isolate=False), "PLANTED-AES").location == Location(page=1)


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


def test_without_tesseract_a_mixed_pdf_keeps_its_text_pages_and_says_which_were_not_read(no_tesseract):
    typed = text_pdf(["Typed page: the budget is approved by the board of directors today."])
    document = parse_bytes(interleave((typed, 0), (scanned_pdf(PAGE_TEXT[:1]), 0)), "mixed.pdf", isolate=False)
    assert [c.location.page for c in document.chunks] == [1]
    assert len(document.warnings) == 1 and document.warnings[0].startswith("p. 2: scanned, not read (Tesseract")


def test_words_a_ligature_broke_are_mended_from_the_documents_own_words():
    """Some fonts map the 'ff' or 'ffi' glyph to a lone 'f' and the text comes out as 'af ect'."""
    pages = ["Risk factors\nHigher rates could af ect our margins and we may suf er losses.",
             "Weather can affect demand. Our officers suffered no harm.\nThe Of icer signed it.\n"
             "We bought it of balance.\nThe balance was due.\nThe ef ort was large."]
    doc = parse_bytes(make_pdf(pages), "filing.pdf", isolate=False)
    text = "\n".join(c.text for c in doc.chunks)
    assert "could affect our margins" in text and "may suffer losses" in text  # "suffered" is written whole
    assert "The Officer signed it." in text
    assert "of balance" in text  # "balance" is a word of its own
    assert "The ef ort was large." in text  # "effort" is never written whole: nothing is guessed
