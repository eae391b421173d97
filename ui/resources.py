"""The heavy shared objects (embedder, library, ingestion queue, engines, model catalogs), built once per server
process by st.cache_resource, and the per-tab engines kept in st.session_state.

Only what is safe to share between browser tabs is cached for all: the embedding model, the library (it serialises
every tab's writes), the ingestion queue (its worker is the library's one writer of uploads) and the offline
engine (no per-user state). A Gemini or local engine carries the user's key,
so it lives in the tab's session state.
"""

from __future__ import annotations

import sys
from dataclasses import replace

import streamlit as st

import wiring
from ui import runtime as rt
from ui.seams import Engine, Library, Uploads

_OPENED: set[tuple] = set()  # shared_key of every library this process has opened (the first start is slower)


def shared_key(config: wiring.Config) -> tuple:
    """What tells the shared objects apart: data dir, model dir, fake embedder, the CHROMA_* settings. Never a key:
    one library per data directory and process (two would fight over the embedded store)."""
    return str(config.data_dir), str(config.models), config.fake_embedder, tuple(sorted(config.chroma.items()))


def load_embedder(config: wiring.Config):
    """The embedding model, shared by every session (it is read-only)."""
    return _embedder(shared_key(config), config)


@st.cache_resource(show_spinner=False)
def _embedder(key: tuple, _config: wiring.Config):
    return wiring.make_embedder(_config)


@st.cache_resource(show_spinner=False)
def rebuild_requests() -> set:
    """Data dirs whose next opening rebuilds the library from the kept originals (the Rebuild button)."""
    return set()


def load_library(config: wiring.Config) -> Library:
    """Store + BM25 behind one KnowledgeBase (built as the CLI builds it); it serialises all sessions' writes.

    A store that lost its data raises vector_db.LibraryDamaged (nothing is cached): the page then offers the
    rebuild, and the next opening indexes the kept originals again (cli.py rebuild does the same).
    """
    return _library(shared_key(config), config)


@st.cache_resource(show_spinner=False)
def _library(key: tuple, _config: wiring.Config) -> Library:
    from document_processor import warm_up

    config = _config

    warm_up(rt.parse_preload(sys.modules["__main__"], sys.modules))  # parse children start in ms, not seconds
    rebuild = str(config.data_dir) in rebuild_requests()
    kb = wiring.open_knowledge_base(config.data_dir, embedder=load_embedder(config), environ=config.chroma,
                                    rebuild=rebuild)
    rebuild_requests().discard(str(config.data_dir))
    _OPENED.add(key)
    # Read each document's vectors and headings ahead, now and after each batch of writes, on a background
    # thread: a document's first question then costs what its later ones do (advanced_retrieval.hybrid).
    kb.retriever.read_ahead = True
    kb.retriever.warm_soon(0.0)
    return kb


def load_queue(config: wiring.Config) -> Uploads:
    """The server's ingestion queue over the shared library: built as the server starts (ui/serve.py) or on the
    first page load, when it resumes what the previous run left queued."""
    return _queue(shared_key(config), config)


@st.cache_resource(show_spinner=False)
def _queue(key: tuple, _config: wiring.Config) -> Uploads:
    return wiring.open_ingest_queue(_config.data_dir, load_library(_config))


def first_start(config: wiring.Config) -> bool:
    """True until this process has opened the library once (the embedding model is loaded then)."""
    return shared_key(config) not in _OPENED


def offline_engine(config: wiring.Config) -> Engine:
    """The offline extractive engine; it holds no per-user state, so all sessions share it."""
    return _offline_engine(shared_key(config), config)


@st.cache_resource(show_spinner=False)
def _offline_engine(key: tuple, _config: wiring.Config) -> Engine:
    config = _config
    return wiring.build_for(wiring.ModelConfig("offline"), load_library(config), load_embedder(config))


@st.cache_resource(show_spinner=False)
def model_catalog() -> rt.ModelCatalog:
    """The Gemini models each key can use; shared by all sessions (entries are keyed by the key's hash)."""
    return rt.ModelCatalog()


@st.cache_resource(show_spinner=False)
def local_catalog() -> rt.LocalModelCatalog:
    """The models each local server lists; shared by all sessions (keyed by address and key hash)."""
    return rt.LocalModelCatalog()


def session_engine(config: wiring.Config, settings: rt.Settings) -> Engine:
    """This tab's engine: the offline one is shared; a Gemini or local one is built per tab (the key is the
    user's) and rebuilt when the model, the address or the key changes."""
    if settings.mode == "offline":
        return offline_engine(config)
    model = settings_model(config, settings)
    signature = (model.provider, model.gemini_model, model.gemini_base_url, model.local_base_url,
                 model.local_model, rt.key_fingerprint(model.gemini_key), rt.key_fingerprint(model.local_api_key))
    cached = st.session_state.get("engine")
    if cached and cached[0] == signature:
        return cached[1]
    engine = wiring.build_for(model, load_library(config), load_embedder(config))
    st.session_state.engine = (signature, engine)
    return engine


SAMPLE_LIBRARY = "evaluation-sample"  # under the data directory: the bundled sample's own library


def sample_library(config: wiring.Config) -> Library:
    """The library the Evaluate page's bundled sample is indexed and asked in, never the user's: embedded
    Chroma in <data dir>/evaluation-sample, even when the user's library is on a Chroma server."""
    return _sample_library(shared_key(config), config)


@st.cache_resource(show_spinner=False)
def _sample_library(key: tuple, _config: wiring.Config) -> Library:
    return wiring.open_knowledge_base(_config.data_dir / SAMPLE_LIBRARY, embedder=load_embedder(_config), environ={})


def engine_over(kb: Library, config: wiring.Config, settings: rt.Settings) -> Engine:
    """An engine over another library (the sample's) answering as this tab's settings choose."""
    model = wiring.ModelConfig("offline") if settings.mode == "offline" else settings_model(config, settings)
    return wiring.build_for(model, kb, load_embedder(config))


def settings_model(config: wiring.Config, settings: rt.Settings) -> wiring.ModelConfig:
    """The model this tab's settings choose, reached as the configuration says (e.g. a Gemini stub's address)."""
    if settings.mode == "local":
        return wiring.ModelConfig("local", local_base_url=settings.local_base_url, local_model=settings.local_model,
                                  local_api_key=settings.local_api_key)
    return replace(wiring.ModelConfig("gemini"), gemini_key=settings.api_key, gemini_model=settings.model,
                   gemini_base_url=config.gemini_base_url)


def library_errors() -> tuple[type[BaseException], ...]:
    """What a library operation may raise besides a bad file; imported late (vector_db pulls in chromadb)."""
    from vector_db import StoreError

    return (StoreError, OSError, ValueError)
