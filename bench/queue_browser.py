"""How long a second browser tab takes to show an upload made in the first one (the queue panel's refresh).

    .venv/bin/python bench/queue_browser.py             # 5 rounds, the real ONNX embedder
    .venv/bin/python bench/queue_browser.py --fake      # the hashing embedder (slowed, so files stay queued)
    .venv/bin/python bench/queue_browser.py --smoke     # 1 round, the hashing embedder, shorter timeouts

Starts `streamlit run app.py` on 127.0.0.1 with a fresh data directory, opens two chromium tabs, and per round
uploads one generated text file in tab 1. Measured from the moment Playwright hands the file to the uploader:
tab 1 empties its uploader and lists the file in its queue; tab 2 (untouched) lists it too. Printed per round and
as one JSON line (median and max); the panel redraws every ui.queue_panel.REFRESH_S seconds, which bounds tab 2.
Needs Debian's chromium (/usr/bin/chromium) and Playwright's Python package; without them the bench prints a
"skipped" JSON line naming what to install and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CHROMIUM, browser_missing, start_streamlit  # noqa: E402  (bench/ is on sys.path when run as a script)

MODEL_CACHE = REPO / "test-artifacts" / "model-cache"
# Seconds to wait for: the server to answer, a tab to show the app, a tab to list an upload. --smoke waits less.
WAITS = {"full": (120, 180, 120), "smoke": (90, 90, 60)}


def start_server(data: Path, fake: bool, log: Path, models: Path, wait_s: float) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")}
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_MODEL_DIR=str(models), HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False", DOCAGENT_PROVIDER="offline")
    if fake:
        env.update(DOCAGENT_FAKE_EMBEDDER="1", DOCAGENT_FAKE_EMBED_DELAY="0.02")
    return start_streamlit([str(Path(sys.executable).parent / "streamlit"), "run", "app.py"], REPO, env, log, wait_s)


def open_tab(browser, url: str, wait_s: float):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url, timeout=wait_s * 1000)
    page.get_by_role("heading", name="Docagent").wait_for(timeout=wait_s * 1000)
    page.get_by_test_id("stSidebar").get_by_text(re.compile("No documents yet|documents? —")).wait_for(
        timeout=wait_s * 1000)
    return page


def round_trip(first, second, path: Path, wait_s: float) -> dict:
    """Seconds from handing `path` to tab 1's uploader until each tab shows it in the queue."""
    name = re.escape(path.name)
    shown = re.compile(rf"{name} — (next in the queue|queued|reading|splitting|embedding|saving|indexed)")
    start = time.monotonic()
    first.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(path))
    first.get_by_test_id("stSidebar").get_by_text(shown).first.wait_for(timeout=wait_s * 1000)
    tab1 = time.monotonic() - start
    second.get_by_test_id("stSidebar").get_by_text(shown).first.wait_for(timeout=wait_s * 1000)
    tab2 = time.monotonic() - start
    cleared = first.get_by_test_id("stFileUploaderFile").count() == 0
    return {"file": path.name, "tab1_queue_s": round(tab1, 2), "tab2_queue_s": round(tab2, 2),
            "uploader_cleared": cleared}



def measure(root: Path, fake: bool, rounds: int, models: Path, waits: tuple[float, float, float]) -> list[dict]:
    """Per round: seconds until tab 1 and the untouched tab 2 list the file uploaded in tab 1."""
    from playwright.sync_api import sync_playwright

    start_s, tab_s, round_s = waits
    (root / "data").mkdir()
    proc, url = start_server(root / "data", fake, root / "server.log", models, start_s)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM),
                                        args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            first, second = open_tab(browser, url, tab_s), open_tab(browser, url, tab_s)
            rows = []
            for n in range(rounds):
                path = root / f"round{n}.txt"
                path.write_text("\n\n".join(f"Round {n} paragraph {i}: the survey of site {n} noted item {i}."
                                            * 6 for i in range(120)))
                rows.append(round_trip(first, second, path, round_s))
                print(rows[-1], flush=True)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(30)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fake", action="store_true", help="the hashing embedder instead of the ONNX model")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true",
                        help="1 round with the hashing embedder and shorter timeouts: checks that the bench runs")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "full"
    fake, rounds = (True, 1) if args.smoke else (args.fake, args.rounds)
    lacking = browser_missing()
    if lacking:
        print(json.dumps({"bench": "queue_browser", "size": size, "skipped": lacking}))
        return
    with tempfile.TemporaryDirectory(prefix="bench-queue-browser-") as tmp:
        # --smoke exports no model (the hashing embedder) and writes nothing into the repo: its model dir is temporary.
        models = Path(tmp) / "models" if args.smoke else MODEL_CACHE
        rows = measure(Path(tmp), fake, rounds, models, WAITS[size])
    tab2 = [r["tab2_queue_s"] for r in rows]
    tab1 = [r["tab1_queue_s"] for r in rows]
    print(json.dumps({"bench": "queue_browser", "size": size, "embedder": "fake" if fake else "onnx",
                      "rounds": len(rows), "tab1_queue_median_s": statistics.median(tab1),
                      "tab1_queue_max_s": max(tab1), "tab2_queue_median_s": statistics.median(tab2),
                      "tab2_queue_max_s": max(tab2), "uploader_cleared": sum(r["uploader_cleared"] for r in rows)}))


if __name__ == "__main__":
    main()
