"""Docagent's web page: a document library in the sidebar, a chat with cited answers and the agent's reasoning.

Run with `streamlit run app.py` (or `make run`). This is the composition root: it builds the real Chroma client
(client_from_env), the ONNX embedder, the KnowledgeBase and the agent (Gemini when a key is given and offline is
off, a local OpenAI-compatible server when Settings choose one, else the offline extractive brain). Environment
(app_runtime.AppConfig): DOCAGENT_DATA_DIR (default ./data), DOCAGENT_MODEL_DIR, GOOGLE_API_KEY,
CHROMA_HOST/PORT/SSL, DOCAGENT_FAKE_EMBEDDER=1 (tests), DOCAGENT_GEMINI_BASE_URL (a local Gemini stub),
DOCAGENT_PROVIDER and DOCAGENT_LOCAL_BASE_URL/MODEL/API_KEY (wiring.model_env).

UI only: the page is drawn before anything heavy is imported; heavy objects live in st.cache_resource (shared by
all browser tabs of this server), the conversation in st.session_state (one per tab). Every failure becomes a
short message where it happened (the file's line, the answer's warning), never a traceback.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import streamlit as st

import answer_view as av
import app_runtime as rt
import queue_panel as qp
import source_viewer as sv
import ui_helpers as ui

log = logging.getLogger("docagent.app")
PAGES = ("Chat", "Evaluate")
PROVIDER_LABELS = {"gemini": "Gemini", "local": "Local model"}


# ---- heavy objects: once per server process, built on first use ----------------------------------------------

@st.cache_resource(show_spinner=False)
def load_embedder(model_dir: str, fake: bool):
    """The embedding model, shared by every session (it is read-only)."""
    if fake:  # the delay is a test knob read with the rest of the configuration, at the edge
        return rt.HashingEmbedder(delay=rt.AppConfig.from_env().fake_embed_delay)
    from vector_db import OnnxEmbedder

    return OnnxEmbedder(Path(model_dir))


@st.cache_resource(show_spinner=False)
def rebuild_requests() -> set:
    """Data dirs whose next opening rebuilds the library from the kept originals (the Rebuild button)."""
    return set()


@st.cache_resource(show_spinner=False)
def load_knowledge_base(data_dir: str, model_dir: str, fake: bool):
    """Store + BM25 behind one KnowledgeBase (built as the CLI builds it); it serialises all sessions' writes.

    A store that lost its data raises vector_db.LibraryDamaged (nothing is cached): the page then offers the
    rebuild, and the next opening indexes the kept originals again (cli.py rebuild does the same).
    """
    from document_processor import warm_up
    from wiring import open_knowledge_base

    warm_up(rt.main_script_imports(sys.modules["__main__"], sys.modules))  # parse children start in ms, not seconds
    rebuild = data_dir in rebuild_requests()
    kb = open_knowledge_base(Path(data_dir), embedder=load_embedder(model_dir, fake), rebuild=rebuild)
    rebuild_requests().discard(data_dir)
    return kb


@st.cache_resource(show_spinner=False)
def offline_agent(data_dir: str, model_dir: str, fake: bool):
    """The offline extractive agent; it holds no per-user state, so all sessions share it."""
    from agentic_rag import OfflineBrain, build_agent

    embedder = load_embedder(model_dir, fake)
    kb = load_knowledge_base(data_dir, model_dir, fake)
    return build_agent(OfflineBrain(embedder), kb.retriever, embedder=embedder)


@st.cache_resource(show_spinner=False)
def model_catalog() -> rt.ModelCatalog:
    """The Gemini models each key can use; shared by all sessions (entries are keyed by the key's hash)."""
    return rt.ModelCatalog()


@st.cache_resource(show_spinner=False)
def local_catalog() -> rt.LocalModelCatalog:
    """The models each local server lists; shared by all sessions (keyed by address and key hash)."""
    return rt.LocalModelCatalog()


def resources(cfg: rt.AppConfig) -> tuple[str, str, bool]:
    """The cache key of the shared objects: data dir, model dir, fake embedder or not."""
    return str(cfg.data_dir), str(cfg.models), cfg.fake_embedder


def session_agent(cfg: rt.AppConfig, settings: rt.Settings):
    """This session's agent: a Gemini one is built per session (the key is the user's), the offline one shared."""
    if settings.mode == "offline":
        return offline_agent(*resources(cfg))
    if settings.mode == "local":
        return local_agent(cfg, settings)
    signature = (settings.model, rt.key_fingerprint(settings.api_key), cfg.gemini_base_url)
    cached = st.session_state.get("gemini_agent")
    if cached and cached[0] == signature:
        return cached[1]
    from agentic_rag import build_agent, make_gemini_brain

    embedder = load_embedder(str(cfg.models), cfg.fake_embedder)
    brain = make_gemini_brain(settings.api_key, model=settings.model, base_url=cfg.gemini_base_url)
    kb = load_knowledge_base(*resources(cfg))
    agent = build_agent(brain, kb.retriever, embedder=embedder)
    st.session_state.gemini_agent = (signature, agent)
    return agent


def local_agent(cfg: rt.AppConfig, settings: rt.Settings):
    """This session's local-model agent, rebuilt when the address, the model or the key changes."""
    signature = (settings.local_base_url, settings.local_model, rt.key_fingerprint(settings.local_api_key))
    cached = st.session_state.get("local_agent")
    if cached and cached[0] == signature:
        return cached[1]
    from agentic_rag import build_agent
    from wiring import ModelConfig, make_brain

    config = ModelConfig("local", local_base_url=settings.local_base_url, local_model=settings.local_model,
                         local_api_key=settings.local_api_key)
    embedder = load_embedder(str(cfg.models), cfg.fake_embedder)
    brain, budgets = make_brain(config, embedder)
    agent = build_agent(brain, load_knowledge_base(*resources(cfg)).retriever, embedder=embedder, budgets=budgets)
    st.session_state.local_agent = (signature, agent)
    return agent


def library_errors() -> tuple[type[BaseException], ...]:
    """What a library operation may raise besides a bad file; imported late (vector_db pulls in chromadb)."""
    from vector_db import StoreError

    return (StoreError, OSError, ValueError)


# ---- sidebar ---------------------------------------------------------------------------------------------------

def init_session() -> None:
    """Per-tab state: the conversation, which uploads were handed to the queue, the ones it refused."""
    for key, value in (("messages", []), ("seen_uploads", set()), ("queue_refused", []), ("uploader_key", 0),
                       ("confirm_clear", False), ("notice", None)):
        st.session_state.setdefault(key, value)


def settings_panel(cfg: rt.AppConfig) -> rt.Settings:
    """Retrieval, verification and the answering model: Gemini (key field only when the environment has none)
    or a local OpenAI-compatible server (address, model from its list, optional key)."""
    with st.expander("Settings", icon=":material/tune:"):
        strategy = st.selectbox("Retrieval strategy", list(rt.STRATEGY_LABELS), format_func=rt.STRATEGY_LABELS.get,
                                key="strategy")
        k = st.slider("Sources per question", 3, 15, 8, key="k")
        verify = st.toggle("Verify every claim against its sources", True, key="verify")
        offline = st.toggle("Offline mode (extractive, no model)", cfg.provider == "offline", key="offline")
        provider = st.radio("Answer with", list(PROVIDER_LABELS), format_func=PROVIDER_LABELS.get, horizontal=True,
                            index=1 if cfg.provider == "local" else 0, key="provider", disabled=offline)
        if provider == "local":
            base_url, local_model, local_key = local_fields(cfg, offline)
            return rt.Settings(strategy=strategy, k=k, verify=verify, model=cfg.gemini_model, api_key=cfg.env_key,
                               offline=offline, provider="local", local_base_url=base_url, local_model=local_model,
                               local_api_key=local_key)
        if cfg.env_key:
            st.caption("Gemini key: taken from the environment.")
            key = cfg.env_key
        else:
            key = st.text_input("Gemini API key", type="password", key="gemini_key", disabled=offline,
                                help="Kept in this browser tab only: never saved, logged or exported.")
        model = model_select(cfg, "" if offline else key.strip(), offline)
    return rt.Settings(strategy=strategy, k=k, verify=verify, model=model, api_key=key.strip(), offline=offline)


def local_fields(cfg: rt.AppConfig, offline: bool) -> tuple[str, str, str]:
    """Server address, model (from the server's /v1/models, the configured one first) and optional key."""
    base_url = st.text_input("Server address", cfg.local_base_url, key="local_base_url", disabled=offline,
                             help="An OpenAI-compatible server: Ollama http://127.0.0.1:11434/v1, llama-server "
                                  "http://127.0.0.1:8080/v1 (DOCAGENT_LOCAL_BASE_URL).").strip()
    if cfg.local_api_key:
        st.caption("Server key: taken from the environment.")
        key = cfg.local_api_key
    else:
        key = st.text_input("Server API key (optional)", type="password", key="local_api_key", disabled=offline,
                            help="Only for a server that asks for one. Kept in this browser tab only.").strip()
    if offline:
        choices = rt.ModelChoices((cfg.local_model,) if cfg.local_model else ())
    else:
        choices = local_catalog().choices(base_url, key, cfg.local_model)
    if st.session_state.get("local_model") not in choices.models:
        st.session_state.pop("local_model", None)  # a model the server no longer lists: back to the configured one
    model = st.selectbox("Local model", choices.models, key="local_model", disabled=offline or not choices.models,
                         placeholder="no model listed", help="Listed by the server (DOCAGENT_LOCAL_MODEL first). "
                         "Models are never downloaded here: `ollama pull NAME` adds one.")
    if choices.note and not offline:
        (st.caption if choices.listed else st.warning)(ui.md_text(choices.note))
    return base_url, model or "", key


def model_select(cfg: rt.AppConfig, key: str, offline: bool) -> str:
    """The Gemini model box: the models this key can use (listed once per key), the configured one first."""
    choices = model_catalog().choices(key, cfg.gemini_base_url, cfg.gemini_model)
    if st.session_state.get("model") not in choices.models:
        st.session_state.pop("model", None)  # a model the new list lacks: back to the configured one
    model = st.selectbox("Gemini model", choices.models, key="model", disabled=offline,
                         help="Preselected: DOCAGENT_GEMINI_MODEL, else the current default Flash model.")
    if choices.note and not offline:
        st.caption(choices.note)
    return model


def upload_widget():
    """The drag-and-drop zone; a new key after each batch empties it."""
    from document_processor import SUPPORTED_SUFFIXES  # light: the parsers load on the first parse

    return st.file_uploader(
        f"Add documents (up to {ui.MAX_UPLOAD_MB} MB each)", type=list(SUPPORTED_SUFFIXES), accept_multiple_files=True,
        key=f"uploader_{st.session_state.uploader_key}",
        help="PDF, Word (.docx), PowerPoint (.pptx), Excel (.xlsx), CSV, text and Markdown files.")


def document_list(kb) -> tuple[tuple[str, ...], int]:
    """The library with a tick box per document (scope) and a delete button; returns (ticked ids, count)."""
    docs = kb.documents()
    if not docs:
        st.info("No documents yet. Drop PDF, Word, PowerPoint, Excel, CSV, text or Markdown files above.",
                icon=":material/upload_file:")
        return (), 0
    st.caption(f"{ui.plural(len(docs), 'document')} — tick some to ask only about them")
    ticked = []
    for rec in docs:
        left, right = st.columns([0.84, 0.16], vertical_alignment="top")
        title = rec.title if rec.title and rec.title not in (rec.file_name, Path(rec.file_name).stem) else None
        if left.checkbox(ui.md_text(rec.file_name), key=f"scope_{rec.doc_id}", help=title):
            ticked.append(rec.doc_id)
        left.caption(ui.document_caption(rec) + (" · indexing…" if rec.status != "ready" else ""))
        right.button("", icon=":material/delete:", key=f"delete_{rec.doc_id}", help=f"Delete {rec.file_name}",
                     on_click=delete_document, args=(kb, rec.doc_id, rec.file_name))
    clear_library_controls(kb, len(docs))
    return tuple(ticked), len(docs)


def delete_document(kb, doc_id: str, name: str) -> None:
    """Button callback: remove one document; the outcome shows as a notice on the next draw."""
    try:
        kb.delete(doc_id)
    except library_errors() as error:
        st.session_state.notice = ("error", f"Could not delete {name}: {error}")
        return
    st.session_state.pop(f"scope_{doc_id}", None)
    st.session_state.notice = ("success", f"Deleted {name}.")


def clear_library_controls(kb, count: int) -> None:
    """'Clear library' asks for confirmation before deleting everything."""
    if not st.session_state.confirm_clear:
        st.button("Clear library", icon=":material/delete_sweep:", key="clear", on_click=_set_confirm, args=(True,))
        return
    st.warning(f"Delete all {ui.plural(count, 'document')} from the library? This cannot be undone.")
    yes, no = st.columns(2)
    yes.button("Delete all", type="primary", key="clear_yes", on_click=clear_library, args=(kb,))
    no.button("Cancel", key="clear_cancel", on_click=_set_confirm, args=(False,))


def _set_confirm(value: bool) -> None:
    st.session_state.confirm_clear = value


def clear_library(kb) -> None:
    """Button callback: empty the library (after the confirmation)."""
    st.session_state.confirm_clear = False
    try:
        kb.clear()
    except library_errors() as error:
        st.session_state.notice = ("error", f"Could not clear the library: {error}")
        return
    for key in [k for k in st.session_state if str(k).startswith("scope_")]:
        del st.session_state[key]
    st.session_state.notice = ("success", "The library is empty.")


def show_notice() -> None:
    notice = st.session_state.notice
    if notice:
        kind, text = notice
        (st.error if kind == "error" else st.success)(ui.md_text(text))
        st.session_state.notice = None


# ---- main area -------------------------------------------------------------------------------------------------

def header(settings: rt.Settings, cfg: rt.AppConfig) -> None:
    """Title, the mode badge (always visible) and, without a key, the offline banner."""
    st.title("Docagent", anchor=False)
    if settings.mode == "gemini":
        st.badge(settings.mode_label(), icon=":material/auto_awesome:", color="blue")
    elif settings.mode == "local":
        st.badge(settings.mode_label(), icon=":material/computer:", color="green")
    else:
        st.badge(settings.mode_label(), icon=":material/cloud_off:", color="orange")
    if settings.mode == "offline" and settings.provider == "local" and not settings.offline:
        st.info("**Offline mode** — answers quote the best passages of your documents word for word. Choose a "
                "model your local server lists in the Settings for written answers.", icon=":material/info:")
    elif not settings.api_key and not settings.offline and settings.provider == "gemini":
        where = "the Settings in the sidebar" if not cfg.env_key else "GOOGLE_API_KEY"
        st.info(f"**Offline mode** — answers quote the best passages of your documents word for word. "
                f"Add a Gemini key in {where} for written answers.", icon=":material/info:")


def empty_state(has_docs: bool, indexing: bool = False) -> None:
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
    for i, question in enumerate(ui.EXAMPLE_QUESTIONS):
        st.button(question, key=f"example_{i}", disabled=not has_docs, icon=":material/chat_bubble:",
                  on_click=_set_pending, args=(question,))


def _set_pending(question: str) -> None:
    st.session_state.pending_question = question


def conversation_controls(settings: rt.Settings) -> None:
    """New chat (keeps the library) and the Markdown export."""
    with st.container(horizontal=True):
        st.button("New chat", icon=":material/add_comment:", key="new_chat", on_click=_new_chat)
        st.download_button("Export (Markdown)", icon=":material/download:", mime="text/markdown",
                           data=ui.conversation_markdown(st.session_state.messages, settings.mode_label()),
                           file_name=ui.export_file_name(), on_click="ignore")


def _new_chat() -> None:
    st.session_state.messages = []


def ask(kb, cfg: rt.AppConfig, settings: rt.Settings, question: str, scope: tuple[str, ...],
        indexing: tuple[str, ...] = ()) -> None:
    """Run the agent on one question, showing its steps live and streaming the answer, then keep it in history;
    `indexing` names the files still in the queue (not searched), noted under the answer."""
    history = ui.chat_history(st.session_state.messages)
    st.session_state.messages.append({"role": "user", "content": question})
    with st.chat_message("user"):
        st.markdown(ui.md_text(question))
    with st.chat_message("assistant"):
        status = st.status("Thinking…", expanded=True)
        answer_box = st.empty()
        message = run_agent(cfg, settings, question, history, scope, status, answer_box)
        message["indexing"] = list(indexing)
        st.session_state.messages.append(message)
        if message.get("result"):
            answer_box.empty()
            render_answer(len(st.session_state.messages) - 1, message, kb)


def run_agent(cfg, settings, question, history, scope, status, answer_box) -> dict:
    """The agent call on a worker thread; its events redraw the status box and the streamed answer here."""
    from advanced_retrieval import Filters

    started, live = time.monotonic(), ui.LiveAnswer()
    try:
        agent = session_agent(cfg, settings)
    except (ValueError, ImportError, *library_errors()) as error:
        return _failed(status, f"The engine could not start: {error}")
    filters = Filters(doc_ids=scope) if scope else None
    call = rt.BackgroundCall(lambda post: agent.ask(
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
    return {"role": "assistant", "content": result.answer, "result": result.to_dict(), "answer": result,
            "question": question}


def _failed(status, reason: str) -> dict:
    status.update(label="The question could not be answered", state="error", expanded=False)
    st.error(ui.md_text(reason), icon=":material/error:")
    return {"role": "assistant", "content": "", "error": reason, "result": None}


def render_history(kb) -> None:
    """Every earlier question and answer of this tab, redrawn from session state."""
    for index, message in enumerate(st.session_state.messages):
        with st.chat_message(message["role"]):
            if message["role"] == "user":
                st.markdown(ui.md_text(message["content"]))
            elif message.get("error"):
                st.error(ui.md_text(message["error"]), icon=":material/error:")
            else:
                render_answer(index, message, kb)


def render_answer(index: int, message: dict, kb) -> None:
    """The answer with its [n] markers, warnings, then Sources / Source viewer / Reasoning tabs."""
    answer = message.get("answer")
    st.markdown(ui.md_safe(message["content"]))
    if answer is None:
        return
    st.caption(av.answer_caption(answer))
    qp.indexing_note(message.get("indexing"))
    for warning in answer.warnings:
        st.warning(ui.md_text(warning), icon=":material/warning:")
    citations = answer.citations
    sources, viewer, reasoning = st.tabs([f"Sources ({len(citations)})", "Source viewer", "Reasoning"])
    hits = av.all_hits(answer)
    terms = ui.query_terms(message.get("question", ""))
    with sources:
        if not citations:
            st.caption("No passage was cited.")
        st.html(av.SOURCE_CSS + "".join(
            av.source_card_html(c, av.hit_for_citation(c, hits), terms) for c in citations))
    with viewer:
        source_viewer_tab(index, answer, hits, terms, kb)
    with reasoning:
        reasoning_tab(answer)


def source_viewer_tab(index: int, answer, hits, terms, kb) -> None:
    """Pick a cited source and see it in its document: page image, neighbours, slide, or cell range."""
    if not answer.citations:
        st.caption("No passage was cited.")
        return
    by_n = {c.n: c for c in answer.citations}
    chosen = st.segmented_control("Source", list(by_n), format_func=lambda n: f"[{n}]", key=f"viewer_{index}",
                                  default=next(iter(by_n)))
    citation = by_n.get(chosen) or next(iter(by_n.values()))
    where = av.location_label(citation.location)
    st.markdown(f"**[{citation.n}] {ui.md_text(citation.file)}**" + (f" · {ui.md_text(where)}" if where else ""))
    hit = av.hit_for_citation(citation, hits)
    original = original_file(kb, citation.doc_id)
    try:
        show_in_document(citation, hit, original, terms, kb)
    except (sv.SourceError, *library_errors()) as error:  # a damaged original or a lost store: show the text
        log.warning("source viewer fell back to the passage text: %s", error)
        st.caption(f"The original file cannot show this passage ({ui.md_text(str(error))}); here is its text.")
        st.html(av.SOURCE_CSS + av.source_card_html(citation, hit, terms, head=False))


def original_file(kb, doc_id: str) -> Path | None:
    """The stored copy of the uploaded file, when the knowledge base keeps one."""
    finder = getattr(kb, "original_path", None)
    path = finder(doc_id) if finder is not None else None
    return Path(path) if path is not None and Path(path).is_file() else None


def show_in_document(citation, hit, original: Path | None, terms, kb) -> None:
    """Draw the cited place from the original file when there is one, else from the stored chunks.

    Raises sv.SourceError when the original exists but cannot show the place (the caller falls back).
    """
    kind = (hit.chunk.file_type if hit is not None else Path(citation.file).suffix.lstrip(".")).lower()
    viewer = ORIGINAL_VIEWERS.get(kind)
    if original is not None and viewer is not None and viewer(citation, original, terms):
        return
    table = sv.markdown_table(citation.text) if kind in ("xlsx", "csv") else None
    if table is not None:
        show_table(table)
        return
    chunks = document_chunks(kb, kb.store.where, citation.doc_id, kb.store.generation()) if hit else []
    around = sv.neighbours(chunks, hit.chunk) if hit is not None else ()
    st.html(av.SOURCE_CSS + av.source_card_html(citation, hit, terms, neighbours=around, head=False))


def _pdf_page(citation, original: Path, terms) -> bool:
    page = citation.location.page
    if not page:
        return False
    image = rendered_page(str(original), original.stat().st_mtime, page, citation.text)
    found = "highlighted" if image.highlighted_chars else "not found on the rendered page (see Sources)"
    st.image(image.png, caption=f"Page {page} of {image.page_count} — the passage is {found}")
    return True


def _slide(citation, original: Path, terms) -> bool:
    number = citation.location.slide
    if not number:
        return False
    slide = sv.read_slide(original, number)
    st.html(av.SOURCE_CSS + f'<div class="docagent-source"><div class="text">{ui.highlight_html(slide.text, terms)}'
            "</div></div>")
    st.markdown("**Speaker notes:** " + (ui.md_text(slide.notes) if slide.notes else "_none_"))
    return True


def _cells(citation, original: Path, terms) -> bool:
    loc = citation.location
    show_table(sv.read_cells(original, loc.sheet if original.suffix.lower() != ".csv" else None, loc.cells))
    return True


ORIGINAL_VIEWERS = {"pdf": _pdf_page, "image": _pdf_page, "pptx": _slide, "xlsx": _cells, "csv": _cells}


def show_table(table: sv.Table) -> None:
    st.dataframe({name: [row[i] for row in table.rows] for i, name in enumerate(table.columns)}, hide_index=True)
    if table.truncated:
        st.caption(f"Showing the first {len(table.rows)} rows of the range.")


@st.cache_data(show_spinner=False, max_entries=64)
def rendered_page(path: str, mtime: float, page: int, passage: str) -> sv.PageImage:
    """A PDF or image page (scans highlighted from their OCR word boxes) with the passage highlighted; cached,
    since every rerun redraws past answers."""
    return sv.render_page(Path(path), page, passage)


@st.cache_data(show_spinner=False, max_entries=32)
def document_chunks(_kb, where: str, doc_id: str, generation: int) -> list:
    """All stored chunks of one document (for a passage's neighbours), cached until the library changes.

    The store has no per-document read, so this scans it once per document and library generation.
    """
    return [c for c in _kb.store.iter_chunks() if c.doc_id == doc_id]


def reasoning_tab(answer) -> None:
    """The five steps: analysis, sub-questions and what each retrieval found, synthesis, verified claims."""
    st.markdown("##### Analysis")
    st.markdown(av.analysis_markdown(answer))
    st.markdown("##### Sub-questions and retrieval")
    st.markdown(av.retrieval_markdown(answer))
    st.markdown("##### Verification")
    st.markdown(av.claims_markdown(answer))
    st.markdown("##### Steps")
    st.dataframe(av.trace_rows(answer.trace), hide_index=True)


# ---- evaluate page ---------------------------------------------------------------------------------------------

SAMPLE_LABEL, UPLOAD_LABEL = "Bundled sample", "Upload a JSONL file"


def evaluate_page(kb, queue, cfg: rt.AppConfig, settings: rt.Settings) -> None:
    """Run a JSONL question set (uploaded or the bundled sample) and show its metrics, table and answers."""
    from advanced_retrieval import STRATEGIES

    st.subheader("Evaluate", anchor=False)
    st.caption("Each question is retrieved with every chosen strategy (hit@k, MRR@10 against its gold pages) and "
               "answered by the agent with the first one (key facts, refusals, citations).")
    source = st.radio("Dataset", (SAMPLE_LABEL, UPLOAD_LABEL), horizontal=True, key="eval_source")
    upload = None
    if source == UPLOAD_LABEL:
        upload = st.file_uploader("Dataset (JSONL: one question per line)", type=["jsonl", "json", "txt"],
                                  key="eval_upload")
    else:
        st.caption("The sample's five documents are generated and added to the library when it runs.")
    strategies = st.multiselect("Retrieval strategies", list(STRATEGIES), default=["hybrid"], key="eval_strategies",
                                help="Answers use the first one.")
    if st.button("Run evaluation", type="primary", icon=":material/play_arrow:", key="eval_run",
                 disabled=not strategies or (source == UPLOAD_LABEL and upload is None)):
        run_evaluation(kb, queue, cfg, settings, upload, strategies)
    report = st.session_state.get("eval_report")
    if report is not None:
        show_report(report)


def eval_questions(queue, upload) -> tuple[list, str] | None:
    """The questions to run (indexing the sample corpus first for the sample); None after showing why not."""
    from evaluation import SAMPLE_DATASET, DatasetError, load_dataset, parse_dataset

    try:
        if upload is None:
            questions = load_dataset(SAMPLE_DATASET)
            index_sample_corpus(queue)
            return questions, SAMPLE_DATASET.name
        return parse_dataset(upload.getvalue().decode("utf-8"), source=upload.name), upload.name
    except DatasetError as error:
        st.error(f"Bad dataset: {ui.md_text(str(error))}", icon=":material/error:")
    except UnicodeDecodeError:
        st.error(f"Bad dataset: {ui.md_text(upload.name)} is not UTF-8 text.", icon=":material/error:")
    return None


def index_sample_corpus(queue) -> None:
    """Write the sample's documents to a temporary folder and index them through the queue, waiting until they
    are searchable (already indexed ones come back as duplicates)."""
    import tempfile

    from advanced_retrieval import IngestQueueError
    from evaluation import make_sample_corpus

    with tempfile.TemporaryDirectory() as folder:
        try:
            finished = qp.index_and_wait(queue, make_sample_corpus(folder))
        except IngestQueueError as error:
            st.warning(f"The sample documents could not be indexed: {ui.md_text(error.reason)}")
            return
    for item in finished:
        if item.state in ("failed", "cancelled", "queued", "indexing"):
            st.warning(f"{ui.md_text(item.name)} could not be indexed: {ui.md_text(item.reason or item.state)}")


def run_evaluation(kb, queue, cfg: rt.AppConfig, settings: rt.Settings, upload, strategies: list[str]) -> None:
    """Run the dataset with a progress bar, keep the report in this tab's session state, redraw the page."""
    from evaluation import run_eval

    loaded = eval_questions(queue, upload)
    if loaded is None:
        return
    questions, name = loaded
    if not questions:
        st.warning("The dataset has no questions.")
        return
    try:
        agent = session_agent(cfg, settings)
    except (ValueError, ImportError, *library_errors()) as error:
        st.error(f"The engine could not start: {ui.md_text(str(error))}", icon=":material/error:")
        return
    bar = st.progress(0.0, text=f"0/{len(questions)} questions")

    def progress(done: int, total: int, question: str) -> None:
        bar.progress(done / total, text=f"{done}/{total} — {ui.md_text(question[:80])}")

    st.session_state.eval_report = run_eval(questions, kb, agent, strategies=strategies, k=settings.k,
                                            progress=progress, dataset=name)
    st.rerun()  # redraws the library (the sample's documents) and the report from session state


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _number(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def show_report(report) -> None:
    """Summary figures, the question table and one question's full answer."""
    st.markdown(f"##### {ui.md_text(report.dataset)}: {ui.plural(len(report.questions), 'question')}, "
                f"k={report.k}, answers with {report.answer_strategy}")
    for m in report.retrieval:
        cols = st.columns(4)
        cols[0].metric("Strategy", m.strategy)
        cols[1].metric("hit@1", _rate(m.hit_at.get(1)))
        cols[2].metric("hit@5", _rate(m.hit_at.get(5)))
        cols[3].metric("MRR@10", _number(m.mrr, 3))
    answer_metrics(report)
    st.dataframe(question_rows(report), hide_index=True,  # a rank column with gaps would show as 1.000000
                 column_config={"first-hit rank": st.column_config.NumberColumn(format="%d")})
    question_detail(report)


def answer_metrics(report) -> None:
    """Pass count, accuracy, refusal accuracy, citation validity, p50 seconds and LLM calls per question."""
    a, c = report.answers, report.cost
    if a is None:
        return
    passed = sum(1 for r in report.questions if r.passed)
    cols = st.columns(6)
    cols[0].metric("Passed", f"{passed}/{a.scored}")
    cols[1].metric("Accuracy", _rate(a.accuracy))
    cols[2].metric("Refusal accuracy", _rate(a.refusal_accuracy), help=f"{a.unanswerable} unanswerable")
    cols[3].metric("Citation validity", _rate(a.citation_validity), help=f"{a.citations_scored} answers scored")
    cols[4].metric("p50 seconds", _number(c.seconds_p50 if c else None))
    cols[5].metric("LLM calls/question", _number(c.llm_calls_per_question if c else None, 1))


def question_rows(report) -> list[dict]:
    """One table row per question; the rank is the first gold chunk's under the answering strategy."""
    verdict = {True: "pass", False: "fail", None: "—"}
    return [{"id": r.question.id, "kind": r.question.kind or "—", "question": r.question.question,
             "first-hit rank": r.ranks.get(report.answer_strategy), "result": verdict[r.passed],
             "reason": r.reason or "; ".join(r.errors)} for r in report.questions]


def question_detail(report) -> None:
    """A selectbox of the questions; the chosen one's verdict, answer (escaped), sources and reasoning."""
    results = report.questions
    index = st.selectbox("Open a question", range(len(results)), key="eval_question",
                         format_func=lambda i: f"{results[i].question.id} — {results[i].question.question[:90]}")
    if index is None:
        return
    result = results[index]
    st.markdown(f"**{ui.md_text(result.question.question)}**")
    verdict = {True: ":green-badge[pass]", False: ":red-badge[fail]", None: ":gray-badge[not scored]"}[result.passed]
    st.markdown(f"{verdict} {ui.md_text(result.reason or '')}")
    for error in result.errors:
        st.error(ui.md_text(error), icon=":material/error:")
    answer = result.answer or {}
    if not answer:
        return
    sources, reasoning = st.tabs([f"Answer and sources ({len(answer.get('citations') or [])})", "Reasoning"])
    with sources:
        st.markdown(ui.md_safe(str(answer.get("answer", ""))) or "_(no answer)_")
        for citation in answer.get("citations") or []:
            st.caption(ui.md_text(ui.citation_label(citation)))
        if result.citation_reason:
            st.caption(f"Citations: {ui.md_text(result.citation_reason)}")
    with reasoning:
        st.markdown("##### Verification")
        st.markdown(av.claims_markdown(answer))
        st.markdown("##### Steps")
        trace = answer.get("trace") or []
        st.dataframe(av.trace_rows(trace), hide_index=True)
        with st.expander("Every step's details (JSON)"):
            st.json(trace, expanded=False)


# ---- the page --------------------------------------------------------------------------------------------------

def main() -> None:
    """Draw the page: the cheap parts first, then the library (loaded once per process), then the chat."""
    st.set_page_config(page_title="Docagent — ask your documents", page_icon=":material/menu_book:", layout="wide")
    cfg = rt.AppConfig.from_env()
    init_session()
    with st.sidebar:
        page = st.radio("Page", PAGES, horizontal=True, key="page", label_visibility="collapsed")
        st.header("Library", anchor=False)
        uploads = upload_widget()
        queue_box = st.container()  # the ingestion queue: every tab sees it, redrawn on its own
        library_box = st.container()
        settings = settings_panel(cfg)
    header(settings, cfg)
    read_only_slot = st.empty()
    with library_box:
        kb = open_library(cfg)
        queue = qp.shared_queue(str(cfg.data_dir), kb)
        qp.enqueue_uploads(queue, uploads)  # written to disk, then the uploader is emptied (reruns when any)
        show_notice()
        qp.mark_library_drawn(queue)
        scope, count = document_list(kb)
    with queue_box:
        qp.queue_panel(queue)
    if kb.read_only_reason:  # another program owns the embedded library: reading works, changing it does not
        read_only_slot.warning(f"**Read-only library:** {ui.md_text(kb.read_only_reason)}.", icon=":material/lock:")
    if page == "Evaluate":
        evaluate_page(kb, queue, cfg, settings)
    else:
        chat_page(kb, queue, cfg, settings, scope, count)
    offline_agent(*resources(cfg))  # imports LangGraph once the page is up, so the first question does not wait


def chat_page(kb, queue, cfg: rt.AppConfig, settings: rt.Settings, scope: tuple[str, ...], count: int) -> None:
    """The chat: example questions on an empty chat, the history, the chat box, the conversation controls.

    The chat works while the queue indexes the rest of a batch; an answer given meanwhile names the files it
    could not search yet."""
    controls = st.container()  # filled last, so the first answer of a chat already gets them
    indexing = bool(queue.pending_names())
    waiting = "The first document is being indexed…" if indexing else "Add a document to start asking"
    question = st.chat_input("Ask about your documents" if count else waiting,
                             disabled=not count) or st.session_state.pop("pending_question", None)
    intro = st.empty()  # one slot: when a question arrives the intro goes at once instead of lingering faded
    if not st.session_state.messages and not question:
        with intro.container():
            empty_state(count > 0, indexing)
    render_history(kb)
    if question and count:
        ask(kb, cfg, settings, question, scope, () if scope else queue.pending_names())
    if st.session_state.messages:
        with controls:
            conversation_controls(settings)


def open_library(cfg: rt.AppConfig):
    """The shared KnowledgeBase; a store that cannot open stops the page with the reason."""
    try:
        with st.spinner("Opening the library (first start loads the embedding model)…"):
            kb = load_knowledge_base(*resources(cfg))
    except (ImportError, *library_errors()) as error:
        log.error("cannot open the library", exc_info=error)
        st.error(f"The library cannot be opened: {ui.md_text(str(error))}", icon=":material/error:")
        offer_rebuild(cfg, error)
        st.stop()
    if st.session_state.pop("rebuild_requested", False) and kb.rebuilt:
        done = sum(r.status != "failed" for r in kb.rebuilt)
        st.success(f"Library rebuilt from the kept originals: {done} of {len(kb.rebuilt)} files indexed again.",
                   icon=":material/build:")
    return kb


def offer_rebuild(cfg: rt.AppConfig, error: BaseException) -> None:
    """For a store that lost its data: rebuild from the kept originals (the user's only copies are never
    deleted; a damaged database is set aside, not emptied)."""
    from vector_db import LibraryDamaged

    if not isinstance(error, LibraryDamaged):
        return
    st.info("Your files are safe: a copy of every indexed file is kept in the data directory. Rebuilding indexes "
            "them again; a damaged database is set aside, not deleted.", icon=":material/info:")
    if st.button("Rebuild the library from the kept originals", icon=":material/build:", key="rebuild_library"):
        rebuild_requests().add(resources(cfg)[0])
        st.session_state["rebuild_requested"] = True
        st.rerun()


# Streamlit runs this file as __main__. The parser's worker processes re-run the main script as __mp_main__
# (Python 3.11 forkserver): the guard keeps them from drawing the whole app again for every upload.
if __name__ == "__main__":
    main()
