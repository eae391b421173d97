"""The saved chats: the sidebar's list (switch, new, rename, delete), and loading and saving the open chat's
messages through ui.conversations (one SQLite file in the data directory, shared by every tab).

A chat is saved from its first question on (an empty "New chat" is not stored). Every run checks how many messages
the open chat holds, and reads its last ones again when that changed, so another tab's answer, a reload or a server
restart shows the same chat. Only the last SHOWN messages are read and drawn (older ones on request): what a run
costs grows with what is drawn, not with the length of the chat.
"""

from __future__ import annotations

import logging
import re

import streamlit as st

import wiring
from ui import helpers as ui
from ui.conversations import ConversationError, ConversationStore

log = logging.getLogger("docagent.app")
LISTED = 30  # chats listed in the sidebar, the most recent first
SHOWN = 40  # messages read and drawn when a chat opens: its last 20 questions and their answers
EARLIER = 40  # messages "Show earlier messages" adds
CHAT_ID = re.compile(r"[0-9a-f]{32}")  # the ids ConversationStore.create writes (uuid4().hex), nothing else


@st.cache_resource(show_spinner=False)
def _store(path: str) -> ConversationStore:
    return ConversationStore(path)


def store(config: wiring.Config) -> ConversationStore | None:
    """The shared conversation store; None (with the reason shown) when its file cannot be used."""
    try:
        return _store(str(config.conversations))
    except ConversationError as error:
        log.error("saved conversations unavailable: %s", error)
        st.warning(f"Chats are not saved: {ui.md_text(str(error))}", icon=":material/warning:")
        return None


def load_messages(chats: ConversationStore | None) -> None:
    """The open chat's last messages into the tab's state (answers rebuilt whole from their records): the last
    `shown` of them (SHOWN when a chat opens; "Show earlier messages" adds more), read again only when the chat
    has grown (another tab's answer) or more were asked for. A new tab or a reload opens the chat its address
    names (?chat=ID), so a reload shows the same chat; an address naming no chat the app could have written is
    refused at once, with the reason."""
    if chats is None:
        return
    try:
        if not st.session_state.get("chat_from_url"):
            st.session_state.chat_from_url = True
            _open_from_address(chats)
        chat_id = st.session_state.chat_id
        if chat_id is None:
            return
        if st.session_state.loaded == (chat_id, chats.count(chat_id), st.session_state.shown):
            return  # nothing new: the messages already held are the chat's last ones
        total, saved = chats.tail(chat_id, st.session_state.shown)
        if not total and not chats.exists(chat_id):  # deleted in another tab
            open_chat(None)
            return
    except ConversationError as error:
        st.warning(ui.md_text(str(error)), icon=":material/warning:")
        return
    opened = st.session_state.loaded is None or st.session_state.loaded[0] != chat_id
    st.session_state.messages = [restored(m) for m in saved]
    st.session_state.earlier = total - len(saved)
    st.session_state.loaded = (chat_id, total, st.session_state.shown)
    if opened and saved:  # a chat opened (a reload, a click in the list): the page goes to its last answer
        st.session_state.scroll_to_end = True


def _open_from_address(chats: ConversationStore) -> None:
    """Open the chat ?chat= names. A value the app never writes (not CHAT_ID: too long, other characters) is
    refused before the file is read, and an unknown chat named; either way once, and the tab starts a new chat."""
    wanted = st.query_params.get("chat")
    if not wanted:
        return
    if not CHAT_ID.fullmatch(wanted):
        st.query_params.pop("chat", None)
        quoted = wanted if len(wanted) <= 40 else f"{wanted[:40]}… ({len(wanted):,} characters)"
        st.error(f"This address names no chat: “{ui.md_text(quoted)}” is not a chat id (a chat id is 32 "
                 "characters, 0-9 and a-f). A new chat is open instead.", icon=":material/error:")
    elif not chats.exists(wanted):
        st.query_params.pop("chat", None)
        st.warning("The chat this address names is not saved here (deleted in another tab?). A new chat is open "
                   "instead.", icon=":material/warning:")
    else:
        st.session_state.chat_id = wanted


def show_earlier() -> None:
    """Button callback: draw EARLIER more of the open chat's older messages."""
    st.session_state.shown += EARLIER


def restored(message: dict) -> dict:
    """A saved message as the page holds it: an answer's record becomes its AnswerResult again."""
    kept = {k: v for k, v in message.items() if k != "result"}
    if message.get("role") != "assistant" or not message.get("result"):
        return kept
    from agentic_rag import answer_from_record

    return {**kept, "answer": answer_from_record(message["result"])}


def stored(message: dict) -> dict:
    """A message of the page as it is saved (JSON-ready): an answer as its record, which holds it whole."""
    from agentic_rag import answer_record

    kept = {k: v for k, v in message.items() if k != "answer"}
    if message.get("answer") is not None:
        kept["result"] = answer_record(message["answer"])
    return kept


