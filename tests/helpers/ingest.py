"""A knowledge base whose embedder can hold a file mid-embedding, and text files to queue (the ingestion queue's
tests, and the server process they kill, import these)."""

from __future__ import annotations

import threading
from pathlib import Path

from advanced_retrieval import KnowledgeBase
from vector_db import HashingEmbedder, VectorStore, make_client
from wiring import knowledge_base

WAIT = 60.0  # seconds before a wait gives up: only a hang reaches it


class GatedEmbedder(HashingEmbedder):
    """Holds any batch containing `marker` until `release` is set; `entered` tells the test it is held."""

    def __init__(self, marker: str = "GATED"):
        super().__init__()
        self.marker = marker.lower()
        self.entered, self.release = threading.Event(), threading.Event()

    def embed(self, texts, progress=None):
        if any(self.marker in t.lower() for t in texts):
            self.entered.set()
            assert self.release.wait(WAIT), "the test never released the embedder"
        return super().embed(texts, progress)


def open_kb(root: Path, embedder) -> KnowledgeBase:
    store = VectorStore(make_client(root / "data"), embedder, batch_size=4)  # several batches: a file can be held
    return knowledge_base(store, root, embedder, isolate=False)


def text(topic: str, paragraphs: int = 12) -> bytes:
    """About `paragraphs` chunks on `topic` (its word appears in every one)."""
    return "\n\n".join(f"Paragraph {i} about {topic}. " + f"The {topic} report goes on at length. " * 12
                       for i in range(paragraphs)).encode()
