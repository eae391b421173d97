"""Numbered context from retrieved hits (fair to every sub-question, within a token budget) and coverage checks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from advanced_retrieval import Hit
from agentic_rag.language.text import estimate_tokens, sentences, terms, truncate_tokens
from agentic_rag.types import ContextBlock, Coverage

MIN_BLOCK_TOKENS = 60  # a passage cut shorter than this is not worth citing
MATES_AS_PASSAGES = 2  # without page regions: a page's other found chunks that follow its hit as passages
GAP = "…"  # where window() left sentences out
HEAD_TOKENS = 30  # a passage's first line this short (a heading, a caption, a table's header row) stays in a window


def window(text: str, queries: Sequence[str], max_tokens: int) -> str:
    """`text` cut to at most `max_tokens`: its sentences and table rows (language.text.sentences) that share the
    most distinct words with `queries`, best first, each with the sentence before and after it, in reading
    order, a left-out stretch marked GAP; its first line too when that is short (a heading, a caption, a
    table's header row). Whole when it fits; its opening when no sentence shares a word with the queries."""
    if estimate_tokens(text) <= max_tokens:
        return text
    units = sentences(text)
    asked = {t for q in queries for t in terms(q, drop_query_words=True)}
    scores = [len(asked & set(terms(u))) for u in units]
    if not units or max(scores) == 0:
        return truncate_tokens(text, max_tokens)
    costs = [estimate_tokens(u) + 1 for u in units]
    chosen: set[int] = set()
    used = 0

    def take(indexes) -> None:
        nonlocal used
        for i in indexes:
            if 0 <= i < len(units) and i not in chosen and used + costs[i] + 1 <= max_tokens:
                chosen.add(i)
                used += costs[i] + 1  # + a possible GAP line
    if units[0] == text.strip().split("\n", 1)[0].strip() and costs[0] <= HEAD_TOKENS:  # a short first line
        take([0])
    head = set(chosen)
    for i in sorted((i for i, s in enumerate(scores) if s and i not in head), key=lambda i: (-scores[i], i)):
        take([i, i - 1, i + 1])
    if not chosen - {0}:  # the best sentence alone is longer than the window: its words around the first match
        return truncate_tokens(text, max_tokens)
    out: list[str] = []
    for i in sorted(chosen):
        if out and i - 1 not in chosen:
            out.append(GAP)
        out.append(units[i])
    if max(chosen) < len(units) - 1:
        out.append(GAP)
    if min(chosen) > 0:
        out.insert(0, GAP)
    return "\n".join(out)


def page_region(hit: Hit, region_tokens: int) -> tuple[Hit, frozenset[str]]:
    """The hit with its chunk's text grown into the page region around it, and the ids of the chunks used.

    The region is the other chunks of its page that retrieval found (hit.page_chunks), nearest in reading order
    first, while the whole stays within `region_tokens`, put in reading order: a table cut into several chunks,
    or a statement's rows and the caption above them, reach the model together. Unchanged when nothing fits or
    region_tokens is 0.
    """
    chosen, used = [hit.chunk], estimate_tokens(hit.chunk.text)
    if region_tokens > 0:
        for mate in sorted(hit.page_chunks, key=lambda c: abs(c.ordinal - hit.chunk.ordinal)):
            cost = estimate_tokens(mate.text)
            if mate.id != hit.chunk.id and used + cost <= region_tokens:
                chosen.append(mate)
                used += cost
    ids = frozenset(c.id for c in chosen)
    if len(chosen) == 1:
        return hit, ids
    text = "\n\n".join(c.text for c in sorted(chosen, key=lambda c: c.ordinal))
    return replace(hit, chunk=replace(hit.chunk, text=text)), ids


def _with_mates(hits: Sequence[Hit]) -> list[Hit]:
    """Without regions, a page's other found chunks (up to MATES_AS_PASSAGES) follow its hit as passages of their
    own, as they did before retrieval ranked by page: a sentence cut at a chunk boundary stays quotable. Their
    scores were not measured (None)."""
    out: list[Hit] = []
    for hit in hits:
        out.append(hit)
        out += [Hit(chunk, hit.score, hit.rank, strategy=hit.strategy) for chunk in hit.page_chunks[:MATES_AS_PASSAGES]]
    return out


def build_context(sub_hits: Sequence[tuple[str, Sequence[Hit]]], max_tokens: int,
                  previous: Sequence[ContextBlock] = (), region_tokens: int = 0,
                  window_tokens: int = 0) -> tuple[ContextBlock, ...]:
    """Number the hits P1..Pn: round-robin over sub-questions by rank, deduplicated by chunk id, within budget.

    Round-robin keeps one broad sub-question from crowding out the others. Each hit brings its page region up to
    `region_tokens` (page_region); with 0, its page's other found chunks follow it as passages (_with_mates). A block that does not fit is cut at a word boundary when enough room is left
    (to its own chunk's text first, so the region never pushes out the passage that was found), else left out.
    `previous` are the blocks an earlier round of the same question numbered: a chunk keeps its number and new
    chunks get the next ones, so an ID means the same passage for the whole question. `window_tokens` > 0 cuts
    each passage (its region included) to what bears on its sub-questions (window()), so more passages fit a
    small prompt. Returned in number order.
    """
    if region_tokens <= 0:
        sub_hits = [(query, _with_mates(hits)) for query, hits in sub_hits]
    order: dict[str, tuple[Hit, list[str]]] = {}
    depth = max((len(h) for _, h in sub_hits), default=0)
    for rank in range(depth):
        for query, hits in sub_hits:
            if rank < len(hits):
                hit = hits[rank]
                entry = order.setdefault(hit.chunk.id, (hit, []))
                if query not in entry[1]:
                    entry[1].append(query)
    known = {b.chunk.id: b.n for b in previous}
    shown: dict[str, int] = {}  # chunk id -> index of the block whose region holds it (never repeated)
    next_n = max(known.values(), default=0) + 1
    blocks: list[ContextBlock] = []
    used = 0
    for chunk_id, (hit, queries) in order.items():
        if chunk_id in shown:  # already in an earlier block's region: that block answers these queries too
            i = shown[chunk_id]
            blocks[i] = replace(blocks[i], queries=tuple(dict.fromkeys((*blocks[i].queries, *queries))))
            continue
        n = known.get(chunk_id, next_n)
        grown, ids = page_region(hit, region_tokens)
        block = ContextBlock(n, _cut(grown, queries, window_tokens), tuple(queries))
        cost = estimate_tokens(block.header()) + estimate_tokens(block.hit.chunk.text) + 2
        if used + cost > max_tokens and len(ids) > 1:  # no room for the region: the found chunk alone
            block, ids = ContextBlock(n, _cut(hit, queries, window_tokens), tuple(queries)), frozenset((chunk_id,))
            cost = estimate_tokens(block.header()) + estimate_tokens(block.hit.chunk.text) + 2
        if used + cost > max_tokens:
            room = max_tokens - used - estimate_tokens(block.header()) - 2
            if room < MIN_BLOCK_TOKENS:
                break
            chunk = replace(hit.chunk, text=truncate_tokens(block.hit.chunk.text, room))
            block = ContextBlock(n, replace(hit, chunk=chunk), block.queries)
            cost = max_tokens - used
        if n == next_n:
            next_n += 1
        shown.update(dict.fromkeys(ids, len(blocks)))
        blocks.append(block)
        used += cost
    return tuple(sorted(blocks, key=lambda b: b.n))


def _cut(hit: Hit, queries: Sequence[str], window_tokens: int) -> Hit:
    """The hit with its text cut to its window (window()), or as it is when window_tokens is 0."""
    if window_tokens <= 0:
        return hit
    return replace(hit, chunk=replace(hit.chunk, text=window(hit.chunk.text, queries, window_tokens)))


def merge_blocks(previous: Sequence[ContextBlock], current: Sequence[ContextBlock]) -> tuple[ContextBlock, ...]:
    """Every passage numbered so far in the question (the current round's version of a block wins)."""
    merged = {b.n: b for b in previous}
    merged.update({b.n: b for b in current})
    return tuple(merged[n] for n in sorted(merged))


def render_context(blocks: Sequence[ContextBlock]) -> str:
    """The passages as the model reads them: a header line with ID, file and place, then the text."""
    return "\n\n".join(f"{b.header()}\n{b.hit.chunk.text}" for b in blocks)


def mentions(concept: str, text: str) -> bool:
    """Whether `text` mentions `concept`: the exact phrase, or every content word of it (light stemming)."""
    if not concept.strip():
        return False
    if re.search(r"(?<!\w)" + re.escape(concept.strip().lower()) + r"(?!\w)", text.lower()):
        return True
    wanted = set(terms(concept))
    return bool(wanted) and wanted <= set(terms(text))


def check_document(doc_id: str, file_name: str, concept: str, hits: Sequence[Hit], chunks: Sequence) -> Coverage:
    """Coverage of one document: the best retrieved hit that mentions `concept`, else a scan of all its chunks."""
    for hit in hits:
        if mentions(concept, hit.chunk.index_text):
            return Coverage(doc_id, file_name, True, hit, chunks_checked=len(chunks) or len(hits))
    for i, chunk in enumerate(chunks):
        if mentions(concept, chunk.index_text):
            hit = Hit(chunk=chunk, score=0.0, rank=i + 1, strategy="scan")
            return Coverage(doc_id, file_name, True, hit, chunks_checked=len(chunks))
    return Coverage(doc_id, file_name, False, None, chunks_checked=len(chunks) or len(hits))


def render_coverage(concept: str, coverage: Sequence[Coverage]) -> str:
    """A plain table the model (and the reader) can rely on: which documents mention the concept."""
    lines = [f'Checked every document for "{concept}":']
    for c in coverage:
        state = "mentions it" if c.mentioned else f"does NOT mention it ({c.chunks_checked} passages checked)"
        lines.append(f"- {c.file_name}: {state}")
    return "\n".join(lines)
