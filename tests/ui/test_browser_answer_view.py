"""What a person sees of a model's answer in the browser: a real Streamlit server, Debian's chromium, and the real
Gemini client pointed at the local stub, which replies as real models do (a Markdown table with a wrong row, a
document's own bracketed reference copied into the answer).

The table must still render as a table, with the flag for the wrong row beside it (not inside it); the copied
"[11]" must not become a source; the confidence must say what it estimates.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from testing.gemini_stub import GeminiStub, StubReply, plan_for
from tests.helpers.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, STEP_MS, _require_chromium, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DOCUMENT = """Quarterly report

Adjusted EBITDA (in millions) was 2,117 in 2023 and 2,018 in 2022.
Deeper residual networks [11] are easier to optimise, as the appendix explains.
"""
TABLE_ANSWER = """Adjusted EBITDA by year, as the report gives it:

| Year | Adjusted EBITDA ($M) |
|---|---|
| 2023 | 2,117 [P1] |
| 2022 | 2,311 [P1] |

Deeper residual networks [11] are easier to optimise [P1]."""


def _responder(request):
    if "You plan how to answer" in request.system:
        return StubReply(text=json.dumps(plan_for(request.prompt.rsplit("Question:", 1)[-1].strip())))
    if "You answer questions using ONLY" in request.system:
        return StubReply(text=TABLE_ANSWER, chunks=5)
    claims = re.findall(r"^(\d+)\. ", request.prompt, re.MULTILINE)  # a credulous verifier: all "supported"
    return StubReply(text=json.dumps({"claims": [{"claim": int(i), "verdict": "supported", "evidence": 1}
                                                 for i in claims], "missing": []}))


@pytest.fixture(scope="module")
def app_with_stub(tmp_path_factory):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    data = tmp_path_factory.mktemp("data")
    log = data / "server.log"
    with GeminiStub(responder=_responder) as stub:
        env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "CHROMA_HOST")}
        env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", GOOGLE_API_KEY="stub-key",
                   DOCAGENT_GEMINI_BASE_URL=stub.base_url, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
        with streamlit_app(env, log) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            page.get_by_role("heading", name="Docagent").wait_for(timeout=60_000)
            yield page, log, data
            browser.close()


def test_a_model_table_with_a_wrong_row_renders_with_its_flag_beside_it(app_with_stub, tmp_path):
    page, log, _ = app_with_stub
    report = tmp_path / "report.txt"
    report.write_text(DOCUMENT)
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([str(report)], timeout=STEP_MS)
    page.get_by_test_id("stSidebar").get_by_text("report.txt — indexed").wait_for(timeout=STEP_MS)

    chat = page.get_by_role("textbox", name="Ask about your documents")
    chat.fill("What was Adjusted EBITDA in 2023 and 2022?")
    chat.press("Enter")
    answer = page.get_by_test_id("stChatMessage").nth(1)
    answer.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "trust-01-table-answer.png"), full_page=True)

    table = answer.locator("table").first
    assert table.is_visible()  # the Markdown table still renders after checking
    cells = table.locator("td").all_inner_texts()
    assert "2,117 [1]" in cells and "2,311 [1]" in cells and not any("⚠" in c for c in cells)
    text = answer.inner_text()
    assert "Row “2022 | 2,311”" in text and "not supported" in text  # the flag, after the table
    assert "[11]" in text and "Sources (1)" in text  # the copied reference is text, not a second source
    found = re.search(r"confidence (\d+) ?% \(estimated chance the answer is right", text)
    assert found and int(found.group(1)) <= 50  # a figure its source does not give: at most even odds
    assert "Traceback" not in log.read_text()
