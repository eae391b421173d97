"""The document outline: sections from heading paths, from headings found in the text, or flat by pages."""

from __future__ import annotations

from advanced_retrieval.library.outline import Outline, build_outline
from tests.helpers.agent import make_chunk


def _paper() -> list:
    texts = [
        "A Study of Things\nAbstract\nWe study things. Things matter a great deal.",
        "Contents\n1 Introduction 1\n2 Method 3",  # a table of contents: lines ending in page numbers
        "1. Introduction\nThings have been studied before. We study them again.",
        "2. Method\nOur method has two parts.",
        "2.1. Data\nWe collected 300 things.",
        "2.2. Training\nWe trained for 10 epochs.",
        "3. Results\nThe method works.",
        "References\n[1] A. Author. Things. 2020.",
    ]
    return [make_chunk("d1", "paper.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)]


def test_a_papers_numbered_headings_nest_and_each_section_knows_its_pages_and_passages():
    outline = build_outline(_paper())
    assert outline.source == "detected" and not outline.flat
    titles = [s.title for s in outline.sections]
    assert titles == ["Abstract", "1. Introduction", "2. Method", "3. Results", "References"]
    method = outline.find("2. Method")
    assert [c.title for c in method.children] == ["2.1. Data", "2.2. Training"]
    assert (method.first, method.last, method.start, method.end) == (3, 5, "p. 4", "p. 6")
    assert "1 Introduction 1" not in [s.title for s in outline.all()]  # a contents line is not a heading


def test_the_outline_survives_its_dictionary_form():
    outline = build_outline(_paper())
    assert Outline.from_dict(outline.to_dict()) == outline


def test_heading_paths_from_word_styles_make_the_tree():
    chunks = [make_chunk("d2", "memo.docx", f"text {i}", ordinal=i, heading=h, paragraph=i + 1)
              for i, h in enumerate([("Scope",), ("Scope", "In scope"), ("Scope", "Out of scope"), ("Budget",)])]
    outline = build_outline(chunks)
    assert outline.source == "headings"
    assert [(s.title, [c.title for c in s.children]) for s in outline.sections] == [
        ("Scope", ["In scope", "Out of scope"]), ("Budget", [])]


def test_a_document_without_headings_is_read_by_pages_and_says_so():
    chunks = [make_chunk("d3", "scan.pdf", f"plain words on page {i}", ordinal=i, page=i + 1) for i in range(3)]
    outline = build_outline(chunks)
    assert outline.flat and outline.source == "pages"
    assert [s.title for s in outline.sections] == ["p. 1", "p. 2", "p. 3"]


def test_slides_without_titles_are_read_by_slides():
    chunks = [make_chunk("d4", "deck.pptx", f"bullet {i}", ordinal=i, slide=i + 1) for i in range(2)]
    assert build_outline(chunks).source == "slides"


def test_a_filings_long_item_titles_and_its_notes_are_headings():
    item7 = ("Item 7. Management’s Discussion and Analysis of Financial Condition and Results of Operations.")
    texts = ["PART I\nItem 1. Business.\nWe make valves.", "Item 1A. Risk Factors.\nRates may rise.",
             "PART II\nItem 5. Market for Registrant’s Common Equity, Related Stockholder Matters and Issuer Purchases "
             "of Equity Securities.\nOur shares trade on the NYSE.", f"{item7}\nSales grew.",
             "Item 8. Financial Statements and Supplementary Data.\nNOTE 1. Significant Accounting Policies\nWe use GAAP.",
             "NOTE 2. Commitments and Contingencies\nWe are a defendant in a patent suit.", "Item 9. Changes in and "
             "Disagreements with Accountants on Accounting and Financial Disclosure.\nNone."]
    outline = build_outline([make_chunk("f", "10k.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)])
    assert len(item7) > 90
    part2 = outline.find("PART II")
    assert [c.title[:7] for c in part2.children] == ["Item 5.", "Item 7.", "Item 8.", "Item 9."]
    notes = outline.find("Item 8. Financial Statements and Supplementary Data.").children
    assert [(n.title, n.first, n.last) for n in notes] == [("NOTE 1. Significant Accounting Policies", 4, 4),
                                                          ("NOTE 2. Commitments and Contingencies", 5, 5)]
    assert outline.find(item7).first == outline.find(item7).last == 3


def test_a_heading_on_the_contents_page_is_placed_where_its_section_begins():
    """3M's 10-K lists "PART II" between contents lines that end in page numbers; its outline started PART II on
    the contents page and ran PART I to page 178. A heading there is placed at its next appearance; one that
    appears only there stays (nothing else would place it)."""
    texts = ["Table of Contents\nPART I\nItem 1. Business 3\nItem 1A. Risk Factors 5\nPART II\n"
             "Item 5. Market for Registrant’s Common Equity 9\nItem 7. Management’s Discussion and Analysis 10\n"
             "Appendix B",
             "PART I\nItem 1. Business.\nWe make valves.", "Item 1A. Risk Factors.\nRates may rise.",
             "PART II\nItem 5. Market for Registrant’s Common Equity.\nOur shares trade on the NYSE.",
             "Item 7. Management’s Discussion and Analysis.\nSales grew 4%."]
    outline = build_outline([make_chunk("f", "10k.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)])
    assert [(s.title, s.first) for s in outline.sections if s.title.startswith("PART")] == [("PART I", 1),
                                                                                           ("PART II", 3)]
    assert outline.find("PART I").last == 2 and outline.find("Appendix B").first == 0


def test_a_contents_entry_worded_or_wrapped_otherwise_is_placed_at_its_item_in_the_same_part():
    """Coca-Cola's 10-K: its contents page gives "Item 12." alone (the title on the lines below, the page number
    after them) and Item 5's long title with its page number on the next line; the items' headings in the text are
    in capitals and wrap elsewhere, so neither matched and the outline began with "Item 5" and "Item 12" on the
    contents page. A contents entry that is a filing's item is placed by its part and number; a 10-Q's Part II
    Item 1 is not Part I's."""
    texts = ["Table of Contents\nPART I\nItem 1. Financial Statements 3\nItem 2. Management’s Discussion 9\nPART II\n"
             "Item 1. Legal Proceedings 20\nItem 5. Market for Registrant’s Common Equity, Related Stockholder Matters "
             "and Issuer Purchases of Equity Securities\n21\nItem 12.\nSecurity Ownership of Certain Owners\n22",
             "PART I\nITEM 1. FINANCIAL STATEMENTS\nThe statements follow.", "ITEM 2. MANAGEMENT’S DISCUSSION\nSales grew.",
             "PART II\nITEM 1. LEGAL PROCEEDINGS\nNone.",
             "ITEM 5. MARKET FOR REGISTRANT’S COMMON EQUITY, RELATED STOCKHOLDER MATTERS AND ISSUER PURCHASES OF\n"
             "EQUITY SECURITIES\nOur shares trade on the NYSE.",
             "ITEM 12. SECURITY OWNERSHIP OF CERTAIN BENEFICIAL OWNERS\nSee the proxy statement."]
    outline = build_outline([make_chunk("f", "10q.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)])
    assert [(s.title, s.first) for s in outline.sections] == [("PART I", 1), ("PART II", 3)]
    assert [(c.title, c.first) for c in outline.find("PART II").children] == [
        ("ITEM 1. LEGAL PROCEEDINGS", 3),
        ("ITEM 5. MARKET FOR REGISTRANT’S COMMON EQUITY, RELATED STOCKHOLDER MATTERS AND ISSUER PURCHASES OF", 4),
        ("ITEM 12. SECURITY OWNERSHIP OF CERTAIN BENEFICIAL OWNERS", 5)]
    assert [c.first for c in outline.find("PART I").children] == [1, 2]


def test_footnotes_are_not_headings_and_a_filings_numbered_lists_stay_inside_its_items():
    """Coca-Cola's 10-K: footnote lines under a brands table ("12 Ayataka is a green tea brand sold primarily in")
    read as numbered headings, and being level 1 they took Items 1A-4 as their children; Best Buy's notes
    ("1. Summary of Significant Accounting Policies") were siblings of Item 8, which then ended at its first note.
    A line ending in a word a sentence runs on from is no heading, and inside a filing's items a numbered heading
    nests under the item."""
    texts = ["PART I\nItem 1. Business.\nWe sell drinks.\n12 Ayataka is a green tea brand sold primarily in\nJapan.",
             "Item 1A. Risk Factors.\nSugar taxes may rise.",
             "PART II\nItem 8. Financial Statements and Supplementary Data.\nThe statements follow.",
             "1. Summary of Significant Accounting Policies\nWe use GAAP.", "2. Leases\nWe lease stores.",
             "Item 9. Changes in and Disagreements with Accountants on Accounting and Financial Disclosure.\nNone."]
    outline = build_outline([make_chunk("f", "10k.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)])
    assert [s.title for s in outline.sections] == ["PART I", "PART II"]
    assert [c.title for c in outline.find("PART I").children] == ["Item 1. Business.", "Item 1A. Risk Factors."]
    item8 = outline.find("Item 8. Financial Statements and Supplementary Data.")
    assert [(c.title, c.first) for c in item8.children] == [("1. Summary of Significant Accounting Policies", 3),
                                                            ("2. Leases", 4)]
    assert (item8.first, item8.last) == (2, 4)
