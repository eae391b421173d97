"""A real `streamlit run` on 127.0.0.1 and Debian's chromium for the Playwright tests (never a downloaded browser:
without /usr/bin/chromium the tests skip, and fail in CI)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
READY_SECONDS = 90  # server start; the first run after a fresh clone also exports the ONNX model (later)
STEP_MS = 120_000  # one ingest or one offline answer on a 2-core machine, with margin
SHOT_MS = 120_000  # a screenshot first waits for the page's fonts, which a loaded 2-core machine took over 30 s to give


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("/usr/bin/chromium is missing in CI: `make test` installs it with apt-get")
    pytest.skip("/usr/bin/chromium is missing: install Debian's chromium (sudo apt-get install chromium)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"streamlit did not answer within {READY_SECONDS} s:\n{log.read_text()[-3000:]}")


@contextlib.contextmanager
def streamlit_app(env: dict, log: Path):
    """The app (`python -m ui.serve`: `streamlit run app.py` with the library opened at start) on a free
    127.0.0.1 port, exactly as `make run` starts it; yields its URL once it
    answers, and stops it (killed if it will not stop) afterwards."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


_RACED_CLICK = "MediaFileStorageError: Deferred file"  # a download click that raced a rerun (Streamlit's 404)


_SOCKET_GONE = "starlette.websockets.WebSocketDisconnected"  # a tab's socket closed before or while it was served


def _server_only(block: str) -> bool:
    """Whether every frame of a traceback is in an installed package (the web server's), none in the app."""
    frames = re.findall(r'File "([^"]+)"', block)
    return bool(frames) and all("site-packages" in f for f in frames)


def tracebacks(log: str) -> list[str]:
    """The tracebacks a server log holds, but for Streamlit's own when a download click raced a rerun (the
    button of the run before asked for a file the new run replaced; the browser gets a 404, a second click
    works) and the web server's own when a browser's socket went away before it was accepted or while it was
    closed (no frame of the app in it): every other one is a failure of the app."""
    blocks = log.split("Traceback (most recent call last):")[1:]
    return [b for b in blocks if _RACED_CLICK not in b and not (_SOCKET_GONE in b and _server_only(b))]


def request_problems(page) -> list[str]:
    """Keep every request of the page that failed and every response with an error status, as lines to print.

    A tab whose lazily loaded script chunk failed to arrive keeps its widgets as grey placeholders for good (the
    browser remembers the failed module until the page reloads), which is what a CI tab showed twice; these lines
    say which file failed and how."""
    problems: list[str] = []
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.method} {r.url} ({r.failure})"))
    page.on("response", lambda r: problems.append(f"status {r.status}: {r.request.method} {r.url}")
            if r.status >= 400 else None)
    return problems


def _settle(page) -> None:
    """Wait until the script run is over (the running indicator is gone), so no faded element is left."""
    page.wait_for_timeout(300)
    page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=STEP_MS)
