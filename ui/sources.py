"""The Sources and Source viewer tabs of an answer: each cited passage shown in its document (the page image with
the passage highlighted, the slide, the cell range, or the passage with the chunks before and after it).

The pure work (finding a passage on a page, reading slides and cell ranges) is ui/source_viewer.py's.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import streamlit as st

from ui import answer_view as av
from ui import helpers as ui
from ui import resources, slide_images
from ui import source_viewer as sv
from ui.seams import Library

log = logging.getLogger("docagent.app")

SOURCES, VIEWER, REASONING = "Sources", "Source viewer", "Reasoning"
_CITE_JS = """
export default function(component) {
    const { data, setTriggerValue } = component;
    const prefix = data.prefix;
    const onClick = (event) => {
        const link = event.target.closest ? event.target.closest('a[href^="' + prefix + '"]') : null;
        if (!link) return;
        event.preventDefault();
        event.stopPropagation();
        setTriggerValue("cite", Number(link.getAttribute("href").slice(prefix.length)));
    };
    document.addEventListener("click", onClick, true);
    return () => document.removeEventListener("click", onClick, true);
}
"""
_citation_links = st.components.v2.component("docagent_citation_links", js=_CITE_JS)


def tab_labels(count: int, closest: bool) -> list[str]:
    """The answer's three tab labels; the first counts the cited passages (or, for a refusal, its closest ones)."""
    return [f"{'Closest passages' if closest else SOURCES} ({count})", VIEWER, REASONING]


def citation_links(index: int, labels: list[str]) -> None:
    """Make answer `index`'s linked [n] open source n: a click (or Enter on the focused link) selects it in the
    Source viewer and switches to that tab (av.linked_citations made the links; this script catches them). The
    tabs and the viewer's choice are keyed, so they also stay where the user put them across reruns."""
    result = _citation_links(key=f"cite_{index}", data={"prefix": av.source_anchor(index)},
                             on_cite_change=lambda: None, height=0)
    chosen = getattr(result, "cite", None)
    if chosen:
        st.session_state[f"viewer_{index}"] = int(chosen)
        st.session_state[f"tabs_{index}"] = labels[1]


def source_viewer_tab(index: int, answer, hits, terms, kb: Library, present: av.Present) -> None:
    """Pick a cited source and see it in its document: page image, neighbours, slide, or cell range; for a
    document deleted or replaced since (not in `present`), the passage as the answer quoted it, and why."""
    citations = answer.citations or av.closest_citations(answer)
    if not citations:
        st.caption("No passage was cited.")
        return
    if not answer.citations:
        st.caption("Nothing was cited: these are the closest passages found, not an answer.")
    by_n = {c.n: c for c in citations}
    key = f"viewer_{index}"  # a citation click sets it before the widget is drawn: then no default beside it
    chosen = st.segmented_control("Source", list(by_n), format_func=lambda n: f"[{n}]", key=key,
                                  default=None if key in st.session_state else next(iter(by_n)))
    citation = by_n.get(chosen) or next(iter(by_n.values()))
    where = av.location_label(citation.location)
    st.markdown(f"**[{citation.n}] {ui.md_text(citation.file)}**" + (f" · {ui.md_text(where)}" if where else ""))
    hit = av.hit_for_citation(citation, hits)
    if citation.doc_id not in present:
        st.info(present.note(citation), icon=":material/delete:")
        st.html(av.SOURCE_CSS + av.source_card_html(citation, hit, terms, head=False))
        return
    original = original_file(kb, citation.doc_id)
    try:
        show_in_document(citation, hit, original, terms, kb)
    except (sv.SourceError, *resources.library_errors()) as error:  # a damaged original or a lost store: the text
        log.warning("source viewer fell back to the passage text: %s", error)
        st.caption(f"The original file cannot show this passage ({ui.md_text(str(error))}); here is its text.")
        st.html(av.SOURCE_CSS + av.source_card_html(citation, hit, terms, head=False))


def original_file(kb: Library, doc_id: str) -> Path | None:
    """The stored copy of the uploaded file, when the library still keeps one."""
    path = kb.original_path(doc_id)
    return Path(path) if path is not None and Path(path).is_file() else None


def show_in_document(citation, hit, original: Path | None, terms, kb: Library) -> None:
    """Draw the cited place from the original file when there is one, else from the stored chunks.

    Raises sv.SourceError when the original exists but cannot show the place (the caller falls back).
    """
    if hit is not None and original is not None and hit.chunk.id.startswith(COMPUTED):
        show_computed(hit.chunk, original)
        return
    kind = (hit.chunk.file_type if hit is not None else Path(citation.file).suffix.lstrip(".")).lower()
    viewer = ORIGINAL_VIEWERS.get(kind)
    if original is not None and viewer is not None and viewer(citation, original, terms):
        return
    table = sv.markdown_table(citation.text) if kind in ("xlsx", "csv") else None
    if table is not None:
        show_table(table)
        return
    around = sv.neighbours(document_chunks(kb, citation.doc_id), hit.chunk) if hit is not None else ()
    st.html(av.SOURCE_CSS + av.source_card_html(citation, hit, terms, neighbours=around, head=False))


