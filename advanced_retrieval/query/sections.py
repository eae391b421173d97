"""Pages whose headings name what the question is about: the statement, note or section its words point to.

A question about a metric ("Is 3M capital-intensive?", "AMEX's largest liability") is answered on the pages whose
heading is the statement the vocabulary maps it to ("Consolidated Statement of Cash Flows", "CONSOLIDATED BALANCE
SHEETS"), yet those pages are tables of line items that neither the question's words nor its meaning resemble; a
search over chunk text ranks the MD&A prose that talks about capital spending first. Long documents of any kind
have the same shape: a paper's "Ablation study", a contract's "Term and Termination".

A page's headings: the heading path of its chunks (what the parsers detected), and its first short lines (up to
TOP_LINES lines of at most MAX_LINE characters, until the first longer line; table rows excluded), which is where
a PDF page prints its title when no heading was detected, and the header row of each table on the page, where a
statement's title lands when the table reader took it for the header of the figures' columns ("| CONSOLIDATED
STATEMENTS OF INCOME 2022 | 2021 |"). Lines that open many pages of the document are running
heads ("Table of Contents", "3M Company and Subsidiaries", a page number) and are left out: at the top of more
than RUNNING_SHARE of the document's pages and of at least RUNNING_MIN pages.

`Sections.pages` gives the pages of some documents whose headings hold one of the phrases (as BM25 tokens in
sequence: "balance sheets" matches "CONSOLIDATED BALANCE SHEETS" and "Consolidated Balance Sheet"). The retriever
fuses them as one more ranked list when the query names documents (advanced_retrieval.query.naming) and its vocabulary
expansion has phrases (advanced_retrieval.keyword.expansion); see HybridRetriever.
"""

from __future__ import annotations

import re
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from advanced_retrieval.keyword.tokens import tokenize
from advanced_retrieval.types import page_key
from document_processor import Chunk

TOP_LINES = 6
MAX_LINE = 80
RUNNING_SHARE = 0.05
RUNNING_MIN = 3
_WORDY = re.compile(r"[^\W\d_]{3}")  # a heading line holds a word of three letters or more


@dataclass(frozen=True)
class Page:
    """One page (or slide, or a page-less chunk) of a document: its heading lines, as text and as BM25 tokens,
    and its chunk ids in reading order."""

    key: tuple
    headings: tuple[str, ...]
    tokens: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    vocabulary: frozenset[str] = field(init=False, repr=False, compare=False)  # the tokens, for a quick refusal

    def __post_init__(self):
        object.__setattr__(self, "vocabulary", frozenset(self.tokens))

    def holds(self, phrase: Sequence[str]) -> bool:
        """True when the phrase's tokens occur in sequence in the headings."""
        n = len(phrase)
        if n == 0 or not all(token in self.vocabulary for token in phrase):  # most pages: a few set lookups
            return False
        phrase = tuple(phrase)
        return any(self.tokens[i:i + n] == phrase for i in range(len(self.tokens) - n + 1))


def _prose(line: str, following: str) -> bool:
    """True for a line of running text, which every line of a two-column paper is short enough to pass for a
    title: it starts in lower case, ends inside a sentence (a comma or a hyphen), or the line after it starts in
    lower case and is short too (the sentence wraps onto it)."""
    return line[:1].islower() or line[-1:] in ",-" or (following[:1].islower() and len(following) <= MAX_LINE)


def _top_lines(chunk: Chunk) -> list[str]:
    raw = [" ".join(line.split()) for line in chunk.text.splitlines()[:TOP_LINES + 1]]
    lines = []
    for line, following in zip(raw[:TOP_LINES], [*raw[1:], ""], strict=False):  # the last line read only follows
        if not line or line.startswith("|"):
            continue
        if len(line) > MAX_LINE:
            break
        if not _prose(line, following):
            lines.append(line)
    return lines


