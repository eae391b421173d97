"""The figures of a claim, grounded by construction: stated by its passages, or recomputed from ones that are.

A figure in a claim is explained only when
(a) a cited passage (or a passage of the same page or table) states that value, in any of the usual formats
    ("six" = "6", "17,606" = "17606"), rescaled only by a scale the passage itself states ("in millions" in
    its header or title: "$17.6 billion" for "17,606" in a table in millions); the claim's own rounding is the
    tolerance ("17.6 billion" covers 17.55-17.65 billion); or
(b) it is the result of a calculation the claim writes out ("(17,606 - 15,785) / 15,785 = 11.5%",
    "15,400 + 12,150 + 8,410 = 35,960"), recomputed here, every operand of which is explained by (a); or the
    claim gives the operands in words ("grew 11.5% from $15,785 million to $17,606 million", "a total of 35,960
    across 15,400, 12,150 and 8,410"): the result must then be their difference, sum, ratio, share or change,
    recomputed the same way from the claim's own explained figures.
There is no search over the passages' numbers (with a table's worth of operands some pair gives any figure), and
a percent alone is not a calculation. Years are figures like any other ("by 2021", "to 19", "up to 202" are
values to ground); only references to a document's parts ("page 3", "Table 2", "Section 3.1", "[11]", "10-K")
are not checked as quantities.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentic_rag.checks.citations import CITE
from agentic_rag.language.text import CITATION, STOPWORDS, stem, tabular

MAX_IMPLICIT = 6  # figures of one claim combined as operands of an implicit calculation (pairs: 30 at most)
_WORDS = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
               "hundred": 100, "dozen": 12})
_SCALE_WORDS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9,
                "b": 1e9, "trillion": 1e12}
_FIGURE = re.compile(
    r"(?<![\w.])(?P<sign>[-+−–]?)(?P<cur>[$€£¥]?)\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<pct>\s?%| percent\b)?(?:\s?(?P<scale>thousand|million|billion|trillion|bn|mn|[kmb])\b)?"
    r"(?P<tail>-[A-Za-z]\b)?", re.IGNORECASE)
_WORD_NUMBER = re.compile(r"\b(" + "|".join(sorted(_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_REFERENCE = re.compile(r"(?:\b(?:page|pages|p\.|pp\.|section|sections|sec\.|table|tables|figure|figures|fig\.|"
                        r"item|items|note|notes|chapter|appendix|exhibit|eq\.|equation|step|part|line|row|column|"
                        r"slide|paragraph|¶)\s*)$", re.IGNORECASE)
_STATED_SCALE = re.compile(r"\b(?:in\s+|\(\s*)?(?:[$€£]|usd|eur|gbp|dollars?|euros?)?\s*(trillions?|billions?|"
                           r"millions?|thousands?)\b", re.IGNORECASE)
_RESULT = re.compile(r"(?:=|≈)\s*(?P<c>[-−]?[$€£]?\d[\d,]*(?:\.\d+)?)\s*(?P<pct>%)?")
_EXPRESSION = re.compile(r"[-−–(]*\s*[$€£]?\s?\d[\d,.]*%?\)*(?:\s*[-−–+×x*/÷]\s*\(*\s*[$€£]?\s?\d[\d,.]*%?\)*)+\s*$")
_EARLY_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|may|jun)[a-z]*\.?\s+\d", re.IGNORECASE)
_DAY = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b,?", re.IGNORECASE)
_UNITS_LINE = re.compile(r"(?:\(|\bin)\s*(?:[$€£]\s*|u\.?s\.?\s*)?(?:thousands|millions|billions)\b", re.IGNORECASE)
_UNHEADED = re.compile(r"\s*(?:column\s+[A-Z]{0,3}\d*)?\s*", re.IGNORECASE)  # "", "column 3", "column B"
_HEADER_TOKEN = re.compile(r"(?:19|20)\d\d|fiscal|fy|q[1-4]|[1-4]q|h[12]|change|variance|increase|decrease",
                           re.IGNORECASE)
_CHANGE_COLUMN = re.compile(r"%|\bchange\b|\bvariance\b|\bincrease\b|\bdecrease\b", re.IGNORECASE)
_OPERATOR = re.compile(r"[-−–+×x*/÷]")


@dataclass(frozen=True)
class Figure:
    """A number as written: its value (its own scale word applied), the digits after its point, whether it is
    a percentage, and where it stands in the text."""

    raw: str
    value: float
    decimals: int
    percent: bool = False
    magnitude: float = 1.0  # the scale word written with it ("2.1 billion": 1e9), for its rounding unit
    start: int = 0
    end: int = 0

    @property
    def year(self) -> bool:
        """A plain four-digit year (1900-2100): grounded like any figure, but never an operand."""
        return self.decimals == 0 and not self.percent and self.magnitude == 1.0 and 1900 <= abs(self.value) <= \
            2100 and "," not in self.raw and not self.raw.lstrip("-+−–").startswith(("$", "€", "£", "¥"))

    @property
    def shown(self) -> str:
        """The figure as a message names it: a sign set apart from its digits is the claim's operator, not the
        figure's ("12.5 + 99.1": "99.1")."""
        return re.sub(r"^[-+−–]\s+", "", self.raw)

    @property
    def unit(self) -> float:
        """Half of what its last written digit is worth: the rounding tolerance of the figure as written."""
        return 0.5 * 10 ** -self.decimals * self.magnitude * 1.0001


