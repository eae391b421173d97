"""Word (.docx) with python-docx: paragraphs and tables in body order, heading paths, headers/footers once."""

from __future__ import annotations

import io
import re

import docx
from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import qn

from document_processor.blocks import (
    Block,
    Reading,
    clean_text,
    drop_empty_columns,
    markdown_table,
    one_line,
    table_text,
)
from document_processor.types import Location

W_P, W_TBL, W_SDT, W_SDT_CONTENT = qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:sdtContent")
W_TR, W_TC, W_T, W_TAB = qn("w:tr"), qn("w:tc"), qn("w:t"), qn("w:tab")
W_BR, W_CR, W_GRID_SPAN, W_VAL = qn("w:br"), qn("w:cr"), qn("w:gridSpan"), qn("w:val")
W_DEL, W_MOVE_FROM, W_INSTR = qn("w:del"), qn("w:moveFrom"), qn("w:instrText")
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.I)
_SKIP = {MC_FALLBACK, W_DEL, W_MOVE_FROM, W_INSTR}  # text-box fallback copies, deleted or moved-away text, field codes


def read_docx(data: bytes, name: str, progress=None) -> Reading:
    """Blocks in body order; Location.paragraph is the 1-based index of the paragraph or table in the body."""
    document = docx.Document(io.BytesIO(data))
    levels = _heading_levels(document)
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []
    title = ""
    index = 0
    for index, element in enumerate(_body_elements(document.element.body), start=1):
        if element.tag == W_TBL:
            table = _table(element)
            if table is not None:
                blocks.append(Block(table_text(table), Location(paragraph=index),
                                    tuple(t for _, t in path), table))
            continue
        text = clean_text(paragraph_text(element))
        if not text:
            continue
        level = levels.get(_style_id(element))
        if level == 0:
            title = title or one_line(text, 150)
        elif level is not None:
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, one_line(text, 80)))
        blocks.append(Block(text, Location(paragraph=index), tuple(t for _, t in path)))
    blocks = _headers_and_footers(document, "header") + blocks + _headers_and_footers(document, "footer")
    core_title = one_line(document.core_properties.title or "", 150)
    first_heading = next((b.heading_path[0] for b in blocks if b.heading_path and b.location.paragraph), "")
    # What the reader sees (a Title paragraph) beats document properties, which templates often leave stale.
    return Reading(tuple(blocks), "paragraphs", index, title or core_title or first_heading)


def _body_elements(container):
    """w:p and w:tbl children in order, looking inside content controls (w:sdt) as Word shows them."""
    for child in container.iterchildren():
        if child.tag in (W_P, W_TBL):
            yield child
        elif child.tag == W_SDT:
            content = child.find(W_SDT_CONTENT)
            if content is not None:
                yield from _body_elements(content)


def paragraph_text(element) -> str:
    """Visible text of a paragraph (runs, hyperlinks, insertions, text boxes); tabs and breaks kept."""
    parts: list[str] = []
    _collect(element, parts)
    return "".join(parts)


def _collect(element, parts: list[str]) -> None:
    for child in element.iterchildren():
        tag = child.tag
        if tag == W_T:
            parts.append(child.text or "")
        elif tag == W_TAB:
            parts.append("\t")
        elif tag in (W_BR, W_CR):
            parts.append("\n")
        elif tag in _SKIP or not isinstance(tag, str):
            continue
        else:
            if tag == W_P and parts:
                parts.append("\n")  # a paragraph nested in a text box starts a new line
            _collect(child, parts)


def _heading_levels(document) -> dict[str, int]:
    """style id -> heading level: 'Title' is 0, 'Heading N' is N, else the style's outline level + 1."""
    levels: dict[str, int] = {}
    for style in document.styles.element.iterchildren(qn("w:style")):
        style_id = style.get(qn("w:styleId"))
        name_el = style.find(qn("w:name"))
        name = (name_el.get(W_VAL) if name_el is not None else "") or ""
        outline = style.find(f"{qn('w:pPr')}/{qn('w:outlineLvl')}")
        match = _HEADING_STYLE.match(name.strip())
        if name.strip().lower() == "title":
            levels[style_id] = 0
        elif match:
            levels[style_id] = int(match.group(1))
        elif outline is not None and (outline.get(W_VAL) or "").isdigit() and int(outline.get(W_VAL)) < 9:
            levels[style_id] = int(outline.get(W_VAL)) + 1
    return levels


