"""The synthesis context by page: a passage grows into its page's other found chunks within a token budget."""

from __future__ import annotations

import pytest

from advanced_retrieval import Hit
from agentic_rag import Budgets
from agentic_rag.context import build_context, page_region
from agentic_rag.language.text import estimate_tokens
from document_processor import Chunk, Location, chunk_id


def chunk(text: str, page: int, ordinal: int, doc: str = "filing") -> Chunk:
    loc = Location(page=page)
    return Chunk(chunk_id(doc, loc, ordinal, text), doc, f"{doc}.pdf", "pdf", text, loc, ("Cash flows",), ordinal)


HEADER = chunk("Consolidated Statements of Cash Flows (in millions) | 2023 | 2022", 48, 10)
ROWS = chunk("Net cash provided by operating activities | 812 | 790", 48, 11)
MORE = chunk("Purchases of property and equipment | (215) | (198)", 48, 12)
FAR = chunk("Supplemental disclosures " + "word " * 400, 48, 13)


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


def test_region_budget_is_validated():
    with pytest.raises(ValueError, match="region_tokens"):
        Budgets(region_tokens=-1)
    assert Budgets(region_tokens=0).region_tokens == 0


class PageRetriever:
    """One hit: the rows of a statement, its header chunk riding along as a page chunk."""

    def __init__(self):
        self.calls = []

    def retrieve(self, query, k=8, strategy="auto", filters=None):
        self.calls.append(query)
        return [Hit(ROWS, 0.9, 1, vector_score=0.8, bm25_score=3.0, page_chunks=(HEADER,))]

    def documents(self):
        return []


def test_a_model_reads_the_page_region_the_offline_brain_the_found_chunk():
    from test_agentic_rag import gemini_agent, plan_json, verify_json

    from agentic_rag import OfflineBrain, build_agent

    question = "What was net cash provided by operating activities in 2023?"
    agent, chat = gemini_agent(PageRetriever(), [plan_json(question), "It was 812 [P1].",
                                                 verify_json([("supported", 1)])])
    agent.ask(question)
    assert HEADER.text in chat.prompts[1] and ROWS.text in chat.prompts[1]  # the header reached the model
    offline = build_agent(OfflineBrain(), PageRetriever()).ask(question)
    assert HEADER.text not in offline.answer


def test_without_regions_a_pages_other_chunks_follow_its_hit_as_passages():
    hit = Hit(ROWS, 0.9, 1, vector_score=0.7, page_chunks=(HEADER, MORE, FAR))
    other = Hit(chunk("Revenue was 5,000", 3, 1), 0.8, 2)
    blocks = build_context([("q", (hit, other))], 10_000, region_tokens=0)
    assert [b.chunk.id for b in blocks] == [ROWS.id, HEADER.id, MORE.id, other.chunk.id]  # at most two mates
    assert blocks[1].hit.vector_score is None  # not measured for a chunk that rode along
    assert all(b.chunk.text in (ROWS.text, HEADER.text, MORE.text, other.chunk.text) for b in blocks)