def figures(text: str) -> list[Figure]:
    """The quantities of `text` (citation markers, a document's own bracketed references and references to its
    parts left out), number words included, in order."""
    text = CITATION.sub(lambda m: " " * len(m.group(0)), CITE.sub(lambda m: " " * len(m.group(0)), text))
    out = []
    for m in _FIGURE.finditer(text):
        if m.group("tail") or _REFERENCE.search(text[max(0, m.start() - 14):m.start()]):
            continue
        digits = m.group("num")
        magnitude = _SCALE_WORDS.get((m.group("scale") or "").lower(), 1.0)
        value = float(digits.replace(",", "")) * magnitude
        if m.group("sign") in ("-", "−", "–") and not text[max(0, m.start() - 1):m.start()].strip():
            value = -value
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        out.append(Figure(m.group(0).strip(), value, decimals, bool(m.group("pct")), magnitude, m.start(), m.end()))
    for m in _WORD_NUMBER.finditer(text):
        out.append(Figure(m.group(0), float(_WORDS[m.group(1).lower()]), 0, start=m.start(), end=m.end()))
    return sorted(out, key=lambda f: f.start)


def stated_scales(text: str) -> set[float]:
    """The scales a passage states for its figures ("(In millions, except per share data)" -> {1e6})."""
    out = set()
    for m in _STATED_SCALE.finditer(text):
        word = m.group(1).lower()
        out.add(next(f for name, f in _SCALE_WORDS.items() if len(name) > 2 and word.startswith(name)))
    return out


@dataclass(frozen=True)
class Stated:
    """One value a passage states, the periods it is stated for (its table column's header, its sentence) and,
    in a table's row, that row's label ("" in running text)."""

    value: float
    periods: frozenset[str] = frozenset()
    row: str = ""


@dataclass(frozen=True)
class Sources:
    """What a claim's figures may be grounded in: each figure of the passages as written, and also at the scale
    its own table states (a header or title line above it: "(In millions)"); a figure of running text is
    rescaled only by a scale stated in its own line."""

    stated: tuple[Stated, ...]

    @classmethod
    def of(cls, texts: Iterable[str], places: Sequence[object] | None = None) -> Sources:
        """`places[i]` is where texts[i] is (its document and page, sheet or slide): a flattened row whose
        passage prints no years line above it takes the years line of another passage of its place, when the
        place prints one only; the rows of a passage that prints no units line take its place's units line the
        same way (a statement cut into chunks states "(In millions)" once, above its first rows)."""
        texts = list(texts)
        shared: dict[object, set[tuple]] = {}
        units: dict[object, set[frozenset[float]]] = {}
        if places is not None:
            for text, place in zip(texts, places, strict=True):
                if place is not None:
                    shared.setdefault(place, set()).update(_years_lines(text))
                    units.setdefault(place, set()).update(_units_lines(text))
        out: list[Stated] = []
        for i, text in enumerate(texts):
            heads = shared.get(places[i]) if places is not None else None
            scales = units.get(places[i]) if places is not None else None
            out.extend(_stated(text, next(iter(heads)) if heads and len(heads) == 1 else None,
                               set(next(iter(scales))) if scales and len(scales) == 1 else set()))
        return cls(tuple(dict.fromkeys(out)))

    def state(self, figure: Figure) -> bool:
        """Whether a source states `figure`'s value, to the figure's own rounding."""
        return any(abs(abs(figure.value) - s.value) <= figure.unit for s in self.stated)

    def periods(self, figure: Figure) -> list[frozenset[str]]:
        """The periods of every place that states `figure` (an empty set: a place that names none)."""
        return [s.periods for s in self.stated if abs(abs(figure.value) - s.value) <= figure.unit]

    def rows(self, figure: Figure) -> list[str]:
        """The row label of every place that states `figure` ("": running text, a header)."""
        return [s.row for s in self.stated if abs(abs(figure.value) - s.value) <= figure.unit]

    def labels(self) -> set[str]:
        """The labels of the table rows that state a figure."""
        return {s.row for s in self.stated if s.row}


