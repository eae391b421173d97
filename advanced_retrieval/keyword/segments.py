"""Segments of the BM25 index: the postings of chunks indexed together, written once and never changed.

An index is a list of segments, oldest first, and the rows deleted from each since it was written (bm25.py). A
write adds one segment holding only its own chunks, so it costs what it writes, not what the library holds; a
deletion marks rows dead. The tail is kept short by merging (`tidy`): the last two segments merge while the last
holds at least a quarter of the one before it, so sizes grow geometrically (about log4(N / chunks per write)
segments) and each chunk is rewritten a logarithmic number of times; a segment at least half dead is rewritten
without its dead rows. Nothing in a segment depends on the rest of the library (BM25's idf and average length
are applied at query time from the index's counts), so scores equal a fresh build's.

The vocabulary (token -> id) is global and append-only: each segment lists the tokens it added, in id order, so
the segments' lists concatenated give it back. Merged segments are always adjacent, keeping that order.

A segment holds its postings twice: by row (which tokens a chunk has: to un-count a deleted chunk) and by token
(which chunks hold a token: to score a query), as .npy files with their CRC-32 in `segment.json`, written last
(a checksum against damage, not an adversary: at a million chunks it reads 1.5 GB at twice SHA-256's speed).
"""

from __future__ import annotations

import io
import json
import uuid
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from advanced_retrieval.keyword.corpus import BM25IndexError

SEGMENTS = "segments"  # the folder holding them, beside the manifests
_INFO = "segment.json"
_ARRAYS = ("doc_codes", "type_codes", "doc_len", "row_ptr", "tok", "tf", "col_ptr", "col_rows", "col_tf")
# The postings, by row and by token: mapped from their files when loaded (load()). Four open mappings a segment
# (each holds a file descriptor), at most MAX_SEGMENTS segments.
MAPPED = frozenset({"tok", "tf", "col_rows", "col_tf"})
_BLOCK = 1 << 20  # bytes read at a time to check a mapped file's checksum
MERGE_RATIO = 4  # the last segment merges into the one before once it holds a quarter of its rows
MAX_SEGMENTS = 24  # a bound whatever the write pattern (merges keep it near log4 of the library's size)


def new_name() -> str:
    return uuid.uuid4().hex[:16]


def _ints(n: int = 0, dtype=np.int32) -> np.ndarray:
    return np.zeros(n, dtype=dtype)


