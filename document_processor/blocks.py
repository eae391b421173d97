"""What a reader yields before chunking: blocks of text or tables, each with its exact location."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from document_processor.types import Location

Progress = Callable[[str, int, int], None]

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_TRAILING_SPACE = re.compile(r"[ \t\u00a0]+\n")
_BLANK_RUN = re.compile(r"\n{3,}")
_QUOTED = re.compile(r'"[^"]*"|\[[^\]]*\]|\\.')  # literal text, colours and escapes in a number format
_DECIMALS = re.compile(r"0\.(0+)")


@dataclass(frozen=True)
class Table:
    """A table as Markdown: `header` (header row + separator line) is repeated in every chunk of it.

    `row_locations`, when given, has one Location per row (spreadsheet cell ranges), so a chunk of rows
    can name exactly the cells it covers; `column_refs` names each column's sheet letter.
    """

    header: str
    rows: tuple[str, ...]
    row_locations: tuple[Location, ...] = ()
    column_refs: tuple[str, ...] = ()  # a sheet's column letters, one per column (for citing one cell)


@dataclass(frozen=True)
class Block:
    """A piece of a document at one location: plain text, or a table when `table` is set."""

    text: str
    location: Location
    heading_path: tuple[str, ...] = ()
    table: Table | None = None


@dataclass(frozen=True)
class Reading:
    """What a reader returns: the blocks in reading order and how the document counts its units."""

    blocks: tuple[Block, ...]
    unit_name: str
    units: int
    title: str = ""
    warnings: tuple[str, ...] = ()


def clean_text(text: str) -> str:
    """Text safe to index: no NULs or control characters, no lone surrogates, \\n line ends, no trailing spaces."""
    if not text:
        return ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    # pypdf can return lone surrogates from broken font maps; they would fail every UTF-8 encoder downstream.
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = _TRAILING_SPACE.sub("\n", text)
    return _BLANK_RUN.sub("\n\n", text).strip()


def one_line(text: str, limit: int = 200) -> str:
    """Collapse whitespace to single spaces and cut to `limit` characters (for reasons and cells)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def markdown_row(cells: Sequence[str]) -> str:
    """One Markdown table row; pipes inside cells are escaped and line breaks become spaces."""
    return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], row_locations=(), column_refs=()) -> Table:
    """A Table from a header row and data rows, all padded to the same width."""
    width = max([len(header), *(len(r) for r in rows)])

    def padded(cells: Sequence[str]) -> list[str]:
        return list(cells) + [""] * (width - len(cells))

    head = markdown_row(padded(header)) + "\n" + "|" + " --- |" * width
    return Table(head, tuple(markdown_row(padded(r)) for r in rows), tuple(row_locations), tuple(column_refs))


def markdown_cells(row: str) -> list[str]:
    """The cells of one row markdown_row wrote (escaped pipes restored)."""
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", body)]


def drop_empty_columns(rows: Sequence[Sequence[str]]) -> list[list[str]]:
    """Rows without the columns that are empty in every row (merged-cell padding, spacer columns)."""
    width = max((len(r) for r in rows), default=0)
    keep = [i for i in range(width) if any(i < len(r) and r[i] for r in rows)]
    return [[r[i] if i < len(r) else "" for i in keep] for r in rows]


def table_text(table: Table) -> str:
    """The whole table as Markdown."""
    return "\n".join((table.header, *table.rows))


def span(first: Location, last: Location) -> Location:
    """One Location covering first..last: a line range, a cell range, or else where it starts."""
    if first.lines is not None and last.lines is not None:
        return Location(lines=(first.lines[0], last.lines[1]))
    if first.sheet is not None and first.cells and last.cells and first.sheet == last.sheet:
        return Location(sheet=first.sheet, cells=f"{first.cells.split(':')[0]}:{last.cells.split(':')[-1]}")
    return first


def format_number(value: float | int, number_format: str = "") -> str:
    """A number as a person reads it in Excel: the cell format's decimals ("0.00" -> 1234.50), thousands
    separators ("#,##0" -> 1,234,567), currency ("$#,##0.00", "[$€-407]#,##0" -> $1,234.50, €1,235), a
    negative section's parentheses ("#,##0;(#,##0)" -> (1,234)) and percentages; otherwise 10 significant digits
    like Excel's General format (so 1.0000000002 and 0.30000000000000004 read 1 and 0.3), integers without
    '.0', never an exponent. Thousands separators are ',' and the decimal mark '.', whatever the locale."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    sections = (number_format or "").split(";")
    own_sign = value < 0 and len(sections) > 1  # the negative section writes the sign itself: "-", "(...)"
    section = sections[1] if own_sign else sections[0]
    symbol = _currency(section)
    pattern = _QUOTED.sub("", section)
    number = abs(value) if own_sign else value
    text = _digits(number, pattern)
    if re.search(r"[#0],[#0]", pattern):
        text = _grouped(text)
    if symbol:
        text = f"-{symbol}{text[1:]}" if text.startswith("-") else symbol + text
    if own_sign and text.strip("0.,%" + symbol):
        text = f"({text})" if "(" in pattern else f"-{text}"
    return text


def _digits(value: float | int, pattern: str) -> str:
    decimals = _DECIMALS.search(pattern)
    places = len(decimals.group(1)) if decimals else None
    if "%" in pattern:
        return f"{_round(value * 100, places or 0)}%"
    if places is not None or re.search(r"(^|[^.\d])0($|[^.\d])", pattern):
        return _round(value, places or 0)
    if isinstance(value, int):
        return str(value)
    digits = max(10, len(str(int(abs(value)))))  # never round away digits before the point
    text = format(Decimal(f"{value:.{digits}g}"), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _grouped(text: str) -> str:
    """'-1234567.5' -> '-1,234,567.5'."""
    sign, rest = ("-", text[1:]) if text.startswith("-") else ("", text)
    whole, dot, fraction = rest.partition(".")
    return f"{sign}{int(whole):,}{dot}{fraction}" if whole.isdigit() else text


def _currency(section: str) -> str:
    """The currency symbol a format section shows: [$€-407], "$" or a bare $ € £ ¥; '' for none."""
    tagged = re.search(r"\[\$([^\]\-]*)", section)
    if tagged and tagged.group(1):
        return tagged.group(1)
    quoted = re.search(r'"([^"]*)"', section)
    if quoted and quoted.group(1).strip() in _SYMBOLS:
        return quoted.group(1).strip()
    bare = re.search(r"(?<!\\)[$€£¥]", _QUOTED.sub("", section))
    return bare.group(0) if bare else ""


_SYMBOLS = ("$", "€", "£", "¥", "US$", "CHF", "kr")


def _round(value: float, places: int) -> str:
    """Half away from zero, as Excel displays (Python's own format rounds half to even)."""
    quantum = Decimal(1).scaleb(-places)
    text = str(Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP))
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def format_value(value, number_format: str = "") -> str:
    """A cell value as text: ISO dates (no 00:00:00), readable numbers, TRUE/FALSE, trimmed strings."""
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.second else "minutes")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, (int, float)):
        return format_number(value, number_format)
    return " ".join(str(value).split())
