"""Saved chats in a real browser: `streamlit run app.py` and Debian's chromium (as tests/ui/test_browser_chat.py).

A question is asked (offline, one document), the page reloaded (the chat is back with its citations), the server
restarted on the same data directory (the chat list is still there), the chat renamed and deleted; the scope
indicator by the chat box and the document delete's confirmation are checked on the way. Screenshots go to
test-artifacts/chats-*.png.
"""

from __future__ import annotations

import os

import pytest

from tests.helpers.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, SHOT_MS, STEP_MS, _settle, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZEPHYR = ("Zephyr project report.\n\nThe Zephyr project reduced energy use by 37 percent in 2023.\n\n"
          "Heat pumps were supplied by Nordvarme AS.\n")
QUESTION = "Who supplied the heat pumps?"


def _shot(page, name: str) -> None:
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / f"chats-{name}.png"), full_page=True, timeout=SHOT_MS)


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is missing: install Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _env(data) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")
           and not k.startswith(("DOCAGENT_PROVIDER", "DOCAGENT_LOCAL_"))}
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False")
    return env


def test_a_chat_survives_a_reload_and_a_restart_and_can_be_renamed_and_deleted(browser, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    data = tmp_path / "data"
    doc = tmp_path / "zephyr.txt"
    doc.write_text(ZEPHYR)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    with streamlit_app(_env(data), tmp_path / "server1.log") as url:
        page.goto(url)
        page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
        sidebar = page.get_by_test_id("stSidebar")
        page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([doc], timeout=STEP_MS)
        sidebar.get_by_text("zephyr.txt — indexed").wait_for(timeout=STEP_MS)

        delete = sidebar.get_by_role("button", name="Delete zephyr.txt")  # the icon button has a name
        delete.click()
        sidebar.get_by_text("from the library?").wait_for(timeout=STEP_MS)
        _shot(page, "01-delete-asks")
        assert sidebar.get_by_role("button", name="Delete", exact=True).is_visible()  # labelled, not empty boxes
        sidebar.get_by_role("button", name="Cancel", exact=True).click()
        sidebar.get_by_text("from the library?").wait_for(state="hidden", timeout=STEP_MS)

        sidebar.get_by_role("checkbox", name="zephyr.txt").check(force=True)  # tick: ask about this document only
        page.get_by_text("Asking only about zephyr.txt").wait_for(timeout=STEP_MS)
        chat = page.get_by_role("textbox", name="Ask about your documents")
        chat.fill(QUESTION)
        chat.press("Enter")
        answer = page.get_by_test_id("stChatMessage").nth(1)
        answer.get_by_role("tab", name="Source viewer").wait_for(timeout=STEP_MS)
        assert "Nordvarme" in answer.inner_text() and "[1]" in answer.inner_text()
        sidebar.get_by_role("button", name=QUESTION).wait_for(timeout=STEP_MS)  # listed under Chats
        _shot(page, "02-answer-scoped")
        assert "chat=" in page.url

        page.reload()
        answer = page.get_by_test_id("stChatMessage").nth(1)
        answer.get_by_role("tab", name="Sources (1)").wait_for(timeout=STEP_MS)
        assert "Nordvarme" in answer.inner_text()
        answer.get_by_role("tab", name="Reasoning").click()
        answer.get_by_text("Verification").first.wait_for(timeout=STEP_MS)
        _shot(page, "03-after-reload")

    with streamlit_app(_env(data), tmp_path / "server2.log") as url:  # a server restart, same data directory
        page.goto(url)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_role("button", name=QUESTION).wait_for(timeout=STEP_MS)
        assert not page.get_by_test_id("stChatMessage").count()  # a fresh address opens a new chat...
        sidebar.get_by_role("button", name=QUESTION).click()  # ...and the saved one is a click away
        answer = page.get_by_test_id("stChatMessage").nth(1)
        answer.get_by_role("tab", name="Sources (1)").wait_for(timeout=STEP_MS)
        assert "zephyr.txt" in answer.get_by_test_id("stHtml").first.inner_text()
        _shot(page, "04-after-restart")

        sidebar.get_by_role("button", name="Rename or delete this chat").click()
        title = page.get_by_role("textbox", name="Chat title")
        title.fill("Heat pump supplier")
        title.press("Enter")
        page.get_by_role("button", name="Rename", exact=True).click()
        sidebar.get_by_role("button", name="Heat pump supplier").wait_for(timeout=STEP_MS)
        _shot(page, "05-renamed")

        if not page.get_by_role("button", name="Delete this chat", exact=True).is_visible():  # the menu may still be open
            sidebar.get_by_role("button", name="Rename or delete this chat").click()
        page.get_by_role("button", name="Delete this chat", exact=True).click()
        page.get_by_text("Delete this chat and its answers?").wait_for(timeout=STEP_MS)
        _shot(page, "06-delete-chat-asks")
        page.get_by_role("button", name="Delete chat", exact=True).click()
        sidebar.get_by_role("button", name="Heat pump supplier").wait_for(state="detached", timeout=STEP_MS)
        assert not page.get_by_test_id("stChatMessage").count()
        _shot(page, "07-chat-deleted")
        log = (tmp_path / "server1.log").read_text() + (tmp_path / "server2.log").read_text()
        assert "Traceback" not in log
    page.close()


def test_a_chat_address_the_app_never_writes_is_refused_at_once(browser, tmp_path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    with streamlit_app(_env(tmp_path / "data"), tmp_path / "server.log") as url:
        page.goto(f"{url}/?chat={'7' * 30_000}")  # reaches the page: refused by it, with the reason
        page.get_by_text("is not a chat id").wait_for(timeout=STEP_MS)
        assert "chat=" not in page.url and page.get_by_text("(30,000 characters)").is_visible()
        _shot(page, "08-address-refused")
        response = page.goto(f"{url}/?chat={'7' * 100_000}")  # past the HTTP server's request limit: refused there
        assert response is not None and response.status == 400
    page.close()


def test_a_reloaded_chat_opens_at_its_last_answer_not_at_the_top(browser, tmp_path):
    data = tmp_path / "data"
    doc = tmp_path / "zephyr.txt"
    doc.write_text(ZEPHYR)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with streamlit_app(_env(data), tmp_path / "server.log") as url:
        page.goto(url)
        page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
        page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([doc], timeout=STEP_MS)
        page.get_by_test_id("stSidebar").get_by_text("zephyr.txt — indexed").wait_for(timeout=STEP_MS)
        questions = [QUESTION, "How much did the Zephyr project reduce energy use?", "When was energy use reduced?",
                     "Which company supplied the heat pumps for Zephyr?"]
        for n, question in enumerate(questions):
            chat = page.get_by_role("textbox", name="Ask about your documents")
            chat.fill(question)
            chat.press("Enter")
            page.get_by_test_id("stChatMessage").nth(2 * n + 1).get_by_role("tab", name="Reasoning").wait_for(
                timeout=STEP_MS)
        page.reload()
        last = page.get_by_test_id("stChatMessage").nth(2 * len(questions) - 1)
        last.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
        page.wait_for_function("window.scrollY > 0 || document.querySelector('[data-testid=stMain]').scrollTop > 0"
                               " || [...document.querySelectorAll('*')].some(e => e.scrollTop > 0)", timeout=10_000)
        _settle(page)
        box = page.get_by_test_id("stChatMessage").last.bounding_box()
        assert box is not None and 0 <= box["y"] < 900, box  # the last message is on screen
        first = page.get_by_test_id("stChatMessage").first.bounding_box()
        assert first is not None and first["y"] < 0, first  # the first one scrolled away above
        _shot(page, "09-reload-opens-at-the-last-answer")
