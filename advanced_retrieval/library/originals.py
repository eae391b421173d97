"""A copy of every indexed file, named by its doc_id, so the source viewer can show the page or slide itself.

The copies are also the user's only way to get the library back when the store loses its data (issue 16, item
2): each copy's file name is kept beside it (names/<doc_id>), so a rebuild indexes it under the same name. A copy
is deleted only because its document was deleted or replaced, never because the store no longer lists it; a copy
a rebuild could not index is moved to not-indexed/ under its own name, for the user to see.

A library on a Chroma server may be shared by several data directories (app servers or CLIs on other machines,
issue 27, item 4), each with its own copies. Pruning those against the store's list removed one program's copies
whenever another deleted or cleared, and a program had no copy of what another indexed. So a shared store keeps
every original's bytes itself (vector_db.blobs: no shared folder is needed, the machines need not share a file
system), written with the document and removed with it, and records what was deleted. Here, with `shared`:
keep() also stores the bytes in the store (a failure fails the upload: the others could neither view nor rebuild
the document); path() copies an original this directory lacks from the store; prune() removes only copies of
documents the store recorded as deleted or cleared (saying which), keeps the others, and copies every shared
original this directory lacks, so that any data directory can rebuild the whole library. The local copies stay
the backup when the server loses its data. An embedded library is not shared: its copies are pruned as before.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Protocol

from vector_db import REBUILD_HINT, DocumentRecord, StoreError

log = logging.getLogger(__name__)

_NAMES = "names"
NOT_INDEXED = "not-indexed"
PREVIEWS = "previews"  # what the source viewer makes of a copy (a deck's slides as a PDF), removed with it


def preview_path(original: Path) -> Path:
    """Where the source viewer keeps its PDF of the kept copy `original` (previews/<doc_id>.pdf beside it)."""
    return original.parent / PREVIEWS / f"{original.name.split('.', 1)[0]}.pdf"


class SharedStore(Protocol):
    """What the originals need from a store that several data directories share (vector_db.VectorStore)."""

    where: str

    def keep_original(self, doc_id: str, name: str, suffix: str, data: bytes) -> None: ...

    def original(self, doc_id: str) -> tuple[str, str, bytes] | None: ...

    def stored_originals(self) -> dict[str, int]: ...

    def deletions(self) -> dict[str, dict]: ...

    def get_document(self, doc_id: str) -> DocumentRecord | None: ...


class Originals:
    """Files under `directory` as `<doc_id><suffix>`: names never come from the user, so nothing escapes it.

    `shared`: the store, when other data directories share it (see the module docstring); None for an embedded
    library.
    """

    def __init__(self, directory: Path, shared: SharedStore | None = None):
        self.directory = Path(directory)
        self.shared = shared

    def keep(self, doc_id: str, suffix: str, source: Path | bytes, name: str = "") -> None:
        """Store the file's bytes atomically (a reader never sees half a file), and its shown name; with a shared
        store, in the store too. Raises OSError, or StoreError (shared store only)."""
        self._keep_here(doc_id, suffix, source, name)
        if self.shared is not None:
            data = source if isinstance(source, bytes) else Path(source).read_bytes()
            self.shared.keep_original(doc_id, name, _clean_suffix(suffix), data)

    def _keep_here(self, doc_id: str, suffix: str, source: Path | bytes, name: str) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.directory, self.directory / f"{doc_id}{_clean_suffix(suffix)}", source)
        if name:
            (self.directory / _NAMES).mkdir(exist_ok=True)
            _write_atomic(self.directory, self.directory / _NAMES / doc_id, name.encode("utf-8"))

    def path(self, doc_id: str) -> Path | None:
        """The stored copy of `doc_id` (with a shared store, copied from it when this directory lacks it), or None.

        Raises:
            StoreError: the shared store failed, or holds bytes that are not this document's.
            OSError: the copy cannot be written here.
        """
        here = self._here(doc_id)
        if here is not None or self.shared is None or not doc_id:
            return here
        return self._copy_from_store(doc_id)[0]

    def _here(self, doc_id: str) -> Path | None:
        if not doc_id or not self.directory.is_dir():
            return None
        return next((p for p in self.directory.glob(f"{doc_id}.*") if p.is_file()), None)

    def _copy_from_store(self, doc_id: str) -> tuple[Path | None, int]:
        """(path, bytes) of the shared store's original of `doc_id` copied here; (None, 0) when it has none."""
        got = self.shared.original(doc_id)
        if got is None:
            return None, 0
        name, suffix, data = got
        if hashlib.sha256(data).hexdigest() != doc_id:  # a doc_id is the sha256 of its file's bytes
            raise StoreError(f"the original of {name or doc_id[:12]} stored at {self.shared.where} is not that "
                             f"file's bytes (its checksum differs); it was not used")
        self._keep_here(doc_id, suffix, data, name)
        return self._here(doc_id), len(data)

    def name(self, doc_id: str) -> str:
        """The file name the copy was indexed under ('' for copies kept before names were)."""
        try:
            return (self.directory / _NAMES / doc_id).read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def entries(self) -> Iterator[tuple[str, Path]]:
        """(doc_id, path) of every kept copy, in name order."""
        if self.directory.is_dir():
            for path in sorted(self.directory.iterdir()):
                if path.is_file() and not path.name.startswith("."):
                    yield path.name.split(".", 1)[0], path

    def count(self) -> int:
        return sum(1 for _ in self.entries())

    def remove(self, doc_id: str) -> None:
        """Delete the copy of a document the user deleted or replaced, and what the viewer made of it."""
        for path in self.directory.glob(f"{doc_id}.*") if doc_id and self.directory.is_dir() else ():
            path.unlink(missing_ok=True)
        if doc_id:
            (self.directory / _NAMES / doc_id).unlink(missing_ok=True)
            (self.directory / PREVIEWS / f"{doc_id}.pdf").unlink(missing_ok=True)

    def set_aside(self, doc_id: str) -> Path | None:
        """Move a copy that could not be indexed to not-indexed/<its name> (never deleted); returns where."""
        source = self.path(doc_id)
        if source is None:
            return None
        target_dir = self.directory / NOT_INDEXED
        target_dir.mkdir(exist_ok=True)
        name = Path(self.name(doc_id) or source.name).name or source.name
        target = target_dir / name
        if target.exists():
            target = target_dir / f"{doc_id[:12]}-{name}"
        os.replace(source, target)
        (self.directory / _NAMES / doc_id).unlink(missing_ok=True)
        (self.directory / PREVIEWS / f"{doc_id}.pdf").unlink(missing_ok=True)
        return target

    def clear(self) -> None:
        """Delete every copy (the user cleared the library); what a rebuild set aside stays."""
        for doc_id, _path in list(self.entries()):
            self.remove(doc_id)

    def prune(self, keep_ids: Iterable[str]) -> list[str]:
        """Remove copies of documents that are not indexed (and half-written temp files); returns messages.

        With a shared store, only copies of documents it recorded as deleted go, and the originals of indexed
        documents this directory lacks are copied from it (settle_shared).

        Only for a store known to be whole: the caller re-indexes the copies of documents the store lost first.
        """
        if self.shared is not None:
            messages = self.settle_shared(set(keep_ids))
            self._prune_previews()
            return messages
        if not self.directory.is_dir():
            return []
        keep, removed = set(keep_ids), []
        for path in self.directory.iterdir():
            if path.name.startswith(".incoming-"):
                path.unlink(missing_ok=True)
            elif path.is_file() and path.name.split(".", 1)[0] not in keep:
                self.remove(path.name.split(".", 1)[0])
                removed.append(path.name)
        self._prune_previews()
        return [f"removed {len(removed)} stored original(s) of documents no longer indexed"] if removed else []

    def _prune_previews(self) -> None:
        """Remove what the viewer made of copies that are gone (a conversion that ended after its document was
        deleted) and half-written previews."""
        folder = self.directory / PREVIEWS
        if not folder.is_dir():
            return
        here = {doc_id for doc_id, _path in self.entries()}
        for path in folder.iterdir():
            if path.name.startswith(".incoming-") or path.name.split(".", 1)[0] not in here:
                path.unlink(missing_ok=True)


    def settle_shared(self, ready: set[str]) -> list[str]:
        """With a shared store: remove the copies of documents it recorded as deleted or cleared (not indexed
        again since), keep and report those it neither holds nor recorded as removed, and copy every stored
        original of an indexed document this directory lacks (logged; only a copy that fails is a message);
        returns messages."""
        self._remove_temp_files()
        removed = self.shared.deletions()
        here = {doc_id for doc_id, _path in self.entries()}
        messages = _removal_messages(self, {d: removed[d] for d in here - ready if d in removed})
        unknown = sorted(d for d in here - ready if d not in removed and self.shared.get_document(d) is None)
        if unknown:
            messages.append(f"{len(unknown)} kept original(s) in {self.directory} are of documents the library at "
                            f"{self.shared.where} does not hold and has not recorded as deleted (a Chroma server "
                            f"on fresh storage, or another library?): they are kept; {REBUILD_HINT}")
        return messages + self._copy_missing(ready - here)

    def _copy_missing(self, wanted: set[str]) -> list[str]:
        if not wanted:
            return []
        stored = self.shared.stored_originals()
        copied, size, failed = 0, 0, []
        for doc_id in sorted(wanted & set(stored)):
            try:
                path, got = self._copy_from_store(doc_id)
            except (StoreError, OSError) as e:  # one original that cannot be copied must not stop the opening
                failed.append(f"could not copy the original of {doc_id[:12]} from {self.shared.where}: {e}")
                continue
            copied, size = copied + (path is not None), size + got
        if copied:  # not a repair: the normal course of a shared library
            log.info("copied %d original(s) of documents indexed in another program (%.1f MB) to %s", copied,
                     size / 1e6, self.directory)
        return failed

    def _remove_temp_files(self) -> None:
        if self.directory.is_dir():
            for path in self.directory.glob(".incoming-*"):
                path.unlink(missing_ok=True)