def export_markdown(chats: ConversationStore | None, chat_id: str | None, messages: list[dict],
                    mode_label: str) -> str:
    """The whole chat as Markdown (ui.helpers.conversation_markdown): every saved message, read when the export
    is asked for, not only the ones drawn; `messages` when the chat is not saved."""
    if chats is None or chat_id is None:
        return ui.conversation_markdown(messages, mode_label)
    try:
        saved = [restored(m) for m in chats.messages(chat_id)]
    except ConversationError as error:  # the export still gives what the page shows, and says what is missing
        log.error("export read only the drawn messages: %s", error)
        return (f"> The saved chat could not be read ({error}); this export holds only the "
                f"{len(messages)} messages the page showed.\n\n" + ui.conversation_markdown(messages, mode_label))
    return ui.conversation_markdown(saved or messages, mode_label)


def save(chats: ConversationStore | None, message: dict) -> None:
    """Append one message to the open chat (made on the first question); a failure is shown, the chat goes on."""
    if chats is None:
        return
    try:
        if st.session_state.chat_id is None:
            st.session_state.chat_id = chats.create()
            st.query_params["chat"] = st.session_state.chat_id
        chats.append(st.session_state.chat_id, stored(message))
    except ConversationError as error:
        log.error("could not save a message: %s", error)
        st.warning(f"This answer is shown but not saved: {ui.md_text(str(error))}", icon=":material/warning:")


def chat_list(chats: ConversationStore | None) -> None:
    """New chat, the saved chats (the open one highlighted), and the open chat's rename and delete."""
    st.button("New chat", icon=":material/add_comment:", key="new_chat", on_click=open_chat, args=(None,),
              width="stretch")
    if chats is None:
        return
    try:
        listed = chats.chats()[:LISTED]
    except ConversationError as error:
        st.warning(ui.md_text(str(error)), icon=":material/warning:")
        return
    for chat in listed:
        current = chat.id == st.session_state.chat_id
        st.button(ui.md_text(chat.title), key=f"chat_{chat.id}", type="primary" if current else "tertiary",
                  on_click=open_chat, args=(chat.id,), width="stretch", icon=":material/chat:",
                  help=f"{ui.plural(chat.messages, 'message')}")
    if st.session_state.chat_id is not None and any(c.id == st.session_state.chat_id for c in listed):
        chat_options(chats, st.session_state.chat_id)


def chat_options(chats: ConversationStore, chat_id: str) -> None:
    """Rename the open chat, or delete it after a confirmation (both in one menu, which stays open meanwhile)."""
    with st.popover("Rename or delete this chat", icon=":material/edit:", width="stretch"):
        title = st.text_input("Chat title", value=chats.title(chat_id), key=f"title_{chat_id}", max_chars=80)
        st.button("Rename", key="chat_rename", on_click=rename_chat, args=(chats, chat_id), disabled=not title.strip())
        if st.session_state.get("confirm_chat_delete") != chat_id:
            st.button("Delete this chat", icon=":material/delete:", key="chat_delete", on_click=_confirm_delete,
                      args=(chat_id,))
            return
        st.warning("Delete this chat and its answers? This cannot be undone.")
        yes, no = st.columns(2)
        yes.button("Delete chat", type="primary", key="chat_delete_yes", on_click=delete_chat, args=(chats, chat_id))
        no.button("Cancel", key="chat_delete_no", on_click=_confirm_delete, args=(None,))


def open_chat(chat_id: str | None) -> None:
    """Button callback: show another chat (None: a new, empty one)."""
    st.session_state.chat_id = chat_id
    st.session_state.messages = []
    st.session_state.earlier = 0
    st.session_state.shown = SHOWN
    st.session_state.loaded = None
    st.session_state.confirm_chat_delete = None
    if chat_id is None:
        st.query_params.pop("chat", None)
    else:
        st.query_params["chat"] = chat_id


def rename_chat(chats: ConversationStore, chat_id: str) -> None:
    """Button callback: the title typed in the box (read now: the box may have changed since it was drawn)."""
    title = st.session_state.get(f"title_{chat_id}", "")
    try:
        chats.rename(chat_id, title)
        st.session_state.notice = ("success", f"Chat renamed to “{title.strip()}”.")
    except (ValueError, ConversationError) as error:
        st.session_state.notice = ("error", str(error))


def _confirm_delete(chat_id: str | None) -> None:
    st.session_state.confirm_chat_delete = chat_id


def delete_chat(chats: ConversationStore, chat_id: str) -> None:
    try:
        chats.delete(chat_id)
    except ConversationError as error:
        st.session_state.notice = ("error", str(error))
        return
    open_chat(None)
    st.session_state.notice = ("success", "Chat deleted.")
