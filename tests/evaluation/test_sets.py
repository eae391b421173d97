"""evaluation.sets: the bundled question sets (sample, papers, held-out, sealed: tests check the sealed set's form and
gold, never print its questions)."""

from __future__ import annotations

import pytest

from evaluation import SETS, SetUnavailable, chunk_matches, load_dataset, missing_groups
from evaluation.sets import SETS_DIR


@pytest.mark.parametrize("name", ["sample.jsonl", "papers.jsonl"])
def test_shipped_datasets_are_valid(name):
    questions = load_dataset(SETS_DIR / name)
    assert len(questions) >= 10
    kinds = {q.kind for q in questions}
    assert {"unanswerable", "negation", "cross-document", "table"} <= kinds
    assert len({q.id for q in questions}) == len(questions)
    assert all(q.answer for q in questions if not q.unanswerable)


def test_heldout_dataset_is_valid_and_mixed():
    questions = load_dataset(SETS_DIR / "heldout.jsonl")
    assert 30 <= len(questions) <= 40 and len({q.id for q in questions}) == len(questions)
    kinds = {q.kind for q in questions}
    assert {"unanswerable", "table", "list", "comparison", "sheet", "number", "fact"} <= kinds
    assert sum(q.unanswerable for q in questions) >= 4
    documents = SETS["heldout"].documents
    for q in questions:
        if not q.unanswerable:
            assert q.answer and q.gold and all(g.file in documents for g in q.gold), q.id
    papers = {g.file for q in load_dataset(SETS_DIR / "papers.jsonl") for g in q.gold}
    assert not papers & set(documents)  # held out: none of the documents the extractor was tuned on


@pytest.mark.parametrize("name", ["heldout", "sealed"])
def test_a_shared_set_without_shared_skips_cleanly(name, tmp_path, monkeypatch, capsys):
    import cli
    import evaluation.sets

    monkeypatch.setattr(evaluation.sets, "SHARED", tmp_path / "absent")
    with pytest.raises(SetUnavailable):
        SETS[name].prepare(tmp_path / "scratch")
    assert cli.main(["eval", name, "--offline"]) == 0
    assert "nothing to measure" in capsys.readouterr().err


@pytest.mark.shared
def test_heldout_gold_holds_every_key_fact(shared_data, tmp_path):
    """Each answer group has an alternative in the parsed text of the gold file at its gold pages/slides/sheets."""
    from document_processor import parse_file

    heldout = SETS["heldout"]
    docs = heldout.prepare(tmp_path, shared=shared_data).docs
    assert sorted(p.name for p in docs.iterdir()) == sorted(heldout.documents)
    chunks = {}
    for q in load_dataset(SETS_DIR / "heldout.jsonl"):
        if q.unanswerable:
            continue
        for gold in q.gold:
            if gold.file not in chunks:
                chunks[gold.file] = parse_file(docs / gold.file).chunks
        text = "\n".join(c.text for g in q.gold for c in chunks[g.file] if chunk_matches(c, q.gold))
        assert text, q.id
        assert not missing_groups(text, q.answer), (q.id, missing_groups(text, q.answer))


def test_sealed_dataset_is_valid_mixed_and_disjoint():
    questions = load_dataset(SETS_DIR / "sealed.jsonl")
    assert 30 <= len(questions) <= 36 and len({q.id for q in questions}) == len(questions)
    kinds = {q.kind for q in questions}
    assert {"unanswerable", "table", "number", "fact", "list", "comparison", "slide", "sheet"} <= kinds
    assert 5 <= sum(q.unanswerable for q in questions) <= 6
    documents = SETS["sealed"].documents
    for q in questions:
        if not q.unanswerable:
            assert q.answer and q.gold and all(g.file in documents for g in q.gold), q.id
    assert {g.file for q in questions for g in q.gold} == set(documents)  # every linked file is asked about
    others = {g.file for name in ("papers", "heldout", "sample")
              for q in load_dataset(SETS_DIR / f"{name}.jsonl") for g in q.gold}
    assert not others & set(documents)  # sealed: no document of another question set


@pytest.mark.shared
def test_sealed_gold_holds_every_key_fact(shared_data, tmp_path):
    """Each answer group has an alternative in the parsed text of the gold file at its gold pages/slides/sheets."""
    from document_processor import parse_file

    sealed = SETS["sealed"]
    docs = sealed.prepare(tmp_path, shared=shared_data).docs
    assert sorted(p.name for p in docs.iterdir()) == sorted(sealed.documents)
    chunks = {}
    for q in load_dataset(SETS_DIR / "sealed.jsonl"):
        if q.unanswerable:
            continue
        for gold in q.gold:
            if gold.file not in chunks:
                chunks[gold.file] = parse_file(docs / gold.file).chunks
        text = "\n".join(c.text for g in q.gold for c in chunks[g.file] if chunk_matches(c, q.gold))
        assert text, q.id
        assert not missing_groups(text, q.answer), q.id  # the id only: the gold stays out of the logs


@pytest.mark.parametrize(("name", "size"), [("tables-dev", 45), ("tables-dev2", 40), ("tables-fresh", 32), ("tables-fresh2", 28),
                                                 ("csv-dev", 30)])
def test_the_table_sets_load_and_every_document_has_a_home(name, size):
    """Each question's document is one the set links (from the shared data or the CSVs it ships), and every
    answerable question has gold (no question is printed: tables-fresh is read in aggregate only)."""
    linked = SETS[name]
    questions = load_dataset(SETS_DIR / linked.dataset)
    assert len(questions) == size and len({q.id for q in questions}) == size
    assert all(q.gold for q in questions) and {g.file for q in questions for g in q.gold} <= set(linked.documents)
    assert all(q.answer for q in questions if not q.unanswerable)
    shipped = [d for d, home in linked.documents.items() if home.startswith("sets:")]
    assert shipped and all((SETS_DIR / linked.documents[d].removeprefix("sets:") / d).is_file() for d in shipped)