def _removal_messages(originals: Originals, gone: dict[str, dict]) -> list[str]:
    """Remove the copies of `gone` ({doc_id: its tombstone}); one message for deletions, one per clear."""
    for doc_id in gone:
        originals.remove(doc_id)
    deleted = [d for d, why in gone.items() if why.get("why") != "cleared"]
    messages = [f"removed {len(deleted)} kept original(s) of documents deleted in another program"] if deleted else []
    clears: dict[tuple, int] = {}
    for why in gone.values():
        if why.get("why") == "cleared":
            key = (why.get("by") or "a program that did not say which", float(why.get("at") or 0.0))
            clears[key] = clears.get(key, 0) + 1
    for (by, at), count in sorted(clears.items(), key=lambda item: item[0][1]):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(at)) if at else "at an unknown time"
        messages.append(f"the library was cleared in another program ({by}, {when}): removed {count} kept "
                        f"original(s) of its documents here")
    return messages


def _write_atomic(directory: Path, target: Path, source: Path | bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as out:
            if isinstance(source, bytes):
                out.write(source)
            else:
                with open(source, "rb") as src:
                    shutil.copyfileobj(src, out)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _clean_suffix(suffix: str) -> str:
    suffix = suffix.lower()
    return suffix if suffix[1:].isalnum() and len(suffix) <= 10 else ".bin"
