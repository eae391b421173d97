"""One browser tab's state in st.session_state: every key the pages use, with its starting value, in one place."""

from __future__ import annotations

import streamlit as st

from ui.chats import SHOWN

# key -> a function making its starting value (a fresh set or list per tab, never one shared object)
DEFAULTS = {
    "messages": list,  # the open chat: {"role": "user"|"assistant", "content", ...}
    "seen_uploads": set,  # upload ids this tab has handed to the ingestion queue already
    "queue_refused": list,  # Markdown lines of the uploads the queue refused (read-only library, disk full)
    "queue_drawn": lambda: None,  # (files indexed, batch running) when this tab last drew its library
    "uploader_key": int,  # bumped to empty the upload box after a batch
    "confirm_clear": bool,  # "Clear library" is waiting for its confirmation
    "notice": lambda: None,  # (kind, text) of the last delete or clear, shown once
    "confirm_delete": lambda: None,  # the document whose Delete waits for its confirmation
    "outline_doc": lambda: None,  # the document whose outline is open (a dialog)
    "outline_section": lambda: None,  # the first passage of the section opened from that outline
    "chat_id": lambda: None,  # the open saved chat (None: a new one, saved from its first question)
    "shown": lambda: SHOWN,  # how many of its last messages are drawn ("Show earlier messages" adds more)
    "earlier": int,  # how many older messages of the open chat are not drawn (nor read)
    "loaded": lambda: None,  # (chat id, messages, shown) when `messages` was last read from the saved chat
    "confirm_chat_delete": lambda: None,  # the chat whose Delete waits for its confirmation
}


def init_session() -> None:
    """Set every missing key to its starting value."""
    for key, make in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = make()