def _table_heads(chunk: Chunk) -> list[str]:
    """The worded cells of the header row of a table chunk (a Markdown table: header row, then "| --- |")."""
    lines = chunk.text.lstrip().splitlines()[:2]
    if len(lines) < 2 or not lines[0].startswith("|") or not lines[1].startswith("| ---"):
        return []
    return [cell for cell in (" ".join(c.split()) for c in lines[0].strip("|").split("|")) if _WORDY.search(cell)]


def document_pages(chunks: Iterable[Chunk]) -> list[Page]:
    """The pages of one document (its chunks in any order) with their headings, running heads left out.

    Only a page's (or slide's) first chunk contributes its top lines; a chunk without a page or slide is a page
    of its own whose headings are its heading path.
    """
    by_page: dict[tuple, list[Chunk]] = defaultdict(list)
    for chunk in chunks:
        by_page[page_key(chunk)].append(chunk)
    tops: dict[tuple, list[str]] = {}
    for key, found in by_page.items():
        found.sort(key=lambda c: c.ordinal)
        tops[key] = _top_lines(found[0]) if len(key) > 1 else []
    opening = Counter(line.casefold() for lines in tops.values() for line in set(lines))
    paged = sum(1 for key in by_page if len(key) > 1)
    limit = max(RUNNING_MIN, RUNNING_SHARE * paged)
    pages = []
    for key, found in by_page.items():
        lines = [*tops[key], *(h for c in found for h in (*c.heading_path, *_table_heads(c)))]
        kept = tuple(dict.fromkeys(line for line in lines
                                   if opening[line.casefold()] <= limit and _WORDY.search(line)))
        pages.append(Page(key, kept, tuple(tokenize("\n".join(kept))), tuple(c.id for c in found)))
    return pages


class Sections:
    """The pages of recently asked-about documents, read from the store once per document and store generation.

    Args:
        store: has document_chunks(doc_id) (vector_db.VectorStore).
    """

    MAX_CACHED = 32  # documents

    def __init__(self, store):
        self._store = store
        self._pages: dict[tuple[str, int], tuple[list[Page], dict[str, tuple[int, ...]]]] = {}
        self._lock = threading.Lock()

    def pages(self, doc_ids: Iterable[str], phrases: Iterable[str], generation: int) -> list[Page]:
        """The pages of these documents whose headings hold any of the phrases, in document order."""
        wanted = [tokens for tokens in (tuple(tokenize(p)) for p in phrases) if tokens]
        if not wanted:
            return []
        out = []
        for doc_id in doc_ids:
            pages, by_token = self._of(doc_id, generation)
            # Only pages whose headings hold a phrase's first token are looked at (a 10-K: ~200 pages, a few hold it)
            seen = sorted({i for tokens in wanted for i in by_token.get(tokens[0], ())})
            out.extend(pages[i] for i in seen if any(pages[i].holds(tokens) for tokens in wanted))
        return out

    def read_ahead(self, doc_ids: Sequence[str], generation: int) -> int:
        """Read the pages of up to MAX_CACHED of these documents now (older generations' pages dropped first), so
        their first questions read nothing; the number of documents read."""
        with self._lock:
            for key in [k for k in self._pages if k[1] != generation]:
                del self._pages[key]
        wanted = list(doc_ids)[:self.MAX_CACHED]
        for doc_id in wanted:
            self._of(doc_id, generation)
        return len(wanted)

    def _of(self, doc_id: str, generation: int) -> tuple[list[Page], dict[str, tuple[int, ...]]]:
        """A document's pages, and {heading token: the indexes of the pages whose headings hold it}."""
        key = (doc_id, generation)
        with self._lock:
            cached = self._pages.get(key)
        if cached is not None:
            return cached
        pages = document_pages(self._store.document_chunks(doc_id))
        by_token: dict[str, list[int]] = defaultdict(list)
        for i, page in enumerate(pages):
            for token in page.vocabulary:
                by_token[token].append(i)
        held = (pages, {token: tuple(found) for token, found in by_token.items()})
        with self._lock:
            if len(self._pages) >= self.MAX_CACHED:
                self._pages.clear()
            self._pages[key] = held
        return held
