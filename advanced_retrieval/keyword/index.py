"""The BM25 index of one vector store: saved under a directory, kept in step with the store's generation.

Saved copies are manifests ("g<generation>-<random>.json") naming segments in the `segments` folder, which every
copy shares (a segment is written once: a write saves its own chunks and a new manifest, not the library). A
CURRENT file names the live manifest and is replaced atomically, so a reader in another process never loads a
half-written copy. The manifest records the store generation and the chunk count. (Copies saved before segments
are version folders holding their own files: still read, and removed once a newer copy is live.)

Freshness: `current(store)` costs one generation read when nothing changed. When the generation moved (another
process wrote), the saved copy is loaded if its manifest matches the store, else the index is brought up to date
from the store's records: documents gone from the store are dropped and only new ones are fetched and tokenised.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from advanced_retrieval.keyword.bm25 import BM25Index
from advanced_retrieval.keyword.corpus import BM25IndexError, BM25Params
from advanced_retrieval.keyword.files import read_manifest, relabel, segment_names
from advanced_retrieval.keyword.segments import SEGMENTS

log = logging.getLogger(__name__)

_CURRENT = "CURRENT"
_KEEP_PREVIOUS = 1  # versions kept besides the live one, for readers still loading it in another process


def _always() -> AbstractContextManager[bool]:
    return nullcontext(True)


class KeywordIndex:
    """BM25 over a store's chunks, persisted in `directory`.

    Args:
        directory: where saved copies live (created on first save).
        params: BM25 parameters; a saved copy with other parameters is re-scored on load (no re-tokenising).
        try_lock: a context manager factory yielding whether the writers' lock was free; a reader that had to
            catch up with the store saves its result only when it was (a writer would overwrite it anyway).
    """

    def __init__(self, directory: Path, *, params: BM25Params | None = None,
                 try_lock: Callable[[], AbstractContextManager[bool]] | None = None):
        self.directory = Path(directory)
        self.params = params or BM25Params()
        self._try_lock = try_lock or _always
        self._index: BM25Index | None = None
        self._refresh_lock = threading.Lock()

    def snapshot(self) -> BM25Index | None:
        """The index in memory now (None before the first use), without looking at the store."""
        return self._index

    def current(self, store) -> BM25Index:
        """The index, brought up to date first when the store's generation moved since it was built."""
        generation = store.generation()
        index = self._index
        if index is not None and index.generation == generation:
            return index
        with self._refresh_lock:  # one catch-up at a time; the others then find it done
            # read again, as stored now: a writer may have published and committed while this thread waited (or
            # before, while this thread's retrieval holds a pinned, older view of the store), and catching up to
            # that older generation would put an older index back in place of the writer's
            live = getattr(store, "live_generation", store.generation)
            generation, index = live(), self._index
            if index is None or index.generation != generation:
                with getattr(store, "unpinned", nullcontext)():  # the content of that live generation
                    index = self._index = self._catch_up(store, generation, index)
        return index

    def open(self, store) -> list[str]:
        """Load the saved copy and check it against the store's records: the same documents with the same chunk
        counts (a document's chunks follow from its bytes, whose hash is its id); bring it up to date when not.
        No chunk id is listed (~5 s at a million chunks): KnowledgeBase.check() compares every id. A copy whose
        documents match but whose generation is older (a repair at open moved it) is used as it is, its manifest
        relabelled (rather than the whole copy written again). Returns human messages about what was repaired
        (none when all was in order)."""
        generation, documents = store.generation(), store.chunk_counts()
        try:
            saved = self.load_saved()
        except BM25IndexError as e:
            saved = None
            messages = [f"keyword index: {e}; rebuilding it from the store"] if documents else []
        else:
            messages = []
            if saved.documents == documents:
                if saved.generation != generation:
                    self._relabel(generation)
                self._index = saved.at_generation(generation)
                return messages
            messages.append(f"keyword index was stale ({saved.count} chunks, store has {sum(documents.values())}); "
                            "bringing it up to date")
        index = sync(saved or BM25Index(params=self.params), store, generation, documents)
        self.publish(index)
        return messages

    def publish(self, index: BM25Index) -> None:
        """Save `index` as the live copy and use it; the caller holds the writers' lock.

        Raises:
            BM25IndexError: the copy could not be written (say, the disk is full); the live copy is unchanged.
        """
        with self._refresh_lock:  # a reader's catch-up finishing later must not put an older index back
            try:
                self._save(index, cleanup=True)
            except OSError as e:  # numpy's "1280 requested and 992 written" alone would not say what failed
                raise BM25IndexError(f"could not save the keyword index in {self.directory} ({e}); "
                                     f"is the disk full?") from e
            self._index = index

    def _relabel(self, generation: int) -> None:
        """The live saved copy recorded as reflecting `generation`; the caller holds the writers' lock."""
        try:
            relabel(*self._live(self.directory / _CURRENT), generation)
        except OSError as e:
            raise BM25IndexError(f"could not update the keyword index in {self.directory} ({e}); "
                                 f"is the disk full?") from e

    def use(self, index: BM25Index) -> None:
        """Use `index` in memory without saving it (a failed write going back to the index it started from)."""
        with self._refresh_lock:
            self._index = index

    def load_saved(self) -> BM25Index:
        """The live saved copy. Raises BM25IndexError when there is none or it cannot be read."""
        try:
            directory, manifest = self._live(self.directory / _CURRENT)
        except FileNotFoundError as e:
            raise BM25IndexError(f"no saved BM25 index in {self.directory}") from e
        except OSError as e:
            raise BM25IndexError(f"cannot read {self.directory / _CURRENT}: {e}") from e
        return BM25Index.load(directory, params=self.params, manifest=manifest)

    def _live(self, current: Path) -> tuple[Path, str]:
        """(directory, manifest name) of the copy CURRENT names: a manifest beside it, or a format-1 folder."""
        name = current.read_text(encoding="utf-8").strip()
        if (self.directory / name).is_dir():
            return self.directory / name, "manifest.json"
        return self.directory, name

    def saved_manifest(self) -> dict | None:
        """The live saved copy's manifest, or None when there is no readable one."""
        try:
            return read_manifest(*self._live(self.directory / _CURRENT))
        except (OSError, BM25IndexError):
            return None

    def _catch_up(self, store, generation: int, index: BM25Index | None) -> BM25Index:
        """The saved copy when it matches the store, else `index` (or the saved copy, or nothing) synced."""
        manifest = self.saved_manifest()
        if manifest is not None and (index is None or manifest["generation"] != index.generation):
            try:
                saved = self.load_saved()
            except BM25IndexError as e:  # e.g. a writer removed that copy a moment ago: catch up from the store
                log.info("saved keyword index unusable (%s); catching up from the store", e)
            else:
                if saved.generation == generation and saved.count == store.count():
                    return saved
                index = index or saved
        fresh = sync(index or BM25Index(params=self.params), store, generation)
        with self._try_lock() as free:
            if free:
                self._save(fresh, cleanup=True)
        return fresh

    def _save(self, index: BM25Index, *, cleanup: bool) -> None:
        name = f"g{index.generation}-{uuid.uuid4().hex[:8]}.json"
        index.save(self.directory, manifest=name)
        current = self.directory / _CURRENT
        previous = current.read_text(encoding="utf-8").strip() if current.exists() else None
        tmp = self.directory / f"{_CURRENT}.{uuid.uuid4().hex[:8]}.tmp"
        tmp.write_text(name, encoding="utf-8")
        os.replace(tmp, current)
        if cleanup:
            self._remove_old({name, previous})

    def _remove_old(self, keep: set[str | None]) -> None:
        """Manifests and format-1 folders other than `keep`, then the segments no kept manifest names."""
        used: set[str] = set()
        for name in keep:
            if name and not (self.directory / name).is_dir():
                try:
                    used.update(segment_names(read_manifest(self.directory, name)))
                except BM25IndexError as e:  # keep every segment rather than lose one the live copy needs
                    log.warning("keyword index cleanup skipped: %s", e)
                    return
        old = [p for p in self.directory.iterdir() if p.name not in keep and p.name not in (_CURRENT, SEGMENTS)
               and (p.is_dir() or p.suffix == ".json")]
        segments = self.directory / SEGMENTS
        if segments.is_dir():
            old += [p for p in segments.iterdir() if p.name not in used]
        for path in old:
            try:
                shutil.rmtree(path) if path.is_dir() else path.unlink()
            except OSError as e:  # a copy left behind costs disk space only; the next save tries again
                log.warning("could not remove old keyword index %s: %s", path, e)


def sync(index: BM25Index, store, generation: int, documents: dict[str, int] | None = None) -> BM25Index:
    """`index` made to hold exactly the store's ready documents: documents gone from the store (or stored with
    another chunk count) dropped, new ones fetched and tokenised, so the cost follows the change, not the
    library. A full rebuild when `index` is empty; `documents` ({doc_id: chunks}, VectorStore.chunk_counts)
    saves reading the records again."""
    wanted = store.chunk_counts() if documents is None else documents
    have = index.documents
    gone = [d for d, n in have.items() if wanted.get(d) != n]
    new = {d for d, n in wanted.items() if have.get(d) != n}
    if gone:
        index = index.without_documents(gone, generation=generation)
    if new:
        if sum(wanted[d] for d in new) * 2 > sum(wanted.values()):  # mostly new: one sequential scan
            chunks = [c for c in store.iter_chunks() if c.doc_id in new]
        else:
            chunks = [c for d in sorted(new) for c in store.document_chunks(d)]
        index = index.with_chunks(chunks, generation=generation)
    return index.at_generation(generation)
