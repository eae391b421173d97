"""An answer's citations in the browser: each inline [n] opens its source in the Source viewer (by click or by
Enter), the viewer stays where the user put it when the sidebar reruns the page, and a refusal's closest passages
open the same way. A real Streamlit server, Debian's chromium, the real Gemini client against the local stub."""

from __future__ import annotations

import json
import os
import re

import pytest

from testing.gemini_stub import GeminiStub, StubReply, plan_for
from tests.helpers.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, STEP_MS, _require_chromium, _settle, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZEPHYR = "Zephyr project report.\n\nHeat pumps for the Zephyr project were supplied by Nordvarme AS in 2023.\n"
ORBIT = "Orbit notes.\n\nThe Orbit satellite launched in May 2021 from Kourou on a Vega rocket.\n"
ANSWERS = {
    "Who supplied the heat pumps, and where did Orbit launch from?":
        "Nordvarme AS supplied the heat pumps [P1]. The Orbit satellite launched from Kourou [P2].",
    "What colour is the Zephyr logo?": "I could not find the colour of the Zephyr logo in the documents.",
}


def _responder(request):
    question = request.prompt.rsplit("Question:", 1)[-1].strip()
    if "You plan how to answer" in request.system:
        return StubReply(text=json.dumps(plan_for(question)))
    if "You answer questions using ONLY" in request.system:
        # the passages come as [P1], [P2] in the order retrieval ranked them: cite each by what it says
        blocks = dict(re.findall(r"\[P(\d+)\][^\n]*\n(.*?)(?=\n\[P\d+\]|\Z)", request.prompt, re.S))
        text = next((a for q, a in ANSWERS.items() if q in request.prompt), "I could not find it.")
        by_word = {n: body for n, body in blocks.items()}
        zephyr = next((n for n, body in by_word.items() if "Nordvarme" in body), "1")
        orbit = next((n for n, body in by_word.items() if "Kourou" in body), "2")
        return StubReply(text=text.replace("[P1]", f"[Z{zephyr}]").replace("[P2]", f"[O{orbit}]")
                         .replace(f"[Z{zephyr}]", f"[P{zephyr}]").replace(f"[O{orbit}]", f"[P{orbit}]"))
    claims = re.findall(r"^(\d+)\. ", request.prompt, re.MULTILINE)
    return StubReply(text=json.dumps({"claims": [{"claim": int(i), "verdict": "supported", "evidence": 1}
                                                 for i in claims], "missing": []}))


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    data = tmp_path_factory.mktemp("data")
    with GeminiStub(responder=_responder) as stub:
        env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "CHROMA_HOST")}
        env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", GOOGLE_API_KEY="stub-key",
                   DOCAGENT_GEMINI_BASE_URL=stub.base_url, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
        with streamlit_app(env, data / "server.log") as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            page.get_by_role("heading", name="Docagent").wait_for(timeout=60_000)
            docs = tmp_path_factory.mktemp("docs")
            (docs / "zephyr.txt").write_text(ZEPHYR)
            (docs / "orbit.txt").write_text(ORBIT)
            page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(
                [str(docs / "zephyr.txt"), str(docs / "orbit.txt")], timeout=STEP_MS)
            for name in ("zephyr.txt", "orbit.txt"):
                page.get_by_test_id("stSidebar").get_by_text(f"{name} — indexed").wait_for(timeout=STEP_MS)
            yield page
            browser.close()


def _ask(page, question: str, nth: int):
    chat = page.get_by_role("textbox", name="Ask about your documents")
    chat.fill(question)
    chat.press("Enter")
    answer = page.get_by_test_id("stChatMessage").nth(nth)
    answer.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
    _settle(page)  # the citation links' script is mounted by the end of the run; a click before it goes nowhere
    return answer


def _viewer_shows(answer, n: int, file: str) -> None:
    tab = answer.get_by_role("tab", name="Source viewer")
    assert tab.get_attribute("aria-selected") == "true"
    panel = answer.get_by_role("tabpanel").filter(has=answer.page.get_by_text(f"[{n}] {file}"))
    panel.get_by_text(f"[{n}] {file}").wait_for(timeout=10_000)


def test_each_inline_citation_opens_its_source_and_the_viewer_stays_put(page):
    answer = _ask(page, "Who supplied the heat pumps, and where did Orbit launch from?", 1)
    links = answer.get_by_role("link", name=re.compile(r"^\[\d\]$"))
    assert links.count() == 2, answer.inner_text()
    assert answer.get_by_role("tab", name="Sources (2)").get_attribute("aria-selected") == "true"
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    kourou = answer.get_by_role("link", name="[2]")
    selected = answer.get_by_role("tab", name="Source viewer").and_(page.locator("[aria-selected='true']"))
    for attempt in range(2):  # on a loaded machine the links' script can still be mounting: a person clicks again
        kourou.click()
        try:
            selected.wait_for(timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt:
                raise
    _viewer_shows(answer, 2, "orbit.txt")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "sources-01-citation-opens-viewer.png"), full_page=True)

    answer.get_by_role("link", name="[1]").focus()  # the keyboard: Enter on a focused citation
    page.keyboard.press("Enter")
    answer.get_by_text("[1] zephyr.txt").wait_for(timeout=10_000)
    _viewer_shows(answer, 1, "zephyr.txt")

    page.get_by_test_id("stSidebar").get_by_role("checkbox", name="orbit.txt").check(force=True)  # a rerun
    page.get_by_text("Asking only about").wait_for(timeout=10_000)
    _viewer_shows(answer, 1, "zephyr.txt")  # still the viewer, still source 1
    page.screenshot(path=str(ARTIFACTS / "sources-02-viewer-stays.png"), full_page=True)
    page.get_by_test_id("stSidebar").get_by_role("checkbox", name="orbit.txt").uncheck(force=True)


def test_a_refusal_s_closest_passages_open_in_the_viewer(page):
    answer = _ask(page, "What colour is the Zephyr logo?", 3)
    closest = answer.get_by_role("tab", name=re.compile(r"^Closest passages \(\d\)$"))
    assert closest.count() == 1, answer.inner_text()
    answer.get_by_role("tab", name="Source viewer").click()
    answer.get_by_text("closest passages found, not an answer").filter(visible=True).wait_for(timeout=10_000)
    answer.get_by_text(re.compile(r"^\[1\] (zephyr|orbit)\.txt")).filter(visible=True).wait_for(timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "sources-03-refusal-closest.png"), full_page=True)
