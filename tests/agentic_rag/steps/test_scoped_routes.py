"""Questions about a whole document, a section or every item of a kind, through the whole graph: what is read,
how many model calls it costs, and the line that says what the answer covered."""

from __future__ import annotations

import re
import textwrap

from agentic_rag import Budgets, OfflineBrain, build_agent
from agentic_rag.checks.claims import split_claims
from tests.helpers.agent import FakeRetriever, gemini_agent, make_chunk, plan_json, verify_json
from tests.helpers.documents import write_pdf

TOPICS = ["Methods", "Results", "Discussion", "Limitations", "Outlook"]


def _paper(per_section: int = 2, filler: int = 30) -> list:
    chunks = [make_chunk("p", "study.pdf", "A Study of Wind Turbines\nAbstract\nWe measure how turbines age. "
                         "Blades wear fastest in salty air.", ordinal=0, page=1)]
    ordinal = 1
    for s, topic in enumerate(TOPICS, start=1):
        for p in range(per_section):
            head = f"{s}. {topic}\n" if p == 0 else ""
            lead = f"The {topic.lower()} part opens here with its first point. It says a second thing too. "
            body = "More " + " ".join(f"detail{s}{p}{i}" for i in range(filler))
            chunks.append(make_chunk("p", "study.pdf", f"{head}{lead}{body}.", ordinal=ordinal, page=ordinal + 1))
            ordinal += 1
    chunks.append(make_chunk("p", "study.pdf", "References\n[1] A. Person. Turbines. 2020.", ordinal=ordinal,
                             page=ordinal + 1))
    chunks.append(make_chunk("o", "other.txt", "Turbines elsewhere. A study of other machines.", ordinal=0, lines=(1, 1)))
    return chunks


def test_offline_a_summary_quotes_each_sections_lead_and_says_what_it_read(fake_embedder):
    agent = build_agent(OfflineBrain(fake_embedder), FakeRetriever(_paper(), fake_embedder))
    result = agent.ask("Summarize the study of wind turbines")
    assert "the opening sentences of each section read, quoted; not a written summary" in result.answer
    for s, topic in enumerate(TOPICS, start=1):
        assert f"**{s}. {topic}, p. " in result.answer
        assert f'"The {topic.lower()} part opens here with its first point. It says a second thing too." [' in result.answer
    assert "*(Read the opening passages of 6 of 7 sections of study.pdf; not read: References.)*" in result.answer
    assert {c.file for c in result.citations} == {"study.pdf"}  # never the other document
    retrieve = next(t for t in result.trace if t["step"] == "retrieve")
    assert retrieve["details"]["reading"]["kind"] == "document"
    # The engine's line about coverage is not a claim to check.
    assert not any("Read the opening passages" in c.text for c in split_claims(result.answer))


def test_with_a_model_a_summary_of_a_paper_is_one_answer_call_over_its_sections(fake_embedder):
    retriever = FakeRetriever(_paper(), fake_embedder)
    answer = "- Turbines age, blades wear fastest in salty air [P1].\n- The methods part opens here [P2]."
    agent, chat = gemini_agent(retriever, [plan_json("Summarize the study of wind turbines", "summary"), answer,
                                           verify_json([("supported", 1), ("supported", 2)])])
    result = agent.ask("Summarize the study of wind turbines")
    assert len(chat.prompts) == 3  # plan, answer, verify
    prompt = chat.prompts[1]
    assert "opening passages of each section of the document" in prompt
    assert "Sections read: Abstract (p. 1); 1. Methods (p. 2)" in prompt
    assert result.answer.rstrip().endswith("not read: References.)*")


def test_a_section_longer_than_one_call_is_read_in_parts_and_merged_by_one_more_call(fake_embedder):
    retriever = FakeRetriever(_paper(per_section=12, filler=80), fake_embedder)
    question = "What does the results section say?"

    def part(prompt: str) -> str:
        n = re.findall(r"^\[P(\d+)\]", prompt, re.MULTILINE)[0]
        return f"The results part says something [P{n}]."

    def combine(prompt: str) -> str:
        assert "You merge partial answers" in prompt and prompt.count("<part n=") == 3
        return "The results part says something [P1][P5][P9]."

    agent, chat = gemini_agent(retriever, [plan_json(question), part, part, part, combine,
                                           verify_json([("supported", 1)])], budgets=Budgets(context_tokens=1500))
    result = agent.ask(question)
    assert sum("This call reads part" in p for p in chat.prompts) == 3
    synthesize = next(t for t in result.trace if t["step"] == "synthesize")
    assert synthesize["llm_calls"] == 4 and "read in 3 parts" in synthesize["summary"]
    assert 'the section "2. Results" of study.pdf' in result.answer


