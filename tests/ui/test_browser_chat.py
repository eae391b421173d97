"""The real thing: `streamlit run app.py` on 127.0.0.1, driven by Debian's chromium through Playwright.

Uses the real ONNX embedder and the offline brain (no key in the server's environment). Uploads go through the
file chooser and through a synthetic drag-and-drop; screenshots land in test-artifacts/ and the seconds from
`streamlit run` to the page drawn are written to test-artifacts/browser_timings.json.
Playwright never downloads a browser here: without /usr/bin/chromium the tests skip (and fail in CI).
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
from pathlib import Path

import pytest

from tests.helpers.browser import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    SHOT_MS,
    STEP_MS,
    _require_chromium,
    _settle,
    request_problems,
    streamlit_app,
    tracebacks,
)
from tests.helpers.documents import write_pdf

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    """A streamlit server with a fresh data dir; yields (url, timings); page-drawn time measured on first load."""
    data = tmp_path_factory.mktemp("data")
    log = data / "server.log"
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY",
                                                             "DOCAGENT_FAKE_EMBEDDER", "CHROMA_HOST")
           and not k.startswith(("DOCAGENT_PROVIDER", "DOCAGENT_LOCAL_"))}  # offline, whatever the shell says
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_MODEL_DIR=str(ARTIFACTS / "model-cache"),
               HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    ARTIFACTS.mkdir(exist_ok=True)
    started = time.monotonic()
    with streamlit_app(env, log) as url:
        timings = {"server_healthy_s": round(time.monotonic() - started, 2)}
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        page.get_by_role("heading", name="Docagent").wait_for(timeout=60_000)
        timings["page_drawn_s"] = round(time.monotonic() - started, 2)
        page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
        timings["library_ready_s"] = round(time.monotonic() - started, 2)
        (ARTIFACTS / "browser_timings.json").write_text(json.dumps(timings, indent=2) + "\n")
        print(f"\nstreamlit run -> {timings}")
        yield url, page, log
        page.close()


def _documents(tmp: Path) -> dict[str, Path]:
    from docx import Document

    pdf = tmp / "zephyr_report.pdf"
    write_pdf(pdf, [
        ["Zephyr Project Annual Report 2023", "", "Summary of the year for the board."],
        ["Energy results", "", "The Zephyr project reduced energy use by 37 percent in 2023.",
         "Savings came from heat pumps and better insulation in all twelve buildings.",
         "The total cost of the retrofit was 4.2 million euros."],
    ])
    docx = tmp / "team_notes.docx"
    doc = Document()
    doc.add_heading("Team notes", level=1)
    doc.add_paragraph("The heat pump supplier for Zephyr is Nordvarme AS, chosen in March 2023.")
    doc.add_paragraph("<script>alert('docx')</script> This markup must show as plain text, never run.")
    doc.save(docx)
    manual = tmp / "operations_manual.pdf"  # big enough that its progress bar is on screen for a while
    topics = ["pumps", "valves", "sensors", "boilers", "ducts", "filters", "meters", "panels", "fans", "pipes"]
    write_pdf(manual, [[f"Section {p + 1}.{i}: inspect the {topics[p]} of building {i} every {p + i} weeks "
                        f"and log pressure {i * 7} kPa, noise {p * 3 + i} dB, load {i * p} percent."
                        for i in range(1, 41)] for p in range(len(topics))])
    csv = tmp / "budget.csv"
    csv.write_text("item,cost_eur\nheat pumps,2100000\ninsulation,1500000\nmonitoring,600000\n")
    bad = tmp / "broken.pdf"
    bad.write_bytes(b"this is not really a PDF file")
    return {"pdf": pdf, "docx": docx, "manual": manual, "csv": csv, "bad": bad}


def _drop_files(page, paths: list[Path]) -> None:
    """A synthetic drag-and-drop: a DataTransfer holding the files, dispatched on the upload dropzone."""
    files = [{"name": p.name, "b64": base64.b64encode(p.read_bytes()).decode(), "mime": "application/octet-stream"}
             for p in paths]
    transfer = page.evaluate_handle("""(files) => {
        const dt = new DataTransfer();
        for (const f of files) {
            const bytes = Uint8Array.from(atob(f.b64), c => c.charCodeAt(0));
            dt.items.add(new File([bytes], f.name, {type: f.mime}));
        }
        return dt;
    }""", files)
    zone = page.get_by_test_id("stFileUploaderDropzone")
    for event in ("dragenter", "dragover", "drop"):
        zone.dispatch_event(event, {"dataTransfer": transfer})


def _record(key: str, value) -> None:
    """Add one measured figure to test-artifacts/browser_timings.json."""
    path = ARTIFACTS / "browser_timings.json"
    figures = json.loads(path.read_text()) if path.exists() else {}
    figures[key] = value
    path.write_text(json.dumps(figures, indent=2) + "\n")


def _shot(page, name: str) -> None:
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True, timeout=SHOT_MS)


def _keeps_originals() -> bool:
    """Whether the knowledge base stores uploaded files (then PDF sources show as page images)."""
    from advanced_retrieval import KnowledgeBase

    return hasattr(KnowledgeBase, "original_path")


def test_upload_ask_and_view_the_source(server, tmp_path):
    url, page, log = server
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    _shot(page, "01-empty.png")
    docs = _documents(tmp_path)
    sidebar = page.get_by_test_id("stSidebar")

    chooser = page.locator("[data-testid='stFileUploader'] input[type='file']")
    chooser.set_input_files([docs["manual"], docs["pdf"], docs["docx"]], timeout=STEP_MS)
    sidebar.get_by_test_id("stProgress").first.wait_for(timeout=STEP_MS)  # stage, bar and time left per file
    page.wait_for_timeout(1500)  # into the embedding stage, for the screenshot
    page.screenshot(path=str(ARTIFACTS / "02-progress.png"))
    # .first: while the queue panel's rerun redraws the page, Streamlit can show its previous lines beside the new
    # ones for a moment (seen once: two "operations_manual.pdf — indexed" lines)
    sidebar.get_by_text("team_notes.docx — indexed").first.wait_for(timeout=STEP_MS)
    sidebar.get_by_text("zephyr_report.pdf — indexed").first.wait_for(timeout=STEP_MS)
    sidebar.get_by_text("operations_manual.pdf — indexed").first.wait_for(timeout=STEP_MS)
    _shot(page, "02-library.png")

    _drop_files(page, [docs["csv"], docs["bad"]])
    line = sidebar.get_by_text("budget.csv — indexed").first
    line.wait_for(timeout=STEP_MS)
    _record("csv_ingest_line", line.inner_text())
    sidebar.get_by_text("4 documents").first.wait_for(timeout=STEP_MS)
    sidebar.get_by_text("broken.pdf — failed").first.wait_for(timeout=STEP_MS)
    _shot(page, "03-dropped.png")

    chat = page.get_by_role("textbox", name="Ask about your documents")
    chat.fill("How much did the Zephyr project reduce energy use?")
    chat.press("Enter")
    answer = page.get_by_test_id("stChatMessage").nth(1)
    answer.get_by_role("tab", name="Source viewer").wait_for(timeout=STEP_MS)
    assert "37 percent" in answer.inner_text() and "[1]" in answer.inner_text()
    assert "zephyr_report.pdf" in answer.get_by_test_id("stHtml").first.inner_text()
    _shot(page, "04-answer.png")

    answer.get_by_role("tab", name="Source viewer").click()
    if _keeps_originals():
        # the plain page shows first ("finding the passage on it…"); the highlighted one replaces it when drawn
        answer.get_by_text("the passage is highlighted").first.wait_for(timeout=60_000)
        image = answer.get_by_test_id("stImage").locator("img").first
        image.wait_for(timeout=60_000)
        assert image.evaluate("img => img.naturalWidth") > 500
    else:  # no stored original: the passage with its neighbouring chunks
        viewer = answer.get_by_role("tabpanel", name="Source viewer")
        assert "37 percent" in viewer.get_by_test_id("stHtml").first.inner_text()
    _shot(page, "05-source-viewer.png")

    answer.get_by_role("tab", name="Reasoning").click()
    answer.get_by_text("Sub-questions and retrieval").wait_for()
    _shot(page, "06-reasoning.png")

    # a tab click reruns the page (st.tabs on_change="rerun"), which replaces the Export button's deferred file:
    # a click that races a rerun asks for the file of the run before, which Streamlit no longer has (it logs
    # "Deferred file … not found" and no download starts); a person clicks again, and so does this test
    exported = _export(page)
    assert "## Q: How much did the Zephyr project reduce energy use?" in exported
    assert "- [1] zephyr_report.pdf · p. 2" in exported and "### Reasoning" in exported

    chat.fill("Who supplies the heat pumps, and what does the script line say?")
    chat.press("Enter")
    second = page.get_by_test_id("stChatMessage").nth(3)
    second.get_by_role("tab", name="Source viewer").wait_for(timeout=STEP_MS)
    assert "<script>alert('docx')</script>" in second.inner_text()  # shown as text...
    assert not dialogs  # ...and never run
    second.get_by_role("tab", name="Source viewer").scroll_into_view_if_needed()
    _shot(page, "07-script-as-text.png")
    assert not tracebacks(log.read_text())


def _export(page) -> str:
    """The chat exported as Markdown, clicking Export again (at most three times) when a click raced a rerun."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(3):
        _settle(page)
        try:
            with page.expect_download(timeout=15_000) as download:
                page.get_by_role("button", name="Export (Markdown)").click()
            return Path(download.value.path()).read_text()
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _open_page(page, link, shown) -> None:
    """Click a sidebar link until what its page shows is there (at most three clicks, one step's wait in all, then
    a reload and one more): a click landing while the sidebar is redrawn by a run still going is lost, as a
    person's would be."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    _settle(page)
    for attempt in range(4):
        if attempt == 3:
            # three clicks lost: the tab's connection to the server went away (a CI run on a loaded 2-core machine
            # met this once: the server logged a socket closed before it was accepted, and no request failed);
            # a person reloads the tab, so the test does once, and says so
            print(f"\n{shown} not shown after three clicks; reloading the tab once")
            page.reload()
            _settle(page)
        link.click()
        try:
            shown.wait_for(timeout=STEP_MS // 3)
            return
        except PlaywrightTimeout:
            if attempt == 3:
                raise


def _wait_or_show(page, locator, shot: str) -> None:
    """Wait (STEP_MS) for the locator; on a timeout keep a screenshot and fail with the page's text, so a failure
    on a CI machine says what the page showed instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        locator.wait_for(timeout=STEP_MS)
    except PlaywrightTimeout as timeout:
        _shot(page, shot)
        said = page.inner_text("body")[:4000]
        raise AssertionError(f"not shown within {STEP_MS} ms; the page said:\n{said}") from timeout


