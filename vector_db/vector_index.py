"""Checking the vector (HNSW) index at open, and rebuilding it from the stored chunk texts when it is damaged.

Chroma keeps chunk texts and metadata in SQLite and the vectors only in its HNSW segment files. When those are
damaged (segment directory deleted, level-0 data truncated: issue 16, item 9), counts still add up, so the
library's own checks pass, while vector search fails with "Error finding id" / "Error getting embedding" or
silently never returns most chunks. The embeddings cannot be read back either (Chroma reads them from the same
files), so the rebuild embeds the stored texts again with the store's embedder.

The probe is cheap whatever the size: a sample of chunks drawn through the documents' records (one id listing per
drawn document), a plain search for each, and an exact search through the HNSW graph for the few it misses, so that
approximate search never passes for damage (issue 27). The rebuild writes a complete copy
into "<name>-rebuild" before deleting the damaged collection and renaming the copy; finish_interrupted()
completes a rebuild that a crash cut short.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence

import numpy as np
from chromadb.errors import ChromaError

from vector_db.records import chunk_from_stored
from vector_db.sweep import doc_where, pages

log = logging.getLogger(__name__)

SAMPLE = 8  # chunks probed; a damage that hides a share f of the chunks goes unseen with chance (1 - f) ** 8
_RECHECK = 32  # chunks probed when some of the first SAMPLE are not found: their share decides
_DAMAGED = 0.75  # share of them not found that means damage: a healthy graph can leave a third unreachable
_SAME = 1e-5  # cosine distance below which two stored vectors are one vector (float32 rounding)
_SUFFIX = "-rebuild"


def probe(chunks_col, seed: int | None = None, documents: Sequence[tuple[str, int]] | None = None) -> str:
    """'' when vector search finds sampled stored chunks as a healthy index does; else what is wrong.

    A chunk is not asked to rank in its own approximate top 10: in a large library near neighbours push it out
    (issue 27: 19 of 25 probes of a healthy 162k-chunk library failed so). `_missing` searches exactly. Even so a
    healthy HNSW graph leaves chunks unreachable from its entry point (identical vectors keep one link; 2 of 40
    sampled chunks of a healthy 2,000-chunk library of hashing vectors, 22 of 64 at 150,000), and a rebuild
    builds the same graph again. So when any of the first SAMPLE chunks is not found, _RECHECK are probed and
    damage needs a share of _DAMAGED of them not found (a graph whose links are lost reaches none). Damaged HNSW
    files (directory deleted, level-0 data cut short) fail with an error, reported at once.

    `documents` ((doc_id, chunk count) of the stored documents, as their records say) lets the sample be drawn
    without listing every id (~5 s at a million chunks): documents drawn in proportion to their chunks, then one
    of each drawn document's chunks, which is a uniform draw over the chunks.
    """
    rng = random.Random(seed)
    first = _sample(chunks_col, rng, documents, SAMPLE) if documents is not None else None
    ids: list[str] = []
    if first is None:
        ids = chunks_col.get(include=[])["ids"]
        if not ids:
            return ""
        picks = rng.sample(ids, min(_RECHECK, len(ids)))
        first = picks[:SAMPLE]
    try:
        missing = _missing(chunks_col, first)
        if missing:
            more = picks[SAMPLE:] if ids else _sample(chunks_col, rng, documents or (), _RECHECK - SAMPLE, first)
            picks = first + (more or [])
            if len(picks) > SAMPLE:
                missing += _missing(chunks_col, picks[SAMPLE:])
        else:
            picks = first
    except ChromaError as error:  # the damage looked for: reported to the caller, which rebuilds
        return f"vector search fails: {error}"
    if not missing:
        return ""
    if len(missing) < _DAMAGED * len(picks):
        log.warning("%d of %d sampled chunks cannot be reached by vector search in this index: how its HNSW graph "
                    "was built, not damage (a rebuild would build it alike)", len(missing), len(picks))
        return ""
    return f"{len(missing)} of {len(picks)} sampled chunks are not found by vector search"


def _sample(chunks_col, rng: random.Random, documents: Sequence[tuple[str, int]], k: int,
            taken: Sequence[str] = ()) -> list[str] | None:
    """Up to `k` chunk ids not in `taken`, drawn uniformly through `documents` (one id listing per drawn
    document, ~30 ms each); None when a drawn document has no chunk stored (then the caller lists every id)."""
    documents = [(doc_id, n) for doc_id, n in documents if n > 0]
    if sum(n for _, n in documents) <= _RECHECK:
        return None  # a small library: listing its ids costs nothing
    picks, listed = [], {}
    weights = [n for _, n in documents]
    for _ in range(4 * k):
        doc_id = documents[rng.choices(range(len(documents)), weights=weights)[0]][0]
        if doc_id not in listed:
            listed[doc_id] = sorted(chunks_col.get(where=doc_where([doc_id]), include=[])["ids"])
        if not listed[doc_id]:
            return None
        pick = listed[doc_id][rng.randrange(len(listed[doc_id]))]
        if pick not in picks and pick not in taken:
            picks.append(pick)
        if len(picks) == k:
            break
    return picks


def _missing(chunks_col, picks: list[str]) -> list[str]:
    """The picks that vector search cannot find.

    First a plain search with each chunk's stored vector: a chunk it returns (or a chunk with the very same
    vector: its text is found) is found. Only the others are searched for exactly, among themselves (`ids=`):
    Chroma answers that through the HNSW segment (ids mapped by its id map, vectors read from its level-0 data),
    and with no more allowed ids than result places the graph walk never fills its result list, so it goes on
    until it has met every node it can reach. That walk costs ~70 ms a chunk at 100k chunks (it visits them
    all), so it is kept for the few a plain search misses (2 of 8 sampled at 100k hashing vectors), where
    searching all the picks exactly cost 0.55 s at 100k and ~10x that at a million.
    """
    got = chunks_col.get(ids=picks, include=["embeddings"])
    lost = [cid for cid in picks if cid not in set(got["ids"])]
    if not got["ids"]:
        return lost
    vectors = np.asarray(got["embeddings"], dtype=np.float32)
    plain = chunks_col.query(query_embeddings=vectors, n_results=10, include=["distances"])
    unfound = [i for i, (cid, hits, near) in enumerate(zip(got["ids"], plain["ids"], plain["distances"], strict=True))
               if cid not in hits and not (near and near[0] <= _SAME)]
    if unfound:
        ids = [got["ids"][i] for i in unfound]
        exact = chunks_col.query(query_embeddings=vectors[unfound], ids=ids, n_results=len(ids), include=[])
        lost += [cid for cid, hits in zip(ids, exact["ids"], strict=True) if cid not in hits]
    return lost


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
