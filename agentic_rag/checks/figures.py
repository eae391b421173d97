"""The numbers of a claim, checked against its passages without a model.

A figure the cited passages do not state is the commonest way an answer goes wrong, so every number of a
claim must be explained by them: stated (in any of the usual formats, "six" = "6", "$2.1 billion" = "2,117"
in a table in millions), or computed from two stated numbers (difference, sum, ratio, percentage, change).
What is not a figure is left alone: years and periods ("fiscal 2022", "Q3"), form names ("10-K"), list
markers. Arithmetic written out in the claim ("2,117 - 2,018 = 99") is recomputed.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentic_rag.checks.citations import CITE
from agentic_rag.language.text import CITATION, terms

MAX_OPERANDS = 120  # passage numbers tried as operands (pairs grow with the square)
SCALES = (1.0, 1e3, 1e-3, 1e6, 1e-6, 1e9, 1e-9)  # thousands / millions / billions written either way
_WORDS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
               "hundred": 100, "dozen": 12, "half": 0.5, "twice": 2, "double": 2, "triple": 3})
_SCALE_WORDS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9,
                "b": 1e9, "trillion": 1e12}
_FIGURE = re.compile(
    r"(?<![\w.])(?P<sign>[-+−–]?)(?P<cur>[$€£¥]?)\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<pct>\s?%| percent\b)?(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|[kmb])\b)?"
    r"(?P<tail>-[A-Za-z]\b)?", re.IGNORECASE)
_WORD_NUMBER = re.compile(r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_PERIOD_BEFORE = re.compile(r"(?:\b(?:fy|q[1-4]|h[12]|fiscal|year|years|in|since|from|to|until|by|of|ended|"
                            r"ending|through|during|before|after|page|p\.|pp\.|section|table|figure|fig\.|"
                            r"item|note|chapter|step|part)\s*)$", re.IGNORECASE)


@dataclass(frozen=True)
class Figure:
    """A number as written: its value (scale applied), the digits after its point, and whether it is a %."""

    raw: str
    value: float
    decimals: int
    percent: bool = False
    period: bool = False  # a year or a period/label number: not a figure to check


def figures(text: str) -> list[Figure]:
    """The numbers of `text` (citation markers and bare [11] references ignored), number words included."""
    text = CITATION.sub(" ", CITE.sub(" ", text))
    out = []
    for m in _FIGURE.finditer(text):
        digits = m.group("num")
        value = float(digits.replace(",", ""))
        scale = _SCALE_WORDS.get((m.group("scale") or "").lower(), 1.0)
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        if m.group("sign") in ("-", "−", "–") and not text[max(0, m.start() - 1):m.start()].strip():
            value = -value
        year = "," not in digits and "." not in digits and 1900 <= value <= 2100 and not m.group("cur")
        period = year or bool(m.group("tail")) or bool(_PERIOD_BEFORE.search(text[max(0, m.start() - 12):m.start()]))
        if m.group("cur") or m.group("pct") or m.group("scale"):
            period = year and not m.group("cur")
        out.append(Figure(m.group(0).strip(), value * scale, decimals, bool(m.group("pct")), period))
    for m in _WORD_NUMBER.finditer(text):
        out.append(Figure(m.group(0), float(_WORDS[m.group(1).lower()]), 0))
    return out


def _close(x: Figure, y: float) -> bool:
    """Whether `y` rounds to `x` as written ("4.7" for 4.676; "2.1 billion" for 2,117 million)."""
    if x.value == 0:
        return abs(y) < 1e-9
    unit = 10 ** -x.decimals * _magnitude(x)
    return abs(abs(x.value) - abs(y)) <= 0.5 * unit * 1.0001


def _magnitude(x: Figure) -> float:
    """The scale a figure was written in ("2.1 billion": 1e9), so its rounding unit is 0.1 billion."""
    for name, factor in _SCALE_WORDS.items():
        if re.search(rf"\d\s?{name}\b", x.raw, re.IGNORECASE):
            return factor
    return 1.0


def stated(x: Figure, numbers: Iterable[float]) -> bool:
    """`x` is one of `numbers`, in whatever scale the source wrote it."""
    return any(_close(x, y * s) for y in numbers for s in SCALES)


def derived(x: Figure, numbers: list[float]) -> bool:
    """`x` is the difference, sum, ratio, percentage or percentage change of two of `numbers`.

    Only for figures that are plausibly computed (a percentage, a decimal, a currency or scaled amount, a
    number of 100 or more): a count such as "7 heads" is stated or wrong, and with a table's worth of
    operands some pair would produce any small integer.
    """
    if not (x.percent or x.decimals or abs(x.value) >= 100):
        return False
    pool = list(dict.fromkeys(abs(n) for n in numbers if n))[:MAX_OPERANDS]
    for a, b in itertools.permutations(pool, 2):
        candidates = (a - b, a + b, a / b, a / b * 100, (a - b) / b * 100)
        if any(_close(x, c * s) for c in candidates for s in SCALES):
            return True
    return False


def unexplained(claim: str, sources: str, allowed: str = "") -> list[str]:
    """The numbers of `claim` its `sources` neither state nor let one compute (years, periods and numbers
    given in `allowed`, e.g. the question, excepted), as written in the claim."""
    known = [f.value for f in figures(sources)]
    given = {f.value for f in figures(allowed)}
    out = []
    computing = bool(_COMPUTING.search(claim))
    for f in figures(claim):
        if f.period or f.value in given or stated(f, known) or stated(f, given):
            continue
        # A computed figure comes with the words of a computation ("rose 4.9%", "a margin of"); a plain
        # "a BLEU score of 33.1" must be stated: with a table's worth of operands some pair gives anything.
        if not (computing and derived(f, [v for v in _operands(claim, sources) if v != f.value])):
            out.append(f.raw)
    return out


_COMPUTING = re.compile(  # words that say a figure was worked out, not read off ("a margin of", "rose 4.9%")
    r"\d\s*[-+−×x*/÷]\s*[$€£(]?\d|\b(?:differen\w*|increas\w*|decreas\w*|grew|grow\w*|rose|rise[sn]?|fell|"
    r"fall\w*|declin\w*|drop\w*|chang\w*|margins?|ratios?|totals?|sum|combined|altogether|average\w*|"
    r"share of|proportion|gap|percentage|percent|improv\w*|reduc\w*)\b|%", re.IGNORECASE)


def _operands(claim: str, sources: str) -> list[float]:
    """Numbers a computation in `claim` may start from: those of the source lines that share a word with it
    (the rows and sentences about what it speaks of), not every number of a page."""
    wanted = {w for w in terms(claim) if not w[:1].isdigit()}
    if _SHARE_OF.search(claim):  # a margin or a share is taken of the total: its rows are operands too
        wanted |= _TOTALS
    lines = [ln for part in sources.splitlines() for ln in re.split(r"(?<=[.;])\s+", part)]
    chosen = [ln for ln in lines if wanted & set(terms(ln))] or lines  # "It rose 4.9%": about the passage
    found = [f.value for ln in chosen for f in figures(ln) if not f.period]
    every = [f.value for f in figures(sources)]
    own = [f.value for f in figures(claim) if not f.period and stated(f, every)]  # "(2,117 - 2,018) / 2,018"
    return own + found


_SHARE_OF = re.compile(r"\b(?:margin|ratio|share|proportion|percent(?:age)? of|% of|yield|rate)\b", re.IGNORECASE)
_TOTALS = frozenset(terms("revenue revenues sales total net income assets"))


def arithmetic_errors(claim: str) -> list[str]:
    """Each calculation written out in `claim` ("(2,117 - 2,018) / 2,018 = 4.9%") whose result is not what
    its numbers give, rounded as written; with the recomputed value."""
    text = CITE.sub(" ", claim)
    errors = []
    for m in _RESULT.finditer(text):
        expression = _EXPRESSION.search(text[:m.start()])
        if not expression or not _OPERATOR.search(expression.group(0).strip()[1:]):
            continue
        value = _evaluate(expression.group(0))
        if value is None:
            continue
        raw = m.group("c")
        target = Figure(raw, float(raw.replace(",", "").replace("−", "-")),
                        len(raw.split(".")[1]) if "." in raw else 0)
        if not (_close(target, value) or (m.group("pct") and _close(target, value * 100))):
            shown = f"{value * 100:,.2f}%" if m.group("pct") and abs(value) < 10 else f"{value:,.4g}"
            errors.append(f"{expression.group(0).strip()} = {raw}{m.group('pct') or ''} (recomputed: {shown})")
    return errors


_RESULT = re.compile(r"(?:=|≈)\s*(?P<c>[-−]?\d[\d,]*(?:\.\d+)?)\s*(?P<pct>%)?")
_EXPRESSION = re.compile(r"[-−–(]*\s*[$€£]?\d[\d,.]*%?\)*(?:\s*[-−–+×x*/÷]\s*\(*\s*[$€£]?\d[\d,.]*%?\)*)+\s*$")
_OPERATOR = re.compile(r"[-−–+×x*/÷]")


def _evaluate(expression: str) -> float | None:
    """The value of a written calculation (numbers, + - × / and brackets), or None when it is not one."""
    import ast

    text = re.sub(r"[$€£,]", "", expression).translate(str.maketrans({"−": "-", "–": "-", "×": "*", "x": "*",
                                                                       "÷": "/"}))
    text = re.sub(r"(\d+(?:\.\d+)?)%", r"(\1/100)", text)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.USub)
    if not all(isinstance(node, allowed) for node in ast.walk(tree)):
        return None
    try:
        return float(eval(compile(tree, "<calculation>", "eval"), {"__builtins__": {}}))  # noqa: S307 (checked AST)
    except ZeroDivisionError:
        return None
