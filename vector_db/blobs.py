"""The bytes of kept originals in a collection of the store, so that every data directory sharing a Chroma server
finds them (issue 27, item 4): no shared folder is needed, two machines need not share a file system.

Chroma holds scalars only, so a file is cut into PIECE-byte parts, each base64 text in one entry's metadata
("part:<doc_id>:<i>"); a head entry ("head:<doc_id>": name, suffix, size, parts) is written last and removed
first, so a reader that finds a head finds every part. Measured (bench/originals.py, Chroma 1.5.9 server): the
server keeps each byte about 4 times on disk (base64, then the metadata table, its index on string values and the
write log each hold the text), and writes ~8 MB/s.
"""

from __future__ import annotations

import base64

from vector_db.client import StoreError

PIECE = 4 << 20  # bytes per entry: one HTTP request each; 1 MB pieces wrote 40 MB in 8.4 s, 4 MB ones in 5.2 s
_VECTOR = [1.0]
HEAD, PART = "original", "part"


def put(col, doc_id: str, name: str, suffix: str, data: bytes) -> None:
    """Store `data` as the original of `doc_id` (rewriting one stored before is harmless: same bytes, same ids)."""
    count = max(1, -(-len(data) // PIECE))
    for i in range(count):
        piece = base64.b64encode(data[i * PIECE:(i + 1) * PIECE]).decode("ascii")
        col.upsert(ids=[f"part:{doc_id}:{i}"], embeddings=[_VECTOR],
                   metadatas=[{"kind": PART, "doc_id": doc_id, "part": i, "data": piece}])
    col.upsert(ids=[f"head:{doc_id}"], embeddings=[_VECTOR],
               metadatas=[{"kind": HEAD, "doc_id": doc_id, "name": name, "suffix": suffix, "size": len(data),
                           "parts": count}])


def get(col, doc_id: str) -> tuple[str, str, bytes] | None:
    """(name, suffix, bytes) of the stored original of `doc_id`, or None when there is none.

    Raises:
        StoreError: the head is there but a part is missing or the size does not add up.
    """
    got = col.get(ids=[f"head:{doc_id}"], include=["metadatas"])
    if not got["ids"]:
        return None
    head = got["metadatas"][0]
    pieces = []
    for i in range(int(head["parts"])):
        part = col.get(ids=[f"part:{doc_id}:{i}"], include=["metadatas"])
        if not part["ids"]:
            raise StoreError(f"the stored original of {head.get('name') or doc_id[:12]} lacks part {i + 1} of "
                             f"{head['parts']}")
        pieces.append(base64.b64decode(part["metadatas"][0]["data"]))
    data = b"".join(pieces)
    if len(data) != int(head["size"]):
        raise StoreError(f"the stored original of {head.get('name') or doc_id[:12]} has {len(data)} of its "
                         f"{head['size']} bytes")
    return str(head.get("name") or ""), str(head.get("suffix") or ""), data


def stored(col) -> dict[str, int]:
    """{doc_id: size in bytes} of every complete stored original."""
    got = col.get(where={"kind": HEAD}, include=["metadatas"])
    return {meta["doc_id"]: int(meta["size"]) for meta in got["metadatas"]}


def remove(col, doc_ids: list[str], step: int) -> None:
    """Delete the originals of `doc_ids`, heads first (unknown ids are fine)."""
    for start in range(0, len(doc_ids), step):
        batch = doc_ids[start:start + step]
        col.delete(ids=[f"head:{d}" for d in batch])
        where = {"doc_id": {"$eq": batch[0]}} if len(batch) == 1 else {"doc_id": {"$in": batch}}
        parts = col.get(where=where, include=[])["ids"]
        for first in range(0, len(parts), step):
            col.delete(ids=parts[first:first + step])
