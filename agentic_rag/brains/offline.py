"""The offline brain: rule-based planning, extractive answers that quote the documents, checks without a model.

It quotes; it does not generate. A sub-question is answered only when a window of a passage passes the
relevance gate (see agentic_rag.language.quotes); otherwise it says NOT_FOUND instead of guessing. Its verifier asks
two things of every quote: is it really in the cited passage, and does it address what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from agentic_rag.checks.claims import FOUND_PREFIX, ClaimDraft
from agentic_rag.checks.verdicts import offline_verdict
from agentic_rag.language.concepts import forms_of, query_concepts
from agentic_rag.language.meaning import remembering
from agentic_rag.language.paragraphs import introduced, run_in_items
from agentic_rag.language.question_rules import classify, plan_question
from agentic_rag.language.quotes import Gate, Passages, find_quotes
from agentic_rag.language.text import sentences
from agentic_rag.scope import list_object, scope_of
from agentic_rag.tables.compute import OTHER_READING, READ_AS, is_computed, is_rival
from agentic_rag.types import NOT_FOUND, OFFLINE_LABEL, Analysis, BrainReply, ContextBlock, Coverage, Draft
from vector_db import Embedder

HEADER = f"{OFFLINE_LABEL} — quoted from the documents, not generated."
QUOTE_LIMITS = {"list": 3, "summary": 3, "comparison": 2}  # quotes per sub-question; others: DEFAULT_QUOTES
DEFAULT_QUOTES = 2
LIST_QUOTES_PER_SECTION = 3  # a list question's quotes from each section that names items
LEAD_SENTENCES = 2
SUMMARY_SENTENCES = 6  # a section that is the author's own summary (abstract, conclusion) is quoted at more length
_SUMMARISES = re.compile(r"^(?:[\divx]+(?:\.\d+)*\.?\s+)?(?:executive\s+)?(?:abstract|summary|overview|highlights|"
                         r"key findings|conclusions?|concluding remarks)\s*\.?$", re.IGNORECASE)
SECTION_QUOTES = 8  # a section read whole offline: the lead sentences of this many stretches of it  # a section's opening sentences quoted in an offline summary
MIN_ITEMS = 3  # a section's items are listed when at least this many are found
MIN_PROSE_WORDS = 6  # shorter lines are headings, labels or table cells, not a section's lead


@dataclass(frozen=True)
class OfflineBrain:
    """No model, no network: rules, quotes and word matching. `embedder` (optional) sharpens the choice of quotes
    and the verdicts; it is kept with a memory of what it embedded (language.meaning.CachedEmbedder). `gate` is
    the relevance a quote needs (see agentic_rag.language.quotes.Gate)."""

    embedder: Embedder | None = None
    gate: Gate = Gate()
    mode: ClassVar[str] = "offline"

    def __post_init__(self):
        object.__setattr__(self, "embedder", remembering(self.embedder))

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), **_) -> BrainReply:
        """Analysis and sub-questions from rules (see agentic_rag.language.question_rules)."""
        return BrainReply(plan_question(question, history))

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None,
               reading: dict | None = None, **_) -> BrainReply:
        """Quote the best sentences or rows per sub-question, each with its citation; NOT_FOUND where nothing fits.
        A scoped reading (`reading`, agentic_rag.scope) is quoted section by section instead: for a summary the
        lead sentences of each section read, for a list the passages that name the items, with where they are (the
        items themselves when a section holds them: its sub-sections, or the one-sentence paragraphs leading its
        parts)."""
        computed = [b for b in blocks if is_computed(b.chunk) and not is_rival(b.hit)]
        rivals = [b for b in blocks if is_rival(b.hit)]
        if analysis.checks_every_document:
            draft = _coverage_answer(analysis, coverage, blocks)
        elif reading and reading.get("kind") == "list":
            draft = self._list_answer(analysis, blocks, reading)
        elif reading and reading.get("kind") == "section" and analysis.scope == "list":  # "all the risk factors"
            draft = _items_answer(blocks, reading) or _lead_answer(blocks, reading)
        elif reading and reading.get("read"):
            draft = _lead_answer(blocks, reading)
        elif computed:
            draft = self._with_other_parts(analysis, sub_questions, blocks,
                                           _computed_answer(computed[0], rivals[0] if rivals else None), computed[0])
        else:
            draft = self._extract(analysis, sub_questions, blocks)
        if on_token is not None:
            for line in draft.text.splitlines(keepends=True):
                on_token(line)
        return BrainReply(draft)

    def table_sql(self, question: str, schemas: str, **_) -> BrainReply:
        """No query of its own: offline, the rules of agentic_rag.tables.plan write it (None says so)."""
        return BrainReply(None)

    def verify(self, drafts: Sequence[ClaimDraft], blocks: Sequence[ContextBlock], question: str = "",
               **_) -> BrainReply:
        """Per claim: in the cited passage (verbatim or by words and numbers), and addressing the question or the
        sub-question that found its passage (see checks.verdicts.offline_verdict)."""
        by_n = {b.n: b for b in blocks}
        # What "addresses" a request for a summary or a list is not a matter of its words: only grounding is
        # checked (a list's quotes name items; the list's coverage line says how far it went).
        summary = bool(question) and (classify(question) == "summary"
                                      or scope_of(question, classify(question)) == "list")
        verdicts = tuple(offline_verdict(i, d, by_n, () if summary else _targets(question, d, by_n),
                                         self.embedder) for i, d in enumerate(drafts))
        return BrainReply((verdicts, ()))

    def _list_answer(self, analysis: Analysis, blocks: Sequence[ContextBlock], reading: dict) -> Draft:
        """The passages that name the items, best quotes per section in the document's order, with where; said to
        be possibly incomplete (the reading's coverage line says how much was searched)."""
        passages = Passages.of(blocks)
        wanted = forms_of(list_object(analysis.standalone))
        lines, said = [], set()
        for title, own in _by_section(blocks, reading):
            quotes = [(b.n, _clean(s)) for b in own for s in sentences(b.chunk.text)
                      if wanted and wanted & forms_of(s) and _prose(s)][:LIST_QUOTES_PER_SECTION] or \
                find_quotes(analysis.standalone, "list", own, self.embedder, gate=self.gate, passages=passages,
                            limit=LIST_QUOTES_PER_SECTION)
            # "… the following datasets:" and the lines it introduces: the items themselves, however worded
            quotes += [(b.n, _clean(item)) for b in own for item in introduced(b.chunk.text, wanted)]
            quotes = [(n, q) for n, q in quotes if q not in said]
            said.update(q for _, q in quotes)
            lines += [f'- {title}: "{q}" [P{n}]' if title else f'- "{q}" [P{n}]' for n, q in quotes]
        if not lines:
            return Draft(f"{HEADER}\n\n{NOT_FOUND}{_closest(blocks)}", (analysis.standalone,))
        head = (f"{OFFLINE_LABEL} — the passages that name them, quoted section by section; not a complete list "
                "unless the documents list them in one place.")
        return Draft(head + "\n\n" + "\n".join(lines))

    def _with_other_parts(self, analysis: Analysis, subs: Sequence[str], blocks: Sequence[ContextBlock],
                          draft: Draft, computed: ContextBlock) -> Draft:
        """The calculation's answer, and quotes for the parts of the question it is not about ("how many
        technicians …, and how many turbines did the survey inspect": the survey's sentence); a comparison's
        parts are all about the figure computed, and add nothing."""
        said = forms_of("\n".join(ln for ln in computed.chunk.text.splitlines() if not ln.startswith("Query:")))
        rest = [q for q in subs if not any(c.met(said) for c in _asked_for(q))]
        if len(subs) < 2 or not rest:
            return draft
        extra = self._extract(analysis, rest, [b for b in blocks if not is_computed(b.chunk)])
        if len(extra.unanswered) == len(rest):
            return Draft(draft.text, tuple(rest))
        body = extra.text.split("\n\n", 1)[1]
        return Draft(f"{draft.text}\n\n" + (f"**{rest[0].rstrip('?')}**\n{body}" if len(rest) == 1 else body),
                     extra.unanswered)

    def _extract(self, analysis: Analysis, subs: Sequence[str], blocks: Sequence[ContextBlock]) -> Draft:
        passages = Passages.of(blocks)
        qtype = analysis.question_type
        sections, unanswered = [], []
        for sub in subs:
            # A retry round searches a missing sub-question again under the same text, so its hits count too.
            own = [b for b in blocks if sub in b.queries] or (list(blocks) if len(subs) == 1 else [])
            quotes = find_quotes(sub, qtype, own, self.embedder, gate=self.gate, passages=passages,
                                 limit=QUOTE_LIMITS.get(qtype, DEFAULT_QUOTES))
            if not quotes:
                unanswered.append(sub)
            body = "\n".join(f'"{q}" [P{n}]' for n, q in quotes) or NOT_FOUND
            sections.append(f"**{sub.rstrip('?')}**\n{body}" if len(subs) > 1 else body)
        if len(unanswered) == len(subs):
            sections = [NOT_FOUND + _closest(blocks)]
        return Draft(HEADER + "\n\n" + "\n\n".join(sections), tuple(unanswered))


def _asked_for(sub: str) -> list:
    """What a sub-question asks for: the words after its question word; a part without one ("Acme's net sales in
    2020", a side of a comparison) asks for what its words other than names and numbers name."""
    concepts = [c for c in query_concepts(sub) if not c.specific]
    if _QUESTION_WORD.search(sub):
        return [c for c in concepts if c.focus]
    return [c for c in concepts if not any(ch.isdigit() for ch in c.text)]


_QUESTION_WORD = re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE)


