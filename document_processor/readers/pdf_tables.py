"""Tables on PDF pages, found from pdfium's character boxes, so a row reaches the index with its column headers.

A filing's statement reaches pdfium's text layer as "Operating income 6,539 7,369 7,161" with the years far
above it; a chunk cut from the middle of the page no longer says which figure is which year. This pass puts
each character on a line (vertical overlap), cuts a line into segments at gaps wider than about half its
height, and calls a run of lines a table when at least three carry figures (numbers, dashes) to the right of
a label and the figures' right edges line up in columns. The lines just above the first row that sit over
the columns are its header ("Years ended December 31" / "2023 2022"); above those, a units or period line
("(In millions)") heads the label column and the nearest short line names the table ("CONSOLIDATED STATEMENTS
OF OPERATIONS"). Everything else on the page keeps pdfium's own text, in its own order.

pdfplumber and others were measured against this on the FinanceBench filings (docs/pdf_tables.md): filings
draw tables without rules, so ruling-based finders miss them and text-based ones are slower for less.
Only pages whose text has many figures (`looks_tabular`) pay for the character boxes.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from statistics import median

import pypdfium2.raw as pdfium_c

MIN_FIGURE_LINES = 3  # lines of the page's text ending in figures before its character boxes are read
MIN_ROWS = 3
MAX_HEADER_LINES = 5
MAX_ABOVE_LINES = 6  # lines above the header searched for the title, the units and the period
SEGMENT_GAP = 0.55  # a gap wider than this many line heights starts a new segment (a new cell)
SPACE_GAP = 0.12  # a gap wider than this many line heights is a space between words
_NUMBER = re.compile(r"^\(?[-–—+]?\s*[$€£¥]?\s*\(?(\d[\d,]*(\.\d+)?|\.\d+)\s*\)?\s*(%|x|pts|bps)?\)?[*†‡]?$", re.I)
_DASHES = frozenset({"-", "–", "—", "$—", "$-", "$–", "—%", "n/a", "N/A", "NM", "nm", "*"})
_CURRENCY = frozenset({"$", "€", "£", "¥", "US$"})
_YEAR = re.compile(r"^(fiscal |fy)?(19|20)\d\d$", re.I)
_UNITS = re.compile(r"\b(millions?|thousands?|billions?|except (per[- ]share|share|where)|per share (data|amounts))\b", re.I)
_PERIOD = re.compile(r"\b((years?|months|quarters?|weeks|periods?) ended|as of|at (january|february|march|april|may|"
                     r"june|july|august|september|october|november|december))\b", re.I)
_TITLE = re.compile(r"\b(statements?|balance sheets?|schedule|summary|reconciliation|results|table \d+)\b", re.I)


@dataclass(frozen=True)
class PageTable:
    """One table: its title, header cells (label column first), rows of cells and the characters it covers.

    `own_header` is False when no header line was found above the rows (a statement continued from the
    previous page), so the reader may carry that page's header over.
    """

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    chars: frozenset[int]
    own_header: bool = True


@dataclass
class _Seg:
    text: str
    left: float
    right: float
    chars: list[int]
    anchor: float = 0.0  # right edge of the last digit: '(3.2)' and '33.9 %' align on it with '26.0'

    @property
    def figure(self) -> bool:
        return bool(_NUMBER.match(self.text)) or self.text in _DASHES


@dataclass
class _Line:
    top: float
    bottom: float
    segs: list[_Seg]

    @property
    def height(self) -> float:
        return max(self.top - self.bottom, 1.0)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segs)

    def figures(self) -> list[_Seg]:
        return [s for s in self.segs if s.figure]

    def is_row(self) -> bool:
        """A label followed by figures, or two figures or more that are not just a row of years."""
        figures = self.figures()
        if not figures or all(_YEAR.match(s.text) for s in figures):  # a row of years heads the columns
            return False
        if self.prose():
            return False
        return not self.segs[0].figure or len(figures) >= 2

    def prose(self) -> bool:
        """A line running through a column of text: a long label, or words where figures would be (the
        other column of a two-column paper read across)."""
        label = self.segs[0].text
        return (len(label.split()) > 14 and not _AMOUNT.search(label)) or any(len(s.text.split()) > 5
                                                                            for s in self.segs[1:])


def looks_tabular(text: str) -> bool:
    """Whether a page's text is worth the layout pass: pdfium writes a table row as one line ending in its
    figures ("Net sales $ 34,229 $ 35,355"); prose lines, references and page numbers end otherwise."""
    found = 0
    for line in text.splitlines():
        tokens = [t for t in line.split() if t not in _CURRENCY]
        if len(tokens) >= 2 and _is_figure(tokens[-1]) and (_is_figure(tokens[-2]) or not _YEAR.match(tokens[-1])):
            found += 1
            if found >= MIN_FIGURE_LINES:
                return True
    return False


def _is_figure(token: str) -> bool:
    return bool(_NUMBER.match(token)) or token in _DASHES


def find_tables(textpage) -> list[PageTable]:
    """The tables on a pdfium text page, top to bottom ([] when none)."""
    lines = _lines(_chars(textpage))
    tables = []
    for first, last in _regions(lines):
        table = _table(lines, first, last)
        if table is not None:
            tables.append(table)
    return tables


def page_parts(textpage, tables: list[PageTable]) -> list[str | PageTable]:
    """The page in reading order: pdfium's text of the characters outside the tables, and the tables where
    their first character stands in it."""
    count = pdfium_c.FPDFText_CountChars(textpage.raw)
    taken = frozenset().union(*(t.chars for t in tables))
    starts = sorted((min(t.chars), t) for t in tables if t.chars)
    bounds = [0, *(s for s, _ in starts), count]
    parts: list[str | PageTable] = []
    for k in range(len(bounds) - 1):
        if k:
            parts.append(starts[k - 1][1])
        text = _text_outside(textpage, bounds[k], bounds[k + 1], taken)
        if text.strip():
            parts.append(text)
    return parts


def carry_header(table: PageTable, previous: PageTable | None) -> PageTable:
    """A table without a header line of its own that has as many columns as the previous one continues it."""
    if previous is None or table.own_header or len(table.header) != len(previous.header):
        return table
    return PageTable(table.title or previous.title, previous.header, table.rows, table.chars, False)


def _text_outside(textpage, start: int, end: int, taken: frozenset[int]) -> str:
    runs, begin = [], None
    for i in range(start, end + 1):
        inside = i < end and i not in taken
        if inside and begin is None:
            begin = i
        elif not inside and begin is not None:
            runs.append(textpage.get_text_range(begin, i - begin).replace("\ufffe", ""))
            begin = None
    return "\n".join(r.strip("\r\n") for r in runs if r.strip())


def _chars(textpage) -> list[tuple[int, str, float, float, float, float]]:
    """(index, character, left, right, top, bottom) of every drawn, non-space character."""
    raw = textpage.raw
    box = pdfium_c.FS_RECTF()
    ref = ctypes.byref(box)
    unicode, generated, loose = pdfium_c.FPDFText_GetUnicode, pdfium_c.FPDFText_IsGenerated, pdfium_c.FPDFText_GetLooseCharBox
    out = []
    for i in range(pdfium_c.FPDFText_CountChars(raw)):
        code = unicode(raw, i)
        if code <= 32 or code in (0xFFFE, 0xFFFF, 0xA0) or generated(raw, i) == 1:
            continue
        if loose(raw, i, ref) and box.top > box.bottom:
            out.append((i, chr(code), box.left, box.right, box.top, box.bottom))
    return out


def _lines(chars) -> list[_Line]:
    """Characters grouped into lines (top to bottom), each cut into segments at wide gaps."""
    ordered = sorted(chars, key=lambda c: (-(c[4] + c[5]) / 2, c[2]))
    groups: list[list] = []
    for c in ordered:
        middle = (c[4] + c[5]) / 2
        if groups:
            last = groups[-1]
            top, bottom = last[0][4], last[0][5]
            if abs(middle - (top + bottom) / 2) < 0.4 * (top - bottom):
                last.append(c)
                continue
        groups.append([c])
    return [_line(g) for g in groups]


def _line(group) -> _Line:
    group.sort(key=lambda c: c[2])
    height = median(c[4] - c[5] for c in group)
    segs: list[_Seg] = []
    for index, ch, left, right, _, _ in group:
        gap = left - segs[-1].right if segs else 0.0
        if segs and gap <= SEGMENT_GAP * height:
            seg = segs[-1]
            seg.text += (" " if gap > SPACE_GAP * height else "") + ch
            seg.right = max(seg.right, right)
            seg.chars.append(index)
        else:
            seg = _Seg(ch, left, right, [index])
            segs.append(seg)
        if ch.isdigit():
            seg.anchor = right
    for seg in segs:
        seg.anchor = seg.anchor or seg.right
    return _Line(max(c[4] for c in group), min(c[5] for c in group), _merge_symbols(segs))


def _merge_symbols(segs: list[_Seg]) -> list[_Seg]:
    """A lone currency sign joins the figure after it, a lone '%' or ')' the figure before it."""
    out: list[_Seg] = []
    pending: _Seg | None = None
    for seg in segs:
        if seg.text in _CURRENCY:
            pending = seg
            continue
        if pending is not None:
            seg = _Seg(pending.text + seg.text, pending.left, seg.right, pending.chars + seg.chars, seg.anchor)
            pending = None
        if out and seg.text in ("%", ")", "%)") and out[-1].figure:
            last = out[-1]
            out[-1] = _Seg(last.text + seg.text, last.left, seg.right, last.chars + seg.chars, last.anchor)
            continue
        out.append(seg)
    return out + ([pending] if pending is not None else [])


def _regions(lines: list[_Line]) -> list[tuple[int, int]]:
    """(first, last) line indices of runs of rows; label-only lines inside a run (section names, wrapped
    labels) belong to it, a header-like line (a row of years) or a wide gap ends it."""
    regions, first, last, rows, quiet = [], None, None, 0, 0
    for i, line in enumerate(lines):
        near = first is not None and lines[i - 1].bottom - line.top < 2.5 * line.height
        if line.is_row():
            if near:
                last, rows, quiet = i, rows + 1, 0
                continue
            if first is not None and rows >= MIN_ROWS:
                regions.append((first, last))
            first, last, rows, quiet = i, i, 1, 0
        elif near and quiet < 2 and not line.figures() and len(line.segs) <= 2 and not line.prose():
            quiet += 1
        else:
            if first is not None and rows >= MIN_ROWS:
                regions.append((first, last))
            first, last, rows, quiet = None, None, 0, 0
    if first is not None and rows >= MIN_ROWS:
        regions.append((first, last))
    return regions


def _columns(lines: list[_Line]) -> list[tuple[float, float]]:
    """(left, right) of each column of figures: figures whose right edges lie within a line height."""
    figures = sorted((s for line in lines if line.is_row() for s in line.figures() if s is not line.segs[0]),
                     key=lambda s: s.anchor)
    if not figures:
        return []
    tolerance = median(line.height for line in lines)
    clusters: list[list[_Seg]] = [[figures[0]]]
    for seg in figures[1:]:
        if seg.anchor - clusters[-1][-1].anchor <= tolerance:
            clusters[-1].append(seg)
        else:
            clusters.append([seg])
    rows = sum(1 for line in lines if line.is_row())
    support = max(2, rows // 4)
    return [(min(s.left for s in c), median(s.anchor for s in c)) for c in clusters if len(c) >= support]


def _table(lines: list[_Line], first: int, last: int) -> PageTable | None:
    body = lines[first:last + 1]
    columns = _columns(body)
    rows = sum(1 for line in body if line.is_row())
    if not columns or (len(columns) < 2 and rows < 4):
        return None
    edge = min(left for left, _ in columns) - 2.0
    first = _section_labels(lines, first, edge)
    head_at = _header_start(lines, first, edge)
    if head_at == first:
        head_at, first = _header_past_labels(lines, first, edge, len(columns))
    body = lines[first:last + 1]
    header = _header_cells(lines[head_at:first], columns, edge)
    title, label = _above(lines, head_at, header[0])
    cells = _rows(body, columns, edge)
    values = [c for row in cells for c in row[1:] if c]
    # prose of a neighbouring column read across: words where figures would be, or mostly long labels; a long
    # label stating amounts of its own is a statement's ("Card Member loans …, less reserves for credit losses:
    # 2022, $3,747; 2021, $3,305" on a bank's balance sheet), not prose
    long_labels = sum(1 for row in cells if len(row[0].split()) > 10 and not _AMOUNT.search(row[0]))
    if (sum(1 for row in cells if any(row[1:])) < MIN_ROWS or sum(map(_wordy, values)) > 0.4 * len(values)
            or long_labels > 0.25 * len(cells)):
        return None
    chars = frozenset(i for line in lines[head_at:last + 1] for s in line.segs for i in s.chars)
    return PageTable(title, (label, *header[1:]), tuple(cells), chars, head_at < first)


_AMOUNT = re.compile(r"[$€£¥]\s?\d")


def _section_labels(lines: list[_Line], first: int, edge: float) -> int:
    """The first row moved up over at most two short label-only lines ("Assets", "Business Segments")."""
    for _ in range(2):
        if first == 0:
            break
        line, below = lines[first - 1], lines[first]
        if (line.bottom - below.top > 2.5 * line.height or len(line.segs) != 1
                or line.segs[0].right > edge or len(line.text) > 60):
            break
        first -= 1
    return first


def _header_start(lines: list[_Line], first: int, edge: float) -> int:
    """Index of the topmost header line above `first`: segments within the columns, at most a short label
    left of them (a line of prose runs across the columns' left edge and stops the search)."""
    start = first
    for j in range(first - 1, max(first - 1 - MAX_HEADER_LINES, -1), -1):
        line = lines[j]
        if lines[j].bottom - lines[j + 1].top > 3 * line.height or line.is_row():
            break
        over = [s for s in line.segs if s.right > edge]
        left = [s for s in line.segs if s.right <= edge]
        prose = line.prose() or any(s.left < edge - 4 and len(s.text) > 40 for s in over)
        if not over or prose or len(left) > 1 or any(len(s.text) > 60 for s in left):
            break
        start = j
    return start


def _label_only(line: _Line, edge: float) -> bool:
    return all(seg.right <= edge for seg in line.segs) and not line.figures() and len(line.text) <= 80


def _header_past_labels(lines: list[_Line], first: int, edge: float, columns: int) -> tuple[int, int]:
    """(header start, first row) when the header sits above up to three label-only lines (a units line,
    section names: "(In millions)", "ASSETS", "CURRENT ASSETS") that stand between it and the first row: the
    units and period lines join the header's label cell, the others become the table's first rows. Found only
    when the lines above them are header-like, hold a cell over the columns for at least two of them (or the
    one) and do not hang under another table's last row; else (first, first): no header."""
    skipped = []
    j = first - 1
    while j >= 0 and len(skipped) < 3 and _label_only(lines[j], edge) \
            and lines[j].bottom - lines[j + 1].top <= 2.5 * lines[j].height:
        skipped.append(j)
        j -= 1
    if not skipped:
        return first, first
    head_at = _header_start(lines, j + 1, edge)
    over = sum(1 for line in lines[head_at:j + 1] for seg in line.segs if seg.right > edge)
    if head_at > j or over < min(2, columns):
        return first, first
    above = lines[head_at - 1] if head_at else None
    if above is not None and above.is_row() and above.bottom - lines[head_at].top <= 2.5 * above.height:
        return first, first  # lines hanging under another table's last row: its wrapped cells, not a header
    rows_from = j + 1
    while rows_from < first and (_UNITS.search(lines[rows_from].text) or _PERIOD.search(lines[rows_from].text)):
        rows_from += 1
    return head_at, rows_from


def _header_cells(head: list[_Line], columns: list[tuple[float, float]], edge: float) -> list[str]:
    """Header text per column (label column first): each header segment goes to every column it spans."""
    cells = [[] for _ in range(len(columns) + 1)]
    for line in head:
        for seg in line.segs:
            if seg.right <= edge:
                cells[0].append(seg.text)
                continue
            spanned = [k for k, (left, right) in enumerate(columns) if seg.left <= right and seg.right >= left]
            for k in spanned or [_nearest(columns, seg)]:
                cells[k + 1].append(seg.text)
    return [" ".join(parts) for parts in cells]


def _above(lines: list[_Line], head_at: int, label: str) -> tuple[str, str]:
    """(title, label-column header): the statement's name and its units/period lines, from above the header."""
    units, title, fallback = [], "", ""
    for j in range(head_at - 1, max(head_at - 1 - MAX_ABOVE_LINES, -1), -1):
        line = lines[j]
        text = line.text
        if lines[j].bottom - lines[j + 1].top > 4 * line.height or len(text) > 100 or line.is_row():
            break
        if (_UNITS.search(text) or _PERIOD.search(text)) and len(text) <= 80:
            units.insert(0, text)
        elif not title and _TITLE.search(text) and not text.endswith("."):
            title = text
        elif not fallback and text[:1].isupper() and (text.endswith(":") or len(text.split()) <= 8):
            fallback = text
    label = " ".join([*units, label]).strip()
    return title or fallback, label


# a label line ending in a word or sign that needs more ("EFFECT OF EXCHANGE RATE CHANGES ON CASH AND"): the
# next line ends it, whatever its case
_DANGLING = re.compile(r"(?:\b(?:and|or|of|on|in|for|to|the|from|at|by|with)|[,&(—–-])\s*$", re.IGNORECASE)


def _rows(body: list[_Line], columns: list[tuple[float, float]], edge: float) -> list[tuple[str, ...]]:
    """Cells per line: the label left of the columns, every other segment in its nearest column. A label
    line followed by one starting in lower case, or ending in a word that needs more ("... ON CASH AND"), is a
    label wrapped over two lines: joined to the next."""
    rows: list[list[str]] = []
    carried = ""
    for line in body:
        cells = [[] for _ in range(len(columns) + 1)]
        for seg in line.segs:
            if seg.right <= edge and not seg.figure:
                cells[0].append(seg.text)
            else:
                cells[_nearest(columns, seg) + 1].append(seg.text)
        row = [" ".join(parts) for parts in cells]
        if carried and (row[0][:1].islower() or _DANGLING.search(carried)):
            row[0] = f"{carried} {row[0]}"
            rows.pop()
        carried = row[0] if not any(row[1:]) else ""
        rows.append(row)
    return [tuple(r) for r in rows]


def _wordy(cell: str) -> bool:
    """A value cell with more letters than digits (or none): words or formulas, not a figure."""
    digits = sum(ch.isdigit() for ch in cell)
    return cell not in _DASHES and (digits == 0 or sum(ch.isalpha() for ch in cell) > digits)


def _nearest(columns: list[tuple[float, float]], seg: _Seg) -> int:
    return min(range(len(columns)), key=lambda k: abs(columns[k][1] - seg.anchor))
