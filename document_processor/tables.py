"""Every table the readers found, as data: column names, rows of cells as shown, and where each row is.

Readers hand tables to chunking as Markdown (blocks.Table): a sheet, a CSV, a statement found by the PDF table
pass, a Word or PowerPoint table, a chart's data. The same tables become DataTables here, so that one source of
truth feeds both the passages and the table store; a cell's text is exactly what its passage shows.

A header may take more than one row: a row of words above the first row of figures (a super-header such as
"Single | | Married" over "2006 | 2007 | 2006 | 2007") is joined to the row below it, a merged cell's words
carried over the columns it spans.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from document_processor.blocks import Block, Reading, markdown_cells, table_text
from document_processor.limits import Limits
from document_processor.types import DataTable, Location

MAX_HEADER_ROWS = 3  # rows of words above the figures that may still be header
TEXT_SHARE = 0.9  # of the passage limit, what long tables may fill as text (the rest of a document needs room too)
MAX_TEXT_ROWS = 50_000  # rows of one table searchable as text (embedding more takes minutes); all are queryable
_FIGURE = re.compile(r"^\(?[-–—+]?\s*[$€£¥]?\s*\(?\d[\d,]*(\.\d+)?\s*\)?\s*(%|x|pts|bps)?\)?$", re.IGNORECASE)
_YEAR = re.compile(r"^(?:fy|fiscal\s+)?(?:19|20)\d\d$", re.IGNORECASE)
_UNITS = re.compile(r"\b(in\s+)?(millions?|thousands?|billions?|except\s+(per[- ]share|share|where)|"
                    r"per\s+share|percent(age)?s?|%|usd|eur|gbp|dollars?)\b", re.IGNORECASE)


def data_tables(blocks: Sequence[Block]) -> tuple[DataTable, ...]:
    """The DataTables of a document's blocks, in reading order, each named uniquely within the document."""
    out: list[DataTable] = []
    counts: dict[str, int] = {}
    for i, block in enumerate(blocks):
        if block.table is None or not block.table.rows:
            continue
        table = _data_table(block, counts, _caption(blocks, i))
        if table is not None:
            out.append(table)
    return tuple(out)


MAX_CAPTION_PARAGRAPHS = 2
MAX_CAPTION_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)%])[.!?](?=\s+[A-Z])")


def _caption(blocks: Sequence[Block], at: int) -> str:
    """What a Word document says just above a table, under the same heading ("Siobhan" / "Siobhan is single and
    employed as a shop assistant, earning €24,960 per annum. ..."): the paragraphs between it and the heading or
    table before it, the nearest two, each to its first sentence. Word documents often introduce a table so, not
    with a heading; the caption tells one of several tables of the same shape from another. Nothing for other
    formats, whose tables have their headings and titles."""
    if blocks[at].location.paragraph is None:
        return ""
    parts: list[str] = []
    for block in reversed(blocks[:at]):
        if block.table is not None or block.heading_path != blocks[at].heading_path \
                or block.location.paragraph is None or len(parts) == MAX_CAPTION_PARAGRAPHS:
            break
        text = " ".join(block.text.split())
        if block.heading_path and text[:60] == block.heading_path[-1][:60]:
            break  # the heading itself
        first = _SENTENCE_END.split(text, maxsplit=1)[0]
        parts.insert(0, first if len(first) <= MAX_CAPTION_CHARS else first[:MAX_CAPTION_CHARS].rsplit(" ", 1)[0])
    return ": ".join(p for p in parts if p)


