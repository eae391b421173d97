"""ui.conversations: saved chats in SQLite (titles, order, rename, delete, restart, two writers at once)."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from ui.conversations import ConversationError, ConversationStore


def test_a_chat_is_named_by_its_first_question_until_renamed(tmp_path):
    store = ConversationStore(tmp_path / "c.sqlite3")
    chat = store.create()
    assert [c.title for c in store.chats()] == ["New chat"]
    store.append(chat, {"role": "user", "content": "What   did Zephyr\nsave?"})
    store.append(chat, {"role": "assistant", "content": "37 percent [1].", "record": {"mode": "offline"}})
    store.append(chat, {"role": "user", "content": "And Orbit?"})
    assert store.title(chat) == "What did Zephyr save?"
    store.rename(chat, "  Energy  ")
    store.append(chat, {"role": "user", "content": "later"})
    assert store.title(chat) == "Energy"
    with pytest.raises(ValueError):
        store.rename(chat, " ")
    assert store.title(chat) == "Energy" and store.chats()[0].messages == 4


def test_chats_survive_a_restart_and_delete_removes_everything(tmp_path):
    path = tmp_path / "data" / "c.sqlite3"
    first = ConversationStore(path)
    old, new = first.create(), first.create()
    first.append(old, {"role": "user", "content": "one"})
    message = {"role": "assistant", "content": "é ✓", "record": {"citations": [{"n": 1, "doc_id": "d"}]}}
    first.append(old, message)
    again = ConversationStore(path)  # a server restart
    assert [c.id for c in again.chats()] == [old, new]  # the most recently changed first
    assert again.messages(old)[1] == message
    again.delete(old)
    assert [c.id for c in again.chats()] == [new] and again.messages(old) == [] and not again.exists(old)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_two_tabs_writing_at_once_both_land_in_order(tmp_path):
    path = tmp_path / "c.sqlite3"
    chat = ConversationStore(path).create()

    def tab(name: str) -> None:
        store = ConversationStore(path)  # each tab its own store object, as two sessions have
        for i in range(25):
            store.append(chat, {"role": "user", "content": f"{name} {i}"})

    threads = [threading.Thread(target=tab, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    contents = [m["content"] for m in ConversationStore(path).messages(chat)]
    assert len(contents) == 50
    for name in ("a", "b"):
        assert [c for c in contents if c.startswith(name)] == [f"{name} {i}" for i in range(25)]


def test_writing_to_a_chat_deleted_elsewhere_is_a_clear_error(tmp_path):
    store = ConversationStore(tmp_path / "c.sqlite3")
    chat = store.create()
    store.delete(chat)
    with pytest.raises(ConversationError, match="deleted"):
        store.append(chat, {"role": "user", "content": "hello"})


def test_an_unusable_file_names_itself(tmp_path):
    bad = tmp_path / "c.sqlite3"
    bad.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(ConversationError, match=str(bad)):
        ConversationStore(bad)


def test_tail_reads_the_count_and_only_the_last_messages_in_order(tmp_path):
    store = ConversationStore(tmp_path / "c.sqlite3")
    chat = store.create()
    store.extend(chat, [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(101)])
    assert store.title(chat) == "m0" and store.count(chat) == 101
    total, last = store.tail(chat, 4)
    assert total == 101 and [m["content"] for m in last] == ["m97", "m98", "m99", "m100"]
    assert store.tail(chat, 500)[1] == store.messages(chat)
    assert store.tail("0" * 32, 4) == (0, []) and store.count("0" * 32) == 0
    store.append(chat, {"role": "user", "content": "m101"})  # appends after a batch, in its place
    assert store.tail(chat, 1) == (102, [{"role": "user", "content": "m101"}])
    with pytest.raises(ConversationError, match="deleted"):
        store.extend("0" * 32, [{"role": "user", "content": "lost"}])
