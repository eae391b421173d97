"""The one place that builds the real objects from a data directory (used by cli.py, app.py and the eval).

Layout of a data directory: chroma/ (embedded Chroma, unless CHROMA_HOST points at a server), models/ (the ONNX
export of all-MiniLM-L6-v2, made once), bm25/ (the keyword index), originals/ (a copy of every indexed file, for
the source viewer), queue/ (uploads waiting to be indexed, and recent results), library.lock (the writers' lock).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

DATA_DIR_ENV = "DOCAGENT_DATA_DIR"
DEFAULT_DATA_DIR = "data"
GEMINI_MODEL_ENV = "DOCAGENT_GEMINI_MODEL"
# The current generally-available Gemini Flash model (Google's Gemini API changelog, 8 Oct 2026: gemini-3.7-flash
# retired in favour of gemini-3.8-flash; gemini-2.5-flash shuts down on 1 Dec 2026, Gemini deprecations page).
DEFAULT_GEMINI_MODEL = "gemini-3.8-flash"
# Offered when the key's own model list cannot be fetched (offline, no key yet, a listing error).
FALLBACK_GEMINI_MODELS = (DEFAULT_GEMINI_MODEL, "gemini-3.6-flash", "gemini-3.5-flash-lite")
PROVIDER_ENV = "DOCAGENT_PROVIDER"
PROVIDERS = ("gemini", "local", "offline")
LOCAL_BASE_URL_ENV = "DOCAGENT_LOCAL_BASE_URL"
LOCAL_MODEL_ENV = "DOCAGENT_LOCAL_MODEL"
LOCAL_API_KEY_ENV = "DOCAGENT_LOCAL_API_KEY"
DEFAULT_LOCAL_BASE_URL = "http://127.0.0.1:11434/v1"  # Ollama's OpenAI-compatible endpoint


@dataclass(frozen=True)
class ModelConfig:
    """Which model answers and how to reach it (model_config builds it). Keys are left out of repr."""

    provider: str  # gemini | local | offline ("" in model_env when unset)
    gemini_key: str = field(default="", repr=False)
    gemini_model: str = DEFAULT_GEMINI_MODEL
    local_base_url: str = DEFAULT_LOCAL_BASE_URL
    local_model: str = ""
    local_api_key: str = field(default="", repr=False)


def data_dir_from_env(given: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """`given`, else $DOCAGENT_DATA_DIR, else ./data."""
    environ = os.environ if environ is None else environ
    return Path(given or environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def default_embedder(data_dir: Path, *, quantized: bool = False):
    """all-MiniLM-L6-v2 through ONNX Runtime, its export cached in <data_dir>/models."""
    from vector_db import OnnxEmbedder

    return OnnxEmbedder(Path(data_dir) / "models", quantized=quantized)


def open_knowledge_base(data_dir: Path, *, embedder=None, environ: Mapping[str, str] | None = None,
                        rebuild: bool = False, **options):
    """The KnowledgeBase over <data_dir> (Chroma embedded there, or the server named by CHROMA_HOST).

    `rebuild=True` indexes the kept originals (<data_dir>/originals) the library lacks, after its store lost
    its data; an embedded Chroma database that cannot be opened at all is first moved aside (to
    chroma.damaged-<time>, never deleted) so that a fresh one can be made. Other options go to KnowledgeBase
    (e.g. `rebuild_progress`).

    Raises:
        LibraryDamaged: (without `rebuild`) the store is unreadable or lost its data; the message names the rebuild.
    """
    from advanced_retrieval import KnowledgeBase
    from vector_db import LibraryDamaged, VectorStore, client_from_env

    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    embedder = embedder if embedder is not None else default_embedder(data_dir)
    try:
        client = client_from_env(data_dir, environ)
    except LibraryDamaged:
        if not rebuild:
            raise
        _set_aside(data_dir / "chroma")
        client = client_from_env(data_dir, environ)
    store = VectorStore(client, embedder)
    return KnowledgeBase(store, data_dir / "bm25", embedder, lock_path=data_dir / "library.lock", rebuild=rebuild,
                         **options)


def open_ingest_queue(data_dir: Path, kb, **options):
    """The ingestion queue of <data_dir> (its uploads under <data_dir>/queue), its worker indexing through `kb`.

    One per server process (the app holds it in st.cache_resource); entries a previous run left are resumed.
    Options go to IngestQueue (e.g. `keep_finished_s`).
    """
    from advanced_retrieval import IngestQueue

    return IngestQueue(kb, Path(data_dir) / "queue", **options)


def _set_aside(chroma_dir: Path) -> Path:
    """Move an unreadable embedded Chroma directory to chroma.damaged-<time> (kept for the user to inspect).

    Raises:
        LibraryDamaged: another program holds the directory (moving it would pull it from under that program).
    """
    from vector_db import LibraryDamaged
    from vector_db.owner import claim

    held = claim(chroma_dir)
    try:
        if not held.owner:
            raise LibraryDamaged(f"the damaged library in {chroma_dir} is open in another program ({held.holder}): "
                                 f"close it, then rebuild again")
    finally:
        held.release()
    aside = chroma_dir.with_name(f"chroma.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(chroma_dir, aside)
    return aside


def gemini_model_from_env(given: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """`given`, else $DOCAGENT_GEMINI_MODEL, else DEFAULT_GEMINI_MODEL (the one place the variable is read)."""
    environ = os.environ if environ is None else environ
    return (given or "").strip() or (environ.get(GEMINI_MODEL_ENV) or "").strip() or DEFAULT_GEMINI_MODEL


def gemini_key_from_env(environ: Mapping[str, str] | None = None) -> str:
    """The Gemini key from $GOOGLE_API_KEY, else $GEMINI_API_KEY (both names Google documents); "" when unset."""
    environ = os.environ if environ is None else environ
    return (environ.get("GOOGLE_API_KEY") or environ.get("GEMINI_API_KEY") or "").strip()


def model_env(environ: Mapping[str, str] | None = None) -> ModelConfig:
    """The model variables as set, unchecked (provider "" when unset), for the app to show and let be fixed."""
    environ = os.environ if environ is None else environ
    return ModelConfig(
        provider=(environ.get(PROVIDER_ENV) or "").strip().lower(), gemini_model=gemini_model_from_env(None, environ),
        local_base_url=(environ.get(LOCAL_BASE_URL_ENV) or "").strip() or DEFAULT_LOCAL_BASE_URL,
        local_model=(environ.get(LOCAL_MODEL_ENV) or "").strip(),
        local_api_key=(environ.get(LOCAL_API_KEY_ENV) or "").strip())


def model_config(*, api_key: str = "", gemini_model: str | None = None, provider: str | None = None,
                 environ: Mapping[str, str] | None = None) -> ModelConfig:
    """Which model answers, from the arguments, else the environment (the one place these variables are read).

    `provider` (else $DOCAGENT_PROVIDER): gemini | local | offline; unset, Gemini when `api_key` is given, else
    offline. Local: $DOCAGENT_LOCAL_BASE_URL (default DEFAULT_LOCAL_BASE_URL, Ollama's), $DOCAGENT_LOCAL_MODEL,
    optional $DOCAGENT_LOCAL_API_KEY. Gemini: `api_key`, `gemini_model` (else $DOCAGENT_GEMINI_MODEL).

    Raises:
        ValueError: an unknown provider (naming the allowed ones), Gemini without a key, a local model unnamed.
    """
    given = model_env(environ)
    chosen = (provider or given.provider).strip().lower() or ("gemini" if api_key else "offline")
    if chosen not in PROVIDERS:
        raise ValueError(f"{PROVIDER_ENV}={chosen!r} is not a provider; allowed: {', '.join(PROVIDERS)}")
    config = replace(given, provider=chosen, gemini_key=api_key,
                     gemini_model=gemini_model_from_env(gemini_model, environ))
    if chosen == "gemini" and not api_key:
        raise ValueError(f"{PROVIDER_ENV}=gemini needs a Gemini key (GOOGLE_API_KEY)")
    if chosen == "local" and not config.local_model:
        raise ValueError(f"{PROVIDER_ENV}=local needs {LOCAL_MODEL_ENV}: a model your server lists "
                         f"(e.g. llama3.2 after `ollama pull llama3.2`)")
    return config


def make_brain(config: ModelConfig, embedder):
    """(brain, budgets) for `config`: GeminiBrain, LocalBrain (with budgets sized for slow local generation) or
    the offline extractive brain."""
    from agentic_rag import DEFAULT_BUDGETS, LOCAL_BUDGETS, OfflineBrain, make_gemini_brain, make_local_brain

    if config.provider == "local":
        brain = make_local_brain(config.local_base_url, config.local_model, api_key=config.local_api_key)
        return brain, LOCAL_BUDGETS
    if config.provider == "gemini":
        return make_gemini_brain(config.gemini_key, model=config.gemini_model), DEFAULT_BUDGETS
    return OfflineBrain(embedder), DEFAULT_BUDGETS


def make_agent(kb, embedder, *, api_key: str = "", model: str | None = None, provider: str | None = None,
               environ: Mapping[str, str] | None = None):
    """The engine over `kb`, answering with the model `model_config` picks (a failing model falls back offline).

    `api_key` is the Gemini key; `model` the Gemini model (default $DOCAGENT_GEMINI_MODEL, else
    DEFAULT_GEMINI_MODEL); `provider` overrides $DOCAGENT_PROVIDER ("offline" for a --offline flag).
    Raises ValueError for a configuration model_config refuses.
    """
    from agentic_rag import build_agent

    brain, budgets = make_brain(model_config(api_key=api_key, gemini_model=model, provider=provider,
                                             environ=environ), embedder)
    return build_agent(brain, kb.retriever, embedder=embedder, budgets=budgets)