def _data_table(block: Block, counts: dict[str, int], caption: str = "") -> DataTable | None:
    header = markdown_cells(block.table.header.split("\n")[0])
    rows = [markdown_cells(r) for r in block.table.rows]
    width = max(len(header), *(len(r) for r in rows))
    header, rows = _pad(header, width), [_pad(r, width) for r in rows]
    locations = list(block.table.row_locations) or [block.location] * len(rows)
    refs = tuple(block.table.column_refs)
    if _header_is_data(header, rows):
        # a sheet without a header ("2013-01-01 | 1" above "2013-02-01 | 2"): its first row is data, and its
        # columns are named by their letters (or positions)
        rows, locations = [header, *rows], [_row_above(locations[0]) if locations else block.location, *locations]
        header = [f"column {refs[i]}" if i < len(refs) and refs[i] else f"column {i + 1}" for i in range(width)]
    extra = _header_rows(rows)
    if extra:
        header = _joined_header([header, *rows[:extra]])
        rows, locations = rows[extra:], locations[extra:]
    if rows and _numbers_the_columns(rows[0], rows[1:]):
        rows, locations = rows[1:], locations[1:]
    marks = [i for i, row in enumerate(rows) if _footnote_marks_only(row)]
    if marks:
        rows = [row for i, row in enumerate(rows) if i not in marks]
        locations = [at for i, at in enumerate(locations) if i not in marks]
    if not rows:
        return None
    header = _labelled_groups(header)
    place = _place(block.location)
    counts[place] = counts.get(place, 0) + 1
    name = block.location.sheet if block.location.sheet is not None and counts[place] == 1 else \
        f"{place} table {counts[place]}"
    title = " > ".join((*block.heading_path, caption) if caption else block.heading_path)
    note = " ".join(c for c in header[:1] if _UNITS.search(c))
    return DataTable(name=name, title=title, columns=_column_names(header), rows=tuple(tuple(r) for r in rows),
                     location=block.location, row_locations=tuple(locations),
                     column_refs=refs, note=note)


_MARK_CELL = re.compile(r"^(?:\((?:\d{1,2}|[a-z])\)|[*†‡§]+)$", re.IGNORECASE)


def _footnote_marks_only(row: list[str]) -> bool:
    """A row without a label whose cells hold nothing but footnote marks ("", "(3)", ""): a mark a statement set
    on a line of its own, not a figure ("(3)" in a labelled row is still minus three)."""
    filled = [c.strip() for c in row[1:] if c.strip()]
    return not row[0].strip() and bool(filled) and all(_MARK_CELL.match(c) for c in filled)


def _pad(cells: list[str], width: int) -> list[str]:
    return cells + [""] * (width - len(cells))


def _header_rows(rows: list[list[str]]) -> int:
    """How many leading rows are more header: rows of words in the columns (no figure after the first cell)
    above rows that carry figures. A row with only its first cell filled is a section label, not a header."""
    count = 0
    while (count < MAX_HEADER_ROWS and count + 1 < len(rows) and not _has_figures(rows[count])
           and any(rows[count][1:])):
        count += 1
    return count if any(_has_figures(r) for r in rows[count:]) else 0


_DATE_CELL = re.compile(r"^(?:\d{4}[-/.]\d{1,2}(?:[-/.]\d{1,2})?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?:[ T]\d{1,2}:\d\d(?::\d\d)?)?$")
_SAMPLE_ROWS = 50


def _figure(cell: str) -> bool:
    return bool(_FIGURE.match(cell.replace(" ", "")) or _DATE_CELL.match(cell.strip()))


def _header_is_data(header: list[str], rows: list[list[str]]) -> bool:
    """Whether the row read as the header is the first row of data: it holds a figure or a date that is not a
    year, and each of its cells is of its column's kind (a figure over figures, a word over words). A year
    over figures heads a period column ("2022" over revenue), so it is a header; "2013-01-01" over dates, "0"
    over numbers and "A" over letters are data."""
    body = rows[:_SAMPLE_ROWS]
    figured = False
    for i, cell in enumerate(header):
        cell = cell.strip()
        if not cell:
            continue
        below = [r[i].strip() for r in body if i < len(r) and r[i].strip()]
        if not below:
            return False
        figures = sum(_figure(c) for c in below) >= 0.8 * len(below)
        if _YEAR.match(cell) and not all(_YEAR.match(c) for c in below):
            return False  # a period heading its column
        if _figure(cell):
            if not figures:
                return False
            figured = True
        elif figures:
            return False  # a word over figures: a column name
    return figured


