"""The engine under the output real models produce: passage IDs, numbers, tables, refusals and the verify loop.

Each case here was seen with real model output (issue 11). The graph runs on a scripted chat model that records
its prompts; tests/test_gemini_client.py replays the same kinds of output through the real Gemini client.
"""

from __future__ import annotations

import re

import pytest
from test_agentic_rag import FakeRetriever, _is_refusal_estimate, gemini_agent, make_chunk, plan_json, verify_json

from advanced_retrieval import Hit
from agentic_rag.checks.citations import DisplayStream, cited_ids, display, strip_ids
from agentic_rag.checks.claims import flag_answer, is_refusal, split_claims
from agentic_rag.checks.figures import arithmetic_errors, unexplained
from agentic_rag.checks.verdicts import check_claim
from agentic_rag.context import build_context
from agentic_rag.types import Claim, ContextBlock, Verdict

Q = "What was Adjusted EBITDA in fiscal 2023 and 2022?"


def _hit(chunk, rank=1):
    return Hit(chunk, 1.0 / rank, rank, vector_score=0.5, bm25_score=2.0)


@pytest.fixture
def filing(fake_embedder):
    return FakeRetriever([
        make_chunk("f", "10k.pdf", "Adjusted EBITDA (in millions) | 2023 | 2022\nAdjusted EBITDA | 2,117 | 2,018\n"
                   "Net sales | 10,500 | 9,800", page=41),
        make_chunk("r", "resnet.pdf", "Deeper residual networks [11] are easier to optimize than plain ones [41]; "
                   "the 152-layer net has lower complexity than VGG nets.", page=1),
    ], fake_embedder)


# ---------------------------------------------------------------- passage IDs

@pytest.mark.parametrize("written, ids", [
    ("a [P2]", (2,)), ("a [P1, P2]", (1, 2)), ("a [P1-P3]", (1, 2, 3)), ("a [P1–3]", (1, 2, 3)),
    ("a [P1][P2]", (1, 2)), ("a [Source 2]", (2,)), ("a [Passage 4]", (4,)), ("a (P5)", (5,)),
    ("a [P1; P3]", (1, 3)), ("a [P2 and P4]", (2, 4)), ("a [p7]", (7,)),
    ("deeper networks [11] train better", ()), ("see [2] and [3, 4]", ()), ("in (2019)", ()),
])
def test_the_forms_models_write_are_read_and_a_documents_own_references_are_not(written, ids):
    assert cited_ids(written) == ids


def test_ids_are_stable_when_a_later_round_adds_passages(filing):
    a, b = filing.chunks
    first = build_context([("q", (_hit(a),))], 10_000)
    later = build_context([("q", (_hit(a),)), ("again", (_hit(b), _hit(a)))], 10_000, previous=first)
    assert [(x.chunk.id, x.n) for x in first] == [(a.id, 1)]
    assert {x.chunk.id: x.n for x in later} == {a.id: 1, b.id: 2}  # added, never renumbered
    assert later[0].header().startswith("[P1] 10k.pdf, p. 41")


def test_an_id_that_names_no_passage_is_dropped_and_flagged_never_remapped(filing):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    both = split_claims("Adjusted EBITDA was 2,117 in 2023 [P1, P9].")[0]
    assert check_claim(both, Verdict(0, "supported", 1), blocks).verdict == "partial"
    only = split_claims("Adjusted EBITDA was 2,117 in 2023 [P9].")[0]
    claim = check_claim(only, Verdict(0, "supported", 9), blocks)
    assert claim.verdict == "unsupported" and "P9" in claim.reason and claim.citations == ()
    shown, order = display("EBITDA was 2,117 [P1, P9]. Ignored [P9].", {1})
    assert shown == "EBITDA was 2,117 [1]. Ignored." and order == {1: 1}