def document_chunks(kb: Library, doc_id: str) -> list:
    """Every stored chunk of one document, read by document (one filtered read, not a scan of the store), for a
    passage's neighbours. A doc_id is the hash of the file's bytes, so its chunks never change: cached per id."""
    return _chunks_of(kb.retriever, doc_id)


@st.cache_data(show_spinner=False, max_entries=32, ttl=600)
def _chunks_of(_retriever, doc_id: str) -> list:
    return _retriever.document_chunks(doc_id)


COMPUTED = "computed:"  # agentic_rag.tables.compute.COMPUTED: a passage the engine computed from a table
MAX_RANGES = 3


def show_computed(chunk, original: Path) -> None:
    """A calculation the engine ran over a table: its result, then the cells it read in the document (the sheet's
    ranges; on a PDF page, the row it read highlighted)."""
    lines = chunk.text.splitlines()
    st.markdown("**Computed by the engine:** " + ui.md_text("; ".join(
        ln for ln in lines[1:] if not ln.startswith(("Cells:", "Query:")))))
    cells = next((ln.removeprefix("Cells: ") for ln in lines if ln.startswith("Cells:")), "")
    st.caption(f"Cells read: {cells}")
    loc = chunk.location
    if loc.sheet is not None or original.suffix.lower() == ".csv":
        for ref in sv.cell_ranges(cells)[:MAX_RANGES]:
            sheet, cells_ = ref
            show_table(sv.read_cells(original, sheet if original.suffix.lower() != ".csv" else None, cells_),
                       cells=sv.cited_cells(cells, sheet))
        return
    if loc.page:
        label = sv.computed_row_label(chunk.text)
        image = rendered_page(str(original), original.stat().st_mtime, loc.page, label)
        found = f'the row "{label}" is highlighted' if image.highlighted_chars else "the row was not found on the page"
        st.image(image.png, caption=f"Page {loc.page} of {image.page_count} — {found}",
                 alt=f"Page {loc.page} of {chunk.file_name}, the row the engine read highlighted in yellow")


def _pdf_page(citation, original: Path, terms) -> bool:
    page = citation.location.page
    if not page:
        return False
    key = (str(original), original.stat().st_mtime, page, citation.text)
    slot = st.empty()
    if key not in _drawn:  # first view: the page at once, while the passage is looked for (OCR on scans, photos)
        slot.image(plain_page(*key[:3]), caption=f"Page {page} — finding the passage on it…",
                   alt=f"Page {page} of {citation.file}")
    image = rendered_page(*key)
    with _drawn_lock:  # the page's script runs of every tab share it
        _drawn[key] = None
        while len(_drawn) > DRAWN_KEPT:
            _drawn.pop(next(iter(_drawn)))
    with slot.container():
        _show_page(citation, page, image)
    return True


DRAWN_KEPT = 256
_drawn: dict[tuple, None] = {}  # pages this process has highlighted (in rendered_page's cache), oldest first
_drawn_lock = threading.Lock()


@st.cache_data(show_spinner=False, max_entries=16)
def plain_page(path: str, mtime: float, page: int) -> bytes:
    """The page as it is, shown while rendered_page finds the passage on it; cached."""
    return sv.render_plain(Path(path), page)


def _show_page(citation, page: int, image: sv.PageImage) -> None:
    if image.focus_png:  # opened on the passage; the whole page a click away
        st.image(image.focus_png, caption=f"Page {page} of {image.page_count} — the passage is highlighted "
                 "(the part of the page around it; the whole page below)",
                 alt=f"The part of page {page} of {citation.file} around the cited passage, highlighted in yellow")
        with st.expander(f"Whole page {page}"):
            st.image(image.png, caption=f"Page {page} of {image.page_count}",
                     alt=f"Page {page} of {citation.file}, the cited passage highlighted in yellow")
        return
    found = "highlighted" if image.highlighted_chars else "not found on the rendered page (see Sources)"
    st.image(image.png, caption=f"Page {page} of {image.page_count} — the passage is {found}",
             alt=f"Page {page} of {citation.file}" + (", the cited passage highlighted in yellow"
                                                      if image.highlighted_chars else ""))


