"""Streamlit's own Markdown rendering, in Debian's chromium: document text shown through ui_helpers renders as the
text it is (issue 16, item 14), while the answer's own Markdown still renders.

A minimal `streamlit run` page renders each case through md_safe and md_text in its own keyed container; the page
is then read back: no link, image, formula, icon or emoji may appear, and the visible text (without the invisible
word joiners) must equal the document's text. Never downloads a browser: without /usr/bin/chromium it skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers.browser import CHROMIUM_ARGS, READY_SECONDS, _free_port, _require_chromium, _wait_healthy
from tests.helpers.markdown import QUOTED
from tests.helpers.paths import REPO
from ui import helpers as ui

pytestmark = [pytest.mark.browser, pytest.mark.slow]


CHROMIUM = Path("/usr/bin/chromium")
ANSWER = ("**Revenue** rose by 5 percent [1].\n\n- first point\n- second point\n\n| year | value |\n|---|:--:|\n"
          "| 2023 | 5 |\n")
PAGE = """
import json, sys
sys.path.insert(0, {repo!r})
import streamlit as st
from ui import helpers as ui

cases = json.loads({cases!r})
for i, text in enumerate(cases):
    with st.container(key=f"safe_{{i}}"):
        st.markdown(ui.md_safe(text))
    with st.container(key=f"text_{{i}}"):
        st.markdown(ui.md_text(text))
with st.container(key="answer"):
    st.markdown(ui.md_safe({answer!r}))
st.write("rendered-all")
"""
EXTRAS = {"a": "links", ".katex": "formulas", "img": "images", "span[role=img]": "icons"}


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The rendered page (a Playwright page) of the cases; the server and the browser end with the module."""
    _require_chromium()
    from playwright.sync_api import sync_playwright

    folder = tmp_path_factory.mktemp("markdown")
    script = folder / "page.py"
    script.write_text(textwrap.dedent(PAGE).format(repo=str(REPO), cases=json.dumps(QUOTED), answer=ANSWER))
    log = folder / "server.log"
    port = _free_port()
    env = dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    with open(log, "w") as out:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "streamlit"), "run", str(script), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", server, log)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            tab = browser.new_page()
            tab.goto(f"http://127.0.0.1:{port}")
            tab.get_by_text("rendered-all").wait_for(timeout=READY_SECONDS * 1000)
            yield tab
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=15)


def extras(container) -> dict[str, int]:
    """What rendered as more than text inside a container: {kind: count}, kinds with none left out."""
    found = {name: container.locator(selector).count() for selector, name in EXTRAS.items()}
    return {name: n for name, n in found.items() if n}


@pytest.mark.parametrize("helper", ["safe", "text"])
@pytest.mark.parametrize("case", range(len(QUOTED)))
def test_document_text_renders_as_itself_in_streamlit(page, helper, case):
    container = page.locator(f".st-key-{helper}_{case}")
    shown = container.inner_text().replace(ui.JOINER, "").strip()
    assert (extras(container), shown) == ({}, QUOTED[case])


def test_the_answers_own_markdown_still_renders_in_streamlit(page):
    answer = page.locator(".st-key-answer")
    assert answer.locator("strong").inner_text() == "Revenue"
    assert answer.locator("li").all_inner_texts() == ["first point", "second point"]
    assert answer.locator("table td").all_inner_texts() == ["2023", "5"]
    assert "[1]" in answer.inner_text() and extras(answer) == {}
