"""A cited slide in the browser's Source viewer: as LibreOffice draws it where it is installed (the deck's design
included, the question's words highlighted), else drawn from its text boxes with the caption saying why.
Offline answers; a real Streamlit server and Debian's chromium. Screenshot: test-artifacts/sources-04-slide.png."""

from __future__ import annotations

import pytest

from tests.helpers.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, STEP_MS, _require_chromium, _settle, streamlit_app
from tests.ui.test_browser_page import _env
from tests.ui.test_slide_images import deck, red_share
from ui import slide_images

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_cited_slide_is_shown_as_it_looks_with_the_asked_words_marked(tmp_path):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    path = deck(tmp_path / "quarter.pptx")
    with sync_playwright() as p, streamlit_app(_env(tmp_path / "data"), tmp_path / "server.log") as url:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1100})
        try:
            page.goto(url)
            page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
            page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([str(path)], timeout=STEP_MS)
            page.get_by_test_id("stSidebar").get_by_text("quarter.pptx — indexed").wait_for(timeout=STEP_MS)
            chat = page.get_by_role("textbox", name="Ask about your documents")
            chat.fill("How much did quarterly revenue grow?")
            chat.press("Enter")
            answer = page.get_by_test_id("stChatMessage").nth(1)
            answer.get_by_role("tab", name="Source viewer").wait_for(timeout=STEP_MS)
            answer.get_by_role("tab", name="Source viewer").click()
            caption = answer.get_by_text("Slide 3 of 3 — the question's words are highlighted")
            caption.filter(visible=True).first.wait_for(timeout=STEP_MS)
            shown = caption.filter(visible=True).first.inner_text()
            described = answer.get_by_role("img", name="Slide 3 of quarter.pptx, the question's words highlighted in "
                                           "yellow")  # alt text: a screen reader says what the picture shows
            described.first.wait_for(timeout=STEP_MS)  # on a loaded machine the caption can be drawn before the image
            _settle(page)  # a rerun may draw the answer anew between finding the image and counting it (one CI run)
            described.first.wait_for(timeout=STEP_MS)
            assert described.count() == 1
            picture = _picture(answer)
            if slide_images.office():  # the deck's design is on the page: its red rectangle
                assert "drawn from its text boxes" not in shown and red_share(picture, (0, 0, 1, 1)) > 0.1, shown
            else:
                assert "drawn from its text boxes" in shown and "LibreOffice is not installed" in shown, shown
            _settle(page)
            answer.screenshot(path=str(ARTIFACTS / "sources-04-slide.png"))  # the page scrolls inside its main pane
        finally:
            browser.close()


def _picture(answer, attempts: int = 3) -> bytes:
    """The shown slide image's pixels; Streamlit may draw the element again between finding it and taking its
    picture (a rerun on a loaded machine), so a detached element is found again, a bounded number of times."""
    from playwright.sync_api import Error

    for attempt in range(attempts):
        try:
            return answer.get_by_test_id("stImage").filter(visible=True).first.screenshot(timeout=STEP_MS)
        except Error as error:
            if "not attached" not in str(error) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")
