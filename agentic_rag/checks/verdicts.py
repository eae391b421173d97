"""Verdicts on claims: the checks no model is trusted with (citations, pages, numbers) and the offline judge.

Fabricated citation numbers and page numbers are the known failure of agentic RAG, so whatever a brain says,
a claim that cites a passage that does not exist, or a page its passage is not on, is unsupported; a figure its
passages neither state nor let one compute is refuted. Without a model, `lexical_verdict` (is the claim in its
passage?) and `offline_verdict` (and does it answer what was asked?) judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from agentic_rag.checks.claims import MIN_CLAIM_TERMS, ClaimDraft
from agentic_rag.checks.figures import Sources, arithmetic_errors, calculations, other_periods, other_rows, unexplained
from agentic_rag.checks.instructions import instruction_in
from agentic_rag.language.concepts import forms_of, near
from agentic_rag.language.quotes import EMBED_CHARS, Ask, Gate
from agentic_rag.language.text import language_of, overlap, terms, unwrap
from agentic_rag.tables.compute import READ_AS, is_computed
from agentic_rag.types import VERDICT_SCORE, Claim, ContextBlock, Coverage, Verdict

SUPPORTED_OVERLAP = 0.8  # share of a claim's content words its passage must contain to support it
GROUNDED = 0.5  # below this share a model's "supported" is only partial: the passage hardly says it
PARTIAL_OVERLAP = 0.5
ADDRESSES = 0.6  # weighted share of a question's concepts a quote (with its passage's names) must hold to answer it
TOUCHES = 0.35  # below this share a quote is beside the point, however verbatim
MIN_COSINE = 0.15  # cosine (quote, question) below which a quote is only partial, when an embedder is given ...
STRONG = 0.75  # ... unless it holds this share of the question's concepts
PARAPHRASE = Gate()  # the cosine and word share at which the extractor quotes a paraphrase
_NEGATIVE = re.compile(r"\b(?:not|no|never|none|neither|nor|without)\b|n't\b", re.IGNORECASE)
# Words that say a figure was worked out, not read off ("rose", "a margin of"); a percent sign alone says nothing.
_COMPUTING = re.compile(r"\d\s*[-+−×x*/÷]\s*[$€£(]?\d|\b(?:differen\w*|increas\w*|decreas\w*|grew|grow\w*|rose|"
                        r"rise[sn]?|fell|fall\w*|declin\w*|drop\w*|chang\w*|margins?|ratios?|totals?|sum|combined|"
                        r"altogether|average\w*|share of|proportion|gap|improv\w*|reduc\w*)\b", re.IGNORECASE)
_PAGE_REF = re.compile(r"\b(?:page|p\.|pp\.)\s*(\d+)", re.IGNORECASE)


def lexical_verdict(index: int, claim: ClaimDraft, blocks: Mapping[int, ContextBlock]) -> Verdict:
    """Offline support check: the cited passage holds the claim's words (a quote verbatim) and all its numbers."""
    cited = [blocks[n] for n in claim.citations if n in blocks]
    if not cited:
        return Verdict(index, "unsupported", 0, "no citation to check")
    body = _quoted(claim.text)
    best = max(cited, key=lambda b: overlap(set(terms(claim.text)), b.chunk.index_text))
    if body and _verbatim(body, best.chunk.index_text):
        return Verdict(index, "supported", best.n, "quoted verbatim")
    share = overlap(set(terms(claim.text)), best.chunk.index_text)
    numbers_ok = not unexplained(claim.text, " ".join(b.chunk.index_text for b in cited))
    if share >= SUPPORTED_OVERLAP and numbers_ok:
        return Verdict(index, "supported", best.n, f"{share:.0%} of its words in the passage")
    if share >= PARTIAL_OVERLAP:
        why = "a number is not in the passage" if not numbers_ok else f"only {share:.0%} of its words"
        return Verdict(index, "partial", best.n, why)
    return Verdict(index, "unsupported", best.n, f"only {share:.0%} of its words in the passage")


