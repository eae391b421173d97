"""The ingestion queue on the page: uploads are handed to the server's queue, every tab watches it.

Tabs never index anything themselves: an upload is written to the data directory by IngestQueue.enqueue and the
uploader is emptied at once; the queue's worker thread (one per server process, ui.resources.load_queue)
indexes it whether or not the tab stays open. The panel is a fragment that redraws itself every REFRESH_S
seconds in every tab, so a second tab sees the queue too; when a file has been indexed since this tab last drew
the page it reruns the whole page, so the document list and the chat box take the new file in.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import streamlit as st

from ui import helpers as ui
from ui import queue_view as qv
from ui.seams import Uploads

if TYPE_CHECKING:  # the page draws before advanced_retrieval (and chromadb) is imported
    from advanced_retrieval import QueueItem

log = logging.getLogger("docagent.app")
REFRESH_S = 1.0  # a fragment rerun reads the queue's memory: cheap enough for every open tab
RECENT = 5  # finished files listed under the queue; older ones fold into "Earlier uploads"
# Material icons, not emoji: a server or kiosk browser without an emoji font shows emoji as empty boxes.
STATUS_ICON = {"indexed": ":green[:material/check_circle:]", "replaced": ":blue[:material/sync:]",
               "duplicate": ":gray[:material/content_copy:]", "failed": ":red[:material/error:]",
               "cancelled": ":gray[:material/cancel:]", "queued": ":gray[:material/schedule:]",
               "indexing": ":blue[:material/progress_activity:]"}


def enqueue_uploads(queue: Uploads, uploads) -> None:
    """Hand each new upload to the queue (written to disk first), then empty the uploader and redraw at once.

    A file that cannot be queued (read-only library, disk full) gets its line in this tab's notices.
    """
    fresh = [u for u in uploads or () if u.file_id not in st.session_state.seen_uploads]
    if not fresh:
        return
    from advanced_retrieval import IngestQueueError  # loaded with the library already
    refused = []
    for upload in fresh:
        try:
            queue.enqueue(upload.getvalue(), upload.name)
        except IngestQueueError as error:
            log.warning("could not queue %s: %s", upload.name, error.reason)
            reason = "the library is read-only here (see the notice above)" if error.kind == "read_only" \
                else error.reason  # the banner says why at length
            refused.append(f"**{ui.md_text(upload.name)}** — not added: {ui.md_text(reason)}")
        st.session_state.seen_uploads.add(upload.file_id)
    st.session_state.queue_refused = refused
    st.session_state.uploader_key += 1
    st.rerun()


@st.fragment(run_every=REFRESH_S)
def queue_panel(queue: Uploads) -> None:
    """Files still to index (stage, time left, Cancel), then the latest results; reruns the page when a file was
    indexed since this tab drew it."""
    items, pause = queue.items(), queue.pause
    if queue.busy_reason:
        st.caption(f"Uploads are indexed by another program: {ui.md_text(queue.busy_reason)}.")
    if pause is not None:
        st.error(qv.pause_line(pause, sum(not i.finished for i in items)), icon=":material/hard_drive:")
    for entry in queue.set_aside:
        st.warning(qv.set_aside_line(entry), icon=":material/report:")
    for line in st.session_state.get("queue_refused", ()):
        st.markdown(f"{STATUS_ICON['failed']} {line}")
    lines = qv.queue_lines(items)
    summary = qv.summary(items, pause)
    if summary:
        st.caption(summary)
    finished = [entry for entry in lines if entry[0].finished]
    pending = [entry for entry in lines if not entry[0].finished]
    if lines:
        st.html(QUEUE_CSS)
    for item, state, line in pending:
        _pending_line(queue, item, state, line)
    shown, folded = qv.fold(finished, RECENT)
    for item, state, line in shown:
        _finished_line(item, state, line)
    if folded:
        with st.expander(f"Earlier uploads ({len(folded)})"):
            for item, state, line in folded:
                _finished_line(item, state, line)
    _follow_library(queue, items)  # last: the queue is on the page before the rest of it is redrawn


CANCEL_KEY = "cancel_upload_"
ROW_KEY = "queue_row_"  # a row shown on one line (queue_view.one_line)
# Cancel buttons are labelled for screen readers only, beside their icon; a one-line row is cut at the sidebar's
# edge with "…" rather than wrapped (4 lines per file pushed the library off the screen).
QUEUE_CSS = """<style>
[class*="st-key-cancel_upload_"] button [data-testid="stMarkdownContainer"] {
  position: absolute !important; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap;
}
[class*="st-key-queue_row_"] [data-testid="stMarkdownContainer"] p {
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; margin-bottom: 0; font-size: 0.875rem;
}
</style>"""


def _finished_line(item: QueueItem, state: str, line: str) -> None:
    text = f"{STATUS_ICON.get(state, '')} {line}"
    if qv.one_line(item, state):
        st.container(key=f"{ROW_KEY}{item.entry_id}").markdown(text)
    else:
        st.markdown(text)


def _pending_line(queue: Uploads, item: QueueItem, state: str, line: str) -> None:
    row = st.container(key=f"{ROW_KEY}{item.entry_id}")
    text, button = row.columns([0.88, 0.12], vertical_alignment="center")  # the button is an icon: more for the line
    if state == "indexing":
        text.progress(min(item.fraction, 1.0), text=line)
    else:
        text.markdown(f"{STATUS_ICON['queued']} {line}")
    if item.stage != "indexing":  # the last step (under a second) is let finish: see IngestQueue.cancel
        # The label names the file (a screen reader says "Cancel report.pdf", not one "Cancel" per row); it is
        # shown to screen readers only, beside the icon (QUEUE_CSS), so the row stays one line.
        button.button(f"Cancel {item.name}", key=f"{CANCEL_KEY}{item.entry_id}", help=f"Cancel {item.name}",
                      icon=":material/close:", type="tertiary", on_click=_cancel,
                      args=(queue, item.entry_id, item.name))


def _cancel(queue: Uploads, entry_id: str, name: str) -> None:
    refusal = queue.cancel(entry_id)
    if refusal:
        st.session_state.notice = ("error", f"{name} was not cancelled: {refusal}")


def _follow_library(queue: Uploads, items) -> None:
    """Rerun the whole page when the queue indexed a file, or started or ended a batch, since this tab last drew
    the library: the document list, the chat box and the empty page's hint follow."""
    state = _library_state(queue, items)
    drawn = st.session_state.queue_drawn
    if drawn is None:  # this tab's first draw
        st.session_state.queue_drawn = state
    elif state != drawn:
        st.session_state.queue_drawn = state
        st.rerun()


def _library_state(queue: Uploads, items) -> tuple[int, bool]:
    return queue.indexed_count, any(not i.finished for i in items)


def mark_library_drawn(queue: Uploads) -> None:
    """Call before drawing the document list: what the queue has done so far is on the page."""
    st.session_state.queue_drawn = _library_state(queue, queue.items())


def indexing_note(names) -> None:
    """Under an answer: the files that were still being indexed when it was given (not searched)."""
    note = qv.pending_note(tuple(names or ()))
    if note:
        st.caption(f":material/hourglass_top: {note}")
