"""Tesseract made absent."""

from __future__ import annotations

import pytest

from document_processor.readers import ocr as ocr_module


@pytest.fixture
def no_tesseract(monkeypatch, tmp_path):
    """The OCR command pointed at a binary that does not exist, as on a machine without tesseract-ocr."""
    monkeypatch.setattr(ocr_module, "TESSERACT_CMD", str(tmp_path / "missing" / "tesseract"))
