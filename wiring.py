"""The one place that builds the real objects from a data directory (used by cli.py, app.py and the eval).

Layout of a data directory: chroma/ (embedded Chroma, unless CHROMA_HOST points at a server), models/ (the ONNX
export of all-MiniLM-L6-v2, made once), bm25/ (the keyword index), originals/ (a copy of every indexed file, for
the source viewer), library.lock (the writers' lock).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

DATA_DIR_ENV = "DOCAGENT_DATA_DIR"
DEFAULT_DATA_DIR = "data"


def data_dir_from_env(given: str | Path | None = None, environ: Mapping[str, str] | None = None) -> Path:
    """`given`, else $DOCAGENT_DATA_DIR, else ./data."""
    environ = os.environ if environ is None else environ
    return Path(given or environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def default_embedder(data_dir: Path, *, quantized: bool = False):
    """all-MiniLM-L6-v2 through ONNX Runtime, its export cached in <data_dir>/models."""
    from vector_db import OnnxEmbedder

    return OnnxEmbedder(Path(data_dir) / "models", quantized=quantized)


def open_knowledge_base(data_dir: Path, *, embedder=None, environ: Mapping[str, str] | None = None, **options):
    """The KnowledgeBase over <data_dir> (Chroma embedded there, or the server named by CHROMA_HOST)."""
    from advanced_retrieval import KnowledgeBase
    from vector_db import VectorStore, client_from_env

    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    embedder = embedder if embedder is not None else default_embedder(data_dir)
    store = VectorStore(client_from_env(data_dir, environ), embedder)
    return KnowledgeBase(store, data_dir / "bm25", embedder, lock_path=data_dir / "library.lock", **options)


def make_agent(kb, embedder, *, api_key: str = "", model: str = "gemini-2.5-flash"):
    """The engine over `kb`: Gemini (falling back to offline when it fails) given a key, else offline extractive."""
    from agentic_rag import OfflineBrain, build_agent, make_gemini_brain

    brain = make_gemini_brain(api_key, model=model) if api_key else OfflineBrain(embedder)
    return build_agent(brain, kb.retriever, embedder=embedder)
