"""document_processor.sniff: names, suffixes, zip and compression bombs, and every bad input in one line."""

from __future__ import annotations

import io
import zipfile
import zlib

import docx
import pytest

from document_processor import SUPPORTED_SUFFIXES, DocumentError, Limits, is_supported, parse_bytes, sanitize_name
from document_processor.sniff import flate_bomb
from tests.helpers.documents import make_pdf
from tests.helpers.ocr import text_pdf


def test_names_are_sanitised():
    assert sanitize_name("../../etc/passwd.pdf") == "passwd.pdf"
    assert sanitize_name("C:\\Users\\me\\report.docx") == "report.docx"
    assert sanitize_name("bad\x00name\x1f.txt") == "badname.txt"
    long_name = sanitize_name("a" * 500 + ".pdf")
    assert len(long_name) <= 200 and long_name.endswith(".pdf")
    assert sanitize_name("") == "unnamed"
    doc = parse_bytes(b"hello", "../x/\x07evil.txt", isolate=False)
    assert doc.file_name == "evil.txt"


def test_supported_suffixes():
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".xlsm", ".csv", ".txt", ".md", ".markdown",
            ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp"} == set(SUPPORTED_SUFFIXES)
    assert is_supported("A.PDF") and is_supported("notes.markdown") and not is_supported("x.doc")


def _docx_bytes() -> bytes:
    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("hello")
    document.save(buffer)
    return buffer.getvalue()


def _bomb(main_part: str, content_type: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", f'<Types><Override PartName="/{main_part}" ContentType="{content_type}"/></Types>')
        archive.writestr(main_part, b"\0" * (30 * 1024 * 1024))  # 30 MB of zeros deflate ~1000:1
    return buffer.getvalue()


BOMBS = {
    "bomb.docx": ("word/document.xml", "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"),
    "bomb.xlsx": ("xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"),
    "bomb.pptx": ("ppt/presentation.xml", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_zip_bombs_are_refused_before_parsing(name):
    with pytest.raises(DocumentError) as err:
        parse_bytes(_bomb(*BOMBS[name]), name, isolate=False)
    assert err.value.kind == "zip_bomb" and "expands" in err.value.reason


def test_declared_total_over_the_limit_is_a_zip_bomb():
    with pytest.raises(DocumentError) as err:
        parse_bytes(_docx_bytes(), "big.docx", limits=Limits(max_zip_uncompressed=1000), isolate=False)
    assert err.value.kind == "zip_bomb" and "would expand" in err.value.reason


OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504


@pytest.mark.parametrize(("name", "data", "kind", "reason"), [
    ("virus.exe", b"MZ...", "unsupported", "unsupported file type '.exe'"),
    ("README", b"text", "unsupported", "without an extension"),
    ("empty.pdf", b"", "empty", "the file is empty (0 bytes)"),
    ("paper.docx", make_pdf(["x"]), "wrong_type", "the file is a PDF, not a Word document"),
    ("letter.pdf", _docx_bytes(), "wrong_type", "the file is a Word document, not a PDF"),
    ("sheet.xlsx", _docx_bytes(), "wrong_type", "not an Excel workbook"),
    ("notes.txt", make_pdf(["x"]), "wrong_type", "the file is a PDF, not a text file"),
    ("old.docx", OLE2 + "WordDocument".encode("utf-16-le") + b"\0\0", "wrong_type", "legacy Office format (.doc), save as .docx"),
    ("old.xlsx", OLE2 + "Workbook".encode("utf-16-le") + b"\0\0", "wrong_type", "legacy Office format (.xls), save as .xlsx"),
    ("locked.docx", OLE2 + "EncryptionInfo".encode("utf-16-le") + b"\0\0", "encrypted", "encrypted: needs a password"),
    ("cut.docx", _docx_bytes()[:3000], "corrupt", "damaged or truncated zip package"),
    ("junk.pptx", b"this is not a presentation", "corrupt", "not a PowerPoint presentation"),
    ("photo.pdf", b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "wrong_type", "the file is a PNG image, not a PDF"),
    ("notes.pdf", "Plain notes, saved as .pdf by mistake — ünïcode too.\n".encode() * 40, "wrong_type",
     "the file is plain text, not a PDF"),
    ("binary.pdf", bytes(range(256)) * 4, "corrupt", "damaged or unreadable file"),
    ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage", "corrupt", "damaged or unreadable file"),
])
def test_bad_inputs_give_one_line_reasons(name, data, kind, reason):
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, name, isolate=False)
    assert err.value.kind == kind, err.value.reason
    assert reason in err.value.reason and "\n" not in err.value.reason
    assert err.value.file_name == name and str(err.value) == f"{name}: {err.value.reason}"


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
