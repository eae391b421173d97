"""A copy of every indexed file, named by its doc_id, so the source viewer can show the page or slide itself.

The copies are also the user's only way to get the library back when the store loses its data (issue 16, item
2): each copy's file name is kept beside it (names/<doc_id>), so a rebuild indexes it under the same name. A copy
is deleted only because its document was deleted or replaced, never because the store no longer lists it; a copy
a rebuild could not index is moved to not-indexed/ under its own name, for the user to see.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

log = logging.getLogger(__name__)

_NAMES = "names"
NOT_INDEXED = "not-indexed"


class Originals:
    """Files under `directory` as `<doc_id><suffix>`: names never come from the user, so nothing escapes it."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def keep(self, doc_id: str, suffix: str, source: Path | bytes, name: str = "") -> None:
        """Store the file's bytes atomically (a reader never sees half a file), and its shown name. Raises OSError."""
        self.directory.mkdir(parents=True, exist_ok=True)
        _write_atomic(self.directory, self.directory / f"{doc_id}{_clean_suffix(suffix)}", source)
        if name:
            (self.directory / _NAMES).mkdir(exist_ok=True)
            _write_atomic(self.directory, self.directory / _NAMES / doc_id, name.encode("utf-8"))

    def path(self, doc_id: str) -> Path | None:
        """The stored copy of `doc_id`, or None."""
        if not doc_id or not self.directory.is_dir():
            return None
        return next((p for p in self.directory.glob(f"{doc_id}.*") if p.is_file()), None)

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
        """Delete the copy of a document the user deleted or replaced."""
        for path in self.directory.glob(f"{doc_id}.*") if doc_id and self.directory.is_dir() else ():
            path.unlink(missing_ok=True)
        if doc_id:
            (self.directory / _NAMES / doc_id).unlink(missing_ok=True)

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
        return target

    def clear(self) -> None:
        """Delete every copy (the user cleared the library); what a rebuild set aside stays."""
        for doc_id, _path in list(self.entries()):
            self.remove(doc_id)

    def prune(self, keep_ids: Iterable[str]) -> list[str]:
        """Remove copies of documents that are not indexed (and half-written temp files); returns messages.

        Only for a store known to be whole: the caller re-indexes the copies of documents the store lost first.
        """
        if not self.directory.is_dir():
            return []
        keep, removed = set(keep_ids), []
        for path in self.directory.iterdir():
            if path.name.startswith(".incoming-"):
                path.unlink(missing_ok=True)
            elif path.is_file() and path.name.split(".", 1)[0] not in keep:
                self.remove(path.name.split(".", 1)[0])
                removed.append(path.name)
        return [f"removed {len(removed)} stored original(s) of documents no longer indexed"] if removed else []


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