def test_offline_a_list_names_where_each_item_was_found_and_that_it_may_be_incomplete(fake_embedder):
    chunks = _paper()
    chunks[3] = make_chunk("p", "study.pdf", "2. Results\nThe sites tested were Aarhus and Cork in the first year.",
                           ordinal=3, page=4)
    chunks[7] = make_chunk("p", "study.pdf", "4. Limitations\nOnly two sites were tested; Bilbao joined later.",
                           ordinal=7, page=8)
    agent = build_agent(OfflineBrain(fake_embedder), FakeRetriever(chunks, fake_embedder))
    result = agent.ask("List every site tested in the study")
    assert "not a complete list" in result.answer and "the list may be incomplete." in result.answer
    assert "2. Results" in result.answer and "4. Limitations" in result.answer
    assert "Aarhus and Cork" in result.answer and "Bilbao" in result.answer


def test_a_summary_of_every_document_reads_each_one(fake_embedder):
    agent = build_agent(OfflineBrain(fake_embedder), FakeRetriever(_paper(), fake_embedder))
    result = agent.ask("Summarise the main points of each document")
    assert "### study.pdf" in result.answer and "### other.txt" in result.answer
    assert "Read the opening passages of 2 documents: " in result.answer


RISKS = ["Rising interest rates could reduce demand for our loans and raise our funding costs.",
         "We depend on a small number of suppliers for the chips in our payment terminals.",
         "A breach of our systems could expose customer data and harm our reputation.",
         "Changes in tax law in the countries where we operate may raise our effective tax rate.",
         "Our growth depends on hiring and keeping engineers in a tight labour market.",
         "Litigation about our patents could be costly and distract our management."]


def _filing_pages() -> list[list[str]]:
    """A 10-K's text as a PDF sets it: items, and risk factors written as run-in headings before their discussion."""
    def para(text: str) -> list[str]:
        return textwrap.wrap(text, 95)

    def discussion(topic: str) -> str:
        return " ".join(f"The {topic} matter is discussed here in sentence {s}, with what it means for the business."
                        for s in range(4))

    lines = ["Item 1. Business.", *para(discussion("business") + " We sell payment terminals to shops."),
             "Item 1A. Risk Factors.", *para("Described below are the risks we believe are material to our business. "
                                             "They are not the only ones we face; others may also affect us.")]
    for i, risk in enumerate(RISKS):
        lines += para(risk) + para(discussion(f"risk {i}"))
    lines += ["Item 1B. Unresolved Staff Comments.", "None.", "Item 2. Properties.",
              *para(discussion("properties") + " We lease our offices.")]
    return [lines[i:i + 40] for i in range(0, len(lines), 40)]


def test_offline_all_the_items_of_a_section_are_its_run_in_headings_quoted_from_an_indexed_pdf(kb, fake_embedder,
                                                                                               tmp_path):
    path = tmp_path / "terminals-10k.pdf"
    write_pdf(path, _filing_pages())
    assert kb.ingest_file(path).status == "indexed"
    agent = build_agent(OfflineBrain(fake_embedder), kb.retriever, embedder=fake_embedder, outlines=kb)
    result = agent.ask("What are all the risk factors in the terminals 10-K?")
    assert 'the items of "Item 1A. Risk Factors." as it sets them out' in result.answer
    quoted = re.findall(r'^- "(.+)" \[\d+\]$', result.answer, re.MULTILINE)
    assert quoted == RISKS  # every one, in order, and nothing else (not the introduction, not a discussion)
    verify = next(t for t in result.trace if t["step"] == "verify")
    assert [c["verdict"] for c in verify["details"]["claims"]] == ["supported"] * len(RISKS)
    assert 'the section "Item 1A. Risk Factors." of terminals-10k.pdf' in result.answer


def test_offline_a_summary_quotes_the_authors_own_summary_at_more_length_than_other_sections(fake_embedder):
    chunks = _paper()
    abstract = ["We measure how turbines age over ten years.", "Blades wear fastest in salty air.",
                "Gearboxes fail after about seven years.", "Towers hardly change at all over time.",
                "Inspections every two years would catch most faults early."]
    chunks[0] = make_chunk("p", "study.pdf", "A Study of Wind Turbines\nAbstract\n" + " ".join(abstract), ordinal=0,
                           page=1)
    result = build_agent(OfflineBrain(fake_embedder), FakeRetriever(chunks, fake_embedder)).ask(
        "Summarize the study of wind turbines")
    assert f'"{" ".join(abstract)}" [' in result.answer  # every sentence of the abstract
    assert '"The methods part opens here with its first point. It says a second thing too." [' in result.answer


