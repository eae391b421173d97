"""advanced_retrieval.keyword.vocabulary: its entries and headings."""

from __future__ import annotations

from advanced_retrieval.keyword.vocabulary import ENTRIES


def test_vocabulary_entries_are_well_formed():
    for forms, phrases in ENTRIES:
        assert forms and phrases
        assert all(f == f.lower() and f.strip() == f for f in forms)


def test_headings_are_document_forms_of_the_vocabulary():
    from advanced_retrieval.keyword.vocabulary import HEADINGS

    assert {phrase for _, phrases in ENTRIES for phrase in phrases} >= HEADINGS
    assert "balance sheets" in HEADINGS and "net sales" not in HEADINGS