def _slide(citation, original: Path, terms) -> bool:
    number = citation.location.slide
    if not number:
        return False
    slide = sv.read_slide(original, number)
    if slide_images.office() and not slide_images.has_preview(original) and not slide_images.failed(original):
        with st.spinner("Drawing the slides with LibreOffice (once per file)…"):
            image, why = rendered_slide(str(original), original.stat().st_mtime, number, tuple(terms))
    else:
        image, why = rendered_slide(str(original), original.stat().st_mtime, number, tuple(terms))
    marked = "the question's words are highlighted" if image.highlighted_chars else "the question's words are not on it"
    drawn = ("" if not why else f" (drawn from its text boxes, without its design or pictures: {ui.md_text(why)}"
             + ("; see the README to install it)" if why == "LibreOffice is not installed" else ")"))
    st.image(image.png, caption=f"Slide {number} of {image.page_count} — {marked}{drawn}",
             alt=f"Slide {number} of {citation.file}" + (", the question's words highlighted in yellow"
                                                         if image.highlighted_chars else ""))
    st.html(av.SOURCE_CSS + f'<div class="docagent-source"><div class="text">{ui.highlight_html(slide.text, terms)}'
            "</div></div>")
    st.markdown("**Speaker notes:** " + (ui.md_text(slide.notes) if slide.notes else "_none_"))
    return True


def _cells(citation, original: Path, terms) -> bool:
    loc = citation.location
    show_table(sv.read_cells(original, loc.sheet if original.suffix.lower() != ".csv" else None, loc.cells), terms)
    return True


ORIGINAL_VIEWERS = {"pdf": _pdf_page, "image": _pdf_page, "pptx": _slide, "xlsx": _cells, "csv": _cells}


def show_table(table: sv.Table, terms=(), cells: set[str] | frozenset = frozenset()) -> None:
    """A cell range as the sheet shows it: its row numbers and column letters (when read from the sheet), values
    formatted as in the file, and highlighted either the `cells` named ("E5": the cells a calculation read) or
    else the rows holding most of the question's words."""
    import pandas as pd

    if table.letters:
        columns = [letter if name == letter else f"{letter} · {name}"  # a blank header cell is named by its letter
                   for letter, name in zip(table.letters, table.columns, strict=True)]
        index = [str(table.first_row + i) for i in range(len(table.rows))]
    else:
        columns, index = list(table.columns), None
    frame = pd.DataFrame([list(r) for r in table.rows], columns=columns, index=index)
    if cells and table.letters:
        styles = pd.DataFrame([[f"background-color: {MATCH_COLOUR}" if f"{letter}{table.first_row + i}" in cells
                                else "" for letter in table.letters] for i in range(len(table.rows))],
                              index=frame.index, columns=frame.columns)
        st.dataframe(frame.style.apply(lambda _: styles, axis=None), hide_index=False)
        st.caption("Highlighted: the cells the engine read.")
        return
    marked = sv.matched_rows(table, terms)
    if marked:
        styled = frame.style.apply(lambda row: [f"background-color: {MATCH_COLOUR}" if frame.index.get_loc(row.name)
                                                in marked else "" for _ in row], axis=1)
        st.dataframe(styled, hide_index=index is None)
        st.caption(f"Highlighted: the {'row' if len(marked) == 1 else 'rows'} with the question's words.")
    else:
        st.dataframe(frame, hide_index=index is None)
    if table.truncated:
        st.caption(f"Showing the first {len(table.rows)} rows of the range.")


MATCH_COLOUR = "rgba(255, 214, 0, 0.35)"  # the page highlighter's yellow


def rendered_slide(path: str, mtime: float, number: int, terms: tuple[str, ...]) -> tuple[sv.PageImage, str]:
    """(image, why it is drawn from its shapes, or '') of a slide with the question's words marked: as LibreOffice
    draws it where it is installed, else from its shapes (the caption says which, and why). Both are cached; a
    slide LibreOffice could not draw for now (busy, out of time) is tried again at its next view."""
    why = "LibreOffice is not installed"
    if slide_images.office():
        try:
            return _libreoffice_slide(path, mtime, number, terms), ""
        except sv.SourceError as error:  # the drawing from its shapes still shows the passage where it is
            log.warning("slide %d of %s drawn from its shapes: %s", number, Path(path).name, error)
            why = str(error)
    return _shapes_slide(path, mtime, number, terms), why


@st.cache_data(show_spinner=False, max_entries=32)
def _libreoffice_slide(path: str, mtime: float, number: int, terms: tuple[str, ...]) -> sv.PageImage:
    return slide_images.render_slide_image(Path(path), number, terms)


@st.cache_data(show_spinner=False, max_entries=32)
def _shapes_slide(path: str, mtime: float, number: int, terms: tuple[str, ...]) -> sv.PageImage:
    return sv.render_slide(Path(path), number, terms)


@st.cache_data(show_spinner=False, max_entries=64)
def rendered_page(path: str, mtime: float, page: int, passage: str) -> sv.PageImage:
    """A PDF or image page (scans highlighted from their OCR word boxes) with the passage highlighted; cached,
    since every rerun redraws past answers."""
    return sv.render_page(Path(path), page, passage)