def _row_above(location: Location) -> Location:
    """The location of the sheet row above `location`'s ("B2:D2" -> "B1:D1"); the same location elsewhere."""
    m = re.fullmatch(r"([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?", location.cells or "")
    if location.sheet is None or m is None or int(m.group(2)) < 2:
        return location
    first, last = int(m.group(2)) - 1, int(m.group(4) or m.group(2)) - 1
    cells = f"{m.group(1)}{first}" + (f":{m.group(3)}{last}" if m.group(3) else "")
    return replace(location, cells=cells)


def _numbers_the_columns(row: list[str], below: list[list[str]]) -> bool:
    """Whether a row under the header only numbers the columns ("1 | 2 | 3 | 4 | 5", as official forms print
    below a header so the text can refer to "column 4"): its filled cells, three or more, count up from 1 by one,
    and one of them stands over a column of words, where no row of data would put a number (a table of figures
    whose first row is 1, 2, 3 keeps it)."""
    filled = [c.strip().rstrip(".") for c in row if c.strip()]
    if len(filled) < 3 or len(filled) < len(row) - 1 or filled != [str(n) for n in range(1, len(filled) + 1)]:
        return False
    for i in range(len(row)):
        column = [r[i].strip() for r in below[:_SAMPLE_ROWS] if i < len(r) and r[i].strip()]
        if column and sum(_figure(c) for c in column) < 0.2 * len(column):
            return True
    return False


def _has_figures(row: list[str]) -> bool:
    """Whether a row states figures after its first cell; years and bare currency signs head columns."""
    return any(_FIGURE.match(c.replace(" ", "")) and not _YEAR.match(c) for c in row[1:] if c)


def _joined_header(rows: list[list[str]]) -> list[str]:
    """Header rows joined column by column. A label over a group of columns names the whole group: the groups
    are read off the last header row, where a repeated cell ("2022 2021 2020 | 2022 2021 2020") starts the next
    one, so a label the PDF printed centred over its group ("Net Revenue" over 2021) still names 2022 and 2020.
    Where the groups do not say (no repeat, or two labels in one group), a cell left empty under a merged one
    takes its word from the left."""
    joined = [""] * len(rows[0])
    groups = _groups(rows[-1])
    for row in rows:
        spread = row is not rows[-1] and _spread(row, groups)
        carried = ""
        for i, cell in enumerate(row):
            carried = spread[i] if spread else cell or (carried if i and row is not rows[-1] else "")
            if carried and carried not in joined[i].split(" "):
                joined[i] = f"{joined[i]} {carried}".strip()
    return joined


def _groups(last: list[str]) -> list[list[int]]:
    """The columns after the first in runs that each start where the last header row repeats a cell of the run
    before ("2022 2021 2020 2022 2021 2020": two runs of three); one run when nothing repeats."""
    groups: list[list[int]] = []
    seen: set[str] = set()
    for i, cell in enumerate(last[1:], start=1):
        key = _group_key(cell)
        if not groups or (key and key in seen):
            groups.append([])
            seen = set()
        groups[-1].append(i)
        if key:
            seen.add(key)
    return groups


_FOOTNOTE = re.compile(r"\s*(?:\([a-z0-9]{1,2}\)|\*+|[†‡§])", re.IGNORECASE)


def _group_key(cell: str) -> str:
    """A last-row header cell as the groups compare it: footnote marks left out ("2022(a)" repeats "2022")."""
    return " ".join(_FOOTNOTE.sub(" ", cell).split()).lower()


def _spread(row: list[str], groups: list[list[int]]) -> list[str] | None:
    """`row`'s labels spread over their groups, when there are several groups and each holds at most one label
    (and one at least); None otherwise."""
    if len(groups) < 2:
        return None
    out = [row[0]] + [""] * (len(row) - 1)
    labelled = 0
    for group in groups:
        labels = [row[i] for i in group if row[i].strip()]
        if len(labels) > 1:
            return None
        if labels:
            labelled += 1
            for i in group:
                out[i] = labels[0]
    return out if labelled else None


