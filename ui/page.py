"""The page assembly: sidebar (page switch, library, settings), header, then the chat or the evaluate page.

The cheap parts are drawn first; the library (its embedding model and stores, loaded once per process) next; the
engine's imports (LangGraph) are warmed last, once the page is up, so that the first question does not wait.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

import wiring
from ui import chats as saved
from ui import helpers as ui
from ui import library, queue_panel, resources
from ui.chat import chat_page
from ui.evaluate import evaluate_page
from ui.session import init_session
from ui.settings import header, settings_panel

PAGES = ("Chat", "Evaluate")
RESTART_COMMAND = "make run"
SERVER_STOPPED = ("The app's server has stopped. Your library, uploads and chats are kept on disk. Start it again "
                  f"in a terminal, in the app's folder, with: {RESTART_COMMAND} — this page then reconnects by itself.")

# When the server stops, Streamlit's page says "Streamlit server is not responding. Are you connected to the
# internet?" (for 127.0.0.1, where make run serves) or "streamlit run yourscript.py" (for localhost): neither is
# true of a local app. One observer per browser tab rewrites that dialog's words as it appears; installed once,
# never removed, since the page's elements are not torn down when the connection drops.
_SERVER_WATCH = st.components.v2.component("docagent_server_watch", js=r"""
export default function(component) {
    const { data } = component;
    if (window.__docagentServerWatch) return;
    window.__docagentServerWatch = true;
    const theirs = [/Are you connected to the internet\?/, /Is Streamlit still running\?/];
    const rewrite = (root) => {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const text = node.nodeValue || "";
            if (theirs.some(re => re.test(text))) node.nodeValue = data.message;
            else if (text.trim() === "streamlit run yourscript.py") node.nodeValue = data.command;
        }
    };
    new MutationObserver((records) => {
        for (const record of records) {
            for (const node of record.addedNodes) {
                if (node.nodeType === Node.ELEMENT_NODE) rewrite(node);
                else if (node.nodeType === Node.TEXT_NODE && node.parentNode) rewrite(node.parentNode);
            }
        }
    }).observe(document.body, {childList: true, subtree: true});
}
""")
# The tab's icon, sent inline with the page. A ":material/...:" page icon makes the browser fetch an SVG from
# fonts.gstatic.com on every load (the icons drawn in the page come from the font Streamlit serves itself).
FAVICON = Path(__file__).with_name("favicon.svg")


SIDEBAR_PX = 360  # Streamlit's 300 wrapped each queue row to 3-4 lines (ui.queue_view.ROW_CHARS); still resizable
# Streamlit draws captions in the text colour at opacity 0.6: 3.9:1 on white, under the 4.5:1 axe-core's
# colour-contrast rule asks of small text. This grey at full opacity is 6.6:1 and still reads as secondary. The
# chat box's placeholder, when the box is disabled, says why ("Add a document to start asking"): same grey, not
# the faded one a disabled field gets.
PAGE_CSS = """<style>
[data-testid="stCaptionContainer"] { color: #5c5b5a !important; opacity: 1 !important; }
[data-testid="stChatInput"] textarea:disabled::placeholder { color: #5c5b5a !important; opacity: 1 !important;
  -webkit-text-fill-color: #5c5b5a !important; }
</style>"""


def main(config: wiring.Config | None = None) -> None:
    """Draw the page for `config` (default: the environment's, read once per run by wiring)."""
    st.set_page_config(page_title="Docagent — ask your documents", page_icon=str(FAVICON), layout="wide",
                       initial_sidebar_state=SIDEBAR_PX)
    st.html(PAGE_CSS)
    _SERVER_WATCH(data={"message": SERVER_STOPPED, "command": RESTART_COMMAND}, key="server_watch", height=0)
    config = config or wiring.Config.from_env()
    init_session()
    with st.sidebar:
        page = st.radio("Page", PAGES, horizontal=True, key="page", label_visibility="collapsed")
        settings = settings_panel(config)  # one line when closed, first: above a library and chats that grow long
        st.header("Chats", anchor=False)
        chats = saved.store(config)
        chat_slot = st.container()  # filled after the chat page, so a chat saved in this run is listed
        st.header("Library", anchor=False)
        uploads = library.upload_widget()
        queue_box = st.container()  # the server's ingestion queue: every tab sees it, redrawn on its own
        library_box = st.container()
    header(settings, config)
    read_only_slot = st.empty()
    preparing = st.empty()  # the first start's steps (loading the embedding model, ...)
    with library_box:
        kb = library.open_library(config, preparing)
        queue = resources.load_queue(config)
        queue_panel.enqueue_uploads(queue, uploads)  # written to disk, then the uploader is emptied (reruns when any)
        library.show_notice()
        queue_panel.mark_library_drawn(queue)
        scope, count = library.document_list(kb, indexing=bool(queue.pending_names()), queue=queue)
    library.outline_dialog(kb)
    with queue_box:
        queue_panel.queue_panel(queue)
    if kb.read_only_reason:  # another program owns the embedded library: reading works, changing it does not
        read_only_slot.warning(f"**Read-only library:** {ui.md_text(kb.read_only_reason)}.", icon=":material/lock:")
    if page == "Evaluate":
        evaluate_page(kb, config, settings)
    else:
        saved.load_messages(chats)
        chat_page(kb, queue, config, settings, scope, count, chats)
    with chat_slot:
        saved.chat_list(chats)
    resources.offline_engine(config)  # imports LangGraph once the page is up, so the first question does not wait
