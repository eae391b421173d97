"""Claims out of an answer, the checks no model is trusted with (citations, pages, numbers), and confidence.

Fabricated citation numbers and page numbers are the known failure of agentic RAG, so whatever a brain says,
a claim that cites a passage that does not exist, or a page its passage is not on, is unsupported.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from agentic_rag.text import cited_numbers, numbers, overlap, sentences, strip_citations, terms, unwrap
from agentic_rag.types import NOT_FOUND, OFFLINE_LABEL, VERDICT_SCORE, Claim, ContextBlock, Coverage, Verdict

SUPPORTED_OVERLAP = 0.8  # share of a claim's content words its passage must contain to support it
PARTIAL_OVERLAP = 0.5
MIN_CLAIM_TERMS = 2  # shorter lines are framing ("Here is what I found:"), not claims
FOUND_PREFIX = "Closest passages"
_NEGATIVE = re.compile(r"\b(?:not|no|never|none|neither|nor|without)\b|n't\b", re.IGNORECASE)
_PAGE_REF = re.compile(r"\b(?:page|p\.|pp\.)\s*(\d+)", re.IGNORECASE)
_FLAGS = {"unsupported": " ⚠ (not supported by the cited passages)", "partial": " (⚠ only partly supported)"}


@dataclass(frozen=True)
class ClaimDraft:
    """A claim as written (`segment`, for flagging in place) and its clean text and citation numbers."""

    segment: str
    text: str
    citations: tuple[int, ...]


def split_claims(answer: str) -> tuple[ClaimDraft, ...]:
    """The checkable statements of an answer: sentences and list items, without headings and refusals.

    An answer that opens with NOT_FOUND claims nothing: what follows only describes what was found instead.
    """
    body = [line.strip() for line in answer.splitlines() if not _is_framing(line.strip())]
    if body and body[0].startswith(NOT_FOUND.rstrip(".")):
        return ()
    out = []
    for line in answer.splitlines():
        stripped = line.strip()
        if _is_framing(stripped):
            continue
        for segment in sentences(re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", stripped)):
            clean = strip_citations(segment).strip(" -*")
            if NOT_FOUND.rstrip(".") in clean or len(terms(clean)) < MIN_CLAIM_TERMS or clean.endswith(":"):
                continue
            out.append(ClaimDraft(segment, clean, cited_numbers(segment)))
    return tuple(out)


def _is_framing(line: str) -> bool:
    return (not line or line.startswith((OFFLINE_LABEL, FOUND_PREFIX, "#"))
            or bool(re.fullmatch(r"\*\*[^*]+\*\*:?", line)))


def lexical_verdict(index: int, claim: ClaimDraft, blocks: Mapping[int, ContextBlock]) -> Verdict:
    """Offline support check: the cited passage holds the claim's words (a quote verbatim) and all its numbers."""
    cited = [blocks[n] for n in claim.citations if n in blocks]
    if not cited:
        return Verdict(index, "unsupported", 0, "no citation to check")
    body = _quoted(claim.text)
    best = max(cited, key=lambda b: overlap(set(terms(claim.text)), b.chunk.index_text))
    if body and _normal(body) in _normal(best.chunk.index_text):
        return Verdict(index, "supported", best.n, "quoted verbatim")
    share = overlap(set(terms(claim.text)), best.chunk.index_text)
    numbers_ok = numbers(claim.text) <= numbers(" ".join(b.chunk.index_text for b in cited))
    if share >= SUPPORTED_OVERLAP and numbers_ok:
        return Verdict(index, "supported", best.n, f"{share:.0%} of its words in the passage")
    if share >= PARTIAL_OVERLAP:
        why = "a number is not in the passage" if not numbers_ok else f"only {share:.0%} of its words"
        return Verdict(index, "partial", best.n, why)
    return Verdict(index, "unsupported", best.n, f"only {share:.0%} of its words in the passage")


