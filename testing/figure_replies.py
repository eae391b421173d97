"""What models write about figures, right and wrong, built from the passages an answer prompt carries and the
gold figure of the question (for testing/replay.py).

Right: the figure as its passage states it; a right calculation whose second operand sits in another passage
(both cited); a column's total written out. Wrong: one digit changed (1,821
written 1,921), the other period's column of the same row, a wrong scale word (17,606 billion for a table in
millions), a calculation whose result is off. Each is written the way Gemini, Llama and Qwen write such
sentences ("Total revenue was $17,606 [P3].", "(a - b) = c [P2]"), and is None when the passages do not allow
that kind of reply for the question.
"""

from __future__ import annotations

import re

from evaluation.metrics import alternative_in

RIGHT_KINDS = ("right figure", "arithmetic across chunks", "column total")
WRONG_KINDS = ("changed digit", "other column", "wrong scale", "wrong arithmetic")
KINDS = (*RIGHT_KINDS, *WRONG_KINDS)
_HEADER = re.compile(r"^\[P(\d+)\] (?P<file>[^\n,]+)(?:, p\. (?P<page>\d+))?[^\n]*\n(?P<text>.*?)"
                     r"(?=\n\n\[P\d+\] |\n</passages>)", re.MULTILINE | re.DOTALL)
_NUMBER = re.compile(r"(?<![\w.])\$?\s?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+\.\d+(?![\w])")
_SCALE = re.compile(r"\b(millions?|thousands?|billions?)\b", re.IGNORECASE)
# A number that names a document part ("Exhibit 99.1", "Note 12", "Item 7.01") is no quantity a model adds up.
_NAMES_PART = re.compile(r"\b(?:exhibit|item|note|section|page|table|figure|chapter|part|rule|form)\s*$",
                         re.IGNORECASE)


def numeric(groups) -> bool:
    """Whether the question's first answer group is a figure."""
    return bool(groups) and any(re.search(r"\d", a) for a in groups[0])


def figure_reply(kind: str, groups, prompt: str, question: str = "") -> str | None:
    """The answer a model would write for this kind of figure reply, or None when the passages (or, for "other
    column", a question that names its period) do not allow it."""
    found = [(int(m.group(1)), m.group("file"), m.group("page"), m.group("text")) for m in _HEADER.finditer(prompt)]
    key = groups[0] if groups else ()
    stating = [(n, page, line) for n, _, page, text in found for line in text.splitlines()
               if any(alternative_in(a, line) for a in key)]
    if not stating:
        return None
    n, page, line = stating[0]
    gold = next((m for m in _NUMBER.finditer(line) if any(alternative_in(a, m.group(0)) for a in key)), None)
    if gold is None:
        return None
    label = _label(line)
    if kind == "right figure":
        return f"{label} was {gold.group(0).strip()} [P{n}]."
    if kind == "changed digit":
        return f"{label} was {_one_digit(gold.group(0).strip())} [P{n}]."
    if kind == "other column":
        if len(set(re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", question))) != 1:
            return None  # unless the question asks for one period, another column may be what it means
        other = next((m.group(0).strip() for m in _NUMBER.finditer(line) if _value(m.group(0)) != _value(gold.group(0))),
                     None)
        return f"{label} was {other} [P{n}]." if other else None
    if kind == "wrong scale":
        stated = _SCALE.search(next(text for m, _, _, text in found if m == n) or "")
        wrong = "billion" if stated and stated.group(1).lower().startswith("million") else "million"
        return f"{label} was {gold.group(0).strip()} {wrong} [P{n}]."
    if kind == "wrong arithmetic":
        other = next((m.group(0).strip() for m in _NUMBER.finditer(line) if _value(m.group(0)) != _value(gold.group(0))),
                     None)
        if other is None:
            return None
        a, b = _value(gold.group(0)), _value(other)
        wrong = (a - b) + max(1.0, abs(a - b) * 0.1)
        return f"The difference is {gold.group(0).strip()} - {other} = {_written(wrong)} [P{n}]."
    if kind == "arithmetic across chunks":
        mate = next(((m, q) for m, _, p, text in found if m != n for q in _quantities(text)), None)
        if mate is None:
            return None
        y = mate[1]
        a, b = _value(gold.group(0)), _value(y)
        return f"Together they come to {gold.group(0).strip()} + {y} = {_written(a + b)} [P{n}][P{mate[0]}]."
    if kind == "column total":
        return _column_total(found, re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", question))
    raise ValueError(kind)


def _column_total(found, years=()) -> str | None:
    """A right total of one column of a table passage with at least three figures in that column (the column of
    the year the question names, when it names one: another year's total answers another question)."""
    for n, _, _, text in found:
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
                if line.strip().startswith("|") and "---" not in line]
        for col in range(1, max((len(r) for r in rows), default=0)):
            header = rows[0][col] if rows and col < len(rows[0]) else ""
            if years and not any(y in header for y in years):
                continue
            cells = [r[col].replace("$", "").strip() for r in rows
                     if col < len(r) and _NUMBER.fullmatch(r[col].replace("$", "").strip())]
            if len(cells) >= 3:
                cells = cells[:5]
                total = sum(_value(c) for c in cells)
                return f"The column adds up to {' + '.join(cells)} = {_written(total)} [P{n}]."
    return None


def _quantities(text: str) -> list[str]:
    """The numbers of a passage that are quantities, not the names of its parts."""
    return [m.group(0).strip() for m in _NUMBER.finditer(text)
            if not _NAMES_PART.search(text[max(0, m.start() - 12):m.start()])]


def _label(line: str) -> str:
    """What a row or sentence is about: a table row's first cell, else the sentence's first words."""
    if "|" in line:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        return next((c for c in cells if c and not _NUMBER.search(c)), "The figure")
    words = line.split()
    return " ".join(words[:8]).rstrip(".,;:") if words else "The figure"


def _one_digit(raw: str) -> str:
    """The figure with its second digit (its first, for one digit) raised by one: 1,821 -> 1,921."""
    digits = [i for i, ch in enumerate(raw) if ch.isdigit()]
    at = digits[1] if len(digits) > 1 else digits[0]
    return raw[:at] + str((int(raw[at]) + 1) % 10) + raw[at + 1:]


def _value(raw: str) -> float:
    return float(raw.replace("$", "").replace(",", "").strip())


def _written(value: float) -> str:
    return f"{value:,.0f}" if abs(value - round(value)) < 1e-9 else f"{value:,.2f}"
