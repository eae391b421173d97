"""agentic_rag.language.paragraphs: a section's paragraphs from its passages' lines, and its run-in headings."""

from __future__ import annotations

import textwrap

from agentic_rag.language.concepts import forms_of
from agentic_rag.language.paragraphs import introduced, paragraphs, run_in_items

HEADINGS = [
    "Rising interest rates could reduce demand for our loans and increase our funding costs.",
    "We depend on a small number of suppliers for the chips in our terminals.",
    "A breach of our systems could expose customer data and harm our reputation.",
    "Changes in tax law may raise our effective tax rate.",
]


def _body(i: int) -> str:
    return " ".join(f"Discussion {i} sentence {s} explains how the matter affects the business in several ways."
                    for s in range(5))


def _wrapped(width: int = 120) -> list[str]:
    """A PDF's text: paragraphs wrapped at a fixed width (a heading's last line is shorter: one that ends a line
    exactly cannot be told from a sentence inside a paragraph), a page number line, bullets after a colon."""
    lines = ["Item 1A. Risk Factors.", *textwrap.wrap("Described below are the risks we consider material. "
                                                    "They are not the only ones we face, and others that we do not know of or consider "
                                                    "immaterial today may also affect us.", width)]
    for i, heading in enumerate(HEADINGS):
        lines += textwrap.wrap(heading, width)
        lines += textwrap.wrap(_body(i), width)
        if i == 1:
            lines += textwrap.wrap("The effects could include the following, each of which is discussed here:", width)
            lines += ["• shortages of parts for our new terminals.", "• higher prices for every part we buy."]
            lines += ["12"]  # a page number between two pages
    return lines


def _pieces(lines: list[str], size: int = 7, overlap: int = 1) -> list[tuple[int, str]]:
    """Consecutive passages that repeat the last line of the one before, as the chunker writes them."""
    out, start, n = [], 0, 1
    while start < len(lines):
        out.append((n, "\n".join(lines[max(0, start - overlap):start + size])))
        start += size
        n += 1
    return out


def test_the_run_in_headings_of_wrapped_text_are_its_items_each_with_a_passage_that_holds_all_of_it():
    pieces = _pieces(_wrapped())
    items = run_in_items(pieces)
    assert [i.text for i in items] == HEADINGS  # not the intro, the bullets' lead-in, the bullets or the page number
    for item in items:
        assert item.blocks, item
        held = dict(pieces)[item.blocks[0]]
        assert item.text.split()[-1] in held and item.text.split()[0] in held


def test_text_that_is_not_wrapped_has_a_paragraph_per_line():
    lines = ["Risk Factors", "Described below are the risks we consider material. Others may arise."]
    for i, heading in enumerate(HEADINGS):
        lines += [heading, _body(i)]
    assert [i.text for i in run_in_items([(1, "\n".join(lines))])] == HEADINGS


def test_a_section_of_ordinary_paragraphs_has_no_items():
    lines = textwrap.wrap(" ".join(_body(i) for i in range(3)), 90)
    text = "\n".join(lines[:6]) + "\n\n" + "\n".join(lines[6:])
    assert run_in_items([(1, text)]) == []


def test_a_hyphen_broken_word_is_joined_and_overlapping_lines_are_read_once():
    body = textwrap.wrap(_body(0), 90)
    text = ["Our models are trained on data that may be incom-", "plete or wrong.", *body]
    found = paragraphs([(1, "\n".join(text[:4])), (2, "\n".join(text[3:]))])
    assert found[0].text == "Our models are trained on data that may be incomplete or wrong."
    assert [p.text for p in found[1:]] == [_body(0)] and found[1].blocks == ()  # its lines are in two passages


def test_the_lines_a_line_naming_the_items_introduces_are_the_items():
    text = ("We report results on the following benchmarks:\n• GLUE, a set of nine sentence tasks\n"
            "• SQuAD v1.1, reading\ncomprehension questions\n(c) SWAG, commonsense inference.\n"
            "The rest of the section is prose.\nIt also lists these costs:\n- rent\n- wages")
    assert introduced(text, forms_of("benchmarks")) == [
        "GLUE, a set of nine sentence tasks", "SQuAD v1.1, reading comprehension questions",
        "SWAG, commonsense inference."]  # not the costs: that line names something else
    assert introduced(text, forms_of("datasets")) == []