def _stated(text: str, page_years: tuple | None = None, page_scales: set[float] | None = None) -> list[Stated]:
    """Every figure of one passage with the scales and periods its place gives it. `page_years`: the years line
    of its page, when it prints none of its own (see _years_line); `page_scales`: the scale its page's units
    line states, for the rows of a passage that prints none."""
    out: list[Stated] = []
    lent = set() if _units_lines(text) else set(page_scales or ())
    lines = text.splitlines()
    above: list[str] = []  # the lines of running text read so far: a table's title and units line
    header: list[str] | None = None
    years = page_years  # the years line above, which names a flattened row's columns
    years_scales: set[float] = set()
    for line in lines:
        if not (line.lstrip().startswith("|") or " | " in line):
            header = None
            if (heads := _years_line(line)) is not None:
                years, years_scales = heads, stated_scales(" ".join([*above[-3:], line]))
                above.append(line)
                out.extend(_with_scales(line, stated_scales(line), frozenset()))
                continue
            # A row of a table flattened into text ("Net sales 34,229 35,355") takes the units line above it,
            # and the years line above names its figures' columns in order.
            row = years is not None and _row_of_figures(line) or tabular(line)
            scales = stated_scales(" ".join([*above[-3:], line])) if row else stated_scales(line)
            if row and years is not None:
                scales |= years_scales  # the units line above the years line heads every row under it
            if row:
                scales |= lent
            above.append(line)
            if row:
                out.extend(_row_by_years(line, scales, years, _row_label(line[:figures(line)[0].start])
                                         if figures(line) else ""))
            else:
                out.extend(_with_scales(line, scales, _years(line)))
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            continue  # the separator under a header
        if header is None:
            header = cells
            scales = stated_scales(" ".join(above[-3:]) + " " + line)
            header_scales = scales | lent
            column_periods = _header_periods(header, years)
            out.extend(_with_scales(line, scales, frozenset()))
            continue
        label = _row_label(cells[0])
        for k, cell in enumerate(cells):
            out.extend(_with_scales(cell, header_scales, column_periods[k] if k < len(column_periods) else frozenset(),
                                    label))
    return out


def _header_periods(header: list[str], years: tuple[tuple[frozenset[str], ...], bool] | None
                    ) -> list[frozenset[str]]:
    """Each column's period: the one its header names; when no header names one (the table pass found the
    columns, not their header: "column 2", "column 3"), the years line above or of its page names the columns
    after the label column by position, if it has as many (or one fewer, with a change column after the years)."""
    periods = [_column_period(h) for h in header]
    if years is None or any(not _UNHEADED.fullmatch(h) for h in header[1:]):
        return periods  # a column with a header of its own is what its header says, period or not
    columns, change = years
    values = len(header) - 1
    if values == len(columns) or change and values == len(columns) + 1:
        return [frozenset(), *columns, *([frozenset()] * (values - len(columns)))]
    return periods


def _units_lines(text: str) -> set[frozenset[float]]:
    """The scales the units lines of a passage state ("(In millions, except per share data)", "in thousands of
    dollars"): a plural scale word in parentheses or after "in", on a line of at most 12 words."""
    return {frozenset(stated_scales(line)) for line in text.splitlines()
            if len(line.split()) <= 12 and _UNITS_LINE.search(line)}


