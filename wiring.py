"""The composition root: reads the environment once (Config.from_env) and builds the real objects from it for
the app (ui/), the CLI, the evaluation and the benchmarks. Nothing else in the project reads os.environ.

Layout of a data directory: chroma/ (embedded Chroma, unless CHROMA_HOST points at a server), models/ (the ONNX
export of all-MiniLM-L6-v2, made once; DOCAGENT_MODEL_DIR puts it elsewhere), bm25/ (the keyword index),
originals/ (a copy of every indexed file, for the source viewer), library.lock (the writers' lock),
conversations.sqlite3 (the app's saved chats), queue/ (uploads waiting to be indexed, and recent results).

Variables: DOCAGENT_DATA_DIR (default ./data), DOCAGENT_MODEL_DIR, DOCAGENT_FAKE_EMBEDDER=1 (the deterministic
hashing embedder, for tests and demos; DOCAGENT_FAKE_EMBED_DELAY=S makes it take S seconds per passage, so a
browser test can catch a file mid-embedding), GOOGLE_API_KEY or GEMINI_API_KEY, DOCAGENT_GEMINI_MODEL,
DOCAGENT_GEMINI_BASE_URL (a local Gemini stub), DOCAGENT_PROVIDER (gemini | local | offline),
DOCAGENT_LOCAL_BASE_URL / _MODEL / _API_KEY, CHROMA_HOST / CHROMA_PORT / CHROMA_SSL, DOCAGENT_EMBED_RUNTIME
(auto | onnxruntime | openvino-bf16: vector_db.embedder).
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
LOCAL_MODEL_ENV = "DOCAGENT_LOCAL_MODEL"
DEFAULT_LOCAL_BASE_URL = "http://127.0.0.1:11434/v1"  # Ollama's OpenAI-compatible endpoint
CHROMA_VARIABLES = ("CHROMA_HOST", "CHROMA_PORT", "CHROMA_SSL")
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Config:
    """Everything the environment says, read once (Config.from_env). Keys are left out of repr.

    `provider` is "" when DOCAGENT_PROVIDER is unset or names no provider (the app shows it unselected;
    model_config refuses an unknown one by name). `chroma` holds the CHROMA_* variables as set.
    """

    data_dir: Path
    model_dir: Path | None = None
    fake_embedder: bool = False
    fake_embed_delay: float = 0.0
    embed_runtime: str = ""  # DOCAGENT_EMBED_RUNTIME; "" is "auto" (vector_db.embedder.choose_runtime)
    gemini_key: str = field(default="", repr=False)
    gemini_base_url: str | None = None
    gemini_model: str = DEFAULT_GEMINI_MODEL
    provider: str = ""
    provider_given: str = ""  # DOCAGENT_PROVIDER as written (lower-cased), for model_config's error message
    local_base_url: str = DEFAULT_LOCAL_BASE_URL
    local_model: str = ""
    local_api_key: str = field(default="", repr=False)
    chroma: Mapping[str, str] = field(default_factory=dict)

    @property
    def models(self) -> Path:
        """Where the exported embedding model is cached."""
        return self.model_dir or self.data_dir / "models"

    @property
    def conversations(self) -> Path:
        """The SQLite file of the app's saved chats."""
        return self.data_dir / "conversations.sqlite3"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, data_dir: str | Path | None = None) -> Config:
        """The configuration `environ` (default: os.environ) describes; `data_dir` overrides DOCAGENT_DATA_DIR."""
        env = os.environ if environ is None else environ

        def get(name: str) -> str:
            return (env.get(name) or "").strip()

        given = get(PROVIDER_ENV).lower()
        return cls(
            data_dir=Path(data_dir or get(DATA_DIR_ENV) or DEFAULT_DATA_DIR).expanduser().resolve(),
            model_dir=Path(get("DOCAGENT_MODEL_DIR")).expanduser().resolve() if get("DOCAGENT_MODEL_DIR") else None,
            fake_embedder=get("DOCAGENT_FAKE_EMBEDDER").lower() in _TRUE,
            fake_embed_delay=float(get("DOCAGENT_FAKE_EMBED_DELAY") or 0.0),
            embed_runtime=get("DOCAGENT_EMBED_RUNTIME").lower(),
            gemini_key=get("GOOGLE_API_KEY") or get("GEMINI_API_KEY"),  # both names Google documents
            gemini_base_url=get("DOCAGENT_GEMINI_BASE_URL") or None,
            gemini_model=get(GEMINI_MODEL_ENV) or DEFAULT_GEMINI_MODEL,
            provider=given if given in PROVIDERS else "", provider_given=given,
            local_base_url=get("DOCAGENT_LOCAL_BASE_URL") or DEFAULT_LOCAL_BASE_URL,
            local_model=get(LOCAL_MODEL_ENV), local_api_key=get("DOCAGENT_LOCAL_API_KEY"),
            chroma={name: env[name] for name in CHROMA_VARIABLES if name in env},
        )