@dataclass(frozen=True, eq=False)
class Segment:
    """Chunks indexed together: rows are local (0 .. rows-1), token ids global (< vocab_end)."""

    name: str
    chunk_ids: tuple[str, ...]
    doc_codes: np.ndarray  # int32 per row: index into the index's document names
    type_codes: np.ndarray  # int32 per row: index into the index's file type names
    doc_len: np.ndarray  # int32 per row: tokens, repeats counted
    row_ptr: np.ndarray  # int64, rows + 1: row r's postings are tok/tf[row_ptr[r]:row_ptr[r + 1]]
    tok: np.ndarray  # int32
    tf: np.ndarray  # int32
    col_ptr: np.ndarray  # int64, vocab_end + 1: token t's postings are col_rows/col_tf[col_ptr[t]:col_ptr[t + 1]]
    col_rows: np.ndarray  # int32
    col_tf: np.ndarray  # float32
    tokens: tuple[str, ...]  # the tokens this segment added to the vocabulary, ids vocab_start, vocab_start + 1, …
    vocab_start: int

    @property
    def rows(self) -> int:
        return len(self.chunk_ids)

    @property
    def vocab_end(self) -> int:
        return len(self.col_ptr) - 1

    def tokens_of(self, rows: np.ndarray) -> np.ndarray:
        """The token ids of the postings of `rows` (local), repeats across rows kept (one per row holding it)."""
        if not len(rows):
            return _ints()
        starts, ends = self.row_ptr[rows], self.row_ptr[rows + 1]
        return self.tok[_ranges(starts, ends)]

    def df(self) -> np.ndarray:
        """Rows holding each token (int64, vocab_end long), dead rows included."""
        return np.diff(self.col_ptr)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The indices start..end-1 of every (start, end) pair, concatenated, without a Python loop."""
    lengths = (ends - starts).astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return _ints(0, np.int64)
    offsets = np.repeat(starts.astype(np.int64) - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return np.arange(total, dtype=np.int64) + offsets


def make(chunk_ids: tuple[str, ...], doc_codes: np.ndarray, type_codes: np.ndarray, doc_len: np.ndarray,
         row_ptr: np.ndarray, tok: np.ndarray, tf: np.ndarray, tokens: tuple[str, ...], vocab_start: int,
         name: str | None = None) -> Segment:
    """A segment from its row postings; the token-ordered copy is derived (scipy's CSR to CSC, linear time)."""
    vocab_end = vocab_start + len(tokens)
    csr = sp.csr_matrix((tf.astype(np.float32), tok, row_ptr), shape=(len(chunk_ids), vocab_end))
    csc = csr.tocsc()
    return Segment(name=name or new_name(), chunk_ids=chunk_ids, doc_codes=doc_codes.astype(np.int32, copy=False),
                   type_codes=type_codes.astype(np.int32, copy=False), doc_len=doc_len.astype(np.int32, copy=False),
                   row_ptr=row_ptr.astype(np.int64, copy=False), tok=tok.astype(np.int32, copy=False),
                   tf=tf.astype(np.int32, copy=False), col_ptr=csc.indptr.astype(np.int64),
                   col_rows=csc.indices.astype(np.int32), col_tf=csc.data.astype(np.float32), tokens=tokens,
                   vocab_start=vocab_start)


def tokenised(chunks: Sequence, vocab: dict[str, int], tokenize) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                          np.ndarray, tuple[str, ...]]:
    """(doc_len, row_ptr, tok, tf, new tokens) of `chunks`; new tokens are added to `vocab` (the caller's copy
    or the caller's to grow) with the next ids."""
    lengths = np.empty(len(chunks), dtype=np.int32)
    row_ptr = np.zeros(len(chunks) + 1, dtype=np.int64)
    tok: list[int] = []
    tf: list[int] = []
    new: list[str] = []
    for i, chunk in enumerate(chunks):
        counts = Counter(tokenize(chunk.index_text))
        lengths[i] = sum(counts.values())
        for token, count in counts.items():
            tid = vocab.get(token)
            if tid is None:
                tid = vocab[token] = len(vocab)
                new.append(token)
            tok.append(tid)
            tf.append(count)
        row_ptr[i + 1] = len(tok)
    return lengths, row_ptr, np.asarray(tok, dtype=np.int32), np.asarray(tf, dtype=np.int32), tuple(new)


def merged(segments: Sequence[Segment], dead: Sequence[np.ndarray | None]) -> Segment:
    """One segment holding the live rows of adjacent `segments` (their vocabularies follow each other)."""
    ids: list[str] = []
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("doc_codes", "type_codes", "doc_len", "tok", "tf")}
    lengths: list[np.ndarray] = []
    for seg, gone in zip(segments, dead, strict=True):
        keep = np.ones(seg.rows, dtype=bool) if gone is None else ~gone
        per_row = np.diff(seg.row_ptr)
        post = np.repeat(keep, per_row)
        ids.extend(c for c, k in zip(seg.chunk_ids, keep, strict=True) if k)
        for key in ("doc_codes", "type_codes", "doc_len"):
            parts[key].append(getattr(seg, key)[keep])
        parts["tok"].append(seg.tok[post])
        parts["tf"].append(seg.tf[post])
        lengths.append(per_row[keep])
    row_ptr = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lengths), out=row_ptr[1:])
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    tokens = tuple(t for seg in segments for t in seg.tokens)
    return make(tuple(ids), cat["doc_codes"], cat["type_codes"], cat["doc_len"], row_ptr, cat["tok"], cat["tf"],
                tokens, segments[0].vocab_start)


def tidy(segments: list[Segment], dead: list[np.ndarray | None]) -> tuple[list[Segment], list[np.ndarray | None]]:
    """Segments at least half dead rewritten without their dead rows; then the tail merged while its last segment
    holds a quarter of the rows of the one before it (or there are more than MAX_SEGMENTS)."""
    segments, dead = list(segments), list(dead)
    for i, (seg, gone) in enumerate(zip(segments, dead, strict=True)):
        if gone is not None and seg.rows and 2 * int(gone.sum()) >= seg.rows:
            segments[i], dead[i] = merged([seg], [gone]), None

    def alive(i: int) -> int:
        return segments[i].rows - (0 if dead[i] is None else int(dead[i].sum()))

    while len(segments) > 1 and (alive(-1) * MERGE_RATIO >= alive(-2) or len(segments) > MAX_SEGMENTS):
        segments[-2:] = [merged(segments[-2:], dead[-2:])]
        dead[-2:] = [None]
    return segments, dead


