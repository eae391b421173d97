"""The chat page: example questions on an empty chat, the history with each answer's sources and reasoning, the
chat box, asking the engine (its steps live, the answer streamed), the conversation controls."""

from __future__ import annotations

import logging
import time

import streamlit as st

import wiring
from ui import answer_view as av
from ui import chats as saved
from ui import helpers as ui
from ui import queue_panel, resources
from ui import runtime as rt
from ui.conversations import ConversationStore
from ui.runtime import Scope
from ui.seams import Library, Uploads
from ui.sources import citation_links, source_viewer_tab, tab_labels

log = logging.getLogger("docagent.app")


# Run once when a chat opens: the page scrolls to its last message (a reload opened at the top of a long chat).
_scroll_to_end = st.components.v2.component("docagent_scroll_to_end", js="""
export default function(component) {
    const last = () => {
        const messages = document.querySelectorAll('[data-testid="stChatMessage"]');
        if (messages.length) messages[messages.length - 1].scrollIntoView({block: "start"});
    };
    const timer = setTimeout(last, 400);  // after the messages drawn in the same run are laid out
    return () => clearTimeout(timer);
}
""")


def chat_page(kb: Library, queue: Uploads, config: wiring.Config, settings: rt.Settings, scope: Scope, count: int,
              chats: ConversationStore | None) -> None:
    """The chat: example questions on an empty chat, the history, the chat box (with the scope it asks about),
    the conversation controls.

    The chat works while the ingestion queue indexes the rest of a batch; an answer given meanwhile (to a question
    not scoped to ticked documents) names the files it could not search yet."""
    controls = st.container()  # filled last, so the first answer of a chat already gets them
    indexing = queue.pending_names()
    waiting = "The first document is being indexed…" if indexing else "Add a document to start asking"
    with st.bottom:  # pinned with the chat box: what the next question will be asked about
        if scope.names:
            st.caption(f":material/filter_alt: Asking only about {ui.md_text(scope.label())} — untick them in the "
                       "library to ask about every document.")
        question = st.chat_input("Ask about your documents" if count else waiting,
                                 disabled=not count) or st.session_state.pop("pending_question", None)
    intro = st.empty()  # one slot: when a question arrives the intro goes at once instead of lingering faded
    if not st.session_state.messages and not question:
        with intro.container():
            empty_state(count > 0, bool(indexing), _suggestions(kb) if count else ui.EXAMPLE_QUESTIONS)
    present = av.Present(kb.documents())
    render_history(kb, present)
    if st.session_state.pop("scroll_to_end", False):
        _scroll_to_end(key=f"scroll_end_{st.session_state.chat_id}", height=0)
    if question and count:
        ask(kb, config, settings, question, scope.doc_ids, chats, present, () if scope.doc_ids else indexing)
    if st.session_state.messages:
        with controls:
            conversation_controls(settings, chats)


def _suggestions(kb: Library) -> tuple[str, ...]:
    """Questions this library's documents answer well (ui.suggested_questions); the fixed examples when the
    library cannot say (an outline or the tables unreadable)."""
    try:
        tables = kb.tables.tables() if kb.tables is not None else ()
        return ui.suggested_questions(kb.documents(), kb.outline, tables)
    except Exception as error:  # the examples are a nicety: a library that cannot list them still works
        log.warning("no suggested questions: %s", error)
        return ui.EXAMPLE_QUESTIONS


def empty_state(has_docs: bool, indexing: bool = False, questions: tuple[str, ...] = ui.EXAMPLE_QUESTIONS) -> None:
    """What the app does, and example questions (clickable once there is something to ask about)."""
    st.markdown("Ask questions about your PDFs, Word, PowerPoint, Excel/CSV and text files. Every answer cites "
                "the page, slide, sheet cells or paragraph it came from, and shows how the agent reasoned: "
                "**analyse → decompose → retrieve → synthesise → verify**.")
    if not has_docs and indexing:
        st.info("Your first documents are being indexed (see the queue in the sidebar); you can ask as soon as "
                "one is ready.", icon=":material/hourglass_top:")
    elif not has_docs:
        st.info("Add documents in the sidebar to get started: drag files onto the upload box.",
                icon=":material/arrow_back:")
    st.caption("Try one of these:")
    for i, question in enumerate(questions):
        st.button(question, key=f"example_{i}", disabled=not has_docs, icon=":material/chat_bubble:",
                  on_click=_set_pending, args=(question,))


def _set_pending(question: str) -> None:
    st.session_state.pending_question = question


def conversation_controls(settings: rt.Settings, chats: ConversationStore | None) -> None:
    """The open chat's Markdown export, the whole chat written when it is clicked (not on every run: a long chat
    has thousands of answers); New chat is in the sidebar, with the saved chats."""
    with st.container(horizontal=True):
        chat_id, drawn, mode = st.session_state.chat_id, list(st.session_state.messages), settings.mode_label()
        st.download_button("Export (Markdown)", icon=":material/download:", mime="text/markdown",
                           data=lambda: saved.export_markdown(chats, chat_id, drawn, mode),  # written on click
                           file_name=ui.export_file_name(), on_click="ignore")


