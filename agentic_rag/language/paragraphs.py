"""A section's paragraphs, told from the lines its passages keep, and the items it lists as run-in headings.

A filing's risk factors, a policy's rules, a report's findings are often written as one-sentence paragraphs that
each lead a longer one ("Macroeconomic pressures … may adversely affect our financial results." then the
discussion). The items of "what are all the risk factors" are those sentences, found by the shape of the text
rather than by its words:
- passages overlap (a chunk repeats the last line of the one before); the overlap is read once;
- in text a PDF wrapped at a fixed width, a paragraph ends at a line the next line's first word would have fitted
  on (the writer broke it, not the wrapping) that ends a sentence or comes before a capital, a bullet or a number; in text not wrapped (Word, plain text), every line is a
  paragraph;
- an item is a paragraph of one sentence followed by a longer paragraph; bullets under a line ending in ":" are
  that line's details, not items.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentic_rag.language.concepts import forms_of
from agentic_rag.language.text import sentences

BULLET = re.compile(r"^(?:[•▪◦●■○\uf0b7\uf0a7\uf0d8*]|[-–—](?=\s))\s*")
_PAGE_LINE = re.compile(r"^(?:\d{1,4}|page \d+(?: of \d+)?|table of contents)$", re.IGNORECASE)
_ENDS = (".", "!", "?", ":", ";")
MAX_OVERLAP = 6  # lines a chunk may repeat from the one before
WRAP_SHARE = 0.5  # text is wrapped when at least this share of its longer lines are near the widest
FITS = 0.97  # a word fits on a line when the line would stay under this share of the width (fonts are not
# monospaced: the width in characters is approximate)
ITEM_WORDS = (5, 70)  # an item's words, at least and at most


@dataclass(frozen=True)
class Paragraph:
    text: str  # its lines joined by spaces, a leading bullet dropped
    blocks: tuple[int, ...]  # the passages (their numbers) that hold all of it, first first; () when none does
    first: int  # the passage that holds its first line
    bullet: bool
    words: int


def paragraphs(pieces: Sequence[tuple[int, str]]) -> list[Paragraph]:
    """The paragraphs of passages read in order: `pieces` are (passage number, text)."""
    lines: list[tuple[str, set[int]]] = []
    previous: list[str] = []
    for n, text in pieces:
        own = [ln.strip() for ln in text.splitlines()]
        shared = next((k for k in range(min(MAX_OVERLAP, len(previous), len(own)), 0, -1)
                       if previous[-k:] == own[:k]), 0)
        for i in range(shared):
            lines[len(lines) - shared + i][1].add(n)
        lines += [(ln, {n}) for ln in own[shared:]]
        previous = own
    lines = [(ln, ns) for ln, ns in lines if not _PAGE_LINE.match(ln)]
    width, wrapped = _width([ln for ln, _ in lines])
    out: list[Paragraph] = []
    current: list[tuple[str, set[int]]] = []
    for i, (line, ns) in enumerate(lines):
        if not line:
            _close(current, out)
            current = []
            continue
        if BULLET.match(line) and current:
            _close(current, out)
            current = []
        current.append((line, ns))
        following = next((ln for ln, _ in lines[i + 1:i + 2]), "")
        if _ends(line, following, width, wrapped):
            _close(current, out)
            current = []
    _close(current, out)
    return out


def run_in_items(pieces: Sequence[tuple[int, str]]) -> list[Paragraph]:
    """The one-sentence paragraphs that each lead a longer one, in order (see the module's docstring)."""
    found = paragraphs(pieces)
    items, details = [], False
    for i, para in enumerate(found):
        if para.bullet and details:
            continue  # a detail of the line before the bullets
        details = para.text.endswith(":") or (para.bullet and details)
        after = found[i + 1] if i + 1 < len(found) else None
        one = len(sentences(para.text)) == 1 and para.text.endswith((".", "?", "!"))
        if (one and ITEM_WORDS[0] <= para.words <= ITEM_WORDS[1] and after is not None
                and after.words > para.words and para.text[:1].isupper()):
            items.append(para)
    return items


_ENUMERATED = re.compile(r"^(?:[•▪◦●■○\uf0b7\uf0a7\uf0d8*]|[-–—](?=\s)|\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)])\s*",
                         re.IGNORECASE)
MAX_INTRODUCED = 20  # list lines read after one introducing line


def introduced(text: str, wanted: frozenset[str]) -> list[str]:
    """The bulleted or numbered lines that a line naming what is wanted introduces ("We evaluate on the following
    benchmarks:" then "• GLUE …", "• SQuAD …"), bullets and numbers dropped, a wrapped line joined to its item.
    `wanted` are the forms (language.concepts.forms_of) of what the list is of."""
    lines = [" ".join(ln.split()) for ln in text.splitlines()]
    items: list[str] = []
    for i, line in enumerate(lines):
        if not (wanted and line.endswith(":") and wanted & forms_of(line)):
            continue
        found: list[str] = []
        for nxt in lines[i + 1:]:
            if _ENUMERATED.match(nxt):
                found.append(_ENUMERATED.sub("", nxt))
            elif found and nxt and nxt[:1].islower():
                found[-1] += " " + nxt  # the item's wrapped line
            else:
                break
            if len(found) >= MAX_INTRODUCED:
                break
        items += [f for f in found if f]
    return items


def _width(lines: Sequence[str]) -> tuple[int, bool]:
    """The width text was wrapped at (the 90th percentile of its longer lines' lengths) and whether it was."""
    long = sorted(len(ln) for ln in lines if len(ln) >= 30)
    if len(long) < 4:
        return 0, False
    width = long[int(0.9 * (len(long) - 1))]
    near = sum(1 for n in long if n >= 0.85 * width)
    return width, near >= WRAP_SHARE * len(long)


def _ends(line: str, following: str, width: int, wrapped: bool) -> bool:
    """Whether `line` ends its paragraph: in wrapped text, when the next line's first word would have fitted on it
    (the writer broke the line, not the wrapping) and it ends a sentence or the next begins one."""
    if not wrapped or not following or BULLET.match(following):
        return True
    if len(line) + 1 + len(following.split()[0]) > FITS * width:
        return False
    return line.endswith(_ENDS) or following[:1].isupper() or following[:1].isdigit()


def _close(current: list[tuple[str, set[int]]], out: list[Paragraph]) -> None:
    if not current:
        return
    text = ""
    for line, _ in current:
        text = text[:-1] + line if text.endswith("-") and line[:1].islower() else f"{text} {line}".strip()
    bullet = bool(BULLET.match(text))
    text = BULLET.sub("", text).strip()
    if not text:
        return
    common = set.intersection(*(ns for _, ns in current))
    out.append(Paragraph(text, tuple(sorted(common)), min(current[0][1]), bullet, len(text.split())))
