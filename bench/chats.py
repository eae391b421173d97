"""How long a long saved chat takes to open in the browser, and how long another tab waits meanwhile.

    .venv/bin/python bench/chats.py                        # 5,000 turns, this checkout's app
    .venv/bin/python bench/chats.py --app /path/to/old     # the same chat served by another checkout's app
    .venv/bin/python bench/chats.py --smoke                # 200 turns, shorter waits

Builds a library with one generated report (the hashing embedder), asks it one question offline through the
engine the app uses, and saves a chat of --turns questions, each with that answer's whole record, through the
app's own conversation store (the format the page writes; records are padded with cited passages to about
--record-kb). Then starts the app (`python -m ui.serve` in --app) on 127.0.0.1 and opens ?chat=ID in Debian's
chromium: seconds until the last answer is drawn and the page's run is over, how many messages were drawn, and
the seconds a second tab (no chat), opened once the chat's first message shows, takes to show its chat box (a screenshot of the opened chat goes
to test-artifacts/bench-chats.png). Also the store's read of the last 40
messages against a read of all of them. Prints one JSON line. Without chromium or Playwright it prints a
"skipped" line and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CHROMIUM, browser_missing, start_streamlit  # noqa: E402  (bench/ is on sys.path when run as a script)

SHOT = REPO / "test-artifacts" / "bench-chats.png"
QUESTION = "Which suppliers delivered the heat pumps and what did they cost?"
SIZES = {"full": {"turns": 5_000, "wait_s": 300}, "smoke": {"turns": 200, "wait_s": 120}}


def report_text(paragraphs: int = 40) -> str:
    lines = ["Zephyr project report.", ""]
    for i in range(paragraphs):
        lines += [f"Heat pumps for site {i} were supplied by Nordvarme AS at a cost of {1200 + 37 * i} euros per unit; "
                  f"the site's energy use fell by {10 + i % 30} percent after the heat pumps were delivered in "
                  f"spring {2015 + i % 9}, and the supplier serviced them twice a year.", ""]
    return "\n".join(lines)


def saved_chat(data: Path, turns: int, record_kb: float) -> tuple[str, dict]:
    """A chat of `turns` questions and answers in data/conversations.sqlite3; (its id, figures about it)."""
    os.environ["DOCAGENT_FAKE_EMBEDDER"] = "1"  # the library the bench builds here and the one the app opens
    import wiring
    from agentic_rag import answer_record
    from ui.conversations import ConversationStore

    config = wiring.Config.from_env(data_dir=data)
    report = data.parent / "zephyr-report.txt"
    report.write_text(report_text(6))
    embedder = wiring.make_embedder(config)
    kb = wiring.open_library(config, embedder=embedder)
    try:
        kb.ingest_file(report)
        answer = wiring.make_agent(kb, embedder, config, provider="offline").ask(QUESTION)
    finally:
        kb.close()
    record = answer_record(answer)
    body = json.dumps(record)
    padding = []  # further cited passages, as a longer answer's record carries them
    while len(body) + sum(len(p) for p in padding) < record_kb * 1000:
        padding.append(report_text(3))
    if padding:
        record = {**record, "notes": padding}
    question = {"role": "user", "content": QUESTION}
    reply = {"role": "assistant", "content": answer.answer, "result": record, "question": QUESTION,
             "model": "offline", "indexing": []}
    store = ConversationStore(config.conversations)
    chat = store.create()
    store.extend(chat, [m for n in range(1, turns + 1)
                        for m in ({**question, "content": f"{QUESTION} Turn {n}"}, {**reply, "question": QUESTION})])
    size_mb = sum(len(json.dumps(m)) for m in store.tail(chat, 2)[1]) * turns / 1e6
    store.tail(chat, 1)  # the first read after the writes checkpoints the journal: not part of either figure
    all_s = min(timed(lambda: store.messages(chat))[1] for _ in range(3))
    tail_s = min(timed(lambda: store.tail(chat, 40))[1] for _ in range(3))
    return chat, {"record_kb": round(len(json.dumps(record)) / 1000, 1), "chat_mb": round(size_mb, 1),
                  "store_read_all_s": round(all_s, 3), "store_read_last_40_s": round(tail_s, 4)}


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def start_server(app: Path, data: Path, log: Path, wait_s: float) -> tuple[subprocess.Popen, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")}
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_FAKE_EMBEDDER="1", HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False", DOCAGENT_PROVIDER="offline")
    return start_streamlit([sys.executable, "-m", "ui.serve"], app, env, log, wait_s)


def open_chat(url: str, chat: str, turns: int, wait_s: float) -> dict:
    """Seconds until ?chat=`chat` shows its last answer and the run is over; a second tab's wait meanwhile."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    figures: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        warm = browser.new_page()
        warm.goto(url)  # the library and the engine's imports are loaded once per process: not part of the figure
        warm.get_by_role("textbox", name="Ask about your documents").wait_for(timeout=wait_s * 1000)
        warm.close()
        page, other = browser.new_page(viewport={"width": 1400, "height": 1000}), browser.new_page()
        start = time.monotonic()
        page.goto(f"{url}/?chat={chat}")
        try:
            page.get_by_test_id("stChatMessage").first.wait_for(timeout=wait_s * 1000)
            figures["first_message_s"] = round(time.monotonic() - start, 2)
        except PlaywrightTimeout:
            figures["first_message_s"] = None
        other_start = time.monotonic()  # while the chat is being drawn
        other.goto(url)
        try:
            other.get_by_role("textbox", name="Ask about your documents").wait_for(timeout=wait_s * 1000)
            figures["other_tab_s"] = round(time.monotonic() - other_start, 2)
        except PlaywrightTimeout:
            figures["other_tab_s"] = None
        last = page.get_by_text(f"Turn {turns}", exact=False)
        try:
            last.first.wait_for(timeout=max(1.0, wait_s - (time.monotonic() - start)) * 1000)
            page.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=wait_s * 1000)
            figures["open_s"] = round(time.monotonic() - start, 2)
        except PlaywrightTimeout:
            figures["open_s"] = None  # not drawn within the wait
            figures["waited_s"] = round(time.monotonic() - start, 1)
        figures["messages_drawn"] = page.get_by_test_id("stChatMessage").count()
        SHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOT))  # the top of the chat: the "Show earlier messages" button
        browser.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="200 turns, shorter waits")
    parser.add_argument("--turns", type=int, help="questions in the chat (default 5,000; 200 with --smoke)")
    parser.add_argument("--record-kb", type=float, default=10.0, help="size of each saved answer record")
    parser.add_argument("--app", type=Path, default=REPO, help="the checkout whose app serves the chat")
    parser.add_argument("--wait", type=float, help="seconds to wait for the chat to open")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "full"
    turns, wait_s = args.turns or SIZES[size]["turns"], args.wait or SIZES[size]["wait_s"]
    head = {"bench": "chats", "size": size, "turns": turns, "app": str(args.app)}
    lacking = browser_missing()
    if lacking:
        print(json.dumps({**head, "skipped": lacking}))
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        chat, stored = saved_chat(data, turns, args.record_kb)
        print(f"saved chat: {stored}", flush=True)
        proc, url = start_server(args.app, data, Path(tmp) / "server.log", wait_s)
        try:
            opened = open_chat(url, chat, turns, wait_s)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    print(json.dumps({**head, **stored, **opened}))


if __name__ == "__main__":
    main()
