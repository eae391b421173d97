"""agentic_rag.checks.verdicts: citations, pages and numbers checked whatever the brain says, and the offline judge of
whether a quote answers."""

from __future__ import annotations

from agentic_rag import OFFLINE_LABEL
from agentic_rag.checks.claims import split_claims
from agentic_rag.checks.verdicts import check_claim, offline_verdict
from agentic_rag.types import ContextBlock, Coverage, Verdict
from tests.helpers.agent import _block, _hit, make_chunk


def test_citations_pages_and_numbers_are_checked_whatever_the_brain_says(chunks):
    blocks = {1: ContextBlock(1, _hit(chunks[0])), 2: ContextBlock(2, _hit(chunks[2]))}
    ok = split_claims("Revenue in 2023 was $5.2 million [P1].")[0]
    assert check_claim(ok, Verdict(0, "supported", 1), blocks).verdict == "supported"
    ghost = split_claims("Revenue in 2023 was $5.2 million [P7].")[0]
    claim = check_claim(ghost, Verdict(0, "supported", 7), blocks)
    assert claim.verdict == "unsupported" and "[P7]" in claim.reason
    page = split_claims("On page 9 the report gives revenue of $5.2 million [P1].")[0]
    assert check_claim(page, Verdict(0, "supported", 1), blocks).verdict == "unsupported"
    number = split_claims("Revenue in 2023 was $6.1 million [P1].")[0]
    assert check_claim(number, Verdict(0, "supported", 1), blocks).verdict == "unsupported"
    elsewhere = split_claims("Globex employs 9,000 engineers across Europe [P1].")[0]  # words not in its passage
    assert check_claim(elsewhere, Verdict(0, "supported", 1), blocks).verdict in ("partial", "unsupported")
    coverage = (Coverage("d1", "acme_report.pdf", False), Coverage("d2", "globex_memo.docx", True))
    right = split_claims("acme_report.pdf does not mention GDPR at all.")[0]
    wrong = split_claims("globex_memo.docx does not mention GDPR at all.")[0]
    assert check_claim(right, Verdict(0, "unsupported"), blocks, coverage).verdict == "supported"
    assert check_claim(wrong, Verdict(0, "supported"), blocks, coverage).verdict == "unsupported"


def _verdict(question, answer_line, chunk, embedder=None):
    draft = split_claims(answer_line)[0]
    return offline_verdict(0, draft, {1: _block(1, chunk, (question,))}, (question,), embedder)


def test_offline_verification_judges_whether_a_quote_answers_the_question(fake_embedder):
    acme = make_chunk("a", "acme.pdf", "Acme Corp annual report. Revenue in 2023 was $5.2 million, up 12% from "
                      "2022. The company employs 140 people.", page=3)
    q = "What was Acme's revenue in 2023?"
    assert _verdict(q, '"Revenue in 2023 was $5.2 million, up 12% from 2022." [P1]', acme).verdict == "supported"
    beside = _verdict(q, '"The company employs 140 people." [P1]', acme)
    assert beside.verdict == "unsupported" and "does not answer" in beside.reason  # verbatim, yet beside the point
    partly = _verdict("How many people did Acme employ in 2023 across its Danish and Spanish sites?",
                      '"The company employs 140 people." [P1]', acme)
    assert partly.verdict == "partial"
    no_number = _verdict("How many people does Acme employ?", '"Acme Corp annual report." [P1]', acme)
    assert no_number.verdict != "supported"
    made_up = _verdict(q, '"Revenue in 2023 was $6.1 million." [P1]', acme)
    assert made_up.verdict != "supported"  # not in the passage, however relevant
    row = make_chunk("x", "staff.xlsx", "| Site | Supervisor |\n| --- | --- |\n| Halden | Ingrid |\n| Smola | Per |",
                     sheet="Staff")
    assert _verdict("Who is the supervisor at Smola?", '"| Site | Supervisor | … | Smola | Per |" [P1]', row,
                    fake_embedder).verdict == "supported"  # the pieces around '…' are each verbatim


def test_a_quote_of_several_sentences_is_one_claim_and_its_own_page_references_are_not_checked(chunks):
    drafts = split_claims(f'{OFFLINE_LABEL} — quoted.\n\n"First it rose. Then it fell, said the “board”." [P2]')
    assert len(drafts) == 1 and drafts[0].citations == (2,)
    report = make_chunk("d1", "acme_report.pdf", "Revenue grew, as shown on page 9 of the appendix.", page=3)
    blocks = {1: _block(1, report)}
    quoted = split_claims('"Revenue grew, as shown on page 9 of the appendix." [P1]')[0]
    assert check_claim(quoted, Verdict(0, "supported", 1), blocks).verdict == "supported"
    claimed = split_claims("Page 9 of the report says revenue grew [P1].")[0]
    assert check_claim(claimed, Verdict(0, "supported", 1), blocks).verdict == "unsupported"


def test_an_engine_result_line_states_its_figure_for_the_row_and_column_it_names():
    """"How much cash ...": a quote must state a number next to what is asked; the engine's result line names a
    row and a long column header before its figure, and states that figure for them by construction. A document's
    quote with the same words apart is still read as it is."""
    from agentic_rag.tables.compute import COMPUTED

    line = ("Cash and cash equivalents at end of year, 52 Weeks Ended January 28, 2023 (Unaudited) (fiscal 2022): "
            "$737,877 ($737.9 million)")
    computed = make_chunk("d", "SHOP_EARNINGS.pdf", f"Computed by the engine from SHOP_EARNINGS.pdf, p. 8 table 1:\n{line}\n"
                          "Cells: SHOP_EARNINGS.pdf, p. 8 table 1, row 32\nQuery: SELECT 1", page=8)
    computed = type(computed)(**{**computed.__dict__, "id": COMPUTED + "abc"})
    question = "How much cash did the company have at the end of fiscal 2022?"
    assert _verdict(question, f'"{line}" [P1]', computed).verdict == "supported"
    prose = make_chunk("d", "SHOP_EARNINGS.pdf", line, page=8)  # the same words in a document: not by construction
    assert _verdict(question, f'"{line}" [P1]', prose).verdict == "partial"
