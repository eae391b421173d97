"""The one place that builds the real objects from a data directory (used by cli.py, app.py and the eval).

Layout of a data directory: chroma/ (embedded Chroma, unless CHROMA_HOST points at a server), models/ (the ONNX
export of all-MiniLM-L6-v2, made once), bm25/ (the keyword index), originals/ (a copy of every indexed file, for
the source viewer), library.lock (the writers' lock).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "DOCAGENT_DATA_DIR"
DEFAULT_DATA_DIR = "data"
GEMINI_MODEL_ENV = "DOCAGENT_GEMINI_MODEL"
# The current generally-available Gemini Flash model (Google's Gemini API changelog, 8 Oct 2026: gemini-3.7-flash
# retired in favour of gemini-3.8-flash; gemini-2.5-flash shuts down on 1 Dec 2026, Gemini deprecations page).
DEFAULT_GEMINI_MODEL = "gemini-3.8-flash"
# Offered when the key's own model list cannot be fetched (offline, no key yet, a listing error).
FALLBACK_GEMINI_MODELS = (DEFAULT_GEMINI_MODEL, "gemini-3.6-flash", "gemini-3.5-flash-lite")


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


def make_agent(kb, embedder, *, api_key: str = "", model: str | None = None,
               environ: Mapping[str, str] | None = None):
    """The engine over `kb`: Gemini (falling back to offline when it fails) given a key, else offline extractive.

    `model` defaults to $DOCAGENT_GEMINI_MODEL, else DEFAULT_GEMINI_MODEL.
    """
    from agentic_rag import OfflineBrain, build_agent, make_gemini_brain

    if not api_key:
        return build_agent(OfflineBrain(embedder), kb.retriever, embedder=embedder)
    brain = make_gemini_brain(api_key, model=gemini_model_from_env(model, environ))
    return build_agent(brain, kb.retriever, embedder=embedder)