def _by_section(blocks: Sequence[ContextBlock], reading: dict) -> list[tuple[str, list[ContextBlock]]]:
    """The blocks grouped by the section read that holds them (agentic_rag.scope), in reading order."""
    spans = {}
    for doc in reading.get("documents") or (reading,):
        for s in sorted(doc.get("read", ()), key=lambda s: s["last"] - s["first"]):
            spans.setdefault(doc.get("file", ""), []).append(s)
    groups: dict[tuple[str, str], list[ContextBlock]] = {}
    for b in sorted(blocks, key=lambda b: (b.chunk.file_name, b.chunk.ordinal)):
        own = spans.get(b.chunk.file_name) or next(iter(spans.values()), [])
        title = next((s["title"] for s in own if s["first"] <= b.chunk.ordinal <= s["last"]), "")
        groups.setdefault((b.chunk.file_name, title), []).append(b)
    return [(title, own) for (_, title), own in groups.items()]


def _items_answer(blocks: Sequence[ContextBlock], reading: dict) -> Draft | None:
    """A list question answered from the section its object names: the section's parts when the outline has
    them, else its run-in headings (agentic_rag.language.paragraphs), each quoted with its citation, in order;
    None when fewer than MIN_ITEMS are found (the section is then quoted as a summary)."""
    ordered = sorted(blocks, key=lambda b: b.chunk.ordinal)
    by_ordinal = {b.chunk.ordinal: b for b in ordered}
    parts = [(by_ordinal[p["first"]].n, p["title"]) for p in reading.get("parts", ()) if p["first"] in by_ordinal]
    how = "its sub-sections"
    if len(parts) < MIN_ITEMS:
        parts = [(p.blocks[0] if p.blocks else p.first, p.text)
                 for p in run_in_items([(b.n, b.chunk.text) for b in ordered])]
        how = "the one-sentence paragraphs that lead its parts"
    if len(parts) < MIN_ITEMS:
        return None
    title = (reading.get("read") or [{}])[0].get("title", "the section")
    head = (f"{OFFLINE_LABEL} — the items of \"{title}\" as it sets them out ({how}), quoted in order; "
            "not a written list.")
    return Draft(head + "\n\n" + "\n".join(f'- "{_clean(text)}" [P{n}]' for n, text in parts))


