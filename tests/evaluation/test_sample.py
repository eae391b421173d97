"""evaluation.sample: the generated sample corpus."""

from __future__ import annotations

from evaluation import SAMPLE_DATASET, load_dataset, make_sample_corpus, text_pdf


def test_text_pdf_is_readable_with_pages(tmp_path):
    import pypdf

    path = tmp_path / "t.pdf"
    path.write_bytes(text_pdf((("Page one (a)",), ("Second page", "with 2 lines"))))
    reader = pypdf.PdfReader(path, strict=True)
    assert len(reader.pages) == 2
    assert "Page one (a)" in reader.pages[0].extract_text()
    assert "with 2 lines" in reader.pages[1].extract_text()


def test_sample_corpus_files(tmp_path):
    paths = make_sample_corpus(tmp_path / "docs")
    assert sorted(p.suffix for p in paths) == [".docx", ".md", ".pdf", ".pptx", ".xlsx"]
    assert all(p.stat().st_size > 0 for p in paths)
    names = {p.name for p in paths}
    for q in load_dataset(SAMPLE_DATASET):
        assert {g.file for g in q.gold} <= names