def _years_lines(text: str) -> set[tuple]:
    return {heads for line in text.splitlines() if (heads := _years_line(line)) is not None}


def _years_line(line: str) -> tuple[tuple[frozenset[str], ...], bool] | None:
    """A flattened table's header of years ("2022 2021 2020", "Years Ended December 31, 2023 2022 % Change",
    "Fiscal 2022 Fiscal 2021", "January 28, 2023 January 29, 2022"): each column's period in order (a date in the
    first half of a year names the fiscal year before too, as in _column_period), and whether a change column
    follows the years. None for any other line: a line stating a figure that is not a year or a day of a date."""
    if line.lstrip().startswith("|") or " | " in line:
        return None
    undated = re.sub(r"\b(FY|Q[1-4])(?=(?:19|20)\d\d\b)", r"\1 ", _DAY.sub(" ", line),
                     flags=re.IGNORECASE).replace("%", " % ")  # "2022 %" is a year, then a change column
    found = [f for f in figures(undated) if f.raw[:1].isdigit()]  # not "Three Months"
    if len(found) < 2 or not all(f.year for f in found) or len(undated[:found[0].start].split()) > 8:
        return None
    if any(not _HEADER_TOKEN.fullmatch(t) for t in re.findall(r"[A-Za-z]+\d?|\d+[A-Za-z]?", undated[found[0].start:])):
        return None  # after its first year, a header holds only years and column words: not "1998 and listed in"
    early = bool(_EARLY_MONTH.search(line))
    periods = tuple(frozenset({f.raw, str(int(f.raw) - 1)}) if early else frozenset({f.raw}) for f in found)
    return periods, bool(_CHANGE_COLUMN.search(undated[found[-1].end:]))


def _row_of_figures(line: str) -> bool:
    """A label followed only by figures ("Net sales $ 34,229 $ 35,355 (3)%"): a row of a flattened table."""
    found = figures(line)
    if len(found) < 2 or line.rstrip().endswith("."):
        return False
    return not re.sub(r"[\s$€£¥()%,.*—–-]+", "", _FIGURE.sub(" ", line[found[0].start:]))


def _row_by_years(line: str, scales: set[float], years: tuple[tuple[frozenset[str], ...], bool] | None,
                  label: str = "") -> list[Stated]:
    """A flattened row's figures, each with the period of its column when the years line above has as many
    columns as the row has figures (or one fewer, with a change column after the years): by position, never by
    a guess. Otherwise no period (what is stated is grounded; its period is not known)."""
    found = [f for f in figures(line) if not f.year]
    columns, change = years if years is not None else ((), False)
    if not columns or not (len(found) == len(columns) or change and len(found) == len(columns) + 1):
        return _with_scales(line, scales, frozenset(), label)
    out = []
    for k, f in enumerate(found):
        out.extend(_with_scales(f.raw, scales, columns[k] if k < len(columns) else frozenset(), label))
    out.extend(_with_scales(" ".join(f.raw for f in figures(line) if f.year), scales, frozenset(), label))
    return out


def _with_scales(text: str, scales: set[float], periods: frozenset[str], row: str = "") -> list[Stated]:
    """Each figure of `text` as written, its digits alone ("3.2" of "3.2 billion": the same quantity with its
    unit left out), and its value at each scale stated for it."""
    out = []
    for f in figures(text):
        out.append(Stated(abs(f.value), periods, row))
        if f.magnitude != 1.0:
            out.append(Stated(abs(f.value) / f.magnitude, periods, row))
        out.extend(Stated(abs(f.value) * s, periods, row) for s in scales if f.magnitude == 1.0)
    return out


def _row_label(text: str) -> str:
    """A table row's label as a claim would write it (casefolded, spaces collapsed, footnote marks and a
    trailing colon left out), or "" when it is no name: fewer than three letters ("Q1", "2022", a date)."""
    label = " ".join(re.sub(r"(?:\s*\((?:[a-z]|\d{1,2})\))+\s*$|[*:$€£¥\s]+$", "", text.strip()).split()).casefold()
    return label if sum(ch.isalpha() for ch in label) >= 3 else ""


