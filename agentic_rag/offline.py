"""The offline brain: rule-based planning, extractive answers that quote the documents, lexical verification.

It quotes; it does not generate. A sub-question is answered only when a passage passes the relevance gate
(its retrieval scores and its share of the question's words); otherwise it says NOT_FOUND instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from agentic_rag.rules import plan_question
from agentic_rag.text import numbers, overlap, sentences, terms
from agentic_rag.types import NOT_FOUND, OFFLINE_LABEL, Analysis, BrainReply, ContextBlock, Coverage
from agentic_rag.verify import FOUND_PREFIX, ClaimDraft, lexical_verdict

# Calibrated in tests/test_agentic_rag.py (planted facts answered, unanswerable questions refused).
MIN_TERM_SHARE = 0.5  # of a sub-question's content words that its passage (with title and file name) must hold
MIN_COSINE = 0.3  # cosine a passage needs when BM25 did not find it at all
MIN_SENTENCE_SHARE = 0.34  # of the content words a quoted sentence itself must hold (beyond the first quote)
MAX_QUOTE_CHARS = 400
NUMBER_BONUS = 0.5  # "how many / how much" wants a sentence with a number the question does not give
PASSAGE_WEIGHT = 0.5  # a sentence's score: its own share of the words + this x its passage's share
RANK_PENALTY = 0.02  # per retrieval rank, to break ties in favour of the retriever's order
COSINE_WEIGHT = 0.3  # x cosine(sentence, question) when an embedder is given
SECOND_QUOTE = 0.75  # a further quote must score at least this share of the best one
HEADER = f"{OFFLINE_LABEL} — quoted from the documents, not generated."


@dataclass(frozen=True)
class Draft:
    """An answer text and the sub-questions it could not answer (the verifier's 'missing' for extractive mode)."""

    text: str
    unanswered: tuple[str, ...] = ()


@dataclass(frozen=True)
class OfflineBrain:
    """No model, no network: rules, quotes and word overlap. `embedder` (optional) sharpens sentence choice."""

    embedder: object | None = None
    mode: ClassVar[str] = "offline"

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), **_) -> BrainReply:
        """Analysis and sub-questions from rules (see agentic_rag.rules)."""
        return BrainReply(plan_question(question, history))

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None, **_) -> BrainReply:
        """Quote the best sentences per sub-question, each with its citation; NOT_FOUND where nothing fits."""
        if analysis.checks_every_document:
            draft = _coverage_answer(analysis, coverage, blocks)
        else:
            draft = self._extract(analysis, sub_questions, blocks)
        if on_token is not None:
            for line in draft.text.splitlines(keepends=True):
                on_token(line)
        return BrainReply(draft)

    def verify(self, drafts: Sequence[ClaimDraft], blocks: Sequence[ContextBlock], **_) -> BrainReply:
        """Per claim: words and numbers of the claim found in the cited passage (see verify.lexical_verdict)."""
        by_n = {b.n: b for b in blocks}
        return BrainReply((tuple(lexical_verdict(i, d, by_n) for i, d in enumerate(drafts)), ()))

    def _extract(self, analysis: Analysis, subs: Sequence[str], blocks: Sequence[ContextBlock]) -> Draft:
        sections, unanswered = [], []
        for sub in subs:
            # A retry round searches a missing sub-question again under the same text, so its hits count too.
            own = [b for b in blocks if sub in b.queries] or (list(blocks) if len(subs) == 1 else [])
            quotes = self._quotes(sub, analysis.question_type, own)
            if not quotes:
                unanswered.append(sub)
            body = "\n".join(f'"{q}" [{n}]' for n, q in quotes) or NOT_FOUND
            sections.append(f"**{sub.rstrip('?')}**\n{body}" if len(subs) > 1 else body)
        if len(unanswered) == len(subs):
            sections = [NOT_FOUND + _closest(blocks)]
        return Draft(HEADER + "\n\n" + "\n\n".join(sections), tuple(unanswered))

    def _quotes(self, question: str, qtype: str, blocks: Sequence[ContextBlock]) -> list[tuple[int, str]]:
        qterms = set(terms(question, drop_query_words=True))
        specific = _specific_terms(question)
        relevant = [b for b in blocks if _passes_gate(b, qterms, specific, qtype)]
        asked = numbers(question)  # a number the question already gives is not an answer to "how many"
        scored = []
        for b in relevant:
            share = overlap(qterms, _haystack(b))
            # Words the passage's file name or headings already carry need not be in the sentence too.
            own = (qterms - set(terms(_label(b)))) or qterms
            for s in sentences(b.chunk.text):
                s_share = overlap(own, s)
                if s_share == 0 and qtype != "summary":
                    continue
                bonus = NUMBER_BONUS if qtype == "numeric" and numbers(s) - asked else 0.0
                scored.append((s_share + PASSAGE_WEIGHT * share + bonus - RANK_PENALTY * b.hit.rank, b.n, s, s_share))
        if not scored:
            return []
        scored = self._rerank(question, scored)
        best = scored[0][0]
        limit = 3 if qtype in ("list", "summary", "comparison") else 2
        picked = [scored[0]] + [x for x in scored[1:] if x[0] >= SECOND_QUOTE * best and x[3] >= MIN_SENTENCE_SHARE]
        unique = {_trim(s): n for _, n, s, _ in reversed(picked)}  # overlapping chunks repeat sentences
        return [(unique[q], q) for q in dict.fromkeys(_trim(s) for _, _, s, _ in picked)][:limit]

    def _rerank(self, question: str, scored: list[tuple]) -> list[tuple]:
        """Add COSINE_WEIGHT x cosine(sentence, question) when an embedder is given; best first."""
        if self.embedder is not None and scored:
            vectors = np.asarray(self.embedder.embed([s for _, _, s, _ in scored]))
            cos = vectors @ np.asarray(self.embedder.embed_query(question))
            scored = [(x[0] + COSINE_WEIGHT * float(c), *x[1:]) for x, c in zip(scored, cos, strict=True)]
        return sorted(scored, key=lambda x: -x[0])


