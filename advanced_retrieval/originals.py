"""A copy of every indexed file, named by its doc_id, so the source viewer can show the page or slide itself."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)


class Originals:
    """Files under `directory` as `<doc_id><suffix>`: names never come from the user, so nothing escapes it."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)

    def keep(self, doc_id: str, suffix: str, source: Path | bytes) -> None:
        """Store the file's bytes atomically (a reader never sees half a file). Raises OSError."""
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / f"{doc_id}{_clean_suffix(suffix)}"
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".incoming-")
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

    def path(self, doc_id: str) -> Path | None:
        """The stored copy of `doc_id`, or None."""
        if not doc_id or not self.directory.is_dir():
            return None
        return next((p for p in self.directory.glob(f"{doc_id}.*") if p.is_file()), None)

    def remove(self, doc_id: str) -> None:
        for path in self.directory.glob(f"{doc_id}.*") if doc_id and self.directory.is_dir() else ():
            path.unlink(missing_ok=True)

    def clear(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def prune(self, keep_ids: Iterable[str]) -> list[str]:
        """Remove copies of documents that are not indexed (and half-written temp files); returns messages."""
        if not self.directory.is_dir():
            return []
        keep, removed = set(keep_ids), []
        for path in self.directory.iterdir():
            if path.name.startswith(".incoming-") or path.name.split(".", 1)[0] not in keep:
                path.unlink(missing_ok=True)
                removed.append(path.name)
        return [f"removed {len(removed)} stored original(s) of documents no longer indexed"] if removed else []


def _clean_suffix(suffix: str) -> str:
    suffix = suffix.lower()
    return suffix if suffix[1:].isalnum() and len(suffix) <= 10 else ".bin"