@dataclass(frozen=True)
class ModelConfig:
    """Which model answers and how to reach it (model_config builds it). Keys are left out of repr."""

    provider: str  # gemini | local | offline
    gemini_key: str = field(default="", repr=False)
    gemini_model: str = DEFAULT_GEMINI_MODEL
    gemini_base_url: str | None = None
    local_base_url: str = DEFAULT_LOCAL_BASE_URL
    local_model: str = ""
    local_api_key: str = field(default="", repr=False)


def model_config(config: Config, *, gemini_model: str | None = None, provider: str | None = None) -> ModelConfig:
    """Which model answers: `provider` (else DOCAGENT_PROVIDER; unset, Gemini with a key, else offline).

    Raises:
        ValueError: an unknown provider (naming the allowed ones), Gemini without a key, a local model unnamed.
    """
    chosen = (provider or config.provider_given).strip().lower() or ("gemini" if config.gemini_key else "offline")
    if chosen not in PROVIDERS:
        raise ValueError(f"{PROVIDER_ENV}={chosen!r} is not a provider; allowed: {', '.join(PROVIDERS)}")
    if chosen == "gemini" and not config.gemini_key:
        raise ValueError(f"{PROVIDER_ENV}=gemini needs a Gemini key (GOOGLE_API_KEY)")
    if chosen == "local" and not config.local_model:
        raise ValueError(f"{PROVIDER_ENV}=local needs {LOCAL_MODEL_ENV}: a model your server lists "
                         f"(e.g. llama3.2 after `ollama pull llama3.2`)")
    return ModelConfig(chosen, gemini_key=config.gemini_key, gemini_model=(gemini_model or "").strip()
                       or config.gemini_model, gemini_base_url=config.gemini_base_url,
                       local_base_url=config.local_base_url, local_model=config.local_model,
                       local_api_key=config.local_api_key)


def make_embedder(config: Config):
    """The hashing embedder with DOCAGENT_FAKE_EMBEDDER=1, else all-MiniLM-L6-v2 exported to ONNX (cached in
    config.models), run by the runtime DOCAGENT_EMBED_RUNTIME names (default: bfloat16 where the CPU has it)."""
    if config.fake_embedder:
        from vector_db import HashingEmbedder

        return HashingEmbedder(delay=config.fake_embed_delay)
    from vector_db import OnnxEmbedder

    return OnnxEmbedder(config.models, runtime=config.embed_runtime or None)


def replace_data_dir(config: Config, data_dir: Path) -> Config:
    """`config` with another data directory (a bundled set's own library); the embedding model stays cached
    where it was, so it is not exported again."""
    return replace(config, data_dir=Path(data_dir), model_dir=config.models)


def open_library(config: Config, *, embedder=None, rebuild: bool = False, **options):
    """The KnowledgeBase over config.data_dir, with `embedder` (default make_embedder(config))."""
    return open_knowledge_base(config.data_dir, embedder=embedder if embedder is not None else make_embedder(config),
                               environ=config.chroma, rebuild=rebuild, **options)