def test_a_second_tab_has_its_own_conversation_and_the_same_library(server, browser):
    url, _, log = server
    other = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        other.goto(url)
        sidebar = other.get_by_test_id("stSidebar")
        sidebar.get_by_text("4 documents").first.wait_for(timeout=60_000)
        other.get_by_text("Try one of these").wait_for(timeout=60_000)
        _settle(other)
        assert other.get_by_test_id("stChatMessage").count() == 0
        _shot(other, "08-second-tab.png")
    finally:
        other.close()
    assert not tracebacks(log.read_text())


def test_evaluate_page_runs_the_bundled_sample(server, browser):
    """The sample runs in a library of its own: the user's four documents stay four."""
    url, _, log = server
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems = request_problems(page)  # printed with a failure: a font or script that never came
    try:
        page.goto(url)
        sidebar = page.get_by_test_id("stSidebar")
        sidebar.get_by_text("4 documents").first.wait_for(timeout=60_000)
        _open_page(page, sidebar.get_by_text("Evaluate", exact=True), page.get_by_role("button", name="Run evaluation"))
        page.get_by_role("button", name="Run evaluation").click()
        page.get_by_text("Open a question").wait_for(timeout=STEP_MS)
        _settle(page)
        assert sidebar.get_by_text("4 documents").count() >= 1 and sidebar.get_by_text("9 documents").count() == 0
        _wait_or_show(page, page.get_by_test_id("stMetricLabel").filter(has_text="Passed"), "09-evaluate-failed.png")
        metrics = {m.get_by_test_id("stMetricLabel").inner_text(): m.get_by_test_id("stMetricValue").inner_text()
                   for m in page.get_by_test_id("stMetric").all()}
        _record("evaluate_sample", metrics)
        passed, scored = (int(n) for n in metrics["Passed"].split("/"))
        assert scored == 14 and passed >= 12, metrics  # offline with the real embedder: 14/14 when measured
        _shot(page, "09-evaluate.png")
        page.get_by_role("tab", name="Reasoning").click()
        page.get_by_text("Confidence:").wait_for(timeout=10_000)
        _shot(page, "10-evaluate-reasoning.png")
    finally:
        print("requests that failed:", problems or "none")
        page.close()
    server_log = log.read_text()
    assert not tracebacks(server_log)
    # the parse children found the page imported by their fork server (ui.runtime.parse_preload), quietly
    assert "No runtime found" not in server_log