def check_claim(draft: ClaimDraft, verdict: Verdict, blocks: Mapping[int, ContextBlock],
                coverage: Sequence[Coverage] = ()) -> Claim:
    """The brain's verdict, overruled where it cannot be right: missing citations, wrong pages, absent numbers."""
    claim = Claim(draft.text, verdict.verdict if verdict.verdict in VERDICT_SCORE else "unsupported",
                  draft.citations, verdict.evidence if verdict.evidence in blocks else 0, verdict.reason)
    ghosts = [n for n in draft.citations if n not in blocks]
    if ghosts:
        return replace(claim, verdict="unsupported", reason=f"cites [{ghosts[0]}], which is not among the passages")
    cited = [blocks[n] for n in draft.citations]
    if not cited:
        return _uncited(claim, coverage)
    pages = {int(p) for p in _PAGE_REF.findall(draft.text)}
    on = {b.chunk.location.page for b in cited}
    if pages and not pages & on:
        return replace(claim, verdict="unsupported", reason=f"names page {min(pages)}, but its passage is elsewhere")
    missing = numbers(draft.text) - numbers(" ".join(b.chunk.index_text for b in cited)) - {str(p) for p in pages}
    if missing and claim.verdict == "supported":
        return replace(claim, verdict="partial", reason=f"{sorted(missing)[0]} is not in the cited passage")
    return claim


def _uncited(claim: Claim, coverage: Sequence[Coverage]) -> Claim:
    named = [c for c in coverage if _names_file(claim.text, c.file_name)]
    if named:
        negative = bool(_NEGATIVE.search(claim.text))
        wrong = [c.file_name for c in named if c.mentioned == negative]
        if wrong:
            return replace(claim, verdict="unsupported", reason=f"the check of {wrong[0]} says otherwise")
        return replace(claim, verdict="supported", reason="matches the check of every document")
    if claim.verdict == "supported" and not claim.evidence:
        return replace(claim, verdict="partial", reason="no citation")
    return claim


def _names_file(text: str, file_name: str) -> bool:
    stem = file_name.rsplit(".", 1)[0]
    low = text.lower()
    return file_name.lower() in low or (len(stem) > 3 and stem.lower() in low)


def confidence(claims: Sequence[Claim], missing: int = 0) -> float:
    """Mean verdict score (supported 1, partial 0.5, unsupported 0); each missing aspect counts as unsupported."""
    if not claims:
        return 0.0
    return round(sum(VERDICT_SCORE[c.verdict] for c in claims) / (len(claims) + missing), 2)


def retrieval_confidence(blocks: Sequence[ContextBlock]) -> float:
    """Unverified estimate from the top passages' scores: cosine clipped to [0, 1], BM25 squashed by s/(s+5)."""
    scores = []
    for b in list(blocks)[:3]:
        cos = max(0.0, min(1.0, b.hit.vector_score or 0.0))
        bm25 = b.hit.bm25_score or 0.0
        scores.append(max(cos, bm25 / (bm25 + 5.0) if bm25 > 0 else 0.0))
    return round(sum(scores) / len(scores), 2) if scores else 0.0


def flag_answer(answer: str, drafts: Sequence[ClaimDraft], claims: Sequence[Claim]) -> str:
    """The answer with a visible mark after each unsupported or partly supported claim."""
    for draft, claim in zip(drafts, claims, strict=True):
        flag = _FLAGS.get(claim.verdict)
        if flag and draft.segment in answer:
            answer = answer.replace(draft.segment, draft.segment + flag, 1)
    return answer


def _quoted(text: str) -> str:
    m = re.search(r"[\"“](.+?)[\"”]", text)
    return m.group(1).strip(" .…") if m else ""


def _normal(text: str) -> str:
    text = re.sub(r"[\"“”]", "'", unwrap(text).replace("…", " "))
    return re.sub(r"\s+", " ", text).strip().lower()