_HEADER_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def _labelled_groups(header: list[str]) -> list[str]:
    """A header whose groups of year columns carry their label on one column only ("2021 | Net Revenue 2020 |
    2019 | 2021 | Operating Profit 2020 | 2019": the PDF printed each label over the middle year, and the table
    pass read it into that cell): the label given to every bare year of its group. Groups start where a year
    repeats; a group of fewer than three, with two labels, none, or one at its end, is left as it is."""
    groups: list[list[int]] = []
    seen: set[str] = set()
    for i, cell in enumerate(header[1:], start=1):
        years = _HEADER_YEAR.findall(cell)
        key = years[-1] if len(years) == 1 else None
        if not groups or key is None or key in seen:
            groups.append([])
            seen = set()
        groups[-1].append(i)
        if key is not None:
            seen.add(key)
    out = list(header)
    for group in groups:
        rests = {i: " ".join(_FOOTNOTE.sub(" ", _HEADER_YEAR.sub(" ", header[i])).split()) for i in group}
        labels = {r for r in rests.values() if r}
        inner = [i for i in group[1:-1] if rests[i]]
        if len(group) < 3 or len(labels) != 1 or len(inner) != 1 or rests[group[0]] or rests[group[-1]]:
            continue  # a label at one end ("2021 Forecast") is that column's own, not its group's
        (label,) = labels
        for i in group:
            if not rests[i]:
                out[i] = f"{label} {header[i].strip()}"
    return out


def _column_names(header: list[str]) -> tuple[str, ...]:
    """Header cells as column names: empty ones named by position, repeats numbered."""
    names: list[str] = []
    for i, cell in enumerate(header):
        name = " ".join(cell.split()) or ("label" if i == 0 else f"column {i + 1}")
        base, n = name, 2
        while name in names:
            name, n = f"{base} ({n})", n + 1
        names.append(name)
    return tuple(names)


def _place(location: Location) -> str:
    """Where a table sits, for its name: 'p. 47', 'slide 3', '¶ 21', the sheet's name."""
    if location.sheet is not None:
        return location.sheet
    return location.label() or "table"


def searchable_part(reading: Reading, limits: Limits, share: float = 1.0) -> Reading:
    """The reading with its longest tables cut to the rows that fit `share` of the passage limit, and a warning
    naming each: a CSV of a million rows is searched by its first rows, and queried whole as a table
    (data_tables). The reading itself when nothing needs cutting."""
    text_chars = sum(len(b.text) for b in reading.blocks if b.table is None)
    budget = limits.max_chunks * limits.chunk_chars * TEXT_SHARE * share - text_chars
    rows = [(i, len(row)) for i, b in enumerate(reading.blocks) if b.table is not None for row in b.table.rows]
    longest = max((len(b.table.rows) for b in reading.blocks if b.table is not None), default=0)
    if (budget <= 0 or sum(n for _, n in rows) <= budget) and longest <= MAX_TEXT_ROWS:
        return reading
    blocks, warnings, left = list(reading.blocks), list(reading.warnings), budget
    for i, block in enumerate(blocks):
        if block.table is None:
            continue
        kept, used = 0, 0
        for row in block.table.rows:
            if used + len(row) > max(left, 0) or kept >= MAX_TEXT_ROWS:
                break
            used += len(row)
            kept += 1
        left -= used
        if kept < len(block.table.rows):
            table = replace(block.table, rows=block.table.rows[:kept],
                            row_locations=block.table.row_locations[:kept])
            blocks[i] = replace(block, text=table_text(table), table=table)
            where = block.location.sheet or block.location.label() or "a table"
            warnings.append(f"{where}: all {len(block.table.rows):,} rows can be queried as a table; only the first "
                            f"{kept:,} can be searched as text (the passage limit is {limits.max_chunks:,})")
    return replace(reading, blocks=tuple(blocks), warnings=tuple(warnings))
