"""Every public test document either parses or fails with a DocumentError; known cases fail for the known reason.
Runs the real isolated path (fork server, deadline, memory cap: the parser enforces the time, so this does not
time it; bench/hostile.py measures the seconds)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from document_processor import DocumentError, Limits, model_files, parse_file

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
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
