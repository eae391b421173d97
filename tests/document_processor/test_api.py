"""document_processor.api: content-derived ids, progress, limits checked before reading, missing files, and every public
test document parsed or refused cleanly."""

from __future__ import annotations

import hashlib
import shutil

import pytest

from document_processor import DocumentError, Limits, chunk_id, model_files, parse_bytes, parse_file
from tests.helpers.paths import SHARED_DATA


def test_ids_ordinals_and_doc_id_are_content_derived(report_docx):
    data = report_docx.read_bytes()
    one, two = parse_file(report_docx, isolate=False), parse_bytes(data, "report.docx", isolate=False)
    assert one.doc_id == hashlib.sha256(data).hexdigest() == two.doc_id
    assert [c.id for c in one.chunks] == [c.id for c in two.chunks]
    assert [c.ordinal for c in one.chunks] == list(range(len(one.chunks)))
    assert all(c.id == chunk_id(c.doc_id, c.location, c.ordinal, c.text) for c in one.chunks)
    assert all(c.file_name == "report.docx" and c.file_type == "docx" for c in one.chunks)


def test_progress_reports_reading_and_chunking(deck_pptx):
    calls = []
    parse_file(deck_pptx, isolate=False, progress=lambda stage, done, total: calls.append((stage, done, total)))
    assert {"reading", "chunking"} == {c[0] for c in calls}
    assert calls[-1][1] == calls[-1][2]


def test_size_limit_is_checked_before_reading(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 5000)
    with pytest.raises(DocumentError) as err:
        parse_file(path, limits=Limits(max_bytes=1000))
    assert err.value.kind == "too_large" and "over the" in err.value.reason


def test_missing_file_or_directory_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        parse_file(tmp_path / "nope.pdf")
    (tmp_path / "folder.pdf").mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        parse_file(tmp_path / "folder.pdf")


SHARED = SHARED_DATA


FOLDERS = ("office/docx", "office/pptx", "office/xlsx", "pdf_hard", "papers", "bench/financebench_subset/pdfs")
FILES = sorted(str(p.relative_to(SHARED)) for folder in FOLDERS if (SHARED / folder).is_dir()
               for p in (SHARED / folder).iterdir() if p.is_file())
LIMITS = Limits(timeout_s=60.0)


# What the MANIFEST files say about these documents, as the outcome we must give.
EXPECTED = {
    "pdf_hard/crazyones-encrypted-256.pdf": "encrypted", "pdf_hard/libreoffice-writer-password.pdf": "encrypted",
    "pdf_hard/r2-empty-password.pdf": "ok", "pdf_hard/r6-user-password.pdf": "ok",
    "pdf_hard/imagemagick-CCITTFaxDecode.pdf": "no_text",
    # A picture with a few printed words: read by OCR (with a low-confidence warning) when Tesseract is there.
    "pdf_hard/issue5549.pdf": "ok" if shutil.which("tesseract") else "no_text",
    "pdf_hard/large-inline-image.pdf": "no_text", "pdf_hard/empty.pdf": "empty",
    "pdf_hard/1412.6980_zeroed_header.pdf": "ok", "pdf_hard/freeculture.pdf": "ok", "pdf_hard/tracemonkey.pdf": "ok",
    "pdf_hard/outlines-with-loop.pdf": "ok", "pdf_hard/outlines-with-invalid-destinations.pdf": "ok",
    "office/docx/bug53475-password-is-pass.docx": "encrypted", "office/xlsx/protected_passtika.xlsx": "encrypted",
    "office/docx/truncated62886.docx": "corrupt", "office/pptx/Divino_Revelado.pptx": "corrupt",
    "office/xlsx/null_file.xlsx": "empty", "office/docx/MANIFEST.tsv": "unsupported",
    "office/docx/bug65649.docx": "ok", "office/xlsx/CVLKRA-KYC_Download_File_Structure_V3.1.xlsx": "ok",
    "office/pptx/60810.pptx": "ok", "office/xlsx/WithChartSheet.xlsx": "ok",
}


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize("relative", FILES)
def test_shared_document_parses_or_fails_cleanly(shared_data, relative):
    path = shared_data / relative
    try:
        doc = parse_file(path, limits=LIMITS)
    except DocumentError as exc:
        outcome = exc.kind
        assert exc.reason and "\n" not in exc.reason and exc.file_name == path.name
    else:
        outcome = "ok"
        assert all(model_files.count_tokens(c.index_text) <= model_files.MAX_TOKENS for c in doc.chunks)
        assert [c.ordinal for c in doc.chunks] == list(range(len(doc.chunks)))
    expected = EXPECTED.get(relative) or ("ok" if relative.endswith(".pdf") and relative.startswith(("papers/", "bench/")) else None)
    if expected is not None:
        assert outcome == expected
