"""A cash-flow statement page in four chunks: the header, the rows the search finds, more rows and a long passage
further down."""

from __future__ import annotations

from document_processor import Chunk, Location, chunk_id


def chunk(text: str, page: int, ordinal: int, doc: str = "filing") -> Chunk:
    loc = Location(page=page)
    return Chunk(chunk_id(doc, loc, ordinal, text), doc, f"{doc}.pdf", "pdf", text, loc, ("Cash flows",), ordinal)


HEADER = chunk("Consolidated Statements of Cash Flows (in millions) | 2023 | 2022", 48, 10)
ROWS = chunk("Net cash provided by operating activities | 812 | 790", 48, 11)
MORE = chunk("Purchases of property and equipment | (215) | (198)", 48, 12)
FAR = chunk("Supplemental disclosures " + "word " * 400, 48, 13)
