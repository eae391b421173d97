"""The ingestion queue in a real browser: `streamlit run app.py` and Debian's chromium through Playwright.

Work outlives the tab (issue 13): a file keeps being indexed when its tab closes, a question asked meanwhile does
not restart it, a second tab sees the queue, and a server restart resumes it. The hashing embedder is slowed to
DELAY seconds per passage (DOCAGENT_FAKE_EMBED_DELAY) so that a file can be caught mid-embedding; screenshots land
in test-artifacts/ (13-*.png to 17-*.png). Nothing here asserts a duration: every wait is bounded and only a hang
reaches its limit. The time a second tab takes to show the queue is measured in bench/queue_browser.py.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from tests.helpers.browser import ARTIFACTS, STEP_MS, _require_chromium, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DELAY = "0.04"  # seconds per passage: ~3 s for a 70-passage file
ZEPHYR = "Zephyr project report.\n\nThe Zephyr project reduced energy use by 37 percent in 2023.\n"


def long_text(topic: str, passages: int = 70) -> str:
    """About `passages` passages (one per paragraph) about `topic`."""
    return "\n\n".join(f"Paragraph {i} of the {topic} log. " + f"The {topic} survey noted item {i} at length. " * 10
                       for i in range(passages))


@pytest.fixture(scope="module")
def chromium():
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
        yield browser
        browser.close()


def server_env(data: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")
           and not k.startswith(("DOCAGENT_PROVIDER", "DOCAGENT_LOCAL_"))}
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", DOCAGENT_FAKE_EMBED_DELAY=DELAY,
               HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    return env


def files(folder: Path, **texts: str) -> list[Path]:
    paths = []
    for name, text in texts.items():
        path = folder / f"{name}.txt"
        path.write_text(text)
        paths.append(path)
    return paths


def open_page(chromium, url: str):
    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.get_by_role("heading", name="Docagent").wait_for(timeout=STEP_MS)
    page.get_by_test_id("stSidebar").get_by_text(re.compile("No documents yet|documents? —")).wait_for(timeout=STEP_MS)
    return page


def upload(page, paths: list[Path]) -> None:
    page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([str(p) for p in paths], timeout=STEP_MS)


def embedding(page, name: str):
    """The queue line of `name` once it is being embedded (a progress bar labelled 'NAME — embedding i/n')."""
    # .first: while the queue panel reruns, Streamlit may show the previous line beside the new one for a moment
    line = page.get_by_test_id("stSidebar").get_by_text(re.compile(rf"{re.escape(name)} — embedding \d+/\d+")).first
    line.wait_for(timeout=STEP_MS)
    return line


def in_library(page, *names: str) -> None:
    """Wait until the document list shows every name (as scope check boxes), without reloading the page."""
    sidebar = page.get_by_test_id("stSidebar")
    for name in names:
        sidebar.get_by_role("checkbox", name=name).wait_for(timeout=STEP_MS)


def entries(data: Path) -> dict[str, tuple[str, int]]:
    """{file: (state, starts)} from the queue's manifests on disk: 2 starts = resumed after a stop."""
    from advanced_retrieval.ingest.queue_files import QueueFiles

    return {item.name: (item.state, item.attempts) for item in QueueFiles(data / "queue").load()}


def resumed(left: dict[str, tuple[str, int]]) -> dict[str, tuple[str, int]]:
    """What the queue must hold once a restarted server has finished what a stopped one `left` (entries()): every
    file indexed, each unfinished one started once more. Read from disk at the stop, not assumed: a stop that takes
    a few seconds on a busy machine may land after the file the page saw being embedded (CI saw four.txt finished
    and five.txt interrupted)."""
    return {name: ("indexed", starts + (state != "indexed")) for name, (state, starts) in left.items()}


def interrupted(left: dict[str, tuple[str, int]]) -> list[str]:
    """The files a stopped server left mid-way (started, not finished)."""
    return [name for name, (state, starts) in left.items() if state != "indexed" and starts > 0]


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_closing_the_tab_mid_embedding_does_not_lose_the_file(chromium, tmp_path):
    data, log = tmp_path / "data", tmp_path / "server.log"
    data.mkdir()
    with streamlit_app(server_env(data), log) as url:
        page = open_page(chromium, url)
        upload(page, files(tmp_path, alpha=long_text("alpha"), beta=long_text("beta")))
        embedding(page, "alpha.txt")
        shot(page, "13-queue-embedding.png")
        page.close()  # mid-embedding: the file belongs to the server's queue, not to this tab
        later = open_page(chromium, url)
        in_library(later, "alpha.txt", "beta.txt")
        sidebar = later.get_by_test_id("stSidebar")
        sidebar.get_by_text(re.compile(r"alpha\.txt — indexed \(\d+ chunks")).first.wait_for(timeout=STEP_MS)
        shot(later, "14-after-the-tab-closed.png")
        later.close()
    assert entries(data) == {"alpha.txt": ("indexed", 1), "beta.txt": ("indexed", 1)}
    assert "Traceback" not in log.read_text()


