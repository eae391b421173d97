"""Saved conversations: an SQLite file in the data directory (standard library only, no streamlit here).

Every tab of every browser reads and writes the same file, so: WAL journal (readers never wait for a writer),
one short transaction per call, a connection per call (safe from any thread), and a busy timeout for the rare
moment two tabs write at once. A message is stored as JSON exactly as the page keeps it (an answer as
agentic_rag.answer_record), so a reload or a server restart draws it again with its citations, claims and
reasoning.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

BUSY_TIMEOUT_S = 10.0  # another tab's write lasts milliseconds; this bounds the wait if the disk stalls
TITLE_CHARS = 80

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chats (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    titled INTEGER NOT NULL DEFAULT 0,  -- 1 once renamed by the user (the first question no longer names it)
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
    chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    body TEXT NOT NULL,  -- the message as JSON
    PRIMARY KEY (chat_id, position)
);
"""


class ConversationError(Exception):
    """The conversations file cannot be read or written; the message names the file and the reason."""


@dataclass(frozen=True)
class ChatSummary:
    """One saved chat as the sidebar lists it."""

    id: str
    title: str
    updated: float
    messages: int


class ConversationStore:
    """The saved chats in one SQLite file (created on first use).

    Raises ConversationError (naming the file) when the file cannot be opened, read or written.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        with self._connect() as db:
            db.executescript(_SCHEMA)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One connection and one transaction: committed on success, rolled back on error, always closed."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S)
        except (OSError, sqlite3.Error) as error:
            raise ConversationError(f"cannot open the saved conversations {self.path}: {error}") from error
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
            with db:
                yield db
        except sqlite3.Error as error:
            raise ConversationError(f"the saved conversations {self.path} could not be used: {error}") from error
        finally:
            db.close()

    def create(self, title: str = "New chat") -> str:
        """A new empty chat; its id."""
        chat_id, now = uuid.uuid4().hex, time.time()
        with self._connect() as db:
            db.execute("INSERT INTO chats (id, title, created, updated) VALUES (?, ?, ?, ?)",
                       (chat_id, _title(title), now, now))
        return chat_id

    def chats(self) -> list[ChatSummary]:
        """Every chat, the most recently changed first."""
        with self._connect() as db:
            rows = db.execute("SELECT c.id, c.title, c.updated, COUNT(m.position) FROM chats c "
                              "LEFT JOIN messages m ON m.chat_id = c.id GROUP BY c.id "
                              "ORDER BY c.updated DESC, c.created DESC").fetchall()
        return [ChatSummary(*row) for row in rows]

    def exists(self, chat_id: str) -> bool:
        with self._connect() as db:
            return db.execute("SELECT 1 FROM chats WHERE id = ?", (chat_id,)).fetchone() is not None

    def title(self, chat_id: str) -> str:
        with self._connect() as db:
            row = db.execute("SELECT title FROM chats WHERE id = ?", (chat_id,)).fetchone()
        return row[0] if row else ""

    def messages(self, chat_id: str) -> list[dict]:
        """The chat's messages in order (an unknown chat has none)."""
        with self._connect() as db:
            rows = db.execute("SELECT body FROM messages WHERE chat_id = ? ORDER BY position", (chat_id,)).fetchall()
        return [json.loads(body) for (body,) in rows]

    def tail(self, chat_id: str, last: int) -> tuple[int, list[dict]]:
        """How many messages the chat holds, and its `last` ones in order, read in one transaction.

        Only those rows are read and parsed (the primary key orders them by position), so a chat of thousands of
        long answers opens as fast as a short one.
        """
        with self._connect() as db:
            (total,) = db.execute("SELECT COUNT(*) FROM messages WHERE chat_id = ?", (chat_id,)).fetchone()
            rows = db.execute("SELECT body FROM messages WHERE chat_id = ? ORDER BY position DESC LIMIT ?",
                              (chat_id, max(last, 0))).fetchall()
        return total, [json.loads(body) for (body,) in reversed(rows)]

    def count(self, chat_id: str) -> int:
        """How many messages the chat holds (an unknown chat: 0)."""
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM messages WHERE chat_id = ?", (chat_id,)).fetchone()[0]

    def append(self, chat_id: str, message: dict) -> None:
        """Add `message` (JSON-ready) at the end of the chat (see extend)."""
        self.extend(chat_id, [message])

    def extend(self, chat_id: str, messages: Sequence[dict]) -> None:
        """Add `messages` (JSON-ready) at the end of the chat, in one transaction; the first question names a chat
        not yet renamed.

        Two tabs appending to one chat at once both land, one after the other (the position is taken inside the
        transaction). Raises ConversationError for an unknown chat (deleted in another tab).
        """
        bodies, now = [json.dumps(m, ensure_ascii=False) for m in messages], time.time()
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")  # take the write lock before reading the next position
            row = db.execute("SELECT titled, (SELECT COUNT(*) FROM messages WHERE chat_id = ?) FROM chats "
                             "WHERE id = ?", (chat_id, chat_id)).fetchone()
            if row is None:
                raise ConversationError("this chat was deleted (in another tab?); start a new one")
            titled, count = row
            db.executemany("INSERT INTO messages (chat_id, position, body) VALUES (?, ?, ?)",
                           [(chat_id, count + i, body) for i, body in enumerate(bodies)])
            db.execute("UPDATE chats SET updated = ? WHERE id = ?", (now, chat_id))
            first = messages[0] if messages else {}
            if not titled and count == 0 and first.get("role") == "user" and first.get("content"):
                db.execute("UPDATE chats SET title = ? WHERE id = ?", (_title(first["content"]), chat_id))

    def rename(self, chat_id: str, title: str) -> None:
        """Give the chat a title of the user's (an empty one is refused with ValueError)."""
        if not title.strip():
            raise ValueError("a chat's title cannot be empty")
        with self._connect() as db:
            db.execute("UPDATE chats SET title = ?, titled = 1 WHERE id = ?", (_title(title), chat_id))

    def delete(self, chat_id: str) -> None:
        """Remove the chat and its messages (nothing happens for an unknown one)."""
        with self._connect() as db:
            db.execute("DELETE FROM messages WHERE chat_id = ?", (chat_id,))
            db.execute("DELETE FROM chats WHERE id = ?", (chat_id,))


def _title(text: str) -> str:
    """One line of at most TITLE_CHARS characters."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