def test_a_copied_document_reference_is_not_a_citation_end_to_end(filing):
    script = [plan_json("What is easier to optimize?", subs=["What EBITDA?", "residual networks optimize"]),
              "Deeper residual networks [11] are easier to optimize [P2].", verify_json([("supported", 2)])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask("What is easier to optimize?")
    assert [c.file for c in result.citations] == ["resnet.pdf"] and result.citations[0].n == 1
    assert result.answer == "Deeper residual networks [11] are easier to optimize [1]."
    assert "[P2] resnet.pdf" in chat.prompts[1]
    assert "never cite them" in chat.prompts[1]


def test_streamed_text_shows_reader_numbers_never_raw_ids():
    pieces = []
    stream = DisplayStream(pieces.append, {1, 3})
    for piece in ["Revenue rose [", "P3", "] and costs [P1", "] fell (see [11]) [P", "9]."]:
        stream(piece)
    stream.flush()
    assert "".join(pieces) == "Revenue rose [1] and costs [2] fell (see [11])."
    assert not any("P" in p for p in pieces)
    assert strip_ids("It rose [P3] (P4) [11].") == "It rose [11]."


# ---------------------------------------------------------------- numbers

@pytest.mark.parametrize("claim", [
    "Adjusted EBITDA was $2,018 million vs $2,117 million in fiscal 2022 [P1].",  # years are periods
    "Adjusted EBITDA rose 4.9% from 2022 to 2023 [P1].",  # a computed change
    "Adjusted EBITDA grew by $99 million [P1].",  # a computed difference, with a scale word
    "The Adjusted EBITDA margin was 20.2% in 2023 [P1].",  # a ratio to net sales
    "Adjusted EBITDA was about $2.1 billion in 2023 [P1].",  # rounded and rescaled
    "(2,117 - 2,018) / 2,018 = 4.9% [P1].",
])
def test_years_units_and_arithmetic_from_cited_numbers_are_not_absent_numbers(filing, claim):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    checked = check_claim(split_claims(claim)[0], Verdict(0, "supported", 1), blocks, question=Q)
    assert checked.verdict == "supported", checked.reason


def test_a_number_nobody_stated_or_wrong_arithmetic_is_caught(filing):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    made_up = check_claim(split_claims("Adjusted EBITDA was 2,311 in 2023 [P1].")[0], Verdict(0, "supported", 1),
                          blocks, question=Q)
    assert made_up.verdict == "unsupported" and "2,311" in made_up.reason
    wrong = check_claim(split_claims("EBITDA rose 2,117 - 2,018 = 89 million [P1].")[0],
                        Verdict(0, "supported", 1), blocks, question=Q)
    assert wrong.verdict == "unsupported" and "recomputed: 99" in wrong.reason
    assert arithmetic_errors("99 / 2,018 = 4.9%") == []
    assert unexplained("It has six layers", "The encoder has 6 layers.") == []
    assert unexplained("It has 6 layers", "The encoder has six layers.") == []
    assert unexplained("It has 7 heads", "8 heads, 6 layers, 512 dimensions, 10,500 and 9,800") == ["7"]


# ---------------------------------------------------------------- Markdown and refusals

TABLE_ANSWER = """Adjusted EBITDA by year:

| Year | Adjusted EBITDA ($M) |
|---|---|
| 2023 | 2,117 [P1] |
| 2022 | 2,311 [P1] |

It rose 4.9% [P1]."""


def test_a_markdown_table_survives_checking_with_its_flags_beside_it(filing):
    drafts = split_claims(TABLE_ANSWER)
    assert [d.text for d in drafts] == ["Year: 2023, Adjusted EBITDA ($M): 2,117", "Year: 2022, Adjusted EBITDA "
                                        "($M): 2,311", "It rose 4.9%."]
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    claims = [check_claim(d, Verdict(i, "supported", 1), blocks, question=Q) for i, d in enumerate(drafts)]
    assert [c.verdict for c in claims] == ["supported", "unsupported", "supported"]
    flagged = flag_answer(TABLE_ANSWER, drafts, claims)
    table = [ln for ln in flagged.splitlines() if ln.startswith("|")]
    assert table == [ln for ln in TABLE_ANSWER.splitlines() if ln.startswith("|")]  # rows untouched
    lines = flagged.splitlines()
    note = next(i for i, ln in enumerate(lines) if ln.startswith("- Row “2022 | 2,311”"))
    assert lines[note - 1] == "" and "not supported" in lines[note]


@pytest.mark.parametrize("answer", [
    "The provided passages do not contain information about the capital of Australia. They discuss working "
    "capital [P2].",
    "I couldn't find the capital of Australia in the documents.",
    "Unfortunately, the documents do not mention Australia.",
    "There is no information about Australia's capital in the passages [P1].",
])
def test_a_refusal_in_any_wording_claims_nothing(answer):
    assert is_refusal(answer) and split_claims(answer) == ()


def test_an_answer_is_not_taken_for_a_refusal_and_its_not_covered_part_is_not_a_claim():
    answer = "Revenue was $5.2 million [P1]. The passages do not mention the profit."
    assert not is_refusal(answer)
    assert [d.text for d in split_claims(answer)] == ["Revenue was $5.2 million."]


def test_an_unmarked_refusal_scores_as_a_refusal_end_to_end(filing):
    q = "What is the capital of Australia?"
    script = [plan_json(q), "The provided passages do not contain the capital of Australia. They discuss "
                            "Adjusted EBITDA [P1]."]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(q)
    assert result.claims == () and _is_refusal_estimate(result) and len(chat.prompts) == 2


# ---------------------------------------------------------------- the verify loop

def test_an_unsupported_claim_goes_back_to_be_corrected_or_removed_and_the_fix_is_checked(filing):
    script = [plan_json(Q),
              "Adjusted EBITDA was 2,117 in 2023 [P1] and 2,311 in 2022 [P1].",
              verify_json([("unsupported", 1)]),
              "Adjusted EBITDA was 2,117 in 2023 and 2,018 in 2022 [P1].",
              verify_json([("supported", 1)])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    revise = chat.prompts[3]
    assert "correct it from the passages or remove it" in revise and "missed" not in revise
    assert "2,311" in revise
    assert len(chat.prompts) == 5 and result.usage.llm_calls == 5  # the revision was checked by the same model
    assert result.answer == "Adjusted EBITDA was 2,117 in 2023 and 2,018 in 2022 [1]."
    assert result.confidence > 0.5 and result.trace[-1]["mode"] == "gemini"


def test_missing_without_new_passages_asks_nothing_again(filing):
    script = [plan_json(Q), "Adjusted EBITDA was 2,117 in 2023 and 2,018 in 2022 [P1].",
              verify_json([("supported", 1)], missing=["the 2021 figure"])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert len(chat.prompts) == 3  # the search found nothing new: no second identical answer call
    assert "*Not found in the documents:* the 2021 figure." in result.answer
    assert result.trace[-1]["summary"].startswith("nothing new")


def test_a_revision_that_checks_out_worse_is_dropped(filing):
    script = [plan_json(Q),
              "Adjusted EBITDA was 2,117 in 2023 [P1]. Net sales were 10,500 in 2023 [P1]. It grew fast [P1].",
              verify_json([("supported", 1), ("supported", 1), ("unsupported", 1)]),
              "Adjusted EBITDA was 2,117 [P1]. It was the best year ever [P1].",
              verify_json([("supported", 1), ("unsupported", 1)])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert len(chat.prompts) == 5
    assert result.answer.startswith("Adjusted EBITDA was 2,117 in 2023 [1]. Net sales were 10,500")
    assert "kept the checked answer" in result.trace[-1]["summary"]


def test_a_failing_revision_keeps_the_checked_gemini_answer(filing):
    script = [plan_json(Q), "Adjusted EBITDA was 2,117 in 2023 [P1]. Adjusted EBITDA doubled in 2023 [P1].",
              verify_json([("supported", 1), ("unsupported", 1)]),
              ConnectionError("connection refused"), ConnectionError("connection refused")]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert result.mode == "gemini" and result.answer.startswith("Adjusted EBITDA was 2,117 in 2023 [1].")
    assert "⚠" in result.answer and result.claims[0].verdict == "supported"
    assert not any(t["mode"] == "offline (extractive)" for t in result.trace)


def test_claims_keep_reader_numbers_in_the_result(filing):
    script = [plan_json(Q, subs=[Q, "residual networks optimize"]),
              "EBITDA was 2,117 [P1]. Residual nets [11] are easier to optimize [P2].",
              verify_json([("supported", 1), ("supported", 2)])]
    agent, _ = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert [c.citations for c in result.claims] == [(1,), (2,)]
    assert [(c.n, c.file) for c in result.citations] == [(1, "10k.pdf"), (2, "resnet.pdf")]
    assert isinstance(result.claims[0], Claim)


class _PerQuery(FakeRetriever):
    """Finds the headcount passage only when asked for it, so a second round has something new."""

    def retrieve(self, query, k=8, strategy="auto", filters=None):
        wanted = [c for c in self.chunks if ("employ" in query.lower()) == ("employ" in c.text)]
        return [_hit(c, i + 1) for i, c in enumerate(wanted[:k])]


def test_something_missing_with_new_passages_gets_a_second_answer_checked_by_the_same_model(fake_embedder):
    retriever = _PerQuery([make_chunk("a", "acme.pdf", "Revenue in 2023 was $5.2 million.", page=1),
                           make_chunk("a", "acme.pdf", "Acme employs 140 people.", 1, page=7)], fake_embedder)
    q = "What was Acme's revenue in 2023 and how many people work there?"
    script = [plan_json(q, subs=["Acme revenue 2023"]), "Acme's revenue in 2023 was $5.2 million [P1].",
              verify_json([("supported", 1)], missing=["number of Acme employees"]),
              "Acme's revenue in 2023 was $5.2 million [P1]. Acme employs 140 people [P2].",
              verify_json([("supported", 1), ("supported", 2)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask(q)
    assert len(chat.prompts) == 5 and "Not covered: number of Acme employees" in chat.prompts[3]
    assert "[P2] acme.pdf, p. 7" in chat.prompts[3] and "[P1] acme.pdf, p. 1" in chat.prompts[3]
    assert result.answer == "Acme's revenue in 2023 was $5.2 million [1]. Acme employs 140 people [2]."
    assert [c.location.page for c in result.citations] == [1, 7] and result.trace[-1]["mode"] == "gemini"


def test_a_refuted_figure_caps_confidence_and_the_same_answer_again_ends_the_loop(filing):
    script = [plan_json(Q), TABLE_ANSWER, verify_json([("supported", 1)] * 3), TABLE_ANSWER]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert len(chat.prompts) == 4  # the rewrite came back unchanged: nothing new to check, no further round
    assert "the same answer again" in [t for t in result.trace if t["step"] == "synthesize"][-1]["summary"]
    assert any(c.refuted for c in result.claims) and result.confidence <= 0.5
    assert result.to_dict()["claims"][1]["refuted"] is True


def test_offline_quotes_it_is_unsure_of_are_labelled_as_closest_passages():
    from agentic_rag.confidence import Evidence
    from agentic_rag.steps.verify import _unsure

    quoted = 'offline (extractive) — quoted from the documents, not generated.\n\n"Travel costs rose." [P1]'
    unsure = _unsure(quoted, {"answer_mode": "offline"}, Evidence(support=0.5), 0.41)
    assert unsure.splitlines()[2] == "*Unsure (41%): these are the closest passages found, not a confirmed answer.*"
    assert unsure.endswith('"Travel costs rose." [P1]')
    assert _unsure(quoted, {"answer_mode": "offline"}, Evidence(support=1.0), 0.72) == quoted  # sure enough
    assert _unsure(quoted, {"answer_mode": "gemini"}, Evidence(), 0.3) == quoted  # a model's answer is flagged
    assert _unsure(quoted, {"answer_mode": "offline"}, Evidence(refused=True), 0.3) == quoted  # a refusal


def test_an_answer_to_how_many_that_states_no_figure_is_not_shown_as_likely(filing):
    q = "How many layers does the residual network have?"
    script = [plan_json(q, subs=[q, "residual networks optimize"]),
              "Deeper residual networks are easier to optimize than plain ones [P1].", verify_json([("supported", 1)])]
    agent, _ = gemini_agent(filing, script)
    result = agent.ask(q)
    assert result.claims and result.confidence_features["no_figure"] == 1.0 and result.confidence <= 0.3


def test_a_rewrite_that_claims_nothing_never_replaces_an_answer(filing):
    q = "How many layers does the residual network have?"
    script = [plan_json(q), "The residual network has 152 layers [P1]. It was the deepest on ImageNet [P9].",
              verify_json([("supported", 1), ("supported", 1)]), "{}"]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(q)
    assert len(chat.prompts) == 4 and result.answer.startswith("The residual network has 152 layers [1].")
    assert "the rewrite claims nothing" in result.trace[-1]["summary"]


@pytest.mark.parametrize("answer, capped", [
    ("The encoder is a stack of identical layers [P1].", True),
    ("The encoder is a stack of six identical layers [P1].", False),
    ("The encoder is composed of a stack of N = 6 identical layers [P1].", False),
])
def test_an_answer_to_how_many_must_state_a_figure(answer, capped):
    from agentic_rag.confidence import _states_no_count

    assert _states_no_count("How many layers does the Transformer encoder have?", split_claims(answer)) is capped


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
