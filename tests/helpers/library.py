"""Knowledge bases as the app opens them (in-process parsing, the fake embedder), generated text documents, and the
soundness check of a library."""

from __future__ import annotations

import random
from pathlib import Path

from advanced_retrieval import KnowledgeBase
from testing import crash  # the kill-and-restart steps, shared with bench/crash.py
from vector_db import VectorStore
from wiring import knowledge_base


def kb_on(client, data: Path, embedder, *, batch_size: int | None = None, **options) -> KnowledgeBase:
    store = VectorStore(client, embedder, batch_size=batch_size)
    return knowledge_base(store, data, embedder, isolate=False, **options)


def open_kb(data: Path, embedder, **env) -> KnowledgeBase:
    """The knowledge base as the app builds it, in-process parsing (the fake embedder keeps tests fast)."""
    environ = {k: v for k, v in env.items() if v is not None}
    from wiring import open_knowledge_base

    return open_knowledge_base(data, embedder=embedder, environ=environ, isolate=False)


def text_doc(i: int, topic: str) -> tuple[str, bytes]:
    rng = random.Random(f"{topic}{i}")
    body = "\n\n".join(f"{topic} report {i} part {p}. " + " ".join(crash.sentence(rng) for _ in range(5))
                       for p in range(4))
    return f"{topic}-{i:02d}.txt", body.encode()


def assert_sound(kb: KnowledgeBase, names: set[str]) -> None:
    """Every name indexed once, both indexes agree, no chunk id stored twice."""
    check = kb.check()
    docs = kb.documents()
    assert check["consistent"], check
    assert sorted(d.file_name for d in docs) == sorted(names)
    ids = kb.store.chunk_ids()
    assert len(ids) == len(set(ids)) == sum(d.chunks for d in docs) == check["chunks_in_bm25"]
