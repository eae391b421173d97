"""KnowledgeBase: ingest, duplicates, replace, delete, clear, restart consistency, kept originals and OCR warnings."""

from __future__ import annotations

import shutil
import threading

import docx
import pytest

from advanced_retrieval import KnowledgeBase
from document_processor.readers import ocr as ocr_module
from tests.helpers.ocr import PAGE_TEXT, needs_tesseract, scanned_pdf
from vector_db import HashingEmbedder, VectorStore, make_client
from wiring import knowledge_base


def open_kb(root, embedder, **kwargs) -> KnowledgeBase:
    store = VectorStore(make_client(root / "data"), embedder)
    return knowledge_base(store, root, embedder, isolate=False, **kwargs)


@pytest.fixture
def kb(tmp_path, fake_embedder):
    yield open_kb(tmp_path, fake_embedder)


def write_docx(path, paragraphs):
    document = docx.Document()
    document.add_heading("Quarterly review", level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(path)
    return path


def found(kb, query, strategy="bm25"):
    return [h.chunk.file_name for h in kb.retriever.retrieve(query, k=10, strategy=strategy)]


def test_ingest_files_of_several_types_reports_stages(kb, tmp_path):
    (tmp_path / "notes.txt").write_text("Penguins huddle together in the Antarctic winter.")
    (tmp_path / "plan.md").write_text("# Plan\n\nShip the ISO-9001 audit report by March.")
    write_docx(tmp_path / "review.docx", ["Revenue grew 28.4% to $4,000 million."])
    stages = []
    results = kb.ingest_many([tmp_path / "notes.txt", tmp_path / "plan.md", tmp_path / "review.docx"],
                             progress=lambda name, stage, done, total: stages.append((name, stage)))
    assert [r.status for r in results] == ["indexed"] * 3
    assert all(r.chunks >= 1 and r.doc_id and r.units >= 1 and r.unit_name for r in results)
    for name in ("notes.txt", "review.docx"):
        seen = [stage for n, stage in stages if n == name]
        assert {"reading", "embedding", "indexing"} <= set(seen) and seen[-1] == "indexing"
    assert found(kb, "ISO-9001") == ["plan.md"]
    assert found(kb, "4000") == ["review.docx"]
    assert [d.file_name for d in kb.documents()] == ["notes.txt", "plan.md", "review.docx"]
    assert kb.check()["consistent"]


def test_same_bytes_under_any_name_is_a_duplicate_and_writes_nothing(kb):
    first = kb.ingest_bytes(b"The board approved the merger.", "board.txt")
    generation = kb.store.generation()
    again = kb.ingest_bytes(b"The board approved the merger.", "copy of board.txt")
    assert first.status == "indexed"
    assert again.status == "duplicate" and again.reason == "already indexed as board.txt"
    assert again.duplicate_of == "board.txt" and again.doc_id == first.doc_id
    assert kb.store.generation() == generation and [d.file_name for d in kb.documents()] == ["board.txt"]
    assert kb.ingest_bytes(b"The board approved the merger.", "board.txt").status == "duplicate"


def test_same_name_with_new_bytes_replaces_the_old_version(kb):
    kb.ingest_bytes(b"Old policy: travel is reimbursed by cheque.", "policy.txt")
    result = kb.ingest_bytes(b"New policy: travel is reimbursed by bank transfer.", "policy.txt")
    assert result.status == "replaced" and "previous version" in result.reason
    assert [d.doc_id for d in kb.documents()] == [result.doc_id]
    for strategy in ("bm25", "vector", "hybrid"):
        texts = [h.chunk.text for h in kb.retriever.retrieve("cheque transfer policy", strategy=strategy)]
        assert texts and all("cheque" not in t for t in texts)
    assert kb.check()["consistent"]


def test_failed_replacement_leaves_the_old_version_intact(kb, monkeypatch):
    old = kb.ingest_bytes(b"Version one mentions the lighthouse.", "guide.txt")

    def broken_publish(index):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kb.keyword_index, "publish", broken_publish)
    result = kb.ingest_bytes(b"Version two mentions the harbour.", "guide.txt")
    monkeypatch.undo()
    assert result.status == "failed" and result.kind == "store" and "No space left" in result.reason
    assert [d.doc_id for d in kb.documents()] == [old.doc_id]
    assert found(kb, "lighthouse") == ["guide.txt"] and found(kb, "harbour") == []
    assert found(kb, "harbour", "vector") == ["guide.txt"]  # the only document left is the old one
    assert kb.check()["consistent"]


