"""The sidebar's library: the upload box, the document list (scope, delete, clear) and opening the library (with
the rebuild a lost store offers). Uploads go to the server's ingestion queue (ui.queue_panel): no tab indexes."""

from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

import wiring
from ui import helpers as ui
from ui import resources
from ui.runtime import Scope
from ui.seams import Library, Uploads

log = logging.getLogger("docagent.app")
# ---- opening ---------------------------------------------------------------------------------------------------

def open_library(config: wiring.Config, preparing) -> Library:
    """The shared library; a store that cannot open stops the page with the reason. On the first start the
    `preparing` slot (in the main area) says what is being prepared, step by step, instead of an empty page."""
    try:
        if resources.first_start(config):
            with preparing.status("Preparing Docagent for its first use…", expanded=True) as status:
                status.write("Loading the embedding model (all-MiniLM-L6-v2)…")
                resources.load_embedder(config)
                status.write("Opening the library and starting the document reader…")
                kb = resources.load_library(config)
            preparing.empty()
        else:
            kb = resources.load_library(config)  # opened already by this process: no wait
    except (ImportError, *resources.library_errors()) as error:
        preparing.empty()
        log.error("cannot open the library", exc_info=error)
        st.error(f"The library cannot be opened: {ui.md_text(str(error))}", icon=":material/error:")
        offer_rebuild(config, error)
        st.stop()
    if st.session_state.pop("rebuild_requested", False) and kb.rebuilt:
        done = sum(r.status != "failed" for r in kb.rebuilt)
        st.success(f"Library rebuilt from the kept originals: {done} of {len(kb.rebuilt)} files indexed again.",
                   icon=":material/build:")
    return kb


def offer_rebuild(config: wiring.Config, error: BaseException) -> None:
    """For a store that lost its data: rebuild from the kept originals (the user's only copies are never
    deleted; a damaged database is set aside, not emptied)."""
    from vector_db import LibraryDamaged

    if not isinstance(error, LibraryDamaged):
        return
    st.info("Your files are safe: a copy of every indexed file is kept in the data directory. Rebuilding indexes "
            "them again; a damaged database is set aside, not deleted.", icon=":material/info:")
    if st.button("Rebuild the library from the kept originals", icon=":material/build:", key="rebuild_library"):
        resources.rebuild_requests().add(str(config.data_dir))
        st.session_state["rebuild_requested"] = True
        st.rerun()


# ---- uploading -------------------------------------------------------------------------------------------------

def upload_widget():
    """The drag-and-drop zone; a new key after each batch (handed to the queue) empties it."""
    from document_processor import SUPPORTED_SUFFIXES  # light: the parsers load on the first parse

    return st.file_uploader(
        f"Add documents (up to {ui.MAX_UPLOAD_MB} MB each)", type=list(SUPPORTED_SUFFIXES), accept_multiple_files=True,
        key=f"uploader_{st.session_state.uploader_key}",
        help="PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), CSV, text and Markdown files.")


# ---- the document list -----------------------------------------------------------------------------------------

# An icon button's label is its accessible name: it names the file, but is shown to screen readers only (the
# narrow column has room for the icon alone). Streamlit gives a keyed widget the class st-key-<key>.
_ICON_LABELS_CSS = """<style>
[class*="st-key-delete_"] button [data-testid="stMarkdownContainer"] {
  position: absolute !important; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;
}
</style>"""


def document_list(kb: Library, indexing: bool = False, queue: Uploads | None = None) -> tuple[Scope, int]:
    """The library with a tick box per document (scope) and a delete button; returns (the scope, count).
    `indexing`: the ingestion queue has files to do (an empty library then says they are coming); `queue`: its
    finished results are forgotten when the library is cleared."""
    docs = kb.documents()
    if not docs and indexing:
        st.caption("No documents yet: each one appears here as soon as it is indexed.")
        return Scope(), 0
    if not docs:
        st.info("No documents yet. Drop PDF (scans too), Word, PowerPoint, Excel, CSV, text, Markdown or image files "
                "(PNG, JPEG, TIFF) above.",
                icon=":material/upload_file:")
        return Scope(), 0
    st.caption(f"{ui.plural(len(docs), 'document')} — tick some to ask only about them")
    st.html(_ICON_LABELS_CSS)
    ticked = []
    for rec in docs:
        left, right = st.columns([0.84, 0.16], vertical_alignment="top")
        title = rec.title if rec.title and rec.title not in (rec.file_name, Path(rec.file_name).stem) else None
        if left.checkbox(ui.md_text(rec.file_name), key=f"scope_{rec.doc_id}", help=title):
            ticked.append(rec)
        left.caption(ui.document_caption(rec) + (" · indexing…" if rec.status != "ready" else ""))
        if rec.status == "ready":
            left.button("Outline", icon=":material/toc:", key=f"outline_{rec.doc_id}", type="tertiary",
                        help=f"The sections of {rec.file_name}", on_click=_open_outline, args=(rec.doc_id,))
        right.button(f"Delete {ui.md_text(rec.file_name)}", icon=":material/delete:", key=f"delete_{rec.doc_id}",
                     help=f"Delete {rec.file_name}", on_click=_set_confirm_delete, args=(rec.doc_id,))
        if st.session_state.confirm_delete == rec.doc_id:
            confirm_delete(kb, rec.doc_id, rec.file_name)
    clear_library_controls(kb, len(docs), queue)
    return Scope(tuple(r.doc_id for r in ticked), tuple(r.file_name for r in ticked)), len(docs)