def _passes_gate(block: ContextBlock, qterms: set[str], specific: set[str], qtype: str) -> bool:
    """Relevant enough to quote: found by BM25 or by a close enough vector, holding the question's words."""
    hit = block.hit
    retrieved = (hit.bm25_score or 0.0) > 0 or (hit.vector_score or 0.0) >= MIN_COSINE or hit.strategy == "scan"
    if not retrieved:
        return False
    haystack = set(terms(_haystack(block)))
    if not specific <= haystack:
        return False
    return qtype == "summary" or overlap(qterms, _haystack(block)) >= MIN_TERM_SHARE


def _label(block: ContextBlock) -> str:
    c = block.chunk
    return f"{re.sub(r'[_.-]', ' ', c.file_name)} {' '.join(c.heading_path)} {c.context}"


def _haystack(block: ContextBlock) -> str:
    return f"{_label(block)} {block.chunk.text}"


def _specific_terms(question: str) -> set[str]:
    """Names and numbers of the question (capitalised words after the first, digits): a passage must hold all."""
    out = set()
    tokens = re.findall(r"[^\W_]+(?:['’][^\W_]+)*", question)
    for i, tok in enumerate(tokens):
        if tok[0].isdigit() or (i > 0 and tok[0].isupper()):
            out.update(terms(tok, drop_query_words=True))
    return out


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
            present.append(f'- {c.file_name}: "{_trim(quote)}"' + (f" [{n}]" if n else ""))
    no = f"Not mentioned in: {', '.join(absent)}." if absent else "Every document mentions it."
    yes = "Mentioned in:\n" + "\n".join(present) if present else "No document mentions it."
    parts = [no, yes] if analysis.question_type == "negation" else [yes, no]
    head = f'{OFFLINE_LABEL} — checked each of the {len(coverage)} documents for "{concept}".'
    return Draft(head + "\n\n" + "\n".join(parts))


def _says(sentence: str, concept: str) -> bool:
    wanted = set(terms(concept))
    return concept.lower() in sentence.lower() or (bool(wanted) and wanted <= set(terms(sentence)))


def _closest(blocks: Sequence[ContextBlock]) -> str:
    if not blocks:
        return f"\n{FOUND_PREFIX}: none were retrieved."
    places = [f"{b.chunk.file_name} {b.chunk.location.label()}".strip() for b in blocks[:3]]
    return f"\n{FOUND_PREFIX} (not an answer): " + "; ".join(places) + "."


def _trim(sentence: str) -> str:
    s = " ".join(sentence.split()).replace('"', "'")
    return s if len(s) <= MAX_QUOTE_CHARS else s[:MAX_QUOTE_CHARS].rsplit(" ", 1)[0] + " …"

