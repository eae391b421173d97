"""Numbers as documents write them, read as values: "1,234", "(56)", "$ 4,321", "12%", "—", "39 921 700",
and in a column written with decimal commas "4068816,55", "3 449,18", "1.234,50 €"; and the scale a table states
for its figures ("in millions", "(Dollars in thousands)").

A value is the number as shown (12% is 12, in a column whose unit is "%"); the scale is kept beside it, never
multiplied in, so a figure is compared with a claim exactly as the document printed it.
"""

from __future__ import annotations

import re

_NUMBER = re.compile(
    r"^(?P<open>\()?\s*(?P<sign>[-–—−+])?\s*(?P<cur>US\$|[$€£¥])?\s*(?P<open2>\()?\s*"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s*"
    r"(?P<close>\))?\s*(?P<unit>%|x|pts|bps|[kKmMbB]n?)?\s*(?P<close2>\))?\s*(?P<cur2>[$€£¥₽]|руб\.?|р\.)?[*†‡]?$")
# the digits of a figure written with a decimal comma: "4068816,55", "3 449,18", "1.234,50", "12,5"
_COMMA_DIGITS = re.compile(r"\d{1,3}(?:[ .]\d{3})+(?:,\d+)?|\d+(?:,\d+)?")
# a cell only a decimal comma explains: a comma followed by other than three digits, or groups of three after a
# dot or a space before a comma ("4068816,55", "3 449,18", "1.234,50")
_DECIMAL_COMMA = re.compile(r"^[^\d]*(?:\d+,(?:\d{1,2}|\d{4,})|\d{1,3}(?:[ .]\d{3})+,\d+)\D*$")
# a cell only a decimal point explains: "1,234.5", "12.25"
_DECIMAL_POINT = re.compile(r"\d,\d{3}\.\d|^[^\d,]*\d+\.(?:\d{1,2}|\d{4,})\D*$")
_EMPTY = frozenset({"", "-", "–", "—", "$—", "$-", "$–", "—%", "n/a", "N/A", "NM", "nm", "*", "nil"})
_SCALES = (("trillion", 1e12), ("billion", 1e9), ("million", 1e6), ("thousand", 1e3))
_SCALE_WORDS = re.compile(r"\b(?:in\s+|\(\s*)?(?:[$€£]|usd|eur|gbp|dollars?|euros?)?\s*(trillions?|billions?|millions?|"
                          r"thousands?|000s)\b", re.IGNORECASE)
_SUFFIX = {"k": 1e3, "m": 1e6, "mn": 1e6, "b": 1e9, "bn": 1e9}


_SPACED = re.compile(r"\d{1,3}(?: \d{3})+(?:\.\d+)?")
_SPACED_CELL = re.compile(r"^\D{0,3}\d{1,3}(?: \d{3})+(?:\.\d+)?\D{0,6}$")
SPACED_SHARE = 0.5  # of a column's cells of four digits or more, those written "39 921 700" for it to be read so


def number(text: str, decimal_comma: bool = False, spaced: bool = False) -> float | None:
    """The value a cell shows, or None when it shows no single number ("1,234" -> 1234.0, "(56)" -> -56.0,
    "12%" -> 12.0, "$4.5bn" -> 4.5, "—" -> None, "1997" -> 1997.0, "12 months" -> None, "39 921 700" ->
    39921700.0 with `spaced`). With `decimal_comma` (the convention of the cell's column, see `decimal_comma`),
    "3 449,18" -> 3449.18 and "1.234,50 €" -> 1234.5; with `spaced` (see `space_grouped`), "39 921 700" ->
    39921700.0. Without either, "8 123" is no number: two figures a PDF's columns ran together."""
    cell = " ".join(str(text).split())
    if cell in _EMPTY:
        return None
    if spaced and not decimal_comma:
        cell = _SPACED.sub(lambda m: m.group(0).replace(" ", ""), cell, count=1)
    if decimal_comma:
        digits = _COMMA_DIGITS.search(cell)
        if digits is None:
            return None
        written = digits.group(0)
        cell = f"{cell[:digits.start()]}{written.replace(' ', '').replace('.', '').replace(',', '.')}" \
               f"{cell[digits.end():]}"
    m = _NUMBER.match(cell)
    if m is None:
        return None
    negative = bool(m.group("sign") and m.group("sign") != "+") or bool(
        (m.group("open") or m.group("open2")) and (m.group("close") or m.group("close2")))
    value = float(m.group("digits").replace(",", ""))
    return -value if negative else value


