"""The chunks retrieval has read from the store (text and metadata), kept for the store generation they were
read at, so a retrieval reads only what no earlier one did."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from document_processor import Chunk


class Bodies:
    """Chunks by id for one store generation (a write moves the generation and empties them), the most recently
    used kept first, up to MAX_CACHED.

    Reading 30 chunks from Chroma costs ~2.5 ms at 28,000 chunks (its metadata rows are read one key at a time),
    and a question's retrievals (its sub-questions, a revision) and the next question about the same document read
    many of the same ones. A library that fits is read ahead whole (HybridRetriever.warm), as its vectors are.
    """

    MAX_CACHED = 32_768  # chunks: ~50 MB of text and metadata for filings' chunks (~1,000 characters each)

    def __init__(self, store):
        self._store = store
        self._generation: int | None = None
        self._chunks: OrderedDict[str, Chunk] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, ids: Iterable[str], generation: int) -> dict[str, Chunk]:
        """{id: chunk} of these ids: those kept, the others read in one store call (ids not stored, or of
        documents not ready, are left out)."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, Chunk] = {}
        with self._lock:
            if self._generation == generation:
                for cid in wanted:
                    chunk = self._chunks.get(cid)
                    if chunk is not None:
                        self._chunks.move_to_end(cid)
                        found[cid] = chunk
        missing = [cid for cid in wanted if cid not in found]
        if missing:
            read = self._store.get_chunks(missing)
            self.add(read, generation)
            found.update((c.id, c) for c in read)
        return found

    def add(self, chunks: Sequence[Chunk], generation: int) -> None:
        """Keep these chunks, read at `generation` (a different generation than the one kept empties the rest)."""
        with self._lock:
            if self._generation != generation:
                self._chunks.clear()
                self._generation = generation
            for chunk in chunks:
                self._chunks[chunk.id] = chunk
                self._chunks.move_to_end(chunk.id)
            while len(self._chunks) > self.MAX_CACHED:
                self._chunks.popitem(last=False)

    def read_ahead(self, ids: Sequence[str], generation: int, batch: int = 2_000) -> int:
        """Read these chunks now when they fit MAX_CACHED (a batch at a time); the number read."""
        if len(ids) > self.MAX_CACHED:
            return 0
        with self._lock:
            held = set(self._chunks) if self._generation == generation else set()
        missing = [cid for cid in ids if cid not in held]
        for start in range(0, len(missing), batch):
            self.add(self._store.get_chunks(missing[start:start + batch]), generation)
        return len(missing)