def _open_outline(doc_id: str) -> None:
    st.session_state.outline_doc = doc_id
    st.session_state.outline_section = None


def outline_dialog(kb: Library) -> None:
    """The outline of the document whose Outline button was pressed, in a dialog: its sections with their pages
    (or slides, sheets); a section opens on its first page or passage."""
    doc_id = st.session_state.get("outline_doc")
    if not doc_id:
        return
    record = next((d for d in kb.documents() if d.doc_id == doc_id), None)
    if record is None:
        st.session_state.outline_doc = None
        return

    @st.dialog(f"Outline of {record.file_name}", width="large", on_dismiss=_close_outline)
    def show() -> None:
        outline = kb.outline(doc_id)
        if outline.flat:
            st.caption(f"No usable headings: the document is read by {outline.source or 'pages'}, in order.")
        for i, section in enumerate(outline.all()):
            where = section.start if section.start == section.end else f"{section.start}–{section.end}"
            st.button(f"{'  ' * (section.level - 1)}{section.title}  ·  {where}", key=f"section_{doc_id}_{i}",
                      type="tertiary", on_click=_open_section, args=(section.first,))
        first = st.session_state.get("outline_section")
        if first is not None:
            show_section(kb, record, first)

    show()


def _open_section(first: int) -> None:
    st.session_state.outline_section = first


def _close_outline() -> None:
    st.session_state.outline_doc = None
    st.session_state.outline_section = None


def show_section(kb: Library, record, first: int) -> None:
    """A section's opening passage where it is in the document: the page highlighted for a PDF, else its text."""
    from ui import sources

    chunk = next((c for c in kb.retriever.document_chunks(record.doc_id) if c.ordinal == first), None)
    if chunk is None:
        st.caption("This section's passage is no longer in the library.")
        return
    st.divider()
    original = sources.original_file(kb, record.doc_id)
    page = chunk.location.page
    if original is not None and page and original.suffix.lower() == ".pdf":
        image = sources.rendered_page(str(original), original.stat().st_mtime, page, chunk.text)
        st.image(image.png, caption=f"Page {page} of {image.page_count}",
                 alt=f"Page {page} of {record.file_name}, where the section starts, its first passage highlighted")
    else:
        st.caption(chunk.location.label())
        st.markdown(ui.md_text(chunk.text[:2000]))


def confirm_delete(kb: Library, doc_id: str, name: str) -> None:
    """'Delete NAME?' with Delete and Cancel, under the document's row."""
    st.warning(f"Delete **{ui.md_text(name)}** from the library? Answers that cite it keep their quotes.",
               icon=":material/delete:")
    yes, no = st.columns(2)
    yes.button("Delete", type="primary", key=f"confirm_delete_{doc_id}", on_click=delete_document,
               args=(kb, doc_id, name))
    no.button("Cancel", key=f"cancel_delete_{doc_id}", on_click=_set_confirm_delete, args=(None,))


def _set_confirm_delete(doc_id: str | None) -> None:
    st.session_state.confirm_delete = doc_id


def delete_document(kb: Library, doc_id: str, name: str) -> None:
    """Button callback (after the confirmation): remove one document; the outcome shows as a notice."""
    st.session_state.confirm_delete = None
    try:
        kb.delete(doc_id)
    except resources.library_errors() as error:
        st.session_state.notice = ("error", f"Could not delete {name}: {error}")
        return
    st.session_state.pop(f"scope_{doc_id}", None)
    st.session_state.notice = ("success", f"Deleted {name}.")


def clear_library_controls(kb: Library, count: int, queue: Uploads | None = None) -> None:
    """'Clear library' asks for confirmation before deleting everything."""
    if not st.session_state.confirm_clear:
        st.button("Clear library", icon=":material/delete_sweep:", key="clear", on_click=_set_confirm, args=(True,))
        return
    st.warning(f"Delete all {ui.plural(count, 'document')} from the library? This cannot be undone.")
    yes, no = st.columns(2)
    yes.button("Delete all", icon=":material/delete_forever:", key="clear_yes", on_click=clear_library,
               args=(kb, queue))  # not the primary style: the destructive choice is never the highlighted one
    no.button("Cancel", key="clear_cancel", on_click=_set_confirm, args=(False,))


def _set_confirm(value: bool) -> None:
    st.session_state.confirm_clear = value


def clear_library(kb: Library, queue: Uploads | None = None) -> None:
    """Button callback: empty the library (after the confirmation), and forget the queue's finished results, whose
    green "indexed" lines would otherwise still list the documents just deleted."""
    st.session_state.confirm_clear = False
    try:
        kb.clear()
    except resources.library_errors() as error:
        st.session_state.notice = ("error", f"Could not clear the library: {error}")
        return
    if queue is not None:
        queue.forget_finished()
    for key in [k for k in st.session_state if str(k).startswith("scope_")]:
        del st.session_state[key]
    st.session_state.notice = ("success", "The library is empty.")


def show_notice() -> None:
    """The outcome of the last delete or clear, once."""
    notice = st.session_state.notice
    if notice:
        kind, text = notice
        (st.error if kind == "error" else st.success)(ui.md_text(text))
        st.session_state.notice = None