def test_embedding_failure_leaves_nothing_half_indexed(tmp_path):
    class Exploding(HashingEmbedder):
        def embed(self, texts, progress=None):
            if any("EXPLODE" in t for t in texts):
                raise RuntimeError("embedding backend crashed")
            return super().embed(texts, progress)

    kb = open_kb(tmp_path, Exploding())
    kb.ingest_bytes(b"A calm document.", "calm.txt")
    results = kb.ingest_many([tmp_path / "nope.txt"])
    (tmp_path / "bad.txt").write_text("This one will EXPLODE when embedded.")
    results += kb.ingest_many([tmp_path / "bad.txt"])
    assert [(r.status, r.kind) for r in results] == [("failed", "io"), ("failed", "error")]
    assert "embedding backend crashed" in results[1].reason
    assert [d.file_name for d in kb.documents()] == ["calm.txt"] and found(kb, "explode") == []
    assert kb.check()["consistent"]


def test_one_bad_file_never_stops_the_batch(kb, tmp_path):
    (tmp_path / "good.txt").write_text("Quarterly revenue rose.")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7\n this is not really a pdf")
    (tmp_path / "image.gif").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "empty.txt").write_bytes(b"")
    docx.Document().save(tmp_path / "blank.docx")
    (tmp_path / "last.md").write_text("# Last\n\nThe batch went on.")
    names = ("good.txt", "broken.pdf", "image.gif", "missing.txt", "empty.txt", "blank.docx", "last.md")
    results = kb.ingest_many([tmp_path / n for n in names])
    assert [r.status for r in results] == ["indexed"] + ["failed"] * 5 + ["indexed"]
    assert [r.kind for r in results[2:6]] == ["unsupported", "io", "empty", "no_text"]
    assert [d.file_name for d in kb.documents()] == ["good.txt", "last.md"]
    assert all(r.reason for r in results if r.status == "failed")
    assert found(kb, "batch") == ["last.md"]


def test_delete_and_clear_reach_both_indexes(kb):
    a = kb.ingest_bytes(b"Alpha report on glaciers.", "alpha.txt")
    kb.ingest_bytes(b"Beta report on glaciers.", "beta.txt")
    assert kb.delete("alpha.txt").doc_id == a.doc_id
    assert kb.check()["consistent"]  # both indexes updated by the delete itself, before any search
    for strategy in ("bm25", "vector", "hybrid", "auto"):
        assert set(found(kb, "alpha glaciers report", strategy)) == {"beta.txt"}
    assert kb.delete("alpha.txt") is None and kb.check()["consistent"]
    kb.clear()
    assert kb.documents() == [] and found(kb, "glaciers", "hybrid") == []
    check = kb.check()
    assert check["consistent"] and check["chunks_in_store"] == check["chunks_in_bm25"] == 0


def test_find_by_name_id_or_unique_prefix(kb):
    a = kb.ingest_bytes(b"first file", "first.txt")
    b = kb.ingest_bytes(b"second file", "second.txt")
    assert kb.find("first.txt").doc_id == a.doc_id
    assert kb.find(b.doc_id).file_name == "second.txt"
    assert kb.find(b.doc_id[:8]).file_name == "second.txt"
    assert kb.find(b.doc_id[:3]) is None  # too short to be trusted
    assert kb.find("nothing.txt") is None
    assert kb.delete(a.doc_id[:10]).file_name == "first.txt"


def test_restart_sees_the_same_documents_in_both_indexes(tmp_path, fake_embedder):
    kb = open_kb(tmp_path, fake_embedder)
    kb.ingest_bytes(b"Comets have icy nuclei.", "comets.txt")
    kb.ingest_bytes(b"Asteroids are rocky.", "asteroids.txt")
    before = found(kb, "comets asteroids")

    again = open_kb(tmp_path, fake_embedder)
    assert again.recovery_messages == [] and again.check()["consistent"]
    assert found(again, "comets asteroids") == before and len(before) == 2

    shutil.rmtree(tmp_path / "bm25")
    rebuilt = open_kb(tmp_path, fake_embedder)
    assert any("rebuilding" in m for m in rebuilt.recovery_messages)
    assert rebuilt.check()["consistent"] and found(rebuilt, "comets asteroids") == before


