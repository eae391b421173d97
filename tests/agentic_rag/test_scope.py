"""Routes by scope: what part of a document a question is about, and what each route reads within its budget."""

from __future__ import annotations

import pytest

from advanced_retrieval import Hit
from advanced_retrieval.library.outline import build_outline
from agentic_rag.language.text import estimate_tokens
from agentic_rag.scope import HEADER_TOKENS, list_object, read_document, read_list, read_section, scope_of
from tests.helpers.agent import make_chunk


@pytest.mark.parametrize(("question", "qtype", "scope"), [
    ("Summarize the ResNet paper", "summary", "document"),
    ("What are the main points of the annual report?", "fact", "document"),  # a model's plan said "fact"
    ("What does the risk factors section say?", "fact", "section"),
    ("Summarise Item 7 of the 10-K", "summary", "section"),
    ("List every dataset BERT is evaluated on", "list", "list"),
    ("What are all the risk factors in the 10-K?", "list", "list"),
    ("How many units did all the regions sell together?", "numeric", "passage"),
    ("Summarise the main points of each document", "summary", "library"),
    ("Which documents do not mention GDPR?", "negation", "passage"),
    ("What batch size is used for training?", "fact", "passage"),
])
def test_the_scope_of_a_question(question, qtype, scope):
    assert scope_of(question, qtype) == scope


@pytest.mark.parametrize(("question", "thing"), [
    ("What are all the risk factors in the 10-K?", "risk factors"),
    ("List every dataset BERT is evaluated on", "dataset"),
    ("list all the references", "references"),
])
def test_the_object_of_a_list_question(question, thing):
    assert list_object(question) == thing


NAMES = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"]


def _report(sections: int = 6, per_section: int = 3, words: int = 60) -> list:
    chunks, ordinal = [], 0
    for s in range(1, sections + 1):
        for p in range(per_section):
            head = f"{s}. Section {NAMES[s - 1]}\n" if p == 0 else ""
            tail_of_previous = "the end of the previous part. " if p == 0 and s > 1 else ""
            body = " ".join(f"word{s}x{p}x{i}" for i in range(words))
            chunks.append(make_chunk("d1", "report.pdf", f"{tail_of_previous}\n{head}Lead {s}.{p} sentence. {body}",
                                     ordinal=ordinal, page=ordinal + 1))
            ordinal += 1
    chunks.append(make_chunk("d1", "report.pdf", "References\n[1] Somebody. A book.", ordinal=ordinal, page=ordinal + 1))
    return chunks


def test_a_summary_reads_each_sections_opening_within_the_budget_and_names_what_it_left_out():
    chunks = _report()
    reading = read_document(chunks, budget=2000)
    assert [s.title for s in reading.read] == [f"{i}. Section {n}" for i, n in enumerate(NAMES, start=1)]
    assert [s.title for s in reading.left] == ["References"]
    assert reading.coverage == ("Read the opening passages of 6 of 7 sections of report.pdf; not read: References.")
    firsts = [h for h in reading.hits if ". Section " in h.chunk.text]
    assert len(firsts) == 6 and all(h.chunk.text.startswith(f"{i}. Section {n}") for i, (h, n) in
                                    enumerate(zip(firsts, NAMES, strict=True), start=1))  # cut at the heading
    ordinals = [h.chunk.ordinal for h in reading.hits]
    assert ordinals == sorted(ordinals)  # reading order


def test_a_tight_budget_reads_fewer_sections_the_largest_first_and_says_which_were_not_read():
    chunks = _report(sections=5)
    reading = read_document(chunks, budget=300)
    assert len(reading.read) == 2 and len(reading.left) == 4
    assert reading.coverage.startswith("Read the opening passages of 2 of 6 sections of report.pdf; not read: ")
    assert "References" in reading.coverage


