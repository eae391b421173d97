"""The offline brain: rule-based planning, extractive answers that quote the documents, checks without a model.

It quotes; it does not generate. A sub-question is answered only when a window of a passage passes the
relevance gate (see agentic_rag.extract); otherwise it says NOT_FOUND instead of guessing. Its verifier asks
two things of every quote: is it really in the cited passage, and does it address what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from agentic_rag.extract import (
    Ask,
    Gate,
    Window,
    add_cosine,
    passes,
    pick,
    render,
    score_windows,
    units_of,
    windows_of,
    with_context,
)
from agentic_rag.matching import forms_of
from agentic_rag.rules import classify, plan_question
from agentic_rag.text import sentences
from agentic_rag.types import NOT_FOUND, OFFLINE_LABEL, Analysis, BrainReply, ContextBlock, Coverage
from agentic_rag.verify import FOUND_PREFIX, ClaimDraft, offline_verdict
from vector_db import Embedder

HEADER = f"{OFFLINE_LABEL} — quoted from the documents, not generated."
QUOTE_LIMITS = {"list": 3, "summary": 3, "comparison": 2}  # quotes per sub-question; others: DEFAULT_QUOTES
DEFAULT_QUOTES = 2
MEMO_SIZE = 4096


@dataclass(frozen=True)
class Draft:
    """An answer text, the sub-questions it could not answer (the verifier's 'missing' for extractive mode), and
    whether it is a refusal as a whole (Gemini's NOT_FOUND_MARK, in whatever language it wrote), and whether
    it was cut short."""

    text: str
    unanswered: tuple[str, ...] = ()
    refused: bool = False
    truncated: bool = False  # the model stopped at its output limit and could not finish


@dataclass(frozen=True)
class Passages:
    """The numbered passages, cut into units, with the word forms of their labels and of their documents."""

    blocks: tuple[ContextBlock, ...]
    units: dict = field(default_factory=dict)  # block number -> units
    forms: dict = field(default_factory=dict)  # block number -> forms of its text, file name and headings
    labels: dict = field(default_factory=dict)  # block number -> forms of its file name and headings
    documents: dict = field(default_factory=dict)  # doc id -> forms of every passage of it

    @classmethod
    def of(cls, blocks: Sequence[ContextBlock]) -> Passages:
        """Units and word forms of every block, read once for all the sub-questions."""
        labels = {b.n: forms_of(_label(b)) for b in blocks}
        forms = {b.n: labels[b.n] | forms_of(b.chunk.text) for b in blocks}
        documents: dict[str, set[str]] = {}
        for b in blocks:
            documents.setdefault(b.chunk.doc_id, set()).update(forms[b.n])
        return cls(tuple(blocks), {b.n: units_of(b.chunk.text) for b in blocks}, forms, labels,
                   {d: frozenset(f) for d, f in documents.items()})

    def named(self, ask: Ask, doc_id: str) -> bool:
        """Whether the retrieved passages of `doc_id` hold every name and number of the question."""
        return _names_ok(ask, self.documents.get(doc_id, frozenset()))


@dataclass(frozen=True)
class Memo:
    """The embedder, remembering the vectors of the texts it embedded: a retry round and the verifier look at
    the same quotes again, and embedding is the slow part of answering offline. At most MEMO_SIZE texts."""

    embedder: Embedder
    vectors: dict

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of `texts`, embedding only those not seen before."""
        new = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if new:
            if len(self.vectors) + len(new) > MEMO_SIZE:
                self.vectors.clear()
            self.vectors.update(zip(new, np.asarray(self.embedder.embed(new)), strict=True))
        return np.asarray([self.vectors[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        """The query vector (not remembered: it is cheap, and a query may be embedded differently)."""
        return np.asarray(self.embedder.embed_query(text))


@dataclass(frozen=True)
class OfflineBrain:
    """No model, no network: rules, quotes and word matching. `embedder` (optional) sharpens the choice of quotes
    and the verdicts. `gate` is the relevance a quote needs (see agentic_rag.extract.Gate)."""

    embedder: Embedder | None = None
    gate: Gate = Gate()
    mode: ClassVar[str] = "offline"
    _vectors: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def _embedder(self) -> Memo | None:
        return Memo(self.embedder, self._vectors) if self.embedder is not None else None

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), **_) -> BrainReply:
        """Analysis and sub-questions from rules (see agentic_rag.rules)."""
        return BrainReply(plan_question(question, history))

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None, **_) -> BrainReply:
        """Quote the best sentences or rows per sub-question, each with its citation; NOT_FOUND where nothing fits."""
        if analysis.checks_every_document:
            draft = _coverage_answer(analysis, coverage, blocks)
        else:
            draft = self._extract(analysis, sub_questions, blocks)
        if on_token is not None:
            for line in draft.text.splitlines(keepends=True):
                on_token(line)
        return BrainReply(draft)

    def verify(self, drafts: Sequence[ClaimDraft], blocks: Sequence[ContextBlock], question: str = "",
               **_) -> BrainReply:
        """Per claim: in the cited passage (verbatim or by words and numbers), and addressing the question or the
        sub-question that found its passage (see verify.offline_verdict)."""
        by_n = {b.n: b for b in blocks}
        # What "addresses" a request for a summary is not a matter of its words: only grounding is checked.
        summary = bool(question) and classify(question) == "summary"
        verdicts = tuple(offline_verdict(i, d, by_n, () if summary else _targets(question, d, by_n),
                                         self._embedder()) for i, d in enumerate(drafts))
        return BrainReply((verdicts, ()))

    def quotes(self, question: str, qtype: str, blocks: Sequence[ContextBlock]) -> list[tuple[int, str]]:
        """(passage number, quote) pairs answering `question` from `blocks`, best first; [] when none passes."""
        return self._quotes(Ask.of(question, qtype), qtype, list(blocks), Passages.of(blocks))

    def _extract(self, analysis: Analysis, subs: Sequence[str], blocks: Sequence[ContextBlock]) -> Draft:
        passages = Passages.of(blocks)
        sections, unanswered = [], []
        for sub in subs:
            # A retry round searches a missing sub-question again under the same text, so its hits count too.
            own = [b for b in blocks if sub in b.queries] or (list(blocks) if len(subs) == 1 else [])
            quotes = self._quotes(Ask.of(sub, analysis.question_type), analysis.question_type, own, passages)
            if not quotes:
                unanswered.append(sub)
            body = "\n".join(f'"{q}" [P{n}]' for n, q in quotes) or NOT_FOUND
            sections.append(f"**{sub.rstrip('?')}**\n{body}" if len(subs) > 1 else body)
        if len(unanswered) == len(subs):
            sections = [NOT_FOUND + _closest(blocks)]
        return Draft(HEADER + "\n\n" + "\n\n".join(sections), tuple(unanswered))

    def _quotes(self, ask: Ask, qtype: str, blocks: list[ContextBlock], passages: Passages) -> list[tuple[int, str]]:
        if not _names_ok(ask, frozenset().union(*passages.documents.values())):
            return []  # a name or number no retrieved passage holds: the documents do not know it
        # When some document holds every name of the question, the question is about what it names: a passage
        # of another document ("3M's sales" for "Diageo's sales") answers something else, however well worded.
        named = [b for b in blocks if passages.named(ask, b.chunk.doc_id)]
        if any(c.specific for c in ask.concepts) and named:
            blocks = named
        windows = _unique(w for b in blocks for w in windows_of(b, passages.units[b.n]))
        if not windows:
            return []
        scored = add_cosine(ask, score_windows(ask, windows, passages), self._embedder())
        ok = _acceptable(self.gate, ask, summary=qtype == "summary")
        chosen = pick([w for w in scored if ok(w)], QUOTE_LIMITS.get(qtype, DEFAULT_QUOTES))
        chosen = [with_context(w, passages.units[w.block.n]) for w in chosen]
        quotes = {render(w): w.block.n for w in reversed(chosen)}  # the same words from two passages: cite the first
        return [(quotes[q], q) for q in dict.fromkeys(render(w) for w in chosen)]


def _acceptable(gate: Gate, ask: Ask, *, summary: bool) -> Callable[[Window], bool]:
    """The test every quoted window must pass; a summary quotes the best-matching passages, whatever they hold."""
    def ok(window: Window) -> bool:
        return summary or passes(gate, ask, window)

    return ok


def _names_ok(ask: Ask, document_forms: frozenset[str]) -> bool:
    """Every name and number of the question is somewhere in what was retrieved of the document."""
    return all(c.met(document_forms) for c in ask.concepts if c.specific)


def _unique(windows) -> list[Window]:
    """One window per text: overlapping chunks repeat sentences; the earliest passage keeps them."""
    seen: dict[str, Window] = {}
    for w in windows:
        seen.setdefault(w.text, w)
    return list(seen.values())


def _targets(question: str, draft: ClaimDraft, by_n: dict[int, ContextBlock]) -> tuple[str, ...]:
    """What a claim may be answering: the question, or a sub-question that retrieved its passage."""
    found = [q for n in draft.citations if n in by_n for q in by_n[n].queries if not q.startswith('"')]
    return tuple(dict.fromkeys([question, *found] if question else found))


def _label(block: ContextBlock) -> str:
    c = block.chunk
    return f"{re.sub(r'[_.-]', ' ', c.file_name)} {' '.join(c.heading_path)} {c.context}"


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
    places = [f"{b.chunk.file_name} {b.chunk.location.label()}".strip() for b in blocks[:3]]
    return f"\n{FOUND_PREFIX} (not an answer): " + "; ".join(places) + "."


def _clean(sentence: str) -> str:
    return " ".join(sentence.split()).replace('"', "'")