def test_open_repairs_an_index_that_missed_writes(tmp_path, fake_embedder):
    kb = open_kb(tmp_path, fake_embedder)
    kb.ingest_bytes(b"Volcanoes erupt basalt.", "volcano.txt")
    saved = kb.keyword_index.load_saved()
    kb.ingest_bytes(b"Geysers spray water.", "geyser.txt")
    current = (tmp_path / "bm25" / "CURRENT").read_text()
    saved.save(tmp_path / "bm25" / "stale")  # as if the process died before its last BM25 save
    (tmp_path / "bm25" / "CURRENT").write_text("stale")
    reopened = open_kb(tmp_path, fake_embedder)
    assert any("stale" in m for m in reopened.recovery_messages) and current
    assert reopened.check()["consistent"] and found(reopened, "geysers") == ["geyser.txt"]


def test_two_knowledge_bases_on_one_directory_see_each_others_writes(tmp_path, fake_embedder):
    one, two = open_kb(tmp_path, fake_embedder), open_kb(tmp_path, fake_embedder)
    one.ingest_bytes(b"Tides follow the moon.", "tides.txt")
    assert found(two, "tides") == ["tides.txt"]
    two.delete("tides.txt")
    assert found(one, "tides") == [] and one.check()["consistent"]


def test_concurrent_ingests_are_serialised(kb):
    results = []

    def ingest(i):
        results.append(kb.ingest_bytes(f"Document number {i} about topic{i}.".encode(), f"doc{i}.txt"))

    threads = [threading.Thread(target=ingest, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(r.status for r in results) == ["indexed"] * 4
    check = kb.check()
    assert check["consistent"] and check["documents"] == 4
    assert all(found(kb, f"topic{i}")[0] == f"doc{i}.txt" for i in range(4))


@pytest.mark.shared
def test_real_office_and_pdf_documents(shared_data, tmp_path, fake_embedder):
    kb = knowledge_base(VectorStore(make_client(tmp_path / "data"), fake_embedder), tmp_path,
                        fake_embedder)  # isolated parsing, as the app does
    office = shared_data / "office"
    paths = [office / "docx" / "IllustrativeCases.docx", office / "pptx" / "SampleShow.pptx",
             office / "xlsx" / "DataTableCities.xlsx", shared_data / "pdf_hard" / "crazyones-encrypted-256.pdf",
             office / "docx" / "doc-word-default-blank.docx"]
    results = kb.ingest_many(paths)
    assert [r.status for r in results[:3]] == ["indexed"] * 3
    assert results[3].status == "failed" and results[3].kind == "encrypted" and results[3].reason
    assert results[4].status == "failed" and results[4].kind == "no_text"  # a blank document is not indexed
    for result in results[:3]:
        chunk = next(c for c in kb.store.iter_chunks() if c.doc_id == result.doc_id)
        query = " ".join(chunk.text.split()[:8])
        assert result.file_name in found(kb, query, "hybrid")
    assert kb.check()["consistent"]


def test_originals_follow_ingest_replace_delete_clear_and_restart(tmp_path, fake_embedder):
    kb = open_kb(tmp_path, fake_embedder)
    first = kb.ingest_bytes(b"Version one of the plan.", "plan.txt")
    assert kb.original_path(first.doc_id).read_bytes() == b"Version one of the plan."
    assert kb.original_path(first.doc_id).parent == tmp_path / "originals"
    second = kb.ingest_bytes(b"Version two of the plan.", "plan.txt")
    assert second.status == "replaced"
    assert kb.original_path(first.doc_id) is None
    assert kb.original_path(second.doc_id).read_bytes() == b"Version two of the plan."
    path_like = kb.ingest_bytes(b"Escape attempt.", "../../evil.txt")
    assert kb.original_path(path_like.doc_id).parent == tmp_path / "originals"
    kb.delete("plan.txt")
    assert kb.original_path(second.doc_id) is None
    (tmp_path / "originals" / ("f" * 64 + ".pdf")).write_bytes(b"orphan")  # e.g. a crash between delete steps
    reopened = open_kb(tmp_path, fake_embedder)
    kept = sorted(p.name.split(".")[0] for p in (tmp_path / "originals").iterdir() if p.is_file())
    assert kept == [path_like.doc_id]
    reopened.clear()
    assert reopened.original_path(path_like.doc_id) is None


def test_a_failed_file_keeps_no_original(kb, tmp_path):
    result = kb.ingest_bytes(b"", "empty.txt")
    assert result.status == "failed"
    assert not (tmp_path / "originals").exists() or not any((tmp_path / "originals").iterdir())


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
