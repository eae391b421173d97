"""The claims of an answer: its checkable statements, whether it is a refusal, and the answer with a mark after
each claim the checks did not support.

A claim is a sentence, a list item or a table row (headings, table headers and statements of what the
documents do not say are left out). An answer whose first statement says the documents lack the answer is a
refusal and claims nothing (`is_refusal`: the one refusal rule of the project; evaluation scores refusals with it).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from agentic_rag.checks.citations import CITE, cited_ids, strip_ids
from agentic_rag.language.text import sentences, terms
from agentic_rag.types import NOT_FOUND, OFFLINE_LABEL, Claim

MIN_CLAIM_TERMS = 2  # shorter lines are framing ("Here is what I found:"), not claims
FOUND_PREFIX = "Closest passages"
_QUOTE_LINE = re.compile(r'(?:[^"“]{0,80}:\s*)?(?:"[^"\n]+"|“[^”\n]+”)(?:\s*(?:' + CITE.pattern + r'))+\s*[.]?',
                         re.IGNORECASE)
_ENGINE_NOTE = re.compile(r"\*\([^\n]+\)\*")  # the engine's own notes: what was read, an answer cut short
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?$")
_REFUSAL = re.compile(
    r"^(?:(?:however|unfortunately|sorry),?\s+)?(?:"
    r"i\s+(?:could|can|did)\s*(?:not|n't|n’t)\s+(?:find|locate|see|determine)"
    r"|i\s+(?:was|am)\s+(?:not\s+able|unable)\s+to\s+(?:find|locate|determine)"
    r"|i\s+(?:do|did)\s*(?:not|n't|n’t)\s+(?:have|see|find)\b"
    r"|(?:the|these|this)\s+(?:provided\s+|given\s+|retrieved\s+|available\s+)?(?:passages?|documents?|context|"
    r"sources?|excerpts?|texts?|files?)\s+(?:provided\s+)?(?:do(?:es)?\s*(?:not|n't|n’t)|did\s*(?:not|n't)|"
    r"contains?\s+no|makes?\s+no|provides?\s+no|has\s+no|have\s+no)\b"
    r"|there\s+is\s+no\s+(?:information|mention|data|indication)|no\s+information\s+(?:is\s+(?:given|provided)|about|"
    r"on|regarding)|none\s+of\s+the\s+(?:passages|documents|sources)"
    r"|(?:this|that|it|the\s+answer|the\s+information)\s+is\s+not\s+(?:mentioned|stated|given|provided|found|"
    r"available|specified|included|covered)\b)", re.IGNORECASE)
# Refusal wordings anywhere in an uncited first statement ("Based on the passages, I cannot determine ...").
_REFUSAL_PHRASES = tuple(re.compile(p) for p in (
    r"\b(i|we) (cannot|can't|could not|couldn't|did not|didn't|do not|don't|am not able to|was not able to"
    r"|were not able to|am unable to|'m unable to|was unable to|were unable to|are unable to) "
    r"(find|locate|identify|determine|answer)\b",
    r"\b(cannot|can't|could not|couldn't) be (answered|determined|found)\b",
    r"\bno (relevant |such |specific |direct )?(information|mention|evidence|answer|data|passages?|results?)\b"
    r"( (was|were|is|are))? (found|available|about|on|regarding|in|to)\b",
    r"(^|\b(is|are|was|were) )not (mentioned|stated|found|specified|provided|given|covered|available|discussed)"
    r" (in|by|within|anywhere in) (the|your|these|any|this|those) ",
    r"\b(documents?|sources?|context|passages?|excerpts?|files?|texts?|library) (do|does|did) ?(not|n't) "
    r"(contain|mention|say|provide|include|state|specify|discuss|cover|answer|address|give)\b",
    r"\b(not enough|insufficient) (information|evidence|context|data)\b",
    r"\bi (do not|don't) know\b",
    r"\bnothing (relevant )?(was |is )?(found|in the documents)\b",
))
_CITED = re.compile(CITE.pattern + r"|\[\d+(?:\s*[,;]\s*\d+)*\]", re.IGNORECASE)
_FLAGS = {"unsupported": " ⚠ (not supported by the cited passages)", "partial": " (⚠ only partly supported)"}


@dataclass(frozen=True)
class ClaimDraft:
    """A claim as written (`segment`, for flagging in place) and its clean text and citation numbers."""

    segment: str
    text: str
    citations: tuple[int, ...]


def split_claims(answer: str, *, refused: bool = False) -> tuple[ClaimDraft, ...]:
    """The checkable statements of an answer: sentences, list items and table rows, without headings, table
    headers and statements of what the documents do not say.

    An answer that is a refusal (`refused`: Gemini marked it, in any language; or its first statement says the
    documents do not have the answer, in any of the usual English wordings) claims nothing: what follows only
    describes what was found instead.
    """
    if refused or is_refusal(answer):
        return ()
    out = []
    for line, kind, header in _lines(answer):
        if kind == "row":
            cells, names = _cells(line), _cells(header)
            pairs = zip(names, cells, strict=True) if len(names) == len(cells) else (("", c) for c in cells)
            clean = ", ".join(f"{h}: {c}" if h else c for h, c in pairs if c)
            if len(terms(clean)) >= 1 and not clean.endswith(":"):
                out.append(ClaimDraft(line.strip(), clean, cited_ids(line)))
            continue
        item = re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", line.strip())
        # A quotation with its citation is one claim however many sentences it quotes.
        for segment in ([item] if _QUOTE_LINE.fullmatch(item) else sentences(item)):
            clean = strip_ids(segment).strip(" -*")
            if (NOT_FOUND.rstrip(".") in clean or len(terms(clean)) < MIN_CLAIM_TERMS or clean.endswith(":")
                    or _REFUSAL.match(clean)):
                continue
            out.append(ClaimDraft(segment, clean, cited_ids(segment)))
    return tuple(out)


def is_refusal(answer: str) -> bool:
    """Whether the answer says the documents do not hold the answer: an empty answer (nothing was asserted), or
    one whose first statement is NOT_FOUND or a wording models use instead ("The provided passages do not
    mention ...", "I couldn't find ...", "Not enough information ...", "I don't know"). The project's one
    refusal rule: the engine claims nothing for such an answer, and the evaluation scores refusals with it.

    A first statement that cites a passage ([P2], or a reader's [2]) and says one part was not found is part of
    an answer, not a refusal.
    """
    if not answer.strip():
        return True
    for line, kind, _ in _lines(answer):
        if kind == "row":
            return False
        first = strip_ids(re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", line.strip()))
        if first.endswith(":") and len(first) < 80:
            continue  # "Based on the passages:" introduces what follows
        if first.startswith(NOT_FOUND.rstrip(".")) or _REFUSAL.match(first):
            return True
        plain = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", first).lower().replace("’", "'"))
        return not _CITED.search(line) and any(p.search(plain) for p in _REFUSAL_PHRASES)
    return False


def _is_framing(line: str) -> bool:
    return (not line or line.startswith((OFFLINE_LABEL, FOUND_PREFIX, "#"))
            or bool(re.fullmatch(r"\*\*[^*]+\*\*:?", line)) or _ENGINE_NOTE.fullmatch(line) is not None)


def _lines(answer: str):
    """(line, kind) for each line that may hold claims: kind "row" for a table's data rows, else "text";
    headings, labels, a table's header and separator rows left out."""
    lines = answer.splitlines()
    header = ""
    for i, line in enumerate(lines):
        stripped = line.strip()
        if _is_framing(stripped) or _TABLE_SEPARATOR.match(stripped):
            continue
        if stripped.startswith("|"):
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _TABLE_SEPARATOR.match(following):  # the row a separator follows is the header
                header = stripped
            else:
                yield line, "row", header
            continue
        header = ""
        yield line, "text", ""


def _cells(row: str) -> list[str]:
    return [strip_ids(c).strip(" *") for c in row.strip().strip("|").split("|")] if row else []


def flag_answer(answer: str, drafts: Sequence[ClaimDraft], claims: Sequence[Claim]) -> str:
    """The answer with a visible mark after each unsupported or partly supported claim.

    A mark never goes inside a table (it would break the table's Markdown): a row's mark is a line after the
    table naming the row. Everything else of the answer is left exactly as written.
    """
    flagged = [(d, c) for d, c in zip(drafts, claims, strict=True) if c.verdict in _FLAGS]
    rows = {d.segment: c for d, c in flagged if d.segment.lstrip().startswith("|")}
    for draft, claim in flagged:
        if draft.segment not in rows and draft.segment in answer:
            answer = answer.replace(draft.segment, draft.segment + _FLAGS[claim.verdict], 1)
    if not rows:
        return answer
    out: list[str] = []
    notes: list[str] = []
    for line in answer.splitlines():
        if notes and not line.strip().startswith("|"):
            out += ["", *notes, ""] if line.strip() else ["", *notes]
            notes = []
        out.append(line)
        claim = rows.get(line.strip())
        if claim is not None:
            notes.append(f"- Row “{' | '.join(_cells(line))}”:{_FLAGS[claim.verdict]}")
    if notes:
        out += ["", *notes]
    return "\n".join(out)