def test_a_section_named_by_its_number_or_its_words_is_read_in_order():
    chunks = _report()
    by_words = read_section(chunks, "What does the gamma part say?", 10_000)
    assert by_words is not None and by_words.read[0].title == "3. Section Gamma"
    # its last lines, in the chunk where section 4's heading begins, are read too, and only they
    assert [h.chunk.ordinal for h in by_words.hits] == [6, 7, 8, 9]
    assert by_words.hits[-1].chunk.text.strip() == "the end of the previous part."
    assert by_words.coverage == 'Read all of the section "3. Section Gamma" of report.pdf.'
    short = read_section(chunks, "Summarise section 4", 150)
    assert short.read[0].title == "4. Section Delta" and len(short.hits) < 4
    assert short.coverage.startswith(f"Read the first {len(short.hits)} of 4 passages of the section")
    assert read_section(chunks, "What does the appendix say?", 1000) is None


def test_words_of_the_file_name_do_not_name_a_section():
    chunks = [make_chunk("b", "bert_paper.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate([
        "1 Introduction\nText.", "2 Related Work\nText.", "3 BERT\nThe model.", "4 Experiments\nText.",
        "5 Conclusion\nWe conclude."])]
    reading = read_section(chunks, "What does the BERT paper say in its conclusion section?", 1000)
    assert reading is not None and reading.read[0].title == "5 Conclusion"


def test_a_list_gathers_candidates_section_by_section_before_any_section_gives_a_second():
    chunks = _report(sections=4, per_section=4, words=20)
    outline = build_outline(chunks)
    # Retrieval ranked all of section 1 first: the list still takes one passage from each section first.
    ranked = [c for c in chunks if c.ordinal < 4] + [c for c in chunks if 4 <= c.ordinal < 16]
    hits = [Hit(c, 1.0 / (i + 1), i + 1) for i, c in enumerate(ranked)]
    cost = max(estimate_tokens(c.text) + HEADER_TOKENS for c in chunks)
    reading = read_list(hits, outline, "report.pdf", budget=4 * cost + 1)
    sections = {reading.section_of(h.chunk.ordinal) for h in reading.hits}
    assert len(reading.hits) == 4 and len(sections) == 4
    assert reading.coverage.startswith("Searched all 5 sections of report.pdf and read the best 4 passages, found "
                                       "in 4 of them")
    assert reading.coverage.endswith("the list may be incomplete.")


@pytest.mark.parametrize("question", [
    "What was the combined barley yield of all varieties at Waseca in 1931?",
    "What was Iowa's total net electricity generation in 2017 across all sources?",
    "How many more units did all the stores sell in 2023 than in 2022?",
    "By what percentage did the total output of all the plants grow from 2020 to 2021?",
])
def test_an_aggregate_over_all_the_items_is_a_figure_not_a_list(question):
    assert scope_of(question, "factual") == "passage"


@pytest.mark.parametrize("question", [
    "Which setting stops Apache from looking for .htaccess files on every request?",
    "What discount rate does the plan use for each year?",
    "What does the server log at every restart?",
    "Which flag is checked during every build?",
])
def test_every_after_a_preposition_says_when_or_where_not_what_to_list(question):
    # "on every request", "for each year": how often or over what something holds, not a request for the items
    assert scope_of(question, "fact") == "passage"


def test_every_as_what_is_asked_for_is_still_a_list():
    assert scope_of("Name every author of the paper", "fact") == "list"
    assert scope_of("What are the names of all the authors?", "fact") == "list"
    assert scope_of("Which of all the subsidiaries are in Europe?", "fact") == "list"


def test_a_summary_of_a_document_without_headings_reads_parts_evenly_spaced_through_it():
    chunks = [make_chunk("w", "memo.docx", f"Paragraph {i} of the memo says one thing. " + "word " * (5 + (i % 3) * 40),
                         ordinal=i, paragraph=i + 1) for i in range(60)]
    reading = read_document(chunks, budget=14 * 150)
    assert reading.outline.flat and len(reading.read) == 14
    firsts = [s.first for s in reading.read]
    assert firsts[0] == 0 and firsts[-1] == 59  # from the start to the end, not the longest paragraphs
    gaps = [b - a for a, b in zip(firsts, firsts[1:], strict=False)]
    assert max(gaps) - min(gaps) <= 1
    assert reading.coverage == ("Read the opening passages of 14 of 60 parts of memo.docx, evenly spaced from ¶ 1 "
                                "to ¶ 60.")