def test_offline_a_section_whose_sentence_ends_inside_a_closing_quote_is_quoted_not_refused(fake_embedder):
    chunks = _paper()
    said = ("Discussion of these matters is incorporated by reference from Note 16, “Commitments and Contingencies,” "
            "and should be read as part of “Discussion.”")
    chunks[5] = make_chunk("p", "study.pdf", f"3. Discussion\n{said}", ordinal=5, page=6)
    chunks[6] = make_chunk("p", "study.pdf", "4. Limitations\nThe limitations part opens here with its first point.",
                           ordinal=6, page=7)
    result = build_agent(OfflineBrain(fake_embedder), FakeRetriever(chunks, fake_embedder)).ask(
        "What does the discussion section say?")
    assert f'"{said}" [' in result.answer and "could not find" not in result.answer


def test_a_section_that_hands_its_subject_to_a_note_is_read_with_that_note(fake_embedder):
    texts = ["Item 1. Business.\nThe company makes valves for water utilities in three countries of Europe.",
             "Table of Contents\nNote 7. Commitments and Contingencies 45",  # a contents line: not the note
             "Item 3. Legal Proceedings.\nDiscussion of legal matters is incorporated by reference from Part II, "
             "Item 8, Note 7, “Commitments and Contingencies,” of this document.",
             "Item 4. Mine Safety Disclosures.\nThis item is not applicable to the company's operations.",
             "Item 8. Financial Statements.\nNOTE 6. Leases\nThe company leases offices in four cities for ten years.",
             "NOTE 7. Commitments and Contingencies\nThe company is a defendant in a patent lawsuit that Zenith Labs "
             "brought in 2021 over its valve seals.",
             "A second case about product liability was settled for a small sum during the year.",
             "NOTE 8. Income Taxes\nThe effective tax rate was twenty percent in the year under review."]
    chunks = [make_chunk("f", "valves-10k.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)]
    result = build_agent(OfflineBrain(fake_embedder), FakeRetriever(chunks, fake_embedder)).ask(
        "What does the legal proceedings section say?")
    assert "Zenith Labs" in result.answer and "settled for a small sum" in result.answer
    assert "effective tax rate" not in result.answer and "leases offices" not in result.answer
    assert ('"NOTE 7. Commitments and Contingencies", which it refers to' in result.answer)


def test_offline_a_list_quotes_the_items_a_line_naming_them_introduces(fake_embedder):
    chunks = _paper()
    chunks[3] = make_chunk("p", "study.pdf", "2. Results\nThe sites measured in the study were these:\n• Aarhus harbour, two turbines\n"
                           "• Cork estuary, five turbines\n• Bilbao port, one turbine\nThe rest is prose.", ordinal=3,
                           page=4)
    result = build_agent(OfflineBrain(fake_embedder), FakeRetriever(chunks, fake_embedder)).ask(
        "List every site measured in the study")
    for item in ("Aarhus harbour, two turbines", "Cork estuary, five turbines", "Bilbao port, one turbine"):
        assert f'"{item}" [' in result.answer
    verify = next(t for t in result.trace if t["step"] == "verify")
    assert all(c["verdict"] == "supported" for c in verify["details"]["claims"] if "turbine" in c["text"])


def test_a_summary_of_a_document_named_by_its_file_name_reads_that_one_and_a_sheet_by_its_first_lines(fake_embedder):
    sheet = [make_chunk("s", "cities.xlsx", "| City | Population |\n| --- | --- |\n| Lagos | 16,060,000 |\n"
                        "| Tokyo | 13,298,000 |", ordinal=0, sheet="Big", cells="A1:B3"),
             make_chunk("s", "cities.xlsx", "| Town | Population |\n| --- | --- |\n| Fairbanks | 32,000 |",
                        ordinal=1, sheet="Small", cells="A1:B2")]
    # the other document says more about summarising cities: the passages found would pick it
    chunks = sheet + [make_chunk("o", "notes.txt", f"Summarize city sizes. Cities grow. Summarize {i}.", ordinal=i,
                                 lines=(i + 1, i + 1)) for i in range(4)]
    result = build_agent(OfflineBrain(fake_embedder), FakeRetriever(chunks, fake_embedder)).ask(
        "Summarize cities.xlsx")
    assert {c.file for c in result.citations} == {"cities.xlsx"}
    assert '"City | Population … Lagos | 16,060,000 … Tokyo | 13,298,000" [' in result.answer
    assert "its first lines where it has no sentences" in result.answer and "could not find" not in result.answer
    verify = next(t for t in result.trace if t["step"] == "verify")
    assert {c["verdict"] for c in verify["details"]["claims"]} == {"supported"}