def offline_verdict(index: int, claim: ClaimDraft, blocks: Mapping[int, ContextBlock], targets: Sequence[str],
                    embedder=None) -> Verdict:
    """A quote is supported when it is in its cited passage AND addresses what was asked.

    `targets` are what the claim may answer (the question, the sub-question that found its passage); the best
    fit counts. A verbatim quote that holds too little of the question is partial or unsupported, so that the
    confidence computed from the verdicts means something.
    """
    grounded = lexical_verdict(index, claim, blocks)
    cited = [blocks[n] for n in claim.citations if n in blocks]
    if grounded.verdict == "unsupported" or not cited or not targets:
        return grounded
    share, focused, cosine, number, target = max(_fit(t, claim.text, cited, embedder) for t in targets)
    about = f"{share:.0%} of what '{target.rstrip('?')}' asks"
    # Worded differently from the question but close in meaning: the extractor's paraphrase gate (extract.Gate).
    paraphrase = cosine >= PARAPHRASE.unfocused_cosine and share >= PARAPHRASE.paraphrase_own
    focused = focused or paraphrase
    if share < TOUCHES or not focused:
        why = f"it holds {about}" if focused else "it does not say what is asked for"
        return replace(grounded, verdict="unsupported",
                       reason=f"{grounded.reason}, but it does not answer the question ({why})")
    if embedder is not None and cosine < MIN_COSINE and share < STRONG:
        why = f"it is hardly related to '{target.rstrip('?')}' (cosine {cosine:.2f})"
    elif not number:
        why = "it states no number next to what the question counts"
    elif share < ADDRESSES and not paraphrase:
        why = f"it holds only {about}"
    else:
        return replace(grounded, reason=f"{grounded.reason}; it holds {about}")
    return replace(grounded, verdict="partial", reason=f"{grounded.reason}, but {why}")


_RESULT_FIGURE = re.compile(r":\s*[-$€£(]*\d")  # "<row>, <column>: $737,877"


def _fit(question: str, text: str, cited: Sequence[ContextBlock], embedder) -> tuple:
    """How well a claim answers `question`: (weighted share of its concepts in the quote and its headings, its
    names and numbers also anywhere in the cited passages; whether the quote holds one of the words saying what
    is asked for; cosine to the question or 0.0; whether a number asked for is stated; the question)."""
    ask = Ask.of(question)
    body = quote_body(text)
    # the words the engine read a header of a computed passage as ('PTRATIO: "pupil teacher ratio"'): the claim's
    # header stands for them
    read = " ".join(" ".join(re.findall(r'"([^"]+)"', line)) for b in cited
                    for line in b.chunk.text.splitlines() if line.startswith(READ_AS))
    close = forms_of(body + " " + " ".join(" ".join(b.chunk.heading_path) for b in cited) + " " + read)
    around = forms_of(" ".join(f"{b.chunk.file_name} {b.chunk.index_text}" for b in cited))
    total = sum(c.weight for c in ask.concepts)
    held = sum(c.weight for c in ask.concepts if c.met(close) or (c.specific and c.met(around)))
    focused = not ask.focus or any(c.met(close) for c in ask.focus)
    cosine = 0.0
    if embedder is not None:
        cosine = float(embedder.embed([body[:EMBED_CHARS]])[0] @ embedder.embed_query(question))
    # "How many layers": a number next to "layers", not a year or a figure number elsewhere in the quote. A result
    # line of the engine's calculation ("Cash ..., 52 Weeks Ended January 28, 2023: $737,877") states its figure
    # for the row and column it names, however long their names.
    number = not ask.counts or near(ask.focus or ask.concepts, body, ask.given_numbers) \
        or any(is_computed(b.chunk) and body in b.chunk.text.splitlines() and _RESULT_FIGURE.search(body)
               for b in cited)
    return (held / total if total else 0.0), focused, cosine, number, question


