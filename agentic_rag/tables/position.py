"""A question that points at a table by its shape, not its words: "the first table of tbl-cell-access.docx", "the
last row under Header1", "the middle cell", "row 3, column 2", "cell B7", "column C", "all the numbers in the
table". Office files and data files often hold tables whose rows have no labels and whose headers name nothing
("column 1", "Header1"): such a question can only be answered by counting rows and columns, and it says exactly
which ones, so the answer is right by construction or not given at all.

    where = position_of(question)          # Position(table=1, row=MIDDLE, column=MIDDLE), or None
    row = where.row_in(table)              # the table's own _row (1-based), or None
    column = where.column_in(table)        # 0-based into table.columns, or None

Rows are counted among a table's data rows (the header row is not one): "the last row" is its last data row, "the
second row" the second under the header. A sheet's "row 7" and "cell B7" are the sheet's own row 7 (as Excel
numbers it), found through the cells each row was read from; elsewhere "row 7" is the seventh data row. Columns
are counted from the left, the row labels' column included, as a reader counts them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advanced_retrieval.tables import TableInfo

MIDDLE = 0  # the middle row or column (of an odd count; an even count has none)

_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
             "fifth": 5, "5th": 5, "sixth": 6, "6th": 6, "seventh": 7, "7th": 7, "eighth": 8, "8th": 8,
             "ninth": 9, "9th": 9, "tenth": 10, "10th": 10, "last": -1, "final": -1, "penultimate": -2,
             "second-to-last": -2, "next-to-last": -2,
             "middle": MIDDLE, "centre": MIDDLE, "center": MIDDLE}
_EDGES = {"top": 1, "bottom": -1, "leftmost": 1, "left-most": 1, "rightmost": -1, "right-most": -1}
_ORD = (r"(?P<o>(?:second|next)[- ]to[- ]last|penultimate|first|second|third|fourth|fifth|sixth|seventh|eighth|"
        r"ninth|tenth|1st|2nd|3rd|[4-9]th|10th|last|final|middle|centre|center)")
_NUMBER = r"(?:no\.?\s*|number\s+|#\s*)?(?P<n>\d{1,5})\b"
_TABLE = re.compile(rf"\b{_ORD}\s+(?:data\s+)?table\b", re.IGNORECASE)
_ROW = re.compile(rf"\b(?:{_ORD}|(?P<e>top|bottom))\s+(?:data\s+)?(?:row|record)\b|\brow\s+{_NUMBER}", re.IGNORECASE)
_COLUMN = re.compile(rf"\b(?:{_ORD}|(?P<e>leftmost|left-most|rightmost|right-most))\s+column\b|"
                     rf"\bcolumn\s+{_NUMBER}", re.IGNORECASE)
_LETTER = re.compile(r"\bcolumn\s+(?P<l>[A-Z]{1,2})\b")  # a sheet's column letter, written as Excel writes it
_CELL = re.compile(rf"\b(?:{_ORD}|(?P<v>top|bottom)[- ](?P<h>left|right)(?:[- ]hand)?)(?:[- ]most)?\s+cell\b",
                   re.IGNORECASE)
_REF = re.compile(r"\bcell\s+(?P<l>[A-Za-z]{1,2})(?P<n>\d{1,6})\b")
# every figure of a table: "all the numbers in the first table", "every cell of the grid", "the values in the table"
_WHOLE = re.compile(r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?(?:numbers?|values?|figures?|cells?|entries)\s+"
                    r"(?:in|of|on)\s+(?:the|this|that)\s+(?:[\w-]+\s+){0,2}(?:table|grid|sheet|matrix)\b",
                    re.IGNORECASE)


@dataclass(frozen=True)
class Position:
    """Where in a table the question points. `table`, `row` and `column` are 1-based counts (negative from the
    end, MIDDLE for the middle one); `sheet_row` and `letter` a sheet's own row number and column letter;
    `whole`: every figure of the table."""

    table: int | None = None
    row: int | None = None
    column: int | None = None
    sheet_row: int | None = None
    letter: str = ""
    whole: bool = False

    @property
    def points_in(self) -> bool:
        """Whether it names a row, a column, a cell or the whole of a table (not only which table)."""
        return self.row is not None or self.column is not None or self.sheet_row is not None \
            or bool(self.letter) or self.whole

    def row_in(self, table: TableInfo) -> int | None:
        """The table's _row it names, or None (no row named, or none such: a middle of an even count, a row
        past the last, a sheet row the table does not hold)."""
        if self.sheet_row is not None:
            if table.location.sheet is None:
                return counted(self.sheet_row, table.n_rows)
            for row, where in enumerate(table.row_locations, start=1):
                digits = re.search(r"\d+", where.cells or "")
                if digits and int(digits.group(0)) == self.sheet_row:
                    return row
            return None
        return counted(self.row, table.n_rows) if self.row is not None else None

    def column_in(self, table: TableInfo) -> int | None:
        """The column it names (0-based into table.columns), or None."""
        if self.letter:
            return next((i for i, c in enumerate(table.columns) if c.ref.upper() == self.letter.upper()), None)
        if self.column is None:
            return None
        found = counted(self.column, len(table.columns))
        return found - 1 if found is not None else None


def counted(count: int | None, total: int) -> int | None:
    """A 1-based count among `total` (negative from the end, MIDDLE: the middle of an odd total), or None."""
    if count is None or total <= 0:
        return None
    if count == MIDDLE:
        return (total + 1) // 2 if total % 2 else None
    found = total + 1 + count if count < 0 else count
    return found if 1 <= found <= total else None


def _ordinal(m: re.Match) -> int | None:
    groups = m.groupdict()
    if groups.get("o"):
        return _ORDINALS[re.sub(r"[\s-]+", "-", groups["o"].lower())]
    if groups.get("e"):
        return _EDGES[groups["e"].lower()]
    if groups.get("n"):
        return int(groups["n"])
    return None


def position_of(question: str) -> Position | None:
    """Where in a table `question` points, or None when it names no table, row, column or cell by position."""
    table = row = column = sheet_row = None
    letter = ""
    m = _TABLE.search(question)
    if m:
        table = _ordinal(m)
    ref = _REF.search(question)
    if ref:
        letter, sheet_row = ref.group("l").upper(), int(ref.group("n"))
    cell = _CELL.search(question)
    if cell and not ref:
        if cell.group("v"):
            row = 1 if cell.group("v").lower() == "top" else -1
            column = 1 if cell.group("h").lower() == "left" else -1
        else:
            row = column = _ordinal(cell)
    m = _ROW.search(question)
    if m and row is None and sheet_row is None:
        row = _ordinal(m)
        if m.group("n"):  # "row 7": a sheet's own row 7 (a table elsewhere: its seventh data row)
            row, sheet_row = None, row
    m = _COLUMN.search(question)
    if m and column is None and not letter:
        column = _ordinal(m)
    m = _LETTER.search(question)
    if m and column is None and not letter:
        letter = m.group("l")
    whole = bool(_WHOLE.search(question)) and row is None and sheet_row is None and column is None and not letter
    found = Position(table, row, column, sheet_row, letter, whole)
    return found if found.points_in or table is not None else None


_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", 6: "sixth", 7: "seventh", 8: "eighth",
          9: "ninth", 10: "tenth", -1: "last", -2: "second-to-last", MIDDLE: "middle"}


def said(count: int | None, found: int, total: int, noun: str) -> str:
    """A row or column as the question counted it and where it is: "the last row (row 6 of 6)", "the middle
    column (column 2 of 3)", "row 4 of 9"."""
    head = f"{noun} {found} of {total}"
    word = _WORDS.get(count) if count is not None else None
    return f"the {word} {noun} ({head})" if word else head
