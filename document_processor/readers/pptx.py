"""PowerPoint (.pptx) with python-pptx: per slide its title, every text frame (groups too), tables, charts,
SmartArt text and the speaker notes."""

from __future__ import annotations

import io

import pptx
from pptx.oxml import parse_xml
from pptx.shapes.group import GroupShape

from document_processor.blocks import (
    Block,
    Reading,
    clean_text,
    drop_empty_columns,
    format_number,
    markdown_table,
    one_line,
    table_text,
)
from document_processor.types import Location

A_T = "{http://schemas.openxmlformats.org/drawingml/2006/main}t"
DIAGRAM_URI = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
R_DM = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}dm"
MAX_GROUP_DEPTH = 32


def read_pptx(data: bytes, name: str, progress=None) -> Reading:
    """Blocks per slide (Location.slide, heading path = slide title); notes are labelled 'Notes:'."""
    presentation = pptx.Presentation(io.BytesIO(data))
    slides = list(presentation.slides)
    blocks: list[Block] = []
    warnings: list[str] = []
    for number, slide in enumerate(slides, start=1):
        blocks.extend(_slide_blocks(slide, number, warnings))
        if progress is not None:
            progress("reading", number, len(slides))
    core_title = one_line(presentation.core_properties.title or "", 150)
    first_title = next((b.heading_path[0] for b in blocks if b.heading_path), "")
    # The first slide's title is what people call the deck; properties often say "PowerPoint Presentation".
    return Reading(tuple(blocks), "slides", len(slides), first_title or core_title, tuple(warnings))


def _slide_blocks(slide, number: int, warnings: list[str]) -> list[Block]:
    location = Location(slide=number)
    title_shape = slide.shapes.title
    title = clean_text(title_shape.text_frame.text) if title_shape is not None and title_shape.has_text_frame else ""
    path = (one_line(title, 80),) if title else ()
    blocks = [Block(title, location, path)] if title else []
    title_id = title_shape.shape_id if title_shape is not None else None
    for shape in _shapes(slide.shapes, 0):
        if shape.shape_id == title_id and title:
            continue
        try:
            content = _shape_content(shape, slide)
        except MemoryError:
            raise
        except Exception as exc:  # python-pptx rejects some charts (3-D plots...); the rest of the deck still counts
            warnings.append(f"slide {number}: shape '{shape.name}' skipped ({one_line(f'{type(exc).__name__}: {exc}', 120)})")
            continue
        blocks.extend(Block(text, location, path, table) for text, table in content)
    notes = _notes(slide)
    if notes:
        blocks.append(Block(f"Notes: {notes}", location, path))
    return blocks


def _shapes(shapes, depth: int):
    """Every shape, descending into groups (a group's text lives in its member shapes)."""
    for shape in shapes:
        if isinstance(shape, GroupShape):
            if depth < MAX_GROUP_DEPTH:
                yield from _shapes(shape.shapes, depth + 1)
        else:
            yield shape


def _shape_content(shape, slide):
    """[(text, table or None)] for a text frame, a table, a chart or a SmartArt diagram."""
    if shape.has_text_frame:
        text = clean_text(shape.text_frame.text)
        return [(text, None)] if text else []
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[" ".join((cell.text or "").split()) for cell in row.cells] for row in shape.table.rows]
        rows = drop_empty_columns([r for r in rows if any(r)])
        if not rows:
            return []
        table = markdown_table(rows[0], rows[1:])
        return [(table_text(table), table)]
    if getattr(shape, "has_chart", False) and shape.has_chart:
        return _chart(shape.chart)
    uri = shape.element.xpath("string(.//a:graphicData/@uri)") if shape.element is not None else ""
    if uri == DIAGRAM_URI:
        text = _smartart_text(shape, slide)
        return [(text, None)] if text else []
    return []


def _chart(chart):
    """A chart as its title plus a table: one row per category, one column per series."""
    title = clean_text(chart.chart_title.text_frame.text) if chart.has_title and chart.chart_title.has_text_frame else ""
    out = [(f"Chart: {title}", None)] if title else []
    for plot in chart.plots:
        series = list(plot.series)
        categories = [str(c) for c in plot.categories]
        if not series or not categories:
            continue
        header = ["Category", *(s.name or "" for s in series)]
        columns = [list(s.values) for s in series]
        rows = [[category, *(_value(col, i) for col in columns)] for i, category in enumerate(categories)]
        table = markdown_table(header, rows)
        out.append((table_text(table), table))
    return out


def _value(column: list, i: int) -> str:
    value = column[i] if i < len(column) else None
    return "" if value is None else format_number(value)


def _smartart_text(shape, slide) -> str:
    """SmartArt keeps its text in a separate diagram-data part that the slide only points to."""
    rel_ids = shape.element.xpath(".//*[local-name()='relIds']")
    rel_id = rel_ids[0].get(R_DM) if rel_ids else None
    if not rel_id or rel_id not in slide.part.rels:
        return ""
    root = parse_xml(slide.part.related_part(rel_id).blob)  # python-pptx's parser: no entity expansion
    return clean_text("\n".join(t.text for t in root.iter(A_T) if t.text and t.text.strip()))


def _notes(slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return clean_text(frame.text) if frame is not None else ""
