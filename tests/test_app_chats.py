"""Long saved chats and chat addresses through AppTest (the page as tests/test_app.py drives it): a 5,000-turn chat
opens with only its last messages drawn and shows older ones on request; a ?chat= value the app never writes is
refused at once. The time a long chat takes to open is measured in bench/chats.py."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import wiring
from tests.helpers.paths import REPO
from ui import chats as saved
from ui.conversations import ConversationStore

TIMEOUT = 90  # the first run in a process imports chromadb and langgraph
TURNS = 5_000
ZEPHYR = (b"Zephyr project report.\n\nThe Zephyr project reduced energy use by 37 percent in 2023.\n\n"
          b"Heat pumps were supplied by Nordvarme AS.\n")
QUESTION = "Who supplied the heat pumps?"


@pytest.fixture
def app(tmp_path, monkeypatch):
    """A fresh app (offline: no key in the environment) with its own data directory."""
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "DOCAGENT_GEMINI_BASE_URL", "CHROMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()


def no_failures(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def asked(at: AppTest) -> AppTest:
    """Upload the Zephyr report, wait until the app's ingestion queue has indexed it, ask QUESTION."""
    from ui import resources

    at.file_uploader[0].set_value([("zephyr.txt", ZEPHYR, "text/plain")])
    at.run()
    queue = resources.load_queue(wiring.Config.from_env())  # the app's queue, cached in st.cache_resource
    assert queue.wait(lambda items: all(i.finished for i in items), TIMEOUT), [i.state for i in queue.items()]
    at.run()
    at.chat_input[0].set_value(QUESTION)
    return at.run()


def opened(chat: str) -> AppTest:
    """A new tab on the address ?chat=`chat` (a reload, or a link)."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    at.query_params["chat"] = chat
    return at.run()


def user_lines(at: AppTest) -> list[str]:
    return [m.markdown[0].value for m in at.chat_message if m.name == "user"]


def test_a_5000_turn_chat_opens_with_its_last_messages_and_shows_earlier_ones_on_request(app):
    at = asked(app)  # one real answer, saved by the page as every answer is
    no_failures(at)
    store = ConversationStore(wiring.Config.from_env().conversations)
    chat_id = at.session_state.chat_id
    question, answer = store.messages(chat_id)
    assert answer["result"]["citations"]  # the answer's whole record, as the page saved it
    store.extend(chat_id, [m for n in range(2, TURNS + 1)
                           for m in ({**question, "content": f"{QUESTION} Turn {n}"}, answer)])

    tab = opened(chat_id)
    no_failures(tab)
    assert len(tab.chat_message) == saved.SHOWN  # the last 20 turns, not 10,000 messages
    first = TURNS - saved.SHOWN // 2 + 1
    assert user_lines(tab)[0] == f"{QUESTION} Turn {first}" and user_lines(tab)[-1] == f"{QUESTION} Turn {TURNS}"
    assert [t.label for t in tab.chat_message[-1].tabs] == ["Sources (1)", "Source viewer", "Reasoning"]
    earlier = tab.button(key="show_earlier")
    assert earlier.label == f"Show {saved.EARLIER} earlier messages ({2 * TURNS - saved.SHOWN:,} not shown)"

    tab = earlier.click().run()
    no_failures(tab)
    assert len(tab.chat_message) == saved.SHOWN + saved.EARLIER
    assert user_lines(tab)[0] == f"{QUESTION} Turn {first - saved.EARLIER // 2}"
    assert tab.button(key="show_earlier").label.endswith(f"({2 * TURNS - saved.SHOWN - saved.EARLIER:,} not shown)")

    exported = saved.export_markdown(store, chat_id, [], "Offline")  # the export button's file: the whole chat
    assert exported.count("\n## Q: ") == TURNS and exported.count("Nordvarme") >= TURNS


def test_a_chat_address_the_app_never_writes_is_refused_at_once(app):
    at = asked(app)
    chat_id = at.session_state.chat_id
    for wrong in ("7" * 100_000, chat_id.upper(), f"{chat_id}'--", "../conversations.sqlite3", chat_id[:-1]):
        tab = opened(wrong)
        no_failures(tab)
        assert not tab.chat_message and tab.session_state.chat_id is None, wrong[:50]
        assert "chat" not in tab.query_params
        assert [e.value for e in tab.error if "is not a chat id" in e.value], wrong[:50]
    tab = opened(chat_id.replace(chat_id[0], "0" if chat_id[0] != "0" else "1"))  # well formed, not saved here
    assert not tab.chat_message and any("not saved here" in w.value for w in tab.warning)
    tab = opened(chat_id)  # the real one still opens
    assert [m.name for m in tab.chat_message] == ["user", "assistant"] and not tab.error