def test_a_question_asked_during_indexing_is_answered_and_indexing_goes_on(chromium, tmp_path):
    data, log = tmp_path / "data", tmp_path / "server.log"
    data.mkdir()
    with streamlit_app(server_env(data), log) as url:
        page = open_page(chromium, url)
        upload(page, files(tmp_path, zephyr=ZEPHYR, survey=long_text("survey", 150)))
        in_library(page, "zephyr.txt")
        before = int(re.search(r"embedding (\d+)/", embedding(page, "survey.txt").inner_text()).group(1))
        chat = page.get_by_role("textbox", name="Ask about your documents")
        chat.fill("How much did the Zephyr project reduce energy use?")
        chat.press("Enter")
        answer = page.get_by_test_id("stChatMessage").nth(1)
        answer.get_by_role("tab", name="Reasoning").wait_for(timeout=STEP_MS)
        assert "37 percent" in answer.inner_text()
        assert "survey.txt was still being indexed" in answer.inner_text()
        line = page.get_by_test_id("stSidebar").get_by_text(re.compile(r"survey\.txt — (embedding|saving)")).first
        if line.count():  # still embedding: it went on from where it was, not from reading again
            after = re.search(r"embedding (\d+)/", line.inner_text())
            assert after is None or int(after.group(1)) >= before
        shot(page, "15-answer-while-indexing.png")
        in_library(page, "survey.txt")
        page.close()
    assert entries(data)["survey.txt"] == ("indexed", 1)  # indexed on its first start: never restarted
    assert "Traceback" not in log.read_text()


ROWS_JS = """() => [...document.querySelectorAll('[class*="st-key-queue_row_"] [data-testid="stMarkdownContainer"] p')]
  .filter(p => !p.closest('button')).map(p => {
    const style = getComputedStyle(p), line = parseFloat(style.lineHeight) || 1.6 * parseFloat(style.fontSize);
    return {text: p.innerText, lines: Math.round(p.getBoundingClientRect().height / line),
            cut: p.scrollWidth > p.clientWidth + 1};
  })"""


def test_a_second_tab_sees_the_queue(chromium, tmp_path):
    data, log = tmp_path / "data", tmp_path / "server.log"
    data.mkdir()
    later = "delta-quarterly-operations-review-2024-final"  # a long name: the row stays one line
    with streamlit_app(server_env(data), log) as url:
        first, second = open_page(chromium, url), open_page(chromium, url)
        upload(first, files(tmp_path, gamma=long_text("gamma"), **{later: long_text("delta")}))
        embedding(second, "gamma.txt")  # the other tab never touched the uploader
        second.get_by_test_id("stSidebar").get_by_text(re.compile(r"delta-\S+…\S*\.txt — next in the queue")
                                                       ).wait_for(timeout=STEP_MS)
        assert second.get_by_test_id("stSidebar").get_by_role("button", name=f"Cancel {later}.txt").count() == 1
        rows = second.evaluate(ROWS_JS)  # each file still to do: one line, its whole status in sight
        names = sorted(r["text"].split(" — ")[0].removeprefix("schedule ") for r in rows)
        assert len(names) == 2 and names[0].startswith("delta-") and "…" in names[0] and names[1] == "gamma.txt", rows
        assert all(r["lines"] == 1 and not r["cut"] for r in rows), rows
        shot(second, "16-second-tab-sees-the-queue.png")
        in_library(second, "gamma.txt", f"{later}.txt")
        first.close()
        second.close()
    assert "Traceback" not in log.read_text()


def test_a_server_restart_mid_queue_resumes_it(chromium, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with streamlit_app(server_env(data), tmp_path / "first.log") as url:
        page = open_page(chromium, url)
        upload(page, files(tmp_path, one=long_text("one", 150), two=long_text("two", 150),
                           three=long_text("three", 150)))
        embedding(page, "one.txt")
        page.close()
    # the server stopped mid-file: that file is queued again at the next start, from its saved bytes
    left = entries(data)
    assert interrupted(left)
    log = tmp_path / "second.log"
    with streamlit_app(server_env(data), log) as url:
        page = open_page(chromium, url)
        page.get_by_test_id("stSidebar").get_by_text(re.compile(r"(one|two|three)\.txt — (embedding|reading|next)")) \
            .first.wait_for(timeout=STEP_MS)
        shot(page, "17-resumed-after-restart.png")
        in_library(page, "one.txt", "two.txt", "three.txt")
        page.close()
    assert entries(data) == resumed(left)
    assert "Traceback" not in log.read_text()


def test_a_restarted_server_resumes_the_queue_before_any_tab_opens(chromium, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    with streamlit_app(server_env(data), tmp_path / "first.log") as url:
        page = open_page(chromium, url)
        upload(page, files(tmp_path, four=long_text("four", 150), five=long_text("five", 150)))
        embedding(page, "four.txt")
        page.close()
    left = entries(data)
    assert interrupted(left)
    log = tmp_path / "second.log"
    with streamlit_app(server_env(data), log):  # no page is opened: the server itself takes the queue up again
        deadline = time.monotonic() + STEP_MS / 1000 * 4
        while time.monotonic() < deadline and any(state != "indexed" for state, _ in entries(data).values()):
            time.sleep(0.2)
        assert entries(data) == resumed(left)
    assert "Traceback" not in log.read_text()
