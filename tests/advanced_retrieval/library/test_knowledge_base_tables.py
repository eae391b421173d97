"""The knowledge base keeps every document's tables as data: written with the document, replaced and removed
with it, pruned at open when a write died before its commit, and read again from the kept originals."""

from __future__ import annotations

import io

import openpyxl

import wiring


def _workbook(rows) -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    sheet.append(["Item", "Amount"])
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _open(tmp_path, embedder):
    return wiring.open_knowledge_base(tmp_path / "data", embedder=embedder, environ={}, isolate=False)


def _amounts(kb) -> list[float]:
    (table,) = kb.tables.tables()
    return [row[2] for row in kb.tables.rows(table)]


def test_tables_are_written_replaced_and_deleted_with_their_document(tmp_path, fake_embedder):
    kb = _open(tmp_path, fake_embedder)
    assert kb.ingest_bytes(_workbook([["Rent", 1200], ["Food", 450]]), "budget.xlsx").status == "indexed"
    assert _amounts(kb) == [1200.0, 450.0]
    assert kb.ingest_bytes(_workbook([["Rent", 1250], ["Food", 480], ["Gym", 40]]), "budget.xlsx").status == "replaced"
    assert _amounts(kb) == [1250.0, 480.0, 40.0] and len(kb.tables.documents()) == 1
    kb.delete("budget.xlsx")
    assert kb.tables.tables() == [] and kb.tables.documents() == set()
    kb.ingest_bytes(_workbook([["Rent", 1]]), "a.xlsx")
    kb.clear()
    assert kb.tables.documents() == set()


def test_tables_of_a_document_the_store_never_committed_are_pruned_at_open(tmp_path, fake_embedder):
    kb = _open(tmp_path, fake_embedder)
    kb.ingest_bytes(_workbook([["Rent", 1200]]), "budget.xlsx")
    kb.tables.write("f" * 64, "killed.xlsx", [])  # a write killed after its tables, before the store's commit
    kb.close()
    reopened = _open(tmp_path, fake_embedder)
    assert "removed the tables of 1 document(s) no longer indexed" in reopened.recovery_messages
    assert reopened.tables.documents() == {d.doc_id for d in reopened.documents()}


def test_a_library_without_its_tables_reads_them_again_from_the_kept_originals(tmp_path, fake_embedder):
    kb = _open(tmp_path, fake_embedder)
    kb.ingest_bytes(_workbook([["Rent", 1200], ["Food", 450]]), "budget.xlsx")
    kb.close()
    (tmp_path / "data" / "tables.duckdb").unlink()  # a library indexed before tables were kept, or a lost file
    reopened = _open(tmp_path, fake_embedder)
    assert [d.file_name for d in reopened.tables_missing()] == ["budget.xlsx"]
    assert reopened.fill_missing_tables() == ["budget.xlsx: 1 table(s) read"]
    assert _amounts(reopened) == [1200.0, 450.0] and reopened.tables_missing() == []


def _memo() -> bytes:
    import docx

    document = docx.Document()
    for title, body in (("Scope", "What the project covers."), ("Budget", "The budget is 40,000 euros."),
                        ("Timeline", "It ends in June.")):
        document.add_heading(title, level=1)
        document.add_paragraph(body)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_the_outline_is_kept_with_its_document_and_removed_with_it(tmp_path, fake_embedder):
    kb = _open(tmp_path, fake_embedder)
    record = kb.ingest_bytes(_memo(), "memo.docx")
    kept = kb.tables.outline(record.doc_id)
    assert [s["title"] for s in kept["sections"]] == ["Scope", "Budget", "Timeline"]
    assert [s.title for s in kb.outline(record.doc_id).sections] == ["Scope", "Budget", "Timeline"]
    kb.delete("memo.docx")
    assert kb.tables.outline(record.doc_id) is None


def test_cli_outline_prints_the_sections_and_their_spans(tmp_path, fake_embedder, capsys, monkeypatch):
    import cli

    kb = _open(tmp_path, fake_embedder)
    kb.ingest_bytes(_memo(), "memo.docx")
    opened = wiring.open_library
    monkeypatch.setattr(wiring, "open_library", lambda config, embedder=None, **kw: opened(
        config, embedder=fake_embedder, **kw))
    assert cli.main(["--data-dir", str(tmp_path / "data"), "outline", "memo"]) == 0
    printed = capsys.readouterr().out
    assert "memo.docx: 3 sections, from its headings" in printed and "Budget  (" in printed
    assert cli.main(["--data-dir", str(tmp_path / "data"), "outline", "memo.docx", "--json"]) == 0
    assert '"title": "Timeline"' in capsys.readouterr().out