def open_knowledge_base(data_dir: Path, *, embedder=None, environ: Mapping[str, str] | None = None,
                        rebuild: bool = False, **options):
    """The KnowledgeBase over <data_dir> (Chroma embedded there, or the server CHROMA_* in `environ` names).

    `embedder` defaults to the one Config.from_env(data_dir=data_dir) picks; `environ` to os.environ.
    `rebuild=True` indexes the kept originals (<data_dir>/originals) the library lacks, after its store lost
    its data; an embedded Chroma database that cannot be opened at all is first moved aside (to
    chroma.damaged-<time>, never deleted) so that a fresh one can be made. Other options go to KnowledgeBase
    (e.g. `rebuild_progress`).

    Raises:
        LibraryDamaged: (without `rebuild`) the store is unreadable or lost its data; the message names the rebuild.
    """
    from vector_db import LibraryDamaged, VectorStore, client_from_env

    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    environ = os.environ if environ is None else environ
    embedder = embedder if embedder is not None else make_embedder(Config.from_env(data_dir=data_dir))
    try:
        client = client_from_env(data_dir, environ)
    except LibraryDamaged:
        if not rebuild:
            raise
        _set_aside(data_dir / "chroma")
        client = client_from_env(data_dir, environ)
    store = VectorStore(client, embedder)
    return knowledge_base(store, data_dir, embedder, rebuild=rebuild, **options)


def knowledge_base(store, directory: Path, embedder, *, lock_path: Path | None = None, lock_timeout: float = 600.0,
                   **options):
    """The KnowledgeBase over `store` with its collaborators laid out in `directory`: the keyword index in
    bm25/, the kept originals in originals/ (a store on a Chroma server, which other data directories may share,
    also keeps them: advanced_retrieval.library.originals), the tables as data in tables.duckdb, the writers' lock file (default
    library.lock), and the hybrid retriever over the store and the keyword index. Other options go to
    KnowledgeBase (limits, isolate, rebuild, rebuild_progress)."""
    from advanced_retrieval import HybridRetriever, KeywordIndex, KnowledgeBase, Originals, WriteLock
    from advanced_retrieval.tables import TableStore

    directory = Path(directory)
    lock = WriteLock(lock_path or directory / "library.lock", timeout=lock_timeout)
    keyword_index = KeywordIndex(directory / "bm25", try_lock=lock.attempt)
    return KnowledgeBase(store, keyword_index, HybridRetriever(store, keyword_index, embedder),
                         Originals(directory / "originals", shared=store if store.shared else None), lock, tables=TableStore(directory / "tables.duckdb"),
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


def make_brain(model: ModelConfig, embedder):
    """(brain, budgets) for `model`: GeminiBrain, LocalBrain (with budgets sized for slow local generation) or
    the offline extractive brain."""
    from agentic_rag import DEFAULT_BUDGETS, LOCAL_BUDGETS, OfflineBrain, make_gemini_brain, make_local_brain

    if model.provider == "local":
        brain = make_local_brain(model.local_base_url, model.local_model, api_key=model.local_api_key)
        return brain, LOCAL_BUDGETS
    if model.provider == "gemini":
        return make_gemini_brain(model.gemini_key, model=model.gemini_model,
                                 base_url=model.gemini_base_url), DEFAULT_BUDGETS
    return OfflineBrain(embedder), DEFAULT_BUDGETS


def build_for(model: ModelConfig, kb, embedder):
    """The engine over `kb` answering with `model` (a failing model falls back offline)."""
    from agentic_rag import build_agent

    brain, budgets = make_brain(model, embedder)
    return build_agent(brain, kb.retriever, embedder=embedder, budgets=budgets, tables=kb.tables, outlines=kb)


def make_agent(kb, embedder, config: Config, *, model: str | None = None, provider: str | None = None):
    """The engine over `kb`, answering with the model `model_config` picks from `config`.

    `model` overrides the Gemini model; `provider` overrides DOCAGENT_PROVIDER ("offline" for a --offline flag).
    Raises ValueError for a configuration model_config refuses.
    """
    return build_for(model_config(config, gemini_model=model, provider=provider), kb, embedder)
