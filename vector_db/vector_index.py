"""Checking the vector (HNSW) index at open, and rebuilding it from the stored chunk texts when it is damaged.

Chroma keeps chunk texts and metadata in SQLite and the vectors only in its HNSW segment files. When those are
damaged (segment directory deleted, level-0 data truncated: issue 16, item 9), counts still add up, so the
library's own checks pass, while vector search fails with "Error finding id" / "Error getting embedding" or
silently never returns most chunks. The embeddings cannot be read back either (Chroma reads them from the same
files), so the rebuild embeds the stored texts again with the store's embedder.

The probe is cheap: one id listing (~0.5 s at 100k chunks) and one query for a sample of chunks, each of which
must find itself. The rebuild writes a complete copy into "<name>-rebuild" before deleting the damaged
collection and renaming the copy; finish_interrupted() completes a rebuild that a crash cut short.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

import numpy as np
from chromadb.errors import ChromaError

from vector_db.records import chunk_from_stored
from vector_db.sweep import pages

log = logging.getLogger(__name__)

SAMPLE = 8  # chunks probed; a damage that hides a share f of the chunks goes unseen with chance (1 - f) ** 8
_NEIGHBOURS = 10  # hits per probe: a chunk with identical text elsewhere may rank level with itself
_SUFFIX = "-rebuild"


def probe(chunks_col, seed: int | None = None) -> str:
    """'' when a sample of stored chunks each find themselves by vector search; else what is wrong."""
    ids = chunks_col.get(include=[])["ids"]
    if not ids:
        return ""
    picks = random.Random(seed).sample(ids, min(SAMPLE, len(ids)))
    try:
        got = chunks_col.get(ids=picks, include=["embeddings"])
        found = chunks_col.query(query_embeddings=np.asarray(got["embeddings"], dtype=np.float32),
                                 n_results=min(_NEIGHBOURS, len(ids)), include=[])
    except ChromaError as error:  # the damage looked for: reported to the caller, which rebuilds
        return f"vector search fails: {error}"
    lost = [cid for cid, hits in zip(got["ids"], found["ids"], strict=True) if cid not in hits]
    lost += [cid for cid in picks if cid not in set(got["ids"])]
    return f"{len(lost)} of {len(picks)} sampled chunks are not found by vector search" if lost else ""


def finish_interrupted(client, name: str) -> str:
    """Complete or discard a rebuild a crash interrupted; returns what was done ('' when nothing)."""
    names = {getattr(c, "name", c) for c in client.list_collections()}
    if name + _SUFFIX not in names:
        return ""
    if name in names:  # the copy was still being written: the damaged original is still there, rebuild again
        client.delete_collection(name + _SUFFIX)
        return "discarded an unfinished rebuild of the vector index"
    client.get_collection(name + _SUFFIX, embedding_function=None).modify(name=name)
    return "finished an interrupted rebuild of the vector index"


def rebuild(client, name: str, embedder, configuration: dict, step: int,
            progress: Callable[[int, int], None] | None = None) -> int:
    """Re-embed every stored chunk of collection `name` into a fresh HNSW index; returns the chunks written."""
    old = client.get_collection(name, embedding_function=None)
    total = old.count()
    if name + _SUFFIX in {getattr(c, "name", c) for c in client.list_collections()}:
        client.delete_collection(name + _SUFFIX)
    new = client.create_collection(name + _SUFFIX, configuration=configuration, metadata=old.metadata,
                                   embedding_function=None)
    done = 0
    for got in pages(old, ["documents", "metadatas"], step):
        chunks = [chunk_from_stored(cid, text, meta)
                  for cid, text, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)]
        vectors = np.asarray(embedder.embed([c.index_text for c in chunks]), dtype=np.float32)
        new.add(ids=got["ids"], embeddings=vectors, documents=got["documents"], metadatas=got["metadatas"])
        done += len(chunks)
        if progress is not None:
            progress(done, total)
    client.delete_collection(name)
    new.modify(name=name)
    log.warning("rebuilt the vector index of %s: %d chunks embedded again", name, done)
    return done
