"""The engine end to end (Agent.ask through the graph): the offline brain on hand-made and generated documents, a
scripted chat model, failures and budgets, citations as the reader sees them, and prompt injection."""

from __future__ import annotations

import json
import re
import threading
import time

import pytest

from advanced_retrieval import Filters
from agentic_rag import NOT_FOUND, OFFLINE_LABEL, Budgets, OfflineBrain, build_agent, make_gemini_brain
from agentic_rag.types import Claim
from document_processor import Location
from tests.helpers.agent import (
    SECRET,
    STEPS,
    FakeRetriever,
    Q,
    _is_refusal_estimate,
    gemini_agent,
    make_chunk,
    plan_json,
    verify_json,
)
from tests.helpers.hostile import INJECTION, NOTES
from tests.helpers.library import open_kb


def test_bad_configuration_raises_with_the_allowed_values(retriever):
    with pytest.raises(ValueError):
        Budgets(llm_calls=-1)
    with pytest.raises(ValueError):
        Budgets(context_tokens=100)
    with pytest.raises(ValueError, match="API key"):
        make_gemini_brain("")
    with pytest.raises(ValueError, match="brain"):
        build_agent(object(), retriever)
    agent = build_agent(OfflineBrain(), retriever)
    with pytest.raises(ValueError, match="hybrid"):
        agent.ask("x", strategy="semantic")
    with pytest.raises(ValueError):
        agent.ask("x", k=0)


def test_offline_answer_quotes_with_citation_location_trace_events_and_tokens(offline_agent):
    events, tokens = [], []
    result = offline_agent.ask("What was Acme's revenue in 2023?", on_event=lambda s, e: events.append((s, e)),
                               on_token=tokens.append)
    assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
    assert '"Revenue in 2023 was $5.2 million, up 12% from 2022." [1]' in result.answer
    assert "".join(tokens) == result.answer  # streamed, and nothing flagged
    data = result.to_dict()
    assert set(data) == {"answer", "mode", "citations", "claims", "confidence", "confidence_basis",
                         "confidence_features", "trace", "usage",
                         "seconds", "warnings"}
    assert data["citations"] == [{"n": 1, "file": "acme_report.pdf", "doc_id": "d1", "location": {"page": 3},
                                  "text": result.citations[0].text}]
    assert data["claims"][0]["verdict"] == "supported" and data["confidence_features"]["support"] == 1.0
    assert 0.5 < data["confidence"] < 1.0  # an estimate, never certainty
    assert [t["step"] for t in data["trace"]] == STEPS
    for entry in data["trace"]:
        assert {"step", "summary", "seconds", "llm_calls", "input_tokens", "output_tokens", "details"} <= set(entry)
        assert entry["llm_calls"] == 0
    assert data["trace"][0]["mode"] == OFFLINE_LABEL
    assert data["usage"] == {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0}
    assert [(s, e["status"]) for s, e in events] == [(s, st) for s in STEPS for st in ("started", "done")]
    top = data["trace"][2]["details"]["queries"][0]["top"][0]
    assert top["file"] == "acme_report.pdf" and top["location"] == "p. 3" and top["bm25_score"] > 0
    json.dumps(data)  # plain JSON all the way down
    assert result.analysis.question_type == "numeric" and result.sub_hits and result.sub_questions


PLANTED = [  # question, words the quote must contain, file, location
    ("What was Acme's revenue in 2023?", "$5.2 million", "acme_report.pdf", {"page": 3}),
    ("How many people does Acme employ?", "140 people", "acme_report.pdf", {"page": 3}),
    ("Which are the pilot sites?", "Aarhus, Bilbao and Cork", "acme_report.pdf", {"page": 4}),
    ("When does the steering committee meet?", "every Monday", "kickoff.pptx", {"slide": 2}),
    ("What budget does the North region have?", "North | 410000", "budget.xlsx",
     {"sheet": "Budget", "cells": "A1:B3"}),
    ("Since when does Globex comply with GDPR?", "since 2018", "globex_memo.docx", {"paragraph": 2}),
]
UNANSWERABLE = [
    "What is the boiling point of mercury on Mars?",
    "What was Initech's revenue in 2023?",
    "Who won the 1998 football world cup?",
    "What was Acme's revenue in 2031?",
    "How many employees does Globex have in Tokyo?",
]


