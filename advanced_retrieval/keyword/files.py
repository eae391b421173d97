"""The saved form of a BM25Index: bm25s's own files, the postings, the chunk ids and a manifest written last.

The manifest holds the sha256 of every file beside it, checked on load: a byte flipped in a .npy array would
otherwise load without any error and score wrongly, and a damaged .npz raises zipfile's and zlib's own errors
(issue 16, item 7). Any damage is a BM25IndexError, and the index is rebuilt from the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
import zlib
from pathlib import Path

import bm25s
import numpy as np

from advanced_retrieval.keyword.corpus import FORMAT_VERSION, BM25IndexError, BM25Params, Corpus
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION

MANIFEST = "manifest.json"
_POSTINGS = "postings.npz"
_CHUNKS = "chunks.json"
_ARRAYS = ("doc_codes", "type_codes", "doc_len", "rows", "tok", "tf")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def save_index(index, corpus: Corpus, model: bm25s.BM25 | None, directory: Path) -> None:
    """Write `index` into `directory`; a reader trusts the files only once the manifest exists."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MANIFEST).unlink(missing_ok=True)
    if model is not None:
        model.save(directory, show_progress=False)
    with open(directory / _POSTINGS, "wb") as f:
        np.savez(f, **{name: getattr(corpus, name) for name in _ARRAYS})
    names = {"chunk_ids": list(corpus.chunk_ids), "doc_names": list(corpus.doc_names),
             "type_names": list(corpus.type_names)}
    (directory / _CHUNKS).write_text(json.dumps(names), encoding="utf-8")
    files = {p.name: _sha256(p) for p in sorted(directory.iterdir()) if p.is_file() and p.name != MANIFEST}
    _write_atomic(directory / MANIFEST, json.dumps(index.manifest() | {"files": files}))


def relabel(directory: Path, generation: int) -> None:
    """Record in a saved copy's manifest that it reflects store generation `generation` (its content unchanged:
    a repair moved the generation without touching the documents it holds)."""
    manifest = read_manifest(directory)
    _write_atomic(directory / MANIFEST, json.dumps(manifest | {"generation": generation}))


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _check_files(directory: Path, manifest: dict) -> None:
    """Raise BM25IndexError when a file the manifest lists is missing or differs (copies saved before checksums
    were written list none)."""
    for name, digest in (manifest.get("files") or {}).items():
        try:
            same = _sha256(directory / name) == digest
        except OSError as e:
            raise BM25IndexError(f"BM25 index in {directory} lacks {name}: {e}") from e
        if not same:
            raise BM25IndexError(f"BM25 index in {directory} is damaged ({name} differs from what was saved)")


def read_manifest(directory: Path) -> dict:
    """The manifest of a saved index. Raises BM25IndexError when absent, unreadable or of another version."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise BM25IndexError(f"no saved BM25 index in {directory}") from e
    except (OSError, ValueError) as e:
        raise BM25IndexError(f"unreadable BM25 manifest in {directory}: {e}") from e
    if manifest.get("format") != FORMAT_VERSION or manifest.get("tokenizer") != TOKENIZER_VERSION:
        raise BM25IndexError(
            f"BM25 index in {directory} is format {manifest.get('format')} / tokenizer {manifest.get('tokenizer')},"
            f" this code writes {FORMAT_VERSION} / {TOKENIZER_VERSION}"
        )
    return manifest


def load_index(directory: Path) -> tuple[Corpus, bm25s.BM25 | None, BM25Params, int]:
    """(corpus, bm25s model or None when empty, params, generation) of a saved index.

    Raises:
        BM25IndexError: missing or unreadable files, another format/tokenizer version, or inconsistent sizes.
    """
    manifest = read_manifest(directory)
    _check_files(directory, manifest)
    try:
        params = BM25Params(**manifest["params"])
        names = json.loads((directory / _CHUNKS).read_text(encoding="utf-8"))
        with np.load(directory / _POSTINGS) as npz:
            arrays = {name: npz[name] for name in _ARRAYS}
        model = bm25s.BM25.load(directory, show_progress=False) if manifest["count"] else None
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise BM25IndexError(f"unreadable BM25 index in {directory}: {e}") from e
    vocab = model.vocab_dict if model is not None else {}
    corpus = Corpus(chunk_ids=tuple(names["chunk_ids"]), doc_names=tuple(names["doc_names"]),
                     type_names=tuple(names["type_names"]), vocab=vocab, **arrays)
    _check_sizes(corpus, model, manifest, directory)
    return corpus, model, params, int(manifest["generation"])


def _check_sizes(corpus: Corpus, model: bm25s.BM25 | None, manifest: dict, directory: Path) -> None:
    n = len(corpus.chunk_ids)
    sizes_ok = n == manifest["count"] == len(corpus.doc_len) == len(corpus.doc_codes)
    sizes_ok = sizes_ok and len(corpus.rows) == len(corpus.tok) == len(corpus.tf)
    if model is not None:
        sizes_ok = sizes_ok and model.scores["num_docs"] == n and len(model.scores["indptr"]) == len(corpus.vocab) + 1
    if not sizes_ok:
        raise BM25IndexError(f"BM25 index in {directory} is inconsistent (sizes differ); it will be rebuilt")
