"""agentic_rag.context: the synthesis context (fair, deduplicated, numbered, within budget, stable IDs), a passage grown
into its page region, and the per-document check."""

from __future__ import annotations

from advanced_retrieval import Hit
from agentic_rag.context import GAP, build_context, check_document, mentions, page_region, window
from agentic_rag.language.text import estimate_tokens
from tests.helpers.agent import _hit, make_chunk
from tests.helpers.page_region import FAR, HEADER, MORE, ROWS, chunk


def test_context_is_fair_deduplicated_numbered_and_within_budget(chunks):
    a, b, c, d, _ = chunks
    blocks = build_context([("q1", (_hit(a, 1), _hit(b, 2), _hit(c, 3))), ("q2", (_hit(d, 1), _hit(a, 2)))], 10_000)
    assert [x.chunk for x in blocks] == [a, d, b, c]  # round-robin by rank: q1#1, q2#1, q1#2, (a again), q1#3
    assert [x.n for x in blocks] == [1, 2, 3, 4]
    assert blocks[0].queries == ("q1", "q2")  # found by both sub-questions, listed once
    long = make_chunk("d9", "long.txt", "word " * 2000, lines=(1, 80))
    tight = build_context([("q", (_hit(long), _hit(a, 2)))], 300)
    assert len(tight) == 1 and len(tight[0].chunk.text) < 300 * 4 and tight[0].chunk.text.endswith("…")
    assert build_context([], 1000) == () and build_context([("q", ())], 1000) == ()


def test_mentions_and_document_check(chunks):
    assert mentions("GDPR", "Globex complies with GDPR since 2018.")
    assert mentions("wind turbines", "the wind-turbine test bench")  # every word, light stemming
    assert not mentions("GDPR", "General data rules")
    memo = [c for c in chunks if c.doc_id == "d2"]
    assert check_document("d2", "globex_memo.docx", "GDPR", [], memo).mentioned  # found by scanning its chunks
    missed = check_document("d1", "acme_report.pdf", "GDPR", [], [c for c in chunks if c.doc_id == "d1"])
    assert not missed.mentioned and missed.chunks_checked == 2


def test_ids_are_stable_when_a_later_round_adds_passages(filing):
    a, b = filing.chunks
    first = build_context([("q", (_hit(a),))], 10_000)
    later = build_context([("q", (_hit(a),)), ("again", (_hit(b), _hit(a)))], 10_000, previous=first)
    assert [(x.chunk.id, x.n) for x in first] == [(a.id, 1)]
    assert {x.chunk.id: x.n for x in later} == {a.id: 1, b.id: 2}  # added, never renumbered
    assert later[0].header().startswith("[P1] 10k.pdf, p. 41")


def test_a_hit_grows_into_its_page_in_reading_order():
    hit = Hit(ROWS, 0.9, 1, page_chunks=(MORE, HEADER))
    grown, ids = page_region(hit, 700)
    assert grown.chunk.text == "\n\n".join(c.text for c in (HEADER, ROWS, MORE))
    assert ids == {HEADER.id, ROWS.id, MORE.id}
    assert grown.chunk.id == ROWS.id and grown.chunk.location == ROWS.location  # still cites the page it found


def test_the_region_stays_within_its_budget_nearest_chunks_first():
    hit = Hit(ROWS, 0.9, 1, page_chunks=(FAR, MORE, HEADER))
    grown, ids = page_region(hit, 100)
    assert FAR.id not in ids and estimate_tokens(grown.chunk.text) <= 100
    assert page_region(hit, 0) == (hit, {ROWS.id})
    lone = Hit(ROWS, 0.9, 1)
    assert page_region(lone, 700) == (lone, {ROWS.id})