@pytest.mark.parametrize("question, quote, file, location", PLANTED)
def test_planted_facts_are_quoted_with_the_right_place(offline_agent, question, quote, file, location):
    result = offline_agent.ask(question)
    assert NOT_FOUND not in result.answer
    assert quote in result.answer
    first = result.citations[0].to_dict()
    assert first["file"] == file and first["location"] == location
    # its claims checked out; the confidence's level also weighs the claim's cosine to the question, whose scale
    # is the embedder's (a hashing embedder here, not the app's model), so it is not asserted
    assert result.confidence_features["support"] == 1.0 and result.confidence_features["answered"] == 1.0


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_unanswerable_questions_are_refused(offline_agent, question):
    result = offline_agent.ask(question)
    assert NOT_FOUND in result.answer and result.claims == () and _is_refusal_estimate(result)
    assert '"' not in result.answer.split(NOT_FOUND)[1]  # no quote passed off as an answer
    assert result.to_dict()["citations"] == []


def test_negation_checks_every_document_within_the_users_filter(offline_agent, retriever):
    result = offline_agent.ask("Which documents don't mention GDPR?")
    assert result.analysis.question_type == "negation"
    per_doc = [c for c in retriever.calls if c[3] is not None and c[3].doc_ids is not None]
    assert sorted(c[3].doc_ids[0] for c in per_doc) == ["d1", "d2", "d3", "d4"]
    assert "Not mentioned in: acme_report.pdf, kickoff.pptx, budget.xlsx." in result.answer
    assert 'globex_memo.docx: "Globex complies with GDPR since 2018." [1]' in result.answer
    assert {c.verdict for c in result.claims} == {"supported"}
    assert [c.mentioned for c in result.coverage] == [False, True, False, False]
    retriever.calls.clear()
    narrowed = offline_agent.ask("Which documents don't mention GDPR?", filters=Filters(file_types=("pdf", "docx")))
    assert {c.file_name for c in narrowed.coverage} == {"acme_report.pdf", "globex_memo.docx"}
    assert all(c[3].file_types == ("pdf", "docx") for c in retriever.calls)
    exhaustive = offline_agent.ask("Which files mention the steering committee?")
    assert exhaustive.answer.index("Mentioned in") < exhaustive.answer.index("Not mentioned in")
    assert "kickoff.pptx" in exhaustive.answer.split("Not mentioned in")[0]


def test_empty_inputs_give_empty_results(retriever, fake_embedder):
    agent = build_agent(OfflineBrain(), retriever)
    assert agent.ask("   ").to_dict()["answer"] == ""
    empty = build_agent(OfflineBrain(), FakeRetriever([], fake_embedder))
    result = empty.ask("What was Acme's revenue?")
    assert NOT_FOUND in result.answer and _is_refusal_estimate(result)
    negation = empty.ask("Which documents don't mention GDPR?")
    assert NOT_FOUND in negation.answer and negation.coverage == ()


