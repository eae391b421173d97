"""The saved form of a BM25Index: its segments (segments.py, each written once) and a manifest naming them, with
the rows deleted from each, written last and atomically.

Every segment file's CRC-32 is checked on load: a byte flipped in a .npy array would otherwise load without any
error and score wrongly (issue 16, item 7). Any damage is a BM25IndexError, and the index is rebuilt from the
store. Copies saved in format 1 (one set of files with bm25s's score matrix) are still read, as one segment.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from advanced_retrieval.keyword import segments as seg_mod
from advanced_retrieval.keyword.corpus import FORMAT_VERSION, BM25IndexError, BM25Params
from advanced_retrieval.keyword.segments import Segment
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION

MANIFEST = "manifest.json"
_V1_POSTINGS = "postings.npz"
_V1_CHUNKS = "chunks.json"


@dataclass(frozen=True)
class Saved:
    """What a manifest and its segments hold."""

    segments: list[Segment]
    dead: list[list[list[int]]]  # per segment, [start, end) runs of deleted rows
    params: BM25Params
    generation: int
    doc_names: tuple[str, ...]
    type_names: tuple[str, ...]
    ids_hash: str = ""  # the saved index's digest of its chunk ids ("" for format 1: computed when asked)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def save_index(manifest: dict, segments: list[Segment], directory: Path, name: str = MANIFEST) -> None:
    """Write the segments not yet in `directory`, then the manifest `name`; a reader trusts only what a manifest
    names, and a manifest is written only once its segments are complete."""
    directory.mkdir(parents=True, exist_ok=True)
    for segment in segments:
        seg_mod.save(segment, directory)
    _write_atomic(directory / name, json.dumps(manifest))


def relabel(directory: Path, name: str, generation: int) -> None:
    """Record in a saved copy's manifest that it reflects store generation `generation` (its content unchanged:
    a repair moved the generation without touching the documents it holds)."""
    manifest = read_manifest(directory, name)
    _write_atomic(directory / name, json.dumps(manifest | {"generation": generation}))


def read_manifest(directory: Path, name: str = MANIFEST) -> dict:
    """The manifest of a saved index. Raises BM25IndexError when absent, unreadable or of another version."""
    try:
        manifest = json.loads((directory / name).read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise BM25IndexError(f"no saved BM25 index in {directory}") from e
    except (OSError, ValueError) as e:
        raise BM25IndexError(f"unreadable BM25 manifest in {directory}: {e}") from e
    if manifest.get("format") not in (1, FORMAT_VERSION) or manifest.get("tokenizer") != TOKENIZER_VERSION:
        raise BM25IndexError(
            f"BM25 index in {directory} is format {manifest.get('format')} / tokenizer {manifest.get('tokenizer')},"
            f" this code reads 1 or {FORMAT_VERSION} / {TOKENIZER_VERSION}"
        )
    return manifest


def segment_names(manifest: dict) -> list[str]:
    """The segments a manifest names (none for a format-1 copy, which holds its own files)."""
    return [s["name"] for s in manifest.get("segments", ())]


def load_index(directory: Path, name: str = MANIFEST) -> Saved:
    """The saved index `name` in `directory`.

    Raises:
        BM25IndexError: missing or unreadable files, another format/tokenizer version, or inconsistent sizes.
    """
    manifest = read_manifest(directory, name)
    if manifest["format"] == 1:
        return _load_v1(directory, manifest)
    try:
        params = BM25Params(**manifest["params"])
        listed = [(s["name"], int(s["rows"]), s["dead"]) for s in manifest["segments"]]
        doc_names, type_names = tuple(manifest["doc_names"]), tuple(manifest["type_names"])
        generation, count = int(manifest["generation"]), int(manifest["count"])
    except (KeyError, ValueError, TypeError) as e:
        raise BM25IndexError(f"unreadable BM25 manifest in {directory}: {e}") from e
    segments = [seg_mod.load(directory, seg_name) for seg_name, _, _ in listed]
    vocab_end, live = 0, 0
    for segment, (_, rows, dead) in zip(segments, listed, strict=True):
        if segment.rows != rows or segment.vocab_start != vocab_end or any(
                not 0 <= a < b <= rows for a, b in dead):
            raise BM25IndexError(f"BM25 index in {directory} is inconsistent (segment {segment.name} is not the one "
                                 f"its manifest names); it will be rebuilt")
        vocab_end = segment.vocab_end
        live += rows - sum(b - a for a, b in dead)
        if len(segment.doc_codes) and int(segment.doc_codes.max()) >= len(doc_names):
            raise BM25IndexError(f"BM25 index in {directory} is inconsistent (unknown document codes)")
    if live != count:
        raise BM25IndexError(f"BM25 index in {directory} is inconsistent (sizes differ); it will be rebuilt")
    return Saved(segments, [d for _, _, d in listed], params, generation, doc_names, type_names,
                 str(manifest.get("ids_hash", "")))


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _load_v1(directory: Path, manifest: dict) -> Saved:
    """A format-1 copy as one segment: its postings, chunk ids and bm25s's vocabulary (its scores are not used)."""
    for file, digest in (manifest.get("files") or {}).items():
        try:
            same = _sha256(directory / file) == digest
        except OSError as e:
            raise BM25IndexError(f"BM25 index in {directory} lacks {file}: {e}") from e
        if not same:
            raise BM25IndexError(f"BM25 index in {directory} is damaged ({file} differs from what was saved)")
    try:
        params = BM25Params(**manifest["params"])
        names = json.loads((directory / _V1_CHUNKS).read_text(encoding="utf-8"))
        with np.load(directory / _V1_POSTINGS) as npz:
            arrays = {key: npz[key] for key in ("doc_codes", "type_codes", "doc_len", "rows", "tok", "tf")}
        vocab = {}
        if manifest["count"]:
            vocab = json.loads((directory / "vocab.index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise BM25IndexError(f"unreadable BM25 index in {directory}: {e}") from e
    n = len(names["chunk_ids"])
    tokens = sorted(vocab, key=vocab.get)
    if n != manifest["count"] or [vocab[t] for t in tokens] != list(range(len(tokens))) or (
            len(arrays["rows"]) and int(arrays["rows"].max()) >= n):
        raise BM25IndexError(f"BM25 index in {directory} is inconsistent (sizes differ); it will be rebuilt")
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(arrays["rows"], minlength=n), out=row_ptr[1:])
    segment = seg_mod.make(tuple(names["chunk_ids"]), arrays["doc_codes"], arrays["type_codes"],
                           arrays["doc_len"], row_ptr, arrays["tok"], arrays["tf"], tuple(tokens), 0)
    return Saved([segment] if n else [], [[]] if n else [], params, int(manifest["generation"]),
                 tuple(names["doc_names"]), tuple(names["type_names"]))
