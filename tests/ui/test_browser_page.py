"""The page asks nothing of the internet: every request a real chromium makes while the app (`python -m ui.serve`,
as `make run` starts it) loads, takes an upload, answers a question offline and has its sidebar closed and opened
again goes to the app's own 127.0.0.1 server (data: and blob: URLs are the page's own). A favicon or a font
fetched from a CDN, or the framework's usage statistics, would tell a third party that the app was opened.
Screenshots go to test-artifacts/page-*.png.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

from tests.helpers.browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    SHOT_MS,
    STEP_MS,
    _require_chromium,
    _settle,
    streamlit_app,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOCAL_HOSTS = {"127.0.0.1", "localhost"}
PAGE_SCHEMES = {"data", "blob", "about"}  # made by the page itself, never sent anywhere
ZEPHYR = ("Zephyr project report.\n\nThe Zephyr project reduced energy use by 37 percent in 2023.\n\n"
          "Heat pumps were supplied by Nordvarme AS.\n")
QUESTION = "Who supplied the heat pumps?"


def leaves_the_machine(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme not in PAGE_SCHEMES and parts.hostname not in LOCAL_HOSTS


def test_leaves_the_machine_tells_local_from_remote_urls():
    assert not leaves_the_machine("http://127.0.0.1:8501/static/js/index.js")
    assert not leaves_the_machine("ws://localhost:8501/_stcore/stream")
    assert not leaves_the_machine("data:image/svg+xml;base64,PHN2Zz4=")
    assert leaves_the_machine("https://fonts.gstatic.com/s/i/short-term/release/materialsymbolsrounded/menu_book/"
                              "default/24px.svg")
    assert leaves_the_machine("https://data.streamlit.io/metrics.json")
    assert leaves_the_machine("http://127.0.0.1.example.com/x")


def _env(data) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")
           and not k.startswith(("DOCAGENT_PROVIDER", "DOCAGENT_LOCAL_"))}  # offline, whatever the shell says
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False")
    return env


def _shot(page, name: str) -> None:
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / f"page-{name}.png"), full_page=True, timeout=SHOT_MS)


def test_no_request_leaves_the_machine_while_the_page_is_used(tmp_path):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    doc = tmp_path / "zephyr.txt"
    doc.write_text(ZEPHYR)
    requests: list[str] = []
    with sync_playwright() as p, streamlit_app(_env(tmp_path / "data"), tmp_path / "server.log") as url:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.on("request", lambda request: requests.append(request.url))  # every tab, worker and frame
        page = context.new_page()
        try:
            page.goto(url)
            page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
            sidebar = page.get_by_test_id("stSidebar")
            page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([doc], timeout=STEP_MS)
            sidebar.get_by_text("zephyr.txt — indexed").wait_for(timeout=STEP_MS)
            chat = page.get_by_role("textbox", name="Ask about your documents")
            chat.fill(QUESTION)
            chat.press("Enter")
            answer = page.get_by_test_id("stChatMessage").nth(1)
            answer.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
            answer.get_by_role("tab", name="Reasoning").click()
            _shot(page, "01-answered")
            sidebar.hover()  # the collapse button shows on hover only
            page.get_by_role("button", name="Collapse sidebar").click(timeout=STEP_MS)
            page.get_by_role("button", name="Expand sidebar").click(timeout=STEP_MS)
            sidebar.get_by_role("button", name=QUESTION).wait_for(timeout=STEP_MS)  # the chat, listed
            page.reload()  # a reload sets the tab's icon again
            page.get_by_test_id("stChatMessage").nth(1).get_by_role("tab", name="Sources (1)").wait_for(
                timeout=STEP_MS)
            _shot(page, "02-reloaded")
            page.wait_for_timeout(1500)  # a late request (icon, statistics) is still recorded
            icon = page.evaluate("document.querySelector(\"link[rel='shortcut icon']\").href")
        finally:
            context.close()
            browser.close()
    assert any(urlsplit(u).hostname == "127.0.0.1" for u in requests)  # the recording worked
    remote = sorted({u for u in requests if leaves_the_machine(u)})
    assert not remote, f"requests that left the machine: {remote}"
    assert not leaves_the_machine(icon), icon  # the browser fetches the tab's icon itself, perhaps unrecorded
    assert "Traceback" not in (tmp_path / "server.log").read_text()


# Streamlit's own markup, not the app's: its file uploader's drop zone is role="presentation" yet labelled.
KNOWN_FRAMEWORK_FINDINGS = {"presentation-role-conflict"}


def _axe_findings(page, state: str, found: dict) -> None:
    from axe_playwright_python.sync_playwright import Axe

    _settle(page)
    for violation in Axe().run(page).response["violations"]:
        found.setdefault(state, []).append({"rule": violation["id"], "impact": violation["impact"],
                                            "help": violation["help"],
                                            "where": [n["target"] for n in violation["nodes"][:5]],
                                            "html": [n["html"][:200] for n in violation["nodes"][:3]]})


def test_axe_core_finds_nothing_serious_on_the_page_in_use(tmp_path):
    """axe-core (the copy bundled by axe-playwright-python) over the empty page, the answered page, the Source
    viewer, the open Settings and the Evaluate page: no serious or critical finding; every finding, with its
    place, in test-artifacts/page-axe.json."""
    import json

    _require_chromium()
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    doc = tmp_path / "zephyr.txt"
    doc.write_text(ZEPHYR)
    found: dict[str, list] = {}
    with sync_playwright() as p, streamlit_app(_env(tmp_path / "data"), tmp_path / "server.log") as url:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            page.goto(url)
            page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
            _axe_findings(page, "empty library", found)
            sidebar = page.get_by_test_id("stSidebar")
            page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([doc], timeout=STEP_MS)
            sidebar.get_by_text("zephyr.txt — indexed").wait_for(timeout=STEP_MS)
            chat = page.get_by_role("textbox", name="Ask about your documents")
            chat.fill(QUESTION)
            chat.press("Enter")
            answer = page.get_by_test_id("stChatMessage").nth(1)
            answer.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
            _axe_findings(page, "answered", found)
            answer.get_by_role("tab", name="Source viewer").click()
            _axe_findings(page, "source viewer", found)
            sidebar.get_by_text("Settings").click()
            _axe_findings(page, "settings open", found)
            sidebar.get_by_text("Evaluate").click()
            page.get_by_role("heading", name="Evaluate").first.wait_for(timeout=STEP_MS)
            _axe_findings(page, "evaluate page", found)
            _shot(page, "03-axe-evaluate")
        finally:
            browser.close()
    (ARTIFACTS / "page-axe.json").write_text(json.dumps(found, indent=1))
    serious = [(state, f["rule"], f["where"]) for state, findings in found.items() for f in findings
               if f["impact"] in ("serious", "critical")]
    assert not serious, serious
    unknown = {f["rule"] for findings in found.values() for f in findings} - KNOWN_FRAMEWORK_FINDINGS
    assert not unknown, json.dumps(found, indent=1)


def test_a_stopped_server_is_said_to_be_stopped_with_the_command_that_starts_it(tmp_path):
    """Streamlit's own words when its server stops ("Are you connected to the internet?") blame a network a
    local app does not use; the page says the server stopped, that nothing is lost, and how to start it."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    from ui.page import RESTART_COMMAND, SERVER_STOPPED

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            with streamlit_app(_env(tmp_path / "data"), tmp_path / "server.log") as url:
                page.goto(url)
                page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
                _settle(page)
                # the disabled chat box says why it is disabled, legibly (it was 2:1, "nearly invisible")
                assert placeholder_contrast(page) >= 4.5
            # the server is stopped (as by Ctrl-C in its terminal); the tab stays open
            page.get_by_text(SERVER_STOPPED).wait_for(timeout=STEP_MS)
            page.screenshot(path=str(ARTIFACTS / "page-04-server-stopped.png"), full_page=True)
            text = page.locator("body").inner_text()
            assert "connected to the internet" not in text and "yourscript.py" not in text
            assert RESTART_COMMAND in text
        finally:
            browser.close()


def placeholder_contrast(page) -> float:
    """The WCAG contrast ratio of the disabled chat box's placeholder, as drawn: its darkest pixel (the core of a
    letter) against the box's most common colour, from a screenshot of the box's left part (no button there).
    Streamlit fades a disabled field on top of the placeholder's own colour, so computed styles do not tell."""
    import io

    import numpy as np
    from PIL import Image

    box = page.get_by_test_id("stChatInput")
    box.locator("textarea").wait_for(timeout=STEP_MS)
    assert box.locator("textarea").is_disabled()
    shot = np.asarray(Image.open(io.BytesIO(box.screenshot())).convert("RGB"), dtype=float)
    left = shot[4:-4, 4:shot.shape[1] // 2]
    values, counts = np.unique(left.reshape(-1, 3), axis=0, return_counts=True)
    background = values[counts.argmax()]

    def luminance(rgb):
        c = np.asarray(rgb, dtype=float) / 255
        c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return c @ np.array([0.2126, 0.7152, 0.0722])

    darkest = luminance(left.reshape(-1, 3)).min()
    return float((luminance(background) + 0.05) / (darkest + 0.05))
