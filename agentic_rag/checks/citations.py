"""Passage IDs: what the model is given ([P3]), the forms models write back, and the numbers a reader sees.

Passages are labelled `[P<n>]`, never a bare `[n]`: most chunks of a scientific paper carry bracketed
references of their own ("residual connection [11]"), and a model that copies one must not have it taken for
passage 11. IDs are stable for the whole question (a later round adds passages, never renumbers), so an ID
always names the passage it named when the model read it.

Accepted forms: [P2], [P1, P2], [P1; P2], [P1-P3], [P1–3], [P1][P2], [P1 and P2], [Source 2], [Passage 2],
(P2), (P1, P3). A bare [11] is the document's own reference and is never a citation. What the reader sees is
renumbered [1], [2], ... in the order the answer first cites them (`display`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

_ONE = r"(?:P|Passage\s*|Source\s*|Src\s*)\s*\d+"
_JOIN = r"\s*(?:[,;]|and|&|-|–|—|to)\s*"
_ITEM = rf"{_ONE}(?:{_JOIN}(?:{_ONE}|\d+))*"
CITE = re.compile(rf"\[\s*({_ITEM})\s*\]|\(\s*({_ITEM})\s*\)|【\s*({_ITEM})\s*】", re.IGNORECASE)
# A citation group and any directly following ones: "[P1][P2]" -> one place to renumber.
_RUN = re.compile(rf"(?:{CITE.pattern})(?:\s*(?:{CITE.pattern}))*", re.IGNORECASE)
_SPACED_RUN = re.compile(rf"([ \t]*)({_RUN.pattern})", re.IGNORECASE)
_NUM = re.compile(r"\d+")
MAX_RANGE = 20  # "[P1-P400]" is not a range anyone means; it is read as its two ends
HOLD_CHARS = 48  # a streamed "[" or "(" is held back this long while it may still become a citation


def passage_label(n: int) -> str:
    """The label a passage carries in the prompt: 'P3'."""
    return f"P{n}"


def _ids_in(group: str) -> list[int]:
    """Passage numbers in one bracket's contents, ranges expanded: 'P1-P3, P5' -> [1, 2, 3, 5]."""
    out: list[int] = []
    pieces = re.split(r"\s*(?:[,;&]|\band\b)\s*", group, flags=re.IGNORECASE)
    for piece in pieces:
        ends = [int(x) for x in _NUM.findall(piece)]
        if len(ends) == 2 and 0 < ends[1] - ends[0] <= MAX_RANGE:
            out.extend(range(ends[0], ends[1] + 1))
        else:
            out.extend(ends)
    return out


def cited_ids(text: str) -> tuple[int, ...]:
    """Passage numbers cited in `text`, in order of first appearance: 'a [P2] b [P1, P2]' -> (2, 1)."""
    seen: dict[int, None] = {}
    for m in CITE.finditer(text):
        for n in _ids_in(next(g for g in m.groups() if g)):
            seen.setdefault(n, None)
    return tuple(seen)


def strip_ids(text: str) -> str:
    """`text` without its passage citations (a document's own [11] stays), spaces before punctuation closed."""
    text = re.sub(r"[ \t]+", " ", CITE.sub("", text))
    return re.sub(r" +([.,;:!?])", r"\1", text).strip()


def display(text: str, valid: Collection[int], order: dict[int, int] | None = None) -> tuple[str, dict[int, int]]:
    """`text` with passage IDs replaced by reader numbers [1], [2], ... in order of first citation.

    IDs not in `valid` name no passage: they are removed (the verifier flags their claims), never mapped to
    another passage. `order` (passage -> reader number) continues a numbering already shown; it is extended
    in place and returned.
    """
    order = {} if order is None else order

    def number(m: re.Match) -> str:
        ids = [n for n in cited_ids(m.group(2)) if n in valid]
        for n in ids:
            order.setdefault(n, len(order) + 1)
        shown = ", ".join(str(r) for r in sorted({order[n] for n in ids}))
        return f"{m.group(1)}[{shown}]" if ids else ""  # a dropped ID takes the space before it along

    out = _SPACED_RUN.sub(number, text)
    out = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", out))
    return out, order


class DisplayStream:
    """Streams a model's text on with its passage IDs already shown as reader numbers.

    A "[" or "(" that may still be the start of a citation is held back (at most HOLD_CHARS) until it closes,
    so the reader never sees "[P" turn into "[1]".
    """

    def __init__(self, on_token: Callable[[str], None], valid: Collection[int]):
        self.on_token, self.valid, self.order = on_token, frozenset(valid), {}
        self.held = ""

    def __call__(self, piece: str) -> None:
        text = self.held + piece
        cut = _open_tail(text)
        if cut < len(text):  # the spaces before a held bracket go with it (dropped if it names no passage)
            cut = len(text[:cut].rstrip(" \t"))
        self.held = text[cut:]
        if cut:
            shown, _ = display(text[:cut], self.valid, self.order)
            if shown:
                self.on_token(shown)

    def flush(self) -> None:
        if self.held:
            shown, _ = display(self.held, self.valid, self.order)
            self.held = ""
            if shown:
                self.on_token(shown)


def _open_tail(text: str) -> int:
    """Where a possibly unfinished citation starts at the end of `text`; len(text) when there is none."""
    start = max(text.rfind("["), text.rfind("("), text.rfind("【"))
    if start < 0 or len(text) - start > HOLD_CHARS or any(c in text[start:] for c in "])】"):
        return len(text)
    opened = text[start + 1:].lstrip()
    if not opened or _PREFIX.match(opened):
        return start
    return len(text)


_PREFIX = re.compile(r"(?:p(?:a(?:s(?:s(?:a(?:g(?:e)?)?)?)?)?)?|s(?:o(?:u(?:r(?:c(?:e)?)?)?)?|rc?)?)(?:\s*\d*)?"
                     r"(?:\s*(?:[,;&-–—]|and|to)?\s*(?:p\s*)?\d*)*$", re.IGNORECASE)