def _drawn_or_reload(page, locator, shot: str, problems: list[str]) -> None:
    """Wait for the locator on a freshly opened tab; if the page is not drawn within STEP_MS, keep a screenshot and
    the page's text in test-artifacts/ and reload once, as a person would, then wait again (a second miss fails
    with what the page said). A CI run on a loaded 2-core machine once waited 120 s for the uploader of a new tab:
    its texts were drawn and its widgets were grey placeholders, which is what one failed script chunk gives (a
    test that aborts one shows the same); `problems` (request_problems) says which requests failed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        locator.wait_for(state="attached", timeout=STEP_MS)
        return
    except PlaywrightTimeout:
        _shot(page, shot)
        failed = "\n".join(problems) or "no request failed"
        (ARTIFACTS / (shot + ".txt")).write_text(f"{failed}\n\n{page.inner_text('body')[:4000]}")
        print(f"\nthe tab was not drawn within {STEP_MS} ms; reloading once (see test-artifacts/{shot}):\n{failed}")
    page.reload()
    try:
        locator.wait_for(state="attached", timeout=STEP_MS)
    except PlaywrightTimeout as timeout:
        said = page.inner_text("body")[:4000]
        raise AssertionError(f"not drawn within {STEP_MS} ms twice; the page said:\n{said}") from timeout


def test_a_documents_outline_opens_its_sections_and_the_suggestions_fit_the_library(server, browser, tmp_path):
    import hashlib

    from docx import Document

    url, _, log = server
    plan = tmp_path / "rollout_plan.docx"
    doc = Document()
    for title, body in (("Scope", "The rollout covers the twelve Zephyr buildings."),
                        ("Budget", "The rollout budget is 40,000 euros, approved in May."),
                        ("Timeline", "Work starts in June and ends in October.")):
        doc.add_heading(title, level=1)
        doc.add_paragraph(body)
    doc.save(plan)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    problems = request_problems(page)
    page.goto(url)
    sidebar = page.get_by_test_id("stSidebar")
    uploader = page.locator("[data-testid='stFileUploader'] input[type='file']")
    _drawn_or_reload(page, uploader, "08-outline-not-drawn.png", problems)
    uploader.set_input_files([plan], timeout=STEP_MS)
    sidebar.get_by_text("rollout_plan.docx — indexed").first.wait_for(timeout=STEP_MS)
    # The empty chat suggests what this library answers well: a summary (of each document, or of one when the
    # module's library holds many) and what a section of one says
    page.get_by_role("button", name=re.compile(r"^Summarise ")).first.wait_for(timeout=STEP_MS)
    doc_id = hashlib.sha256(plan.read_bytes()).hexdigest()
    page.locator(f".st-key-outline_{doc_id} button").first.click()  # a rerun may still show the old one
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Outline of rollout_plan.docx").wait_for(timeout=STEP_MS)
    dialog.get_by_role("button", name="Budget").click()
    dialog.get_by_text("The rollout budget is 40,000 euros").wait_for(timeout=STEP_MS)
    _shot(page, "08-outline.png")
    page.keyboard.press("Escape")
    assert not tracebacks(log.read_text())
    page.close()


@pytest.fixture(scope="module")
def local_model_server(browser, tmp_path_factory):
    """A streamlit server configured for a local model at an OpenAI stub (hashing embedder: the model is what is
    tested here); yields (url, page, log, stub)."""
    from testing.openai_stub import OpenAIStub

    data = tmp_path_factory.mktemp("local-data")
    log = data / "server.log"
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")}
    with OpenAIStub(tokens_per_second=40.0) as stub:
        env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", DOCAGENT_PROVIDER="local",
                   DOCAGENT_LOCAL_BASE_URL=stub.base_url, DOCAGENT_LOCAL_MODEL="llama3.2",
                   HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
        env.pop("DOCAGENT_LOCAL_API_KEY", None)
        with streamlit_app(env, log) as url:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.get_by_text("No documents yet").wait_for(timeout=STEP_MS)
            yield url, page, log, stub
            page.close()


def test_a_local_model_streams_a_cited_answer(local_model_server, tmp_path):
    url, page, log, stub = local_model_server
    host = stub.base_url.split("/")[2]
    page.get_by_test_id("stMain").get_by_text(f"Local · llama3.2 @ {host}").first.wait_for(timeout=60_000)  # badge
    notes = tmp_path / "zephyr_notes.txt"
    notes.write_text("The Zephyr project reduced energy use by 37 percent in 2023.\n\n"
                     "Heat pumps were supplied by Nordvarme AS.\n")
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([notes], timeout=STEP_MS)
    page.get_by_test_id("stSidebar").get_by_text("zephyr_notes.txt — indexed").wait_for(timeout=STEP_MS)
    chat = page.get_by_role("textbox", name="Ask about your documents")
    chat.fill("How much did the Zephyr project reduce energy use?")
    chat.press("Enter")
    answer = page.get_by_test_id("stChatMessage").nth(1)
    answer.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
    written = answer.inner_text().split("Sources (")[0]  # the answer, not the passages under it
    assert "energy use by 37 percent in 2023 [1]." in written
    assert {r.body["model"] for r in stub.requests} == {"llama3.2"} and any(r.stream for r in stub.requests)
    assert "could not be reached" not in answer.inner_text()
    _shot(page, "11-local-model.png")
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Settings", exact=True).click()  # first in the sidebar, saying what answers
    sidebar.get_by_text(f"In use: Local · llama3.2 @ {host}").wait_for(timeout=10_000)
    _shot(page, "12-settings-in-use.png")
    sidebar.get_by_text("Settings", exact=True).click()
    assert not tracebacks(log.read_text())