def _column_period(header: str) -> frozenset[str]:
    """The years a column header names as its period ("2022", "Fiscal 2022"). A date in the first half of a year
    may close the fiscal year before ("January 28, 2023" closes a retailer's fiscal 2022), so it names both;
    "December 28, 2019" names 2019 only."""
    years = _years(header)
    early = _EARLY_MONTH.search(header)
    if early and len(years) == 1:
        year = next(iter(years))
        return years | {str(int(year) - 1)}
    return years


def _years(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", text))


def _grounds(sources: str | Sequence[str] | Sources, places: Sequence[object] | None) -> Sources:
    """`sources` as Sources: a claim's checks parse its passages once (Sources.of) and pass the result on."""
    if isinstance(sources, Sources):
        return sources
    return Sources.of([sources] if isinstance(sources, str) else sources, places)


def other_periods(claim: str, sources: str | Sequence[str] | Sources, years: Sequence[str],
                  places: Sequence[object] | None = None) -> list[tuple[str, str]]:
    """(figure, its period) for each figure of `claim` that its sources state only for a period other than the
    `years` the question asks about ("15,785" from the 2021 column for a question about 2022). A claim that
    names the other period itself says what it states, and is not caught. `places`: where each source is (see
    Sources.of)."""
    if not years:
        return []
    grounds = _grounds(sources, places)
    asked, named = set(years), _years(claim)
    out = []
    for f in figures(claim):
        places = grounds.periods(f)
        if f.year or not places or any(not p or p & asked for p in places):
            continue
        other = sorted(set().union(*places) - asked)
        if not set(other) & named:
            out.append((f.shown, other[0]))
    return out


def other_rows(claim: str, sources: str | Sequence[str] | Sources, places: Sequence[object] | None = None
               ) -> list[tuple[str, str, str]]:
    """(figure, the row that states it, the row the claim gives it to) for each figure of `claim` that the claim
    writes after the label of a row of its sources' tables (no other figure between them), which no row so
    labelled states and only other table rows do ("datsun 1200 was 60.0" where 60.0 is the Volkswagen's row).
    A figure also stated in running text, or written after no label, is not caught. `places`: see Sources.of."""
    grounds = _grounds(sources, places)
    labels = grounds.labels()
    if not labels:
        return []
    text = claim.casefold()
    named = [(m.start(), m.end(), label) for label in labels
             for m in re.finditer(rf"(?<!\w){re.escape(label)}(?!\w)", text)]
    found = figures(claim)
    said = _words_of(claim)  # a row the claim names in other forms ("casinos" for the row "Casino") is named
    out = []
    inside = [any(s <= g.start < e for s, e, _ in named) for g in found]  # "1200" of "datsun 1200"
    for k, f in enumerate(found):
        rows = grounds.rows(f)
        if f.year or inside[k] or not rows or "" in rows:
            continue
        before = max((g.end for g, held in zip(found[:k], inside[:k], strict=True) if not held), default=0)
        given = {label for s, e, label in named if before <= s and e <= f.start}
        if given and not given & set(rows) and not any(_words_of(row) <= said for row in rows):
            out.append((f.shown, rows[0], min(given, key=len)))
    return out


def _words_of(label: str) -> frozenset[str]:
    return frozenset(w for w in (stem(t) for t in re.findall(r"[^\W_]+", label.casefold())) if w and w not in STOPWORDS)


def unexplained(claim: str, sources: str | Sequence[str] | Sources, allowed: str = "",
                places: Sequence[object] | None = None) -> list[str]:
    """The figures of `claim` (as written) that neither its sources state nor a calculation it writes out or
    gives the operands of recomputes from figures they state. `allowed` (the question, the cited file's name)
    may be repeated without a source ("the top 3 ..."). `places`: where each source is (see Sources.of)."""
    grounds = _grounds(sources, places)
    given = Sources.of([allowed])
    found = figures(claim)
    explained = {i for i, f in enumerate(found) if grounds.state(f) or given.state(f)}
    explained |= _written_results(claim, found, explained)
    explained |= _operand_counts(claim, found)
    explained |= _implicit_results(found, explained)
    return [f.shown for i, f in enumerate(found) if i not in explained]


def _written_results(claim: str, found: list[Figure], explained: set[int]) -> set[int]:
    """Indexes of figures that are the results of right calculations written in the claim whose operands are
    all explained ("15,400 + 12,150 = 27,550")."""
    out: set[int] = set()
    for expression, value, result in calculations(claim):
        operands = [i for i, f in enumerate(found) if f.end <= result.start and f.start >= expression[0]]
        if operands and all(i in explained for i in operands) and _close(result, value):
            out |= {i for i, f in enumerate(found) if f.start < result.end and f.end > result.start}
    return out


def _operand_counts(claim: str, found: list[Figure]) -> set[int]:
    """Indexes of number words that count the operands of a calculation the claim writes ("the five regions sum
    to a + b + c + d + e = ...")."""
    counts = {len([f for f in found if expression[0] <= f.start and f.end <= result.start])
              for expression, _, result in calculations(claim)}
    return {i for i, f in enumerate(found) if not f.raw[:1].isdigit() and f.value in counts}


def _implicit_results(found: list[Figure], explained: set[int]) -> set[int]:
    """Indexes of unexplained figures equal to the difference, sum, ratio, share or change of two explained
    figures of the same claim, or to the sum of all of them ("grew 11.5% from 15,785 to 17,606")."""
    operands = [found[i] for i in sorted(explained) if not found[i].year][:MAX_IMPLICIT]
    out: set[int] = set()
    if not operands:
        return out
    for i, f in enumerate(found):
        if i in explained or f.year:
            continue
        candidates = [sum(abs(o.value) for o in operands)] if len(operands) > 2 else []
        for a, b in itertools.permutations([abs(o.value) for o in operands], 2):
            candidates += [a - b, a + b] + ([a / b, a / b * 100, (a - b) / b * 100] if b else [])
        if any(_close(f, c) for c in candidates):
            out.add(i)
    return out


def _close(figure: Figure, value: float) -> bool:
    """Whether `value` rounds to the figure as written (a percent may be written of a fraction: 0.049 = 4.9%)."""
    targets = (value, value * 100) if figure.percent else (value,)
    return any(abs(abs(figure.value) - abs(t)) <= figure.unit for t in targets)


def arithmetic_errors(claim: str) -> list[str]:
    """Each calculation written out in `claim` ("(2,117 - 2,018) / 2,018 = 4.9%") whose result is not what
    its numbers give, rounded as written; with the recomputed value."""
    errors = []
    for (_, text), value, result in calculations(claim):
        if not _close(result, value):
            shown = f"{value * 100:,.2f}%" if result.percent and abs(value) < 10 else _shown(value)
            errors.append(f"{text.strip()} = {result.raw} (recomputed: {shown})")
    return errors


def _shown(value: float) -> str:
    """A recomputed value as a person writes it: 65,255; 4.91; 0.0491."""
    if abs(value) >= 100:
        return f"{value:,.0f}" if abs(value - round(value)) < 0.005 else f"{value:,.2f}"
    return f"{value:.4g}"


def calculations(claim: str) -> list[tuple[tuple[int, str], float, Figure]]:
    """((start, expression), its value, the result figure) of every 'expression = result' written in `claim`."""
    text = CITE.sub(lambda m: " " * len(m.group(0)), claim)
    out = []
    for m in _RESULT.finditer(text):
        expression = _EXPRESSION.search(text[:m.start()])
        if not expression or not _OPERATOR.search(expression.group(0).strip()[1:]):
            continue
        value = _evaluate(expression.group(0))
        if value is None:
            continue
        raw = m.group("c") + (m.group("pct") or "")
        digits = m.group("c").lstrip("-−$€£").replace(",", "")
        result = Figure(raw, float(digits) * (-1 if m.group("c").startswith(("-", "−")) else 1),
                        len(digits.split(".")[1]) if "." in digits else 0, bool(m.group("pct")),
                        start=m.start("c"), end=m.end())
        out.append(((expression.start(), expression.group(0)), value, result))
    return out


def _evaluate(expression: str) -> float | None:
    """The value of a written calculation (numbers, + - × / and brackets), or None when it is not one."""
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