def space_grouped(cells: list[str]) -> bool:
    """Whether a column writes its thousands with spaces ("39 921 700", "1 250.5"): at least half of its cells
    of four digits or more are written so."""
    filled = [" ".join(str(c).split()) for c in cells if c and str(c).strip()]
    large = [c for c in filled if len(re.sub(r"\D", "", c.split(".")[0])) >= 4]
    spaced = [c for c in large if _SPACED_CELL.match(c)]
    return bool(spaced) and len(spaced) >= SPACED_SHARE * len(large)


def decimal_comma(cells: list[str]) -> bool:
    """Whether a column writes its figures with a decimal comma: some cell can only be read that way
    ("4068816,55", "3 449,18", "1.234,50") and none only with a decimal point ("1,234.5", "12.25"). "1,234"
    alone is read as the thousands it means in English."""
    filled = [" ".join(str(c).split()) for c in cells if c and str(c).strip()]
    return any(_DECIMAL_COMMA.match(c) for c in filled) and not any(_DECIMAL_POINT.search(c) for c in filled)


def unit(text: str) -> str:
    """The unit a cell writes beside its number: "%", "$", "€", "£", "x" or ''."""
    cell = " ".join(str(text).split())
    m = _NUMBER.match(cell) or _NUMBER.match(_COMMA_DIGITS.sub("0", cell, count=1))
    if m is None:
        return ""
    if m.group("unit") in ("%", "x"):
        return m.group("unit")
    return "$" if m.group("cur") == "US$" else m.group("cur") or m.group("cur2") or ""


def scale(*texts: str) -> float:
    """The multiplier a title, note or header states for a table's figures (1e6 for "in millions"), 1 when
    none does; "except per share amounts" and the like leave the stated scale for the rest."""
    for text in texts:
        m = _SCALE_WORDS.search(text or "")
        if m:
            word = m.group(1).lower()
            if word == "000s":
                return 1e3
            return next(factor for name, factor in _SCALES if word.startswith(name))
    return 1.0


def scale_name(factor: float) -> str:
    """'millions' for 1e6; '' for 1."""
    return next((f"{name}s" for name, f in _SCALES if f == factor), "")


def suffix_scale(text: str) -> float:
    """The scale a figure's own suffix states ("4.5bn" -> 1e9, "300k" -> 1e3), 1 without one."""
    m = _NUMBER.match(" ".join(str(text).split()))
    if m is None or not m.group("unit") or m.group("unit") in ("%", "x", "pts", "bps"):
        return 1.0
    return _SUFFIX.get(m.group("unit").lower(), 1.0)


_DATE_FORMATS = ("%Y-%m-%d", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y/%m/%d",
                 "%Y/%m/%d %H:%M", "%Y/%m/%d %H:%M:%S", "%b %d %Y", "%B %d %Y", "%b %d, %Y", "%B %d, %Y",
                 "%d %b %Y", "%d %B %Y", "%m/%d/%Y", "%d.%m.%Y", "%b %Y", "%B %Y", "%Y-%m")
DATE_SHARE = 0.9  # a text column is a date column when this share of its filled cells read as dates in one format
_SAMPLE = 50


def iso_dates(cells: list[str]) -> list[str] | None:
    """A date column's cells written ISO ("Jan 1 2000" -> "2000-01-01", "2010/01/01 01:00" ->
    "2010-01-01 01:00"), so that a year or a month is one prefix whatever the document wrote; None when the
    cells are not dates in one format (a cell that does not read as one is kept as written)."""
    from datetime import datetime

    filled = [" ".join(c.split()) for c in cells if c and c.strip()]
    if not filled or not any(ch.isdigit() for ch in filled[0]) or number(filled[0]) is not None:
        return None
    sample = filled[:_SAMPLE]
    for fmt in _DATE_FORMATS:
        parsed = 0
        for cell in sample:
            try:
                datetime.strptime(cell, fmt)
                parsed += 1
            except ValueError:
                pass
        if parsed < DATE_SHARE * len(sample):
            continue
        timed, out, ok = "%H" in fmt, [], 0
        for cell in cells:
            text = " ".join(cell.split()) if cell else ""
            try:
                moment = datetime.strptime(text, fmt)
            except ValueError:
                out.append(cell)
                continue
            ok += 1
            out.append(moment.strftime("%Y-%m-%d %H:%M" if timed else "%Y-%m" if fmt in ("%b %Y", "%B %Y", "%Y-%m")
                                       else "%Y-%m-%d"))
        return out if ok >= DATE_SHARE * len(filled) else None
    return None