def test_a_chunk_shown_in_a_region_is_not_repeated_as_its_own_passage():
    first = Hit(ROWS, 0.9, 1, page_chunks=(HEADER,))
    blocks = build_context([("fcf", (first,)), ("capex", (Hit(HEADER, 0.5, 1),))], 10_000, region_tokens=700)
    assert len(blocks) == 1 and HEADER.text in blocks[0].chunk.text and ROWS.text in blocks[0].chunk.text
    assert blocks[0].queries == ("fcf", "capex")  # the block answers both: each sub-question keeps a passage


def test_without_room_for_the_region_the_found_chunk_still_gets_in():
    other = Hit(chunk("Revenue was 5,000 " + "x " * 200, 3, 1), 1.0, 1)
    hit = Hit(ROWS, 0.9, 2, page_chunks=(FAR,))
    room = estimate_tokens(other.chunk.text) + estimate_tokens(ROWS.text) + 40
    blocks = build_context([("q", (other, hit))], room, region_tokens=1000)
    assert len(blocks) == 2 and blocks[1].chunk.text == ROWS.text


def test_without_regions_a_pages_other_chunks_follow_its_hit_as_passages():
    hit = Hit(ROWS, 0.9, 1, vector_score=0.7, page_chunks=(HEADER, MORE, FAR))
    other = Hit(chunk("Revenue was 5,000", 3, 1), 0.8, 2)
    blocks = build_context([("q", (hit, other))], 10_000, region_tokens=0)
    assert [b.chunk.id for b in blocks] == [ROWS.id, HEADER.id, MORE.id, other.chunk.id]  # at most two mates
    assert blocks[1].hit.vector_score is None  # not measured for a chunk that rode along
    assert all(b.chunk.text in (ROWS.text, HEADER.text, MORE.text, other.chunk.text) for b in blocks)


FILLER = "The committee reviewed the supplier schedule and the office training plan in detail."
WINDOWED = " ".join([FILLER] * 6 + ["Northwind revenue in 2023 was 12.4 million euros, up 8 percent."]
                    + [FILLER] * 8)


def test_a_window_keeps_what_bears_on_the_question_with_its_neighbours_and_marks_the_gaps():
    cut = window(WINDOWED, ["What was Northwind's revenue in 2023?"], 70)
    assert estimate_tokens(cut) <= 70 and "12.4 million euros" in cut
    lines = cut.split("\n")
    assert lines[0] == GAP and lines[-1] == GAP and lines.count(FILLER) == 2  # one sentence each side
    assert window("Short text.", ["revenue"], 60) == "Short text."  # whole when it fits
    unrelated = window(WINDOWED, ["Which pilot sites were chosen?"], 40)  # nothing shared: its opening
    assert unrelated.startswith(FILLER[:40]) and "12.4" not in unrelated


def test_a_window_of_a_table_keeps_its_header_row_and_the_asked_rows():
    rows = [f"| Region {i} | {100 + i} | {200 + i} |" for i in range(40)]
    table = "| Region | 2022 | 2023 |\n" + "\n".join(rows[:25] + ["| Lisbon | 310 | 355 |"] + rows[25:])
    cut = window(table, ["What was Lisbon's budget in 2023?"], 60)
    assert cut.startswith("| Region | 2022 | 2023 |\n") and "| Lisbon | 310 | 355 |" in cut
    assert "| Region 0 |" not in cut and GAP in cut


def test_windows_fit_more_found_passages_into_a_small_prompt():
    hits = tuple(_hit(make_chunk(f"d{i}", f"f{i}.txt", WINDOWED.replace("Northwind", f"Firm{i}"), lines=(1, 9)), i)
                 for i in range(1, 6))
    whole = build_context([("What was the revenue in 2023?", hits)], 400)
    cut = build_context([("What was the revenue in 2023?", hits)], 400, window_tokens=80)
    assert len(whole) < 5 and len(cut) == 5
    assert all("revenue in 2023 was 12.4 million" in b.chunk.text for b in cut)
    assert sum(estimate_tokens(b.chunk.text) for b in cut) <= 400