def ask(kb: Library, config: wiring.Config, settings: rt.Settings, question: str, scope: tuple[str, ...],
        chats: ConversationStore | None, present: av.Present, indexing: tuple[str, ...] = ()) -> None:
    """Run the engine on one question, showing its steps live and streaming the answer, then keep it in the
    chat (saved: a reload or a restart shows it again); `indexing` names the files still in the ingestion queue
    (not searched), noted under the answer and saved with it."""
    history = ui.chat_history(st.session_state.messages)
    asked = {"role": "user", "content": question}
    st.session_state.messages.append(asked)
    saved.save(chats, asked)
    with st.chat_message("user"):
        st.markdown(ui.md_text(question))
    with st.chat_message("assistant"):
        status = st.status("Thinking…", expanded=True)
        answer_box = st.empty()
        message = run_engine(config, settings, question, history, scope, status, answer_box)
        message["indexing"] = list(indexing)
        st.session_state.messages.append(message)
        saved.save(chats, message)
        if message.get("answer") is not None:
            answer_box.empty()
            render_answer(st.session_state.earlier + len(st.session_state.messages) - 1, message, kb, present)


def run_engine(config, settings, question, history, scope, status, answer_box) -> dict:
    """The engine call on a worker thread; its events redraw the status box and the streamed answer here."""
    from advanced_retrieval import Filters

    started, live = time.monotonic(), ui.LiveAnswer()
    try:
        engine = resources.session_engine(config, settings)
    except (ValueError, ImportError, *resources.library_errors()) as error:
        return _failed(status, f"The engine could not start: {error}")
    filters = Filters(doc_ids=scope) if scope else None
    call = rt.BackgroundCall(lambda post: engine.ask(
        question, history=history, filters=filters, strategy=settings.strategy, k=settings.k,
        verify=settings.verify, on_event=lambda step, entry: post(("event", step, entry)),
        on_token=lambda text: post(("token", text))))
    for event in call.events():
        kind, text = live.apply(event)
        if kind == "answer":
            answer_box.markdown(text)
        elif kind == "label":
            status.update(label=text)
        elif kind:
            status.markdown(text)
            if kind == "fallback":
                answer_box.empty()
    if call.error is not None:
        log.error("question failed", exc_info=call.error)
        return _failed(status, ui.error_reason(call.error))
    result = call.result
    status.update(label=f"Answered in {ui.format_seconds(time.monotonic() - started)}", state="complete",
                  expanded=False)
    return {"role": "assistant", "content": result.answer, "answer": result,
            "question": question, "model": settings.model_name()}


def _failed(status, reason: str) -> dict:
    status.update(label="The question could not be answered", state="error", expanded=False)
    st.error(ui.md_text(reason), icon=":material/error:")
    return {"role": "assistant", "content": "", "error": reason}


def render_history(kb: Library, present: av.Present) -> None:
    """The chat's last questions and answers, redrawn from session state (read from the saved chat: its last
    ui.chats.SHOWN messages), under a button that draws older ones. A message's index is its place in the
    whole chat, so its widgets keep their keys when earlier ones are drawn above it."""
    first = st.session_state.earlier
    if first:
        st.button(f"Show {ui.plural(min(first, saved.EARLIER), 'earlier message')} ({first:,} not shown)",
                  icon=":material/expand_less:", key="show_earlier", on_click=saved.show_earlier, type="tertiary")
    for index, message in enumerate(st.session_state.messages, start=first):
        with st.chat_message(message["role"]):
            if message["role"] == "user":
                st.markdown(ui.md_text(message["content"]))
            elif message.get("error"):
                st.error(ui.md_text(message["error"]), icon=":material/error:")
            else:
                render_answer(index, message, kb, present)


def render_answer(index: int, message: dict, kb: Library, present: av.Present) -> None:
    """The answer with its [n] markers, warnings, then Sources / Source viewer / Reasoning tabs. A citation of
    a document no longer in the library, or replaced by a newer version, says so (`present`)"""
    answer = message.get("answer")
    if answer is None:
        st.markdown(ui.md_safe(message["content"]))
        return
    st.markdown(av.linked_citations(ui.md_safe(message["content"]), [c.n for c in answer.citations], index))
    st.caption(av.answer_caption(answer))
    queue_panel.indexing_note(message.get("indexing"))
    for warning in answer.warnings:
        st.warning(ui.md_text(warning), icon=":material/warning:")
    citations = answer.citations or av.closest_citations(answer)  # a refusal's closest passages open the same way
    labels = tab_labels(len(citations), closest=not answer.citations)
    citation_links(index, labels)
    sources, viewer, reasoning = st.tabs(labels, key=f"tabs_{index}", on_change="rerun")
    hits = av.all_hits(answer)
    terms = ui.query_terms(message.get("question", ""))
    with sources:
        if not citations:
            st.caption("No passage was cited.")
        elif not answer.citations:
            st.caption("Nothing was cited: these are the closest passages found, not an answer.")
        st.html(av.SOURCE_CSS + "".join(
            av.source_card_html(c, av.hit_for_citation(c, hits), terms, gone=present.note(c))
            for c in citations))
    with viewer:
        source_viewer_tab(index, answer, hits, terms, kb, present)
    with reasoning:
        reasoning_tab(answer)


def reasoning_tab(answer) -> None:
    """The five steps: analysis, sub-questions and what each retrieval found, synthesis, verified claims."""
    st.markdown("##### Analysis")
    st.markdown(av.analysis_markdown(answer))
    st.markdown("##### Sub-questions and retrieval")
    st.markdown(av.retrieval_markdown(answer))
    read = av.reading_markdown(answer)
    if read:
        st.markdown("##### What was read")
        st.markdown(read)
    computed = av.computation_markdown(answer)
    if computed:
        st.markdown("##### Calculation")
        st.markdown(computed)
    st.markdown("##### Verification")
    st.markdown(av.claims_markdown(answer))
    st.markdown("##### Steps")
    st.dataframe(av.trace_rows(answer.trace), hide_index=True)
