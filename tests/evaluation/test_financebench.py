"""evaluation.financebench: the conversion's pages."""

from __future__ import annotations

import json

import pytest

from evaluation import load_dataset, parse_dataset


def test_financebench_record_pages_become_one_based():
    from evaluation import financebench as fb

    record = {"financebench_id": "financebench_id_06655", "doc_name": "AMAZON_2017_10K", "question": " Q? ",
              "question_type": "metrics-generated",
              "evidence": [{"doc_name": "AMAZON_2017_10K", "evidence_page_num": 37},
                           {"doc_name": "AMAZON_2017_10K", "evidence_page_num": 0}]}
    line = fb.convert_record(record)
    assert line == {"id": "financebench_id_06655", "kind": "metrics-generated", "question": "Q?",
                    "doc": "AMAZON_2017_10K.pdf", "pages": [1, 38], "answer": [["93.86"]]}
    assert parse_dataset(json.dumps(line))[0].gold[0].pages == (1, 38)


@pytest.mark.shared
def test_financebench_conversion_points_at_the_evidence_pages(shared_data, tmp_path):
    """Every converted (1-based) gold page holds its evidence text: the source's pages are 0-based."""
    import re

    import pypdf

    from evaluation import financebench as fb

    source = shared_data / "bench" / "financebench_subset"
    out = tmp_path / "fb.jsonl"
    assert fb.convert(source, out) == 29
    questions = load_dataset(out)
    assert all(q.answer and q.gold[0].pages for q in questions)  # every question has key facts and pages
    evidence = {json.loads(raw)["financebench_id"]: json.loads(raw)["evidence"]
                for raw in (source / "questions.jsonl").read_text().splitlines()}
    words = lambda text: set(re.findall(r"[a-z]{4,}", text.lower()))  # noqa: E731
    readers = {}
    for q in questions:
        reader = readers.setdefault(q.gold[0].file, pypdf.PdfReader(source / "pdfs" / q.gold[0].file))
        if reader.is_encrypted:
            reader.decrypt("")
        for item in evidence[q.id]:
            page = int(item["evidence_page_num"]) + 1
            assert page in q.gold[0].pages
            wanted = words(item["evidence_text"])
            found = words(reader.pages[page - 1].extract_text())
            assert len(wanted & found) >= 0.8 * len(wanted), (q.id, page)


@pytest.mark.shared
def test_financebench_both_sets_convert_into_one_dataset_with_zero_based_pages_shifted(shared_data, tmp_path):
    """The dev set and the subset become one dataset (one library); the dev set's pages are 0-based too."""
    from evaluation import financebench as fb

    sets = [shared_data / "bench" / "financebench_dev", shared_data / "bench" / "financebench_subset"]
    out = tmp_path / "fb.jsonl"
    assert fb.convert(sets, out) == 42 + 29
    questions = load_dataset(out)
    raw = [json.loads(line) for line in (sets[0] / "questions.jsonl").read_text().splitlines() if line.strip()]
    for q, record in zip(questions, raw, strict=False):
        pages = {int(e["evidence_page_num"]) + 1 for e in record["evidence"]}
        assert set(q.gold[0].pages) == pages
    docs = fb._linked_pdfs(sets, tmp_path / "pdfs")
    assert len(list(docs.glob("*.pdf"))) == 21 + 11