def claim_fit(question: str, draft: ClaimDraft, blocks: Mapping[int, ContextBlock]) -> float:
    """Weighted share of what `question` asks that a claim and its cited passages hold (0 without a citation)."""
    cited = [blocks[n] for n in draft.citations if n in blocks]
    return _fit(question, draft.text, cited, None)[0] if cited and question else 0.0


def quote_body(text: str) -> str:
    """What a claim quotes (the whole claim when it quotes nothing)."""
    m = re.search(r"[\"“](.+?)[\"”]", text)
    return m.group(1) if m else text


def check_claim(draft: ClaimDraft, verdict: Verdict, blocks: Mapping[int, ContextBlock],
                coverage: Sequence[Coverage] = (), question: str = "") -> Claim:
    """The brain's verdict, overruled where it cannot be right: citations of no passage, wrong pages, numbers
    the passages neither state nor let one compute, arithmetic that does not add up.

    `question`: its numbers may be repeated without a source ("the top 3 ...").
    """
    claim = Claim(draft.text, verdict.verdict if verdict.verdict in VERDICT_SCORE else "unsupported",
                  tuple(n for n in draft.citations if n in blocks), verdict.evidence if verdict.evidence in blocks
                  else 0, verdict.reason)
    ghosts = [n for n in draft.citations if n not in blocks]
    if ghosts and not claim.citations:
        return replace(claim, verdict="unsupported", reason=f"cites [P{ghosts[0]}], which names no passage",
                       refuted=True)
    cited = [blocks[n] for n in claim.citations]
    if not cited:
        return _uncited(claim, coverage)
    steering = [instruction_in(b.chunk.text) for b in cited]
    if all(steering):
        return replace(claim, verdict="unsupported", reason=f"its only source {steering[0]}: an instruction inside "
                       "a document, not a statement of fact")
    if ghosts:
        claim = replace(claim, verdict="partial" if claim.verdict == "supported" else claim.verdict,
                        reason=f"also cites [P{ghosts[0]}], which names no passage; {claim.reason}".rstrip("; "))
    # A page named inside a quotation is the quoted document's own cross-reference, not a claim about the source.
    pages = {int(p) for p in _PAGE_REF.findall(re.sub(r'"[^"\n]*"|“[^”\n]*”', " ", draft.text))}
    on = {b.chunk.location.page for b in cited}
    if pages and not pages & on:
        return replace(claim, verdict="unsupported", reason=f"names page {min(pages)}, but its passage is elsewhere",
                       refuted=True)
    wrong = arithmetic_errors(draft.text)
    if wrong:
        return replace(claim, verdict="unsupported", reason=f"its arithmetic does not add up: {wrong[0]}",
                       refuted=True)
    near = _same_place(cited, blocks)
    sources = [f"{b.chunk.file_name} {' '.join(b.chunk.heading_path)}\n{b.chunk.index_text}" for b in near]
    grounds = Sources.of(sources, [_place(b) for b in near])  # parsed once for the three checks below
    missing = unexplained(draft.text, grounds, question + " " + " ".join(f"page {p}" for p in pages))
    if missing:
        # A figure its source does not give is the costliest error an answer makes: never "partly" right. A
        # figure worked out without showing from what is unsupported, not proved wrong: the check cannot redo it.
        if _COMPUTING.search(draft.text):
            return replace(claim, verdict="unsupported", reason=f"{missing[0]} is not in the cited passage, and the "
                                                                "claim does not show the calculation it comes from")
        return replace(claim, verdict="unsupported", reason=f"{missing[0]} is not in the cited passage",
                       refuted=True)
    wrong_period = other_periods(draft.text, grounds, re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", question))
    if wrong_period:
        figure, period = wrong_period[0]
        return replace(claim, verdict="unsupported", refuted=True,
                       reason=f"{figure} is the passage's {period} figure, not the period the question asks about")
    wrong_row = other_rows(draft.text, grounds)
    if wrong_row:
        figure, row, named = wrong_row[0]
        return replace(claim, verdict="unsupported", refuted=True,
                       reason=f"{figure} is in the row '{row}' of the cited table, not in '{named}'")
    if calculations(draft.text):
        # Every figure of a written-out calculation was grounded and the engine recomputed its result.
        return replace(claim, verdict="supported", reason="its figures are in the cited passages and the engine "
                                                          "recomputed its calculation")
    words = {t for t in terms(draft.text) if not t[:1].isdigit()}
    share = overlap(words, " ".join(sources))
    if claim.verdict == "supported" and len(words) >= MIN_CLAIM_TERMS and share < GROUNDED \
            and not _other_language(draft.text, sources):
        return replace(claim, verdict="partial", reason=f"only {share:.0%} of its words are in the cited passage "
                                                        f"({claim.reason or 'the model said supported'})")
    return claim


def _other_language(claim: str, sources: Sequence[str]) -> str:
    """The claim's language when it is written in another language than its passages ('' when the same or
    unsure). Word overlap then measures nothing: the model compared the meaning, and the engine still checked
    the citations, pages, figures and arithmetic, which no language changes."""
    said, source = language_of(claim, least=2), language_of(" ".join(sources)[:4000])
    return said if said and source and said != source else ""


def _place(block: ContextBlock) -> tuple | None:
    """The document and page, sheet or slide a passage is on (None: a text file's passage, placed by nothing)."""
    where = block.chunk.location
    return (block.chunk.doc_id, where.page, where.sheet, where.slide) if (where.page or where.sheet or
                                                                          where.slide) else None


def _same_place(cited: Sequence[ContextBlock], blocks: Mapping[int, ContextBlock]) -> list[ContextBlock]:
    """The cited passages and the other passages of the same pages, sheets or slides: a statement cut into
    several chunks is one source (an operand in the next chunk of the same table counts)."""
    places = {_place(b) for b in cited} - {None}
    return [*cited, *(b for b in blocks.values() if b not in cited and _place(b) in places)]


def _uncited(claim: Claim, coverage: Sequence[Coverage]) -> Claim:
    """A claim citing no passage: supported only where it names documents and agrees with the engine's check of
    each (a "which documents mention X" answer); otherwise unsupported."""
    named = [c for c in coverage if _names_file(claim.text, c.file_name)]
    if named:
        negative = bool(_NEGATIVE.search(claim.text))
        wrong = [c.file_name for c in named if c.mentioned == negative]
        if wrong:
            return replace(claim, verdict="unsupported", reason=f"the check of {wrong[0]} says otherwise")
        return replace(claim, verdict="supported", reason="matches the check of every document")
    # "Supported" means a cited passage states it: a claim that cites none is not, whatever the verifier thinks
    # of it (world knowledge, or a passage it did not name).
    return replace(claim, verdict="unsupported", reason="cites no passage")


def _names_file(text: str, file_name: str) -> bool:
    stem = file_name.rsplit(".", 1)[0]
    low = text.lower()
    return file_name.lower() in low or (len(stem) > 3 and stem.lower() in low)


def _quoted(text: str) -> str:
    m = re.search(r"[\"“](.+?)[\"”]", text)
    return m.group(1).strip(" .…") if m else ""


def _verbatim(quote: str, passage: str) -> bool:
    """Every piece of the quote (pieces are joined by '…' where words were left out) is in the passage."""
    pieces = [p for p in re.split(r"\s*…\s*", quote) if p.strip(" .")]
    haystack = _normal(passage)
    return bool(pieces) and all(_normal(p) in haystack for p in pieces)


def _normal(text: str) -> str:
    text = re.sub(r"[\"“”]", "'", unwrap(text).replace("…", " "))
    return re.sub(r"\s+", " ", text).strip().lower()