# -- disk ---------------------------------------------------------------------------------------------------
def save(segment: Segment, root: Path) -> None:
    """Write `segment` under root/segments/<name> unless it is there already (segments never change)."""
    folder = root / SEGMENTS / segment.name
    if (folder / _INFO).exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for key in _ARRAYS:
        buffer = io.BytesIO()
        np.save(buffer, getattr(segment, key), allow_pickle=False)
        raw = buffer.getvalue()
        (folder / f"{key}.npy").write_bytes(raw)
        files[f"{key}.npy"] = _checksum(raw)
    names = json.dumps({"chunk_ids": list(segment.chunk_ids), "tokens": list(segment.tokens),
                        "vocab_start": segment.vocab_start}).encode()
    (folder / "chunks.json").write_bytes(names)
    files["chunks.json"] = _checksum(names)
    tmp = folder / f"{_INFO}.tmp"
    tmp.write_text(json.dumps({"files": files}), encoding="utf-8")
    tmp.replace(folder / _INFO)


def load(root: Path, name: str) -> Segment:
    """Read a saved segment, every file checked against its checksum. The postings (MAPPED) are mapped from
    their files, read-only: only the pages a search or a write touches become resident, and the kernel may drop
    them again (at a million chunks they are most of the index); the other arrays are read-only views of the bytes
    read.

    Raises:
        BM25IndexError: missing, damaged or inconsistent files.
    """
    folder = root / SEGMENTS / name
    try:
        files = json.loads((folder / _INFO).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise BM25IndexError(f"BM25 index segment {folder} is missing or unreadable: {e}") from e
    raw = {}
    for file, digest in files.items():
        try:
            if file.removesuffix(".npy") in MAPPED:
                got = _file_checksum(folder / file)
            else:
                raw[file] = (folder / file).read_bytes()
                got = _checksum(raw[file])
        except OSError as e:
            raise BM25IndexError(f"BM25 index in {root} lacks {name}/{file}: {e}") from e
        if got != digest:
            raise BM25IndexError(f"BM25 index in {root} is damaged ({name}/{file} differs from what was saved)")
    try:
        arrays = {key: _mapped(folder / f"{key}.npy") if key in MAPPED else _array(raw[f"{key}.npy"])
                  for key in _ARRAYS}
        names = json.loads(raw["chunks.json"])
        segment = Segment(name=name, chunk_ids=tuple(names["chunk_ids"]), tokens=tuple(names["tokens"]),
                          vocab_start=int(names["vocab_start"]), **arrays)
    except (KeyError, ValueError, TypeError, EOFError, OSError) as e:
        raise BM25IndexError(f"unreadable BM25 index segment {folder}: {e}") from e
    _check(segment, folder)
    return segment


def _checksum(raw: bytes) -> str:
    return f"crc32:{zlib.crc32(raw):08x}"


def _file_checksum(path: Path) -> str:
    """_checksum of a file's bytes, read a block at a time (into the page cache, not this process's memory)."""
    crc = 0
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            crc = zlib.crc32(block, crc)
    return f"crc32:{crc:08x}"


def _mapped(path: Path) -> np.ndarray:
    """The array of a .npy file mapped read-only (a plain ndarray view of the mapping, which it keeps open).
    Raises ValueError when the file holds no plain array."""
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    if array.dtype.hasobject or (array.ndim > 1 and not array.flags.c_contiguous):
        raise ValueError("not a plain array")
    return np.asarray(array)


def _array(raw: bytes) -> np.ndarray:
    """The array a .npy file's bytes hold, as a view of them. Raises ValueError when they are no .npy array."""
    buffer = io.BytesIO(raw)
    version = np.lib.format.read_magic(buffer)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(buffer)
    else:
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(buffer)
    if fortran or dtype.hasobject:
        raise ValueError("not a plain array")
    count = int(np.prod(shape))
    return np.frombuffer(raw, dtype=dtype, count=count, offset=buffer.tell()).reshape(shape)


def _check(seg: Segment, folder: Path) -> None:
    n, postings = seg.rows, len(seg.tok)
    ok = len(seg.doc_codes) == len(seg.type_codes) == len(seg.doc_len) == n and len(seg.row_ptr) == n + 1
    ok = ok and len(seg.tf) == postings == len(seg.col_rows) == len(seg.col_tf)
    ok = ok and seg.vocab_end == seg.vocab_start + len(seg.tokens) and int(seg.row_ptr[-1]) == postings
    ok = ok and int(seg.col_ptr[-1]) == postings
    if not ok:
        raise BM25IndexError(f"BM25 index segment {folder} is inconsistent (sizes differ); it will be rebuilt")