def _lead_answer(blocks: Sequence[ContextBlock], reading: dict) -> Draft:
    """A summary offline: the lead sentences of each section read, quoted with their citations, labelled as such
    (no model writes a summary offline)."""
    out, file_name, lines_only = [], "", False
    library = reading.get("kind") == "library"
    grouped = _by_section(blocks, reading)
    if reading.get("kind") == "section" and grouped:  # one section (and what it refers to): each stretch's lead
        ordered = [b for _, own in grouped for b in own]
        size = max(1, -(-len(ordered) // SECTION_QUOTES))
        grouped = [("", ordered[i:i + size]) for i in range(0, len(ordered), size)]
    for title, own in grouped:
        if library and own[0].chunk.file_name != file_name:
            file_name = own[0].chunk.file_name
            out.append(f"### {file_name}")
        lead = _lead_sentences(own, SUMMARY_SENTENCES if _SUMMARISES.search(title) else LEAD_SENTENCES)
        if lead is None:
            lead = _opening_lines(own)
            lines_only = lines_only or lead is not None
        if lead is not None:
            n, quote = lead
            where = own[0].chunk.location.label()
            label = ", ".join(p for p in (title, where) if p)
            out.append((f"**{label}**\n" if label else "") + f'"{quote}" [P{n}]')
    if not out:
        return Draft(f"{HEADER}\n\n{NOT_FOUND}{_closest(blocks)}", ("summary",))
    what = "the opening sentences of each section read" if not lines_only else \
        "the opening sentences of each section read (its first lines where it has no sentences)"
    head = f"{OFFLINE_LABEL} — {what}, quoted; not a written summary."
    return Draft(head + "\n\n" + "\n\n".join(out))


def _lead_sentences(blocks: Sequence[ContextBlock], most: int = LEAD_SENTENCES) -> tuple[int, str] | None:
    """The first `most` prose sentences of a section's passages (not headings, table rows or captions), from the
    first passage that has prose."""
    for b in blocks:
        prose = [s for s in sentences(b.chunk.text) if _prose(s)]
        if prose:
            return b.n, _clean(" ".join(prose[:most]))
    return None


def _opening_lines(blocks: Sequence[ContextBlock]) -> tuple[int, str] | None:
    """Where a section has no prose (a sheet, a slide of short points): its first OPENING_LINES lines as written,
    a table's outer bars and separator rows left out, joined by '…' (each line is checked as its own piece)."""
    for b in blocks:
        lines = [ln.strip().strip("|").strip() for ln in b.chunk.text.splitlines()]
        lines = [ln for ln in lines if ln and not _SEPARATOR.match(ln) and sum(ch.isalnum() for ch in ln) >= 3]
        if lines:
            return b.n, _clean(" … ".join(lines[:OPENING_LINES]))
    return None


_SEPARATOR = re.compile(r"^[\s|:\-]+$")
OPENING_LINES = 3


def _prose(sentence: str) -> bool:
    words = sentence.split()
    letters = sum(ch.isalpha() for ch in sentence)
    first = sentence.lstrip()[:1]
    ends = sentence.rstrip().rstrip("\"'”’)]")[-1:]  # "… Item 3, “Legal Proceedings.”" ends a sentence too
    return (len(words) >= MIN_PROSE_WORDS and ends in ".!?:;" and (first.isupper() or first.isdigit()
            or first in "\"“'(") and letters >= 0.6 * len(sentence.replace(" ", "")))


def _targets(question: str, draft: ClaimDraft, by_n: dict[int, ContextBlock]) -> tuple[str, ...]:
    """What a claim may be answering: the question, or a sub-question that retrieved its passage."""
    found = [q for n in draft.citations if n in by_n for q in by_n[n].queries if not q.startswith('"')]
    return tuple(dict.fromkeys([question, *found] if question else found))


def _computed_answer(block: ContextBlock, rival: ContextBlock | None = None) -> Draft:
    """The engine's calculation over a table, quoted: each result line with its citation, the cells it read
    in the header line (the query itself is in the Reasoning panel). `rival`: another table's calculation that
    reads the question almost as well and gives another figure; the answer's note cites it (an engine note: no
    claim) but states only its own figure, so that it never holds two answers to one question."""
    lines = block.chunk.text.splitlines()
    results = [ln for ln in lines[1:] if not ln.startswith(("Cells:", "Query:", READ_AS))]
    cells = _cells_of(block)
    head = f"{OFFLINE_LABEL} — computed by the engine from the document's table ({cells}); the query is under Reasoning."
    body = "\n".join(f'"{_clean(line)}" [P{block.n}]' for line in results if line.strip() and not line.endswith(":"))
    # how the engine read a header is its own note for the user to check, not something the document states
    read = [ln.removeprefix(READ_AS).strip() for ln in lines if ln.startswith(READ_AS)]
    if read:
        body += f"\n\n*(Headers read as {'; '.join(read)} [P{block.n}]: check the reading.)*"
    why = next((ln.removeprefix(OTHER_READING).strip() for ln in rival.chunk.text.splitlines()
                if ln.startswith(OTHER_READING)), "") if rival is not None else ""
    if rival is not None and why:  # the same table read another way ("fiscal 2022": a year named either way)
        figure = next((ln for ln in rival.chunk.text.splitlines()[1:2]), "")
        body += f"\n\n*({why[0].upper()}{why[1:]}: {_clean(figure)} [P{rival.n}]. Check which one the question means.)*"
    elif rival is not None:
        body += (f"\n\n*(Another table reads the question almost as well and gives a different figure: "
                 f"{_cells_of(rival)} [P{rival.n}]. Check which one the question means.)*")
    return Draft(f"{head}\n\n{body}")


def _cells_of(block: ContextBlock) -> str:
    return next((ln.removeprefix("Cells: ") for ln in block.chunk.text.splitlines() if ln.startswith("Cells:")), "")


def _coverage_answer(analysis: Analysis, coverage: Sequence[Coverage], blocks: Sequence[ContextBlock]) -> Draft:
    concept = analysis.key_concepts[0] if analysis.key_concepts else analysis.standalone
    if not coverage:
        return Draft(f"{HEADER}\n\n{NOT_FOUND} There are no documents to check.", (concept,))
    by_chunk = {b.chunk.id: b.n for b in blocks}
    absent = [c.file_name for c in coverage if not c.mentioned]
    present = []
    for c in coverage:
        if c.mentioned and c.hit is not None:
            quote = next((s for s in sentences(c.hit.chunk.text) if _says(s, concept)), c.hit.chunk.text)
            n = by_chunk.get(c.hit.chunk.id)
            present.append(f'- {c.file_name}: "{_clean(quote)}"' + (f" [P{n}]" if n else ""))
    no = f"Not mentioned in: {', '.join(absent)}." if absent else "Every document mentions it."
    yes = "Mentioned in:\n" + "\n".join(present) if present else "No document mentions it."
    parts = [no, yes] if analysis.question_type == "negation" else [yes, no]
    head = f'{OFFLINE_LABEL} — checked each of the {len(coverage)} documents for "{concept}".'
    return Draft(head + "\n\n" + "\n".join(parts))


def _says(sentence: str, concept: str) -> bool:
    wanted = forms_of(concept)
    return concept.lower() in sentence.lower() or (bool(wanted) and wanted <= forms_of(sentence))


def _closest(blocks: Sequence[ContextBlock]) -> str:
    if not blocks:
        return f"\n{FOUND_PREFIX}: none were retrieved."
    places = dict.fromkeys(f"{b.chunk.file_name} {b.chunk.location.label()}".strip() for b in blocks[:3])
    return f"\n{FOUND_PREFIX} (not an answer): " + "; ".join(places) + "."  # two passages of a slide: named once


def _clean(sentence: str) -> str:
    return " ".join(sentence.split()).replace('"', "'")