def test_simple_question_takes_three_calls_streams_and_counts_tokens(retriever):
    q = "What was Acme's revenue in 2023?"
    agent, chat = gemini_agent(retriever, [
        plan_json(q, "numeric", concepts=["Acme", "revenue", "2023"]),
        "Acme's revenue in 2023 was $5.2 million [P1].",
        verify_json([("supported", 1)]),
    ], as_parts=True)
    tokens = []
    result = agent.ask(q, on_token=tokens.append)
    assert result.mode == "gemini" and result.warnings == ()
    assert result.answer == "Acme's revenue in 2023 was $5.2 million [1]."
    assert "".join(tokens) == result.answer and len(tokens) > 3
    assert result.usage.llm_calls == 3 == len(chat.prompts)
    assert result.usage.input_tokens == sum(len(p) // 4 for p in chat.prompts)
    assert [t["llm_calls"] for t in result.trace] == [1, 0, 0, 1, 1]
    assert "one call shared with decompose" in result.trace[0]["summary"]
    plan_prompt, answer_prompt, verify_prompt = chat.prompts
    assert "You plan how to answer" in plan_prompt and q in plan_prompt
    assert "[P1] acme_report.pdf, p. 3" in answer_prompt and "Revenue in 2023 was $5.2 million" in answer_prompt
    assert "Answer in English" in answer_prompt
    assert "1. Acme's revenue in 2023 was $5.2 million. (cites [P1])" in verify_prompt
    assert chat.kwargs_seen[0]["response_mime_type"] == "application/json"
    assert "response_json_schema" in chat.kwargs_seen[2] and "$defs" not in json.dumps(chat.kwargs_seen[2])
    assert result.claims[0].verdict == "supported" and result.confidence > 0.5
    assert result.citations[0].location == Location(page=3)


def test_fabricated_citations_and_pages_are_flagged_and_lower_confidence(retriever):
    q = "What was Acme's revenue in 2023?"
    answer = ("Acme's revenue in 2023 was $5.2 million [P1]. According to page 12, profits doubled [P1]. "
              "Acme also opened an office in Lima [P7].")
    agent, _ = gemini_agent(retriever, [plan_json(q), answer,
                                        verify_json([("supported", 1), ("supported", 1), ("supported", 7)])],
                            budgets=Budgets(max_loops=0))
    result = agent.ask(q)
    assert [c.verdict for c in result.claims] == ["supported", "unsupported", "unsupported"]
    assert "Lima. ⚠ (not supported by the cited passages)" in result.answer and "[7]" not in result.answer
    assert "doubled [1]. ⚠ (not supported" in result.answer
    assert result.confidence_features["support"] == round(1 / 3, 2) and result.confidence < 0.5
    assert [c.n for c in result.citations] == [1]  # [P7] points at nothing and is not listed


@pytest.mark.parametrize("failing_step", [0, 1, 2])
def test_a_failing_gemini_step_finishes_the_question_offline(retriever, failing_step):
    q = "What was Acme's revenue in 2023?"
    boom = ConnectionError(f"connection refused (key={SECRET})")
    script = [plan_json(q), "Acme earned $5.2 million in 2023 [P1].", verify_json([("supported", 1)])]
    script[failing_step:failing_step + 1] = [boom, boom]  # the first try and its one retry
    agent, chat = gemini_agent(retriever, script)
    events = []
    result = agent.ask(q, on_event=lambda s, e: events.append((s, e["status"])))
    dumped = json.dumps(result.to_dict())
    assert SECRET not in dumped and SECRET not in repr(result)
    assert any("could not be reached" in w and OFFLINE_LABEL in w for w in result.warnings)
    assert ("analyze", "fallback") in events or failing_step > 0
    assert len(chat.prompts) == failing_step + 2  # no Gemini call after the failure
    if failing_step < 2:
        assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
        assert '"Revenue in 2023 was $5.2 million, up 12% from 2022." [1]' in result.answer
    else:
        assert result.mode == "gemini" and result.trace[-1]["mode"] == OFFLINE_LABEL
    assert "Error" not in result.answer and "refused" not in result.answer


def test_malformed_json_is_retried_then_code_fenced_json_is_accepted(retriever):
    q = "What was Acme's revenue in 2023?"
    script = ['{"intent": "x", "complexity": ', "```json\n" + plan_json(q) + "\n```",
              "Acme earned $5.2 million in 2023 [P1].", "Sure:\n" + verify_json([("Supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask(q)
    assert result.mode == "gemini" and result.warnings == () and result.usage.llm_calls == 4
    assert result.trace[0]["llm_calls"] == 2 and result.claims[0].verdict == "supported"


def test_wall_time_budget_stops_calling_gemini(retriever):
    q = "What was Acme's revenue in 2023?"
    agent, chat = gemini_agent(retriever, [plan_json(q), "Acme earned $5.2 million [P1].",
                                           verify_json([("supported", 1)])],
                               budgets=Budgets(seconds=2.5), delay=1.0)
    result = agent.ask(q)
    assert any("time budget" in w for w in result.warnings)
    assert len(chat.prompts) < 3 and NOT_FOUND not in result.answer


def test_rate_limits_are_not_retried_past_the_retry_window(retriever):
    from google.genai.errors import ClientError

    q = "What was Acme's revenue in 2023?"
    limited = ClientError(429, {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}})
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # the waits really pass (the window is wall time); they are recorded
        waits.append(seconds)
        time.sleep(seconds)

    agent, chat = gemini_agent(retriever, [limited] * 10, max_retries=5,
                               budgets=Budgets(retry_seconds=2.0, llm_calls=20), sleep=sleep)
    result = agent.ask(q)
    assert waits and sum(waits) <= 2.0  # every wait fitted in the 2 s retry window of the failing step
    assert result.mode == "offline" and any("rate limited (HTTP 429)" in w for w in result.warnings)
    assert len(chat.prompts) == len(waits) + 1 <= 4


def write_pdf(path, pages: list[list[str]]) -> None:
    """A small valid PDF: Helvetica text lines per page, with a correct xref table."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", None, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        ops = "BT /F1 11 Tf 72 720 Td 14 TL " + " ".join(
            "(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") '" for line in lines) + " ET"
        objects.append(b"<< /Length %d >>\nstream\n" % len(ops) + ops.encode("latin-1") + b"\nendstream")
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 3 0 R >> >> >>" % len(objects))
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{k} 0 R" for k in kids).encode(), len(kids))
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))


@pytest.fixture
def knowledge_base(tmp_path, fake_embedder):
    """The real KnowledgeBase (Chroma + BM25) over five generated files of five types."""
    import wiring
    vector_db = pytest.importorskip("vector_db")
    import docx
    import openpyxl
    import pptx

    write_pdf(tmp_path / "annual_report.pdf", [
        ["Annual report 2023", "Northwind Ltd had 87 employees at year end."],
        ["Results", "Northwind revenue in 2023 was 12.4 million euros.", "Operating margin reached 9 percent."],
    ])
    document = docx.Document()
    document.add_heading("Project review", level=1)
    document.add_paragraph("The three pilot sites are Aarhus, Bilbao and Cork.")
    document.add_paragraph("Bilbao hosts the wind-turbine test bench for the project.")
    document.save(tmp_path / "review.docx")
    deck = pptx.Presentation()
    for title, body in (("Kick-off", "The steering committee meets every Monday at 9:00."),
                        ("Compliance", "Contoso has complied with GDPR since 2018.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text, slide.placeholders[1].text = title, body
    deck.save(tmp_path / "kickoff.pptx")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    for row in (("Region", "Budget"), ("North", 410000), ("South", 385000)):
        sheet.append(row)
    book.save(tmp_path / "budget.xlsx")
    (tmp_path / "notes.txt").write_text("Meeting notes\nThe cafeteria menu changes every Friday.\n"
                                        "Visitor parking is free after 18:00.\n")
    store = vector_db.VectorStore(vector_db.make_client(tmp_path / "data"), fake_embedder)
    kb = wiring.knowledge_base(store, tmp_path, fake_embedder, isolate=False)
    results = kb.ingest_many([tmp_path / n for n in ("annual_report.pdf", "review.docx", "kickoff.pptx",
                                                    "budget.xlsx", "notes.txt")])
    assert [r.status for r in results] == ["indexed"] * 5, [r.reason for r in results]
    yield kb


E2E_FACTS = [
    ("What was Northwind's revenue in 2023?", "12.4 million euros", "annual_report.pdf", {"page": 2}),
    ("How many employees did Northwind have?", "87 employees", "annual_report.pdf", {"page": 1}),
    ("When does the steering committee meet?", "every Monday at 9:00", "kickoff.pptx", {"slide": 1}),
    ("What is the budget of the South region?", "South | 385000", "budget.xlsx", {"sheet": "Budget"}),
    ("When does the cafeteria menu change?", "every Friday", "notes.txt", {"lines": [1, 3]}),
    ("Which are the three pilot sites?", "Aarhus, Bilbao and Cork", "review.docx", {"paragraph": 1}),
]


@pytest.mark.slow
def test_end_to_end_offline_on_generated_documents(knowledge_base, fake_embedder):
    agent = build_agent(OfflineBrain(), knowledge_base.retriever, embedder=fake_embedder)
    for question, quote, file, location in E2E_FACTS:
        result = agent.ask(question)
        assert quote in result.answer, (question, result.answer)
        cited = result.to_dict()["citations"][0]
        assert cited["file"] == file and location.items() <= cited["location"].items(), (question, cited)
        assert quote.split()[0] in cited["text"] and result.confidence >= 0.5
    for question in ("What is the boiling point of mercury on Mars?", "Who won the 1998 football world cup?",
                     "What was Contoso's revenue in 2031?"):
        refused = agent.ask(question)
        assert NOT_FOUND in refused.answer and refused.citations == () and _is_refusal_estimate(refused), question

    first = agent.ask("Which are the three pilot sites?")
    follow = agent.ask("and the second one?", history=[("Which are the three pilot sites?", first.answer)])
    assert follow.analysis.standalone == "What about Bilbao?"
    assert "Bilbao hosts the wind-turbine test bench" in follow.answer

    negation = agent.ask("Which documents don't mention GDPR?")
    assert sorted(c.file_name for c in negation.coverage if not c.mentioned) == [
        "annual_report.pdf", "budget.xlsx", "notes.txt", "review.docx"]
    assert "Not mentioned in: " in negation.answer and "kickoff.pptx" in negation.answer.split("Mentioned in:")[1]
    assert negation.citations[0].location == Location(slide=2)
    assert all(c.chunks_checked >= 1 for c in negation.coverage)
    assert {c.verdict for c in negation.claims} == {"supported"}


def test_callbacks_run_on_the_callers_thread(offline_agent):
    threads = set()
    offline_agent.ask("What was Acme's revenue in 2023?", on_event=lambda s, e: threads.add(threading.get_ident()),
                      on_token=lambda t: threads.add(threading.get_ident()))
    assert threads == {threading.get_ident()}  # a UI may draw from them directly


def test_wrapped_pdf_lines_are_quoted_whole_and_their_own_references_are_not_citations(fake_embedder):
    text = ("Results\nOn the ImageNet dataset we evaluate residual nets with a depth of up to 152 layers, 8\n"
            "times deeper than VGG nets [41] but still having lower com-\nplexity. Other text follows here.")
    agent = build_agent(OfflineBrain(), FakeRetriever([make_chunk("r", "resnet.pdf", text, page=1)], fake_embedder))
    result = agent.ask("How deep were the residual nets evaluated on ImageNet?")
    quote = ('"On the ImageNet dataset we evaluate residual nets with a depth of up to 152 layers, 8 times deeper '
             'than VGG nets [41] but still having lower complexity." [1]')
    assert quote in result.answer
    assert [c.n for c in result.citations] == [1] and result.claims[0].citations == (1,)
    assert result.claims[0].verdict == "supported" and "⚠" not in result.answer


def test_a_copied_document_reference_is_not_a_citation_end_to_end(filing):
    script = [plan_json("What is easier to optimize?", subs=["What EBITDA?", "residual networks optimize"]),
              "Deeper residual networks [11] are easier to optimize [P2].", verify_json([("supported", 2)])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask("What is easier to optimize?")
    assert [c.file for c in result.citations] == ["resnet.pdf"] and result.citations[0].n == 1
    assert result.answer == "Deeper residual networks [11] are easier to optimize [1]."
    assert "[P2] resnet.pdf" in chat.prompts[1]
    assert "never cite them" in chat.prompts[1]


def test_an_unmarked_refusal_scores_as_a_refusal_end_to_end(filing):
    q = "What is the capital of Australia?"
    script = [plan_json(q), "The provided passages do not contain the capital of Australia. They discuss "
                            "Adjusted EBITDA [P1]."]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(q)
    assert result.claims == () and _is_refusal_estimate(result) and len(chat.prompts) == 2


def test_claims_keep_reader_numbers_in_the_result(filing):
    script = [plan_json(Q, subs=[Q, "residual networks optimize"]),
              "EBITDA was 2,117 [P1]. Residual nets [11] are easier to optimize [P2].",
              verify_json([("supported", 1), ("supported", 2)])]
    agent, _ = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert [c.citations for c in result.claims] == [(1,), (2,)]
    assert [(c.n, c.file) for c in result.citations] == [(1, "10k.pdf"), (2, "resnet.pdf")]
    assert isinstance(result.claims[0], Claim)


def test_sources_are_numbered_in_the_order_the_answer_shows_them(filing):
    # the model cites its second passage first: the reader sees [1] then [2], and Sources lists exactly those two
    script = [plan_json(Q, subs=[Q, "residual networks optimize"]),
              "Residual nets are easier to optimize [P2]. EBITDA was 2,117 [P1]. It was 2,117 [P1, P2].",
              verify_json([("supported", 2), ("supported", 1), ("supported", 1)])]
    agent, _ = gemini_agent(filing, script)
    result = agent.ask(Q)
    shown = [int(n) for n in re.findall(r"\[(\d+)\]", result.answer)]
    assert shown[:2] == [1, 2] and set(shown) == {c.n for c in result.citations}
    assert [(c.n, c.file) for c in result.citations] == [(1, "resnet.pdf"), (2, "10k.pdf")]


def offline_answers(tmp_path, embedder, with_injection: bool) -> dict:
    kb = open_kb(tmp_path / ("inj" if with_injection else "clean"), embedder)
    for name, data in NOTES + ([("memo.txt", INJECTION.encode())] if with_injection else []):
        assert kb.ingest_bytes(data, name).status == "indexed"
    agent = build_agent(OfflineBrain(embedder), kb.retriever, embedder=embedder)
    questions = ["When does the steering committee meet?", "What is the summit project budget for 2024?"]
    return {q: agent.ask(q) for q in questions} | {"memo": agent.ask("What does the system notice memo say?")}


def test_an_injected_instruction_does_not_change_offline_answers_and_is_cited_as_itself(tmp_path, fake_embedder):
    clean = offline_answers(tmp_path, fake_embedder, with_injection=False)
    dirty = offline_answers(tmp_path, fake_embedder, with_injection=True)
    for question in clean:
        if question == "memo":
            continue
        assert dirty[question].answer == clean[question].answer, question
        assert "42" not in dirty[question].answer
        assert {c.file for c in dirty[question].citations} <= {"notes.txt", "budget.txt"}
    memo = dirty["memo"]
    assert {c.file for c in memo.citations} == {"memo.txt"}  # cited as what it is: a document saying this
    quoted = memo.answer.split("\n\n", 1)[1].split('"')[1]
    assert quoted and quoted in INJECTION