def _style_id(paragraph) -> str | None:
    style = paragraph.find(f"{qn('w:pPr')}/{qn('w:pStyle')}")
    return style.get(W_VAL) if style is not None else None


def _table(tbl):
    """A Table from w:tbl: first row is the header; merged cells keep the columns aligned. A row whose cells
    each hold the same number of lines (a statement typed as one row of tall cells: labels in one cell, each
    year's figures in the next) becomes that many rows, so a figure stays beside its label."""
    rows = []
    for tr in tbl.iterchildren(W_TR):
        cells = []
        for tc in tr.iterchildren(W_TC):
            lines = [" ".join(line.split()) for p in tc.iter(W_P) if _is_cell_paragraph(p, tc)
                     for line in (paragraph_text(p).split("\n") or [""])]
            cells.append(lines)
            cells.extend([[""]] * (_grid_span(tc) - 1))
        rows.extend(_row_lines(cells))
    rows = drop_empty_columns([r for r in rows if any(r)])
    if not rows:
        return None
    return markdown_table(rows[0], rows[1:])


MIN_ALIGNED_LINES = 3


def _row_lines(cells: list[list[str]]) -> list[list[str]]:
    """One table row, or one row per line when every cell with several lines has the same number of them.
    Cells of different lengths are split as far as they agree line by line: the lines of the shortest, where
    every tall cell has text on the same lines, when a blank line follows in each longer one (the block of
    figures ends there); what follows is one more row, as written. A label broken over two lines inside that
    block would shift the figures, and fails the test."""
    cells = [c[:max((i + 1 for i, line in enumerate(c) if line), default=1)] for c in cells]  # trailing blanks
    counts = {len(c) for c in cells if len(c) > 1}
    tall = sum(1 for c in cells if len(c) > 1)
    joined = [[" ".join(" ".join(c).split()) for c in cells]]
    if tall < 2 or not counts:
        return joined
    n = min(counts)
    if len(counts) > 1:
        columns = [c for c in cells if len(c) > 1]
        agree = n >= MIN_ALIGNED_LINES and all(len({bool(c[i]) for c in columns}) == 1 for i in range(1, n)) \
            and all(not c[n] for c in columns if len(c) > n)
        if not agree:
            return joined
    rows = [[(c[i] if len(c) >= n and len(c) > 1 else (" ".join(" ".join(c).split()) if i == 0 else ""))
             for c in cells] for i in range(n)]
    rest = [" ".join(" ".join(c[n:]).split()) if len(c) > 1 else "" for c in cells]
    return rows + ([rest] if any(rest) else [])


def _is_cell_paragraph(p, tc) -> bool:
    """Paragraphs that belong to this cell, not to a paragraph nested inside one of them (text boxes)."""
    parent = p.getparent()
    while parent is not None and parent is not tc:
        if parent.tag == W_P:
            return False
        parent = parent.getparent()
    return True


def _grid_span(tc) -> int:
    span = tc.find(f"{qn('w:tcPr')}/{W_GRID_SPAN}")
    value = span.get(W_VAL) if span is not None else "1"
    return int(value) if value and value.isdigit() and 0 < int(value) < 64 else 1


def _headers_and_footers(document, kind: str) -> list[Block]:
    """Each distinct page header (or footer) text once, whatever the number of sections using it."""
    reltype = RT.HEADER if kind == "header" else RT.FOOTER
    seen, blocks = set(), []
    for rel in document.part.rels.values():
        if rel.is_external or rel.reltype != reltype:
            continue
        texts = [_element_text(el) for el in _body_elements(rel.target_part.element)]
        text = "\n".join(t for t in texts if t)
        if text and text not in seen:
            seen.add(text)
            blocks.append(Block(text, Location(), (f"Page {kind}",)))
    return blocks


def _element_text(element) -> str:
    if element.tag == W_P:
        return clean_text(paragraph_text(element))
    table = _table(element)
    return table_text(table) if table is not None else ""
