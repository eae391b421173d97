"""How long a second browser tab takes to show an upload made in the first one (the queue panel's refresh).

    .venv/bin/python bench/queue_browser.py             # 5 rounds, the real ONNX embedder
    .venv/bin/python bench/queue_browser.py --fake      # the hashing embedder (slowed, so files stay queued)

Starts `streamlit run app.py` on 127.0.0.1 with a fresh data directory, opens two chromium tabs, and per round
uploads one generated text file in tab 1. Measured from the moment Playwright hands the file to the uploader:
tab 1 empties its uploader and lists the file in its queue; tab 2 (untouched) lists it too. Printed per round and
as one JSON line (median and max); the panel redraws every ui.queue_panel.REFRESH_S seconds, which bounds tab 2.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
MODEL_CACHE = REPO / "test-artifacts" / "model-cache"


def start_server(data: Path, fake: bool, log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")}
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_MODEL_DIR=str(MODEL_CACHE), HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False", DOCAGENT_PROVIDER="offline")
    if fake:
        env.update(DOCAGENT_FAKE_EMBEDDER="1", DOCAGENT_FAKE_EMBED_DELAY="0.02")
    with open(log, "w") as out:
        proc = subprocess.Popen([str(Path(sys.executable).parent / "streamlit"), "run", "app.py", "--server.port",
                                 str(port), "--server.address", "127.0.0.1", "--server.headless", "true"],
                                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2):
                return proc, url
        except OSError:
            if proc.poll() is not None:
                sys.exit(f"streamlit exited: {log.read_text()[-2000:]}")
            time.sleep(0.2)
    proc.kill()
    sys.exit("streamlit did not start within 120 s")


def open_tab(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.get_by_role("heading", name="Docagent").wait_for(timeout=180_000)
    page.get_by_test_id("stSidebar").get_by_text(re.compile("No documents yet|documents? —")).wait_for(timeout=180_000)
    return page


def round_trip(first, second, path: Path) -> dict:
    """Seconds from handing `path` to tab 1's uploader until each tab shows it in the queue."""
    name = re.escape(path.name)
    shown = re.compile(rf"{name} — (next in the queue|queued|reading|splitting|embedding|saving|indexed)")
    start = time.monotonic()
    first.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files(str(path))
    first.get_by_test_id("stSidebar").get_by_text(shown).first.wait_for(timeout=120_000)
    tab1 = time.monotonic() - start
    second.get_by_test_id("stSidebar").get_by_text(shown).first.wait_for(timeout=120_000)
    tab2 = time.monotonic() - start
    cleared = first.get_by_test_id("stFileUploaderFile").count() == 0
    return {"file": path.name, "tab1_queue_s": round(tab1, 2), "tab2_queue_s": round(tab2, 2),
            "uploader_cleared": cleared}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fake", action="store_true", help="the hashing embedder instead of the ONNX model")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-queue-browser-") as tmp:
        root = Path(tmp)
        (root / "data").mkdir()
        proc, url = start_server(root / "data", args.fake, root / "server.log")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                            args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
                first, second = open_tab(browser, url), open_tab(browser, url)
                rows = []
                for n in range(args.rounds):
                    path = root / f"round{n}.txt"
                    path.write_text("\n\n".join(f"Round {n} paragraph {i}: the survey of site {n} noted item {i}."
                                                * 6 for i in range(120)))
                    rows.append(round_trip(first, second, path))
                    print(rows[-1], flush=True)
                browser.close()
        finally:
            proc.terminate()
            proc.wait(30)
    tab2 = [r["tab2_queue_s"] for r in rows]
    tab1 = [r["tab1_queue_s"] for r in rows]
    print(json.dumps({"embedder": "fake" if args.fake else "onnx", "rounds": len(rows),
                      "tab1_queue_median_s": statistics.median(tab1), "tab1_queue_max_s": max(tab1),
                      "tab2_queue_median_s": statistics.median(tab2), "tab2_queue_max_s": max(tab2),
                      "uploader_cleared": sum(r["uploader_cleared"] for r in rows)}))


if __name__ == "__main__":
    main()
