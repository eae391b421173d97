"""Upload to "every file indexed" in the real app, as `make run` starts it, this tree beside a baseline tree.

    .venv/bin/python bench/app_ingest.py                                  # 4 papers + 3 office files, 2 rounds
    .venv/bin/python bench/app_ingest.py --baseline-tree ../main-before    # the same, alternating with that tree
    .venv/bin/python bench/app_ingest.py --smoke                          # 2 generated files, hashing embedder

Each round starts `python -m ui.serve` (what `make run` runs) on 127.0.0.1 with a fresh data directory (the
exported embedding model shared, so no round pays the export), opens chromium, hands every file to the uploader
at once and waits until the sidebar says "N indexed". Measured from the moment Playwright hands over the files.
With --baseline-tree, that tree's own .venv and code run the same rounds, alternating with this tree's, so a change
in the machine's load hits both alike. Also counted: lines of "No runtime found" in the server's output (the parse
children importing the page, before 27 Nov 2026). bench/ingest.py measures the library alone; this is what a user
waits for, queue, parse children, page and all. Needs Debian's chromium and Playwright; without them the bench
prints a "skipped" JSON line naming what to install. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import CHROMIUM, DATA, browser_missing, start_streamlit  # noqa: E402  (bench/ is on sys.path when run as a script)

from evaluation import text_pdf  # noqa: E402

MODEL_CACHE = REPO / "test-artifacts" / "model-cache"
OFFICE = ("office/xlsx/49609.xlsx", "office/docx/60316.docx", "office/pptx/60810.pptx")



def files(size: str, folder: Path) -> list[Path]:
    """The papers and three office files of ../shared/data, or (smoke) a generated PDF and a text file."""
    if size == "smoke":
        pdf = folder / "smoke_report.pdf"
        pdf.write_bytes(text_pdf([f"Section {i}. The survey of site {i} recorded {i * 7} samples." for i in range(3)]))
        txt = folder / "smoke_notes.txt"
        txt.write_text("\n\n".join(f"Note {i}: the pump at station {i} was serviced." for i in range(40)))
        return [pdf, txt]
    found = sorted((DATA / "papers").glob("*.pdf")) + [DATA / name for name in OFFICE if (DATA / name).exists()]
    if not found:
        raise SystemExit(f"no files under {DATA}")
    return found


def one_round(tree: Path, root: Path, paths: list[Path], models: Path, fake: bool, wait_s: float) -> dict:
    """Seconds from handing `paths` to the uploader until the sidebar says they are all indexed."""
    from playwright.sync_api import sync_playwright

    data = root / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "CHROMA_HOST")}
    env.update(DOCAGENT_DATA_DIR=str(data), DOCAGENT_MODEL_DIR=str(models), HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False", DOCAGENT_PROVIDER="offline")
    if fake:
        env.update(DOCAGENT_FAKE_EMBEDDER="1")
    log = root / "server.log"
    python = tree / ".venv" / "bin" / "python"
    proc, url = start_streamlit([str(python if python.exists() else sys.executable), "-m", "ui.serve"], tree, env,
                                log, wait_s)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM),
                                        args=["--no-sandbox", "--disable-gpu", "--no-first-run"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url, timeout=wait_s * 1000)
            page.get_by_text("No documents yet").wait_for(timeout=wait_s * 1000)
            start = time.monotonic()
            page.locator("[data-testid='stFileUploader'] input[type='file']").set_input_files([str(p) for p in paths])
            page.get_by_test_id("stSidebar").get_by_text(re.compile(rf"^{len(paths)} indexed")).first.wait_for(
                timeout=wait_s * 1000)
            took = time.monotonic() - start
            browser.close()
    finally:
        proc.terminate()
        proc.wait(30)
    return {"seconds": round(took, 2), "no_runtime_warnings": log.read_text().count("No runtime found")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-tree", type=Path, help="another checkout with its own .venv, run alternately")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--smoke", action="store_true",
                        help="1 round, two generated files, the hashing embedder: checks that the bench runs")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "full"
    lacking = browser_missing()
    if lacking:
        print(json.dumps({"bench": "app_ingest", "size": size, "skipped": lacking}))
        return
    rounds, wait_s = (1, 180) if args.smoke else (args.rounds, 1800)
    trees = {"this tree": REPO, **({"baseline tree": args.baseline_tree.resolve()} if args.baseline_tree else {})}
    with tempfile.TemporaryDirectory(prefix="bench-app-ingest-") as tmp:
        paths = files(size, Path(tmp))
        models = Path(tmp) / "models" if args.smoke else MODEL_CACHE  # a smoke run writes nothing into the repo
        runs: dict[str, list[dict]] = {label: [] for label in trees}
        for r in range(rounds):
            for label, tree in trees.items():
                root = Path(tmp) / f"round{r}-{label.replace(' ', '-')}"
                root.mkdir()
                runs[label].append(one_round(tree, root, paths, models, args.smoke, wait_s))
                print(f"round {r + 1} {label}: {len(paths)} files indexed {runs[label][-1]['seconds']} s after the "
                      f"upload ({runs[label][-1]['no_runtime_warnings']} 'No runtime found' lines)", flush=True)
    figures = {label: {"median_s": statistics.median(x["seconds"] for x in rows), "runs": rows}
               for label, rows in runs.items()}
    if "baseline tree" in figures:
        figures["baseline_over_this"] = round(figures["baseline tree"]["median_s"] / figures["this tree"]["median_s"], 2)
    print(json.dumps({"bench": "app_ingest", "size": size, "files": [p.name for p in paths], **figures}))


if __name__ == "__main__":
    main()
