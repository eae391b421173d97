"""OCR throughput and word accuracy on scans made here, through the isolated parser as the app reads them.

    .venv/bin/python bench/ocr.py --smoke   # 1 clean page + 1 degraded page (a smoke run)
    .venv/bin/python bench/ocr.py --quick   # 4 clean pages + 4 degraded pages
    .venv/bin/python bench/ocr.py           # 20 + 20 pages

Each page is an A4 sheet at 300 dpi with ~35 lines of seeded random sentences in DejaVu Sans 12 pt (Debian's
fonts-dejavu-core; Pillow's own font when absent). "clean" pages are saved as rendered; "degraded" ones are
scanned at 200 dpi, tilted 0.6 degrees, blurred and speckled, as an office copier might. Every set is wrapped in
one image-only PDF and parsed with parse_bytes (isolated child, default Limits), so the figure includes
rendering, Tesseract (one thread per page, see document_processor/ocr.py) and chunking. Word accuracy: the
share of the drawn words that come back in order (difflib matching blocks over lower-cased words); the mean
Tesseract confidence is printed beside it. The last line printed is one JSON object with every figure; without
the tesseract binary a smoke run prints {"skipped": ...} as that line and exits 0 (the other sizes exit 2).
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import random
import re
import shutil
import sys
import time

from common import REPO
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from document_processor import parse_bytes

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
VOCABULARY = ["the", "tenant", "landlord", "agreement", "payment", "invoice", "total", "amount", "due", "March", "April", "contract", "signed", "office", "harbour", "warehouse", "delivery", "shipping", "quarterly", "revenue", "report", "section", "clause", "notice", "period", "months", "written", "consent", "repairs", "insurance", "deposit", "1250", "2024", "euros", "account", "number", "reference", "schedule", "annex", "terms", "conditions", "party", "parties", "date", "signature", "witness"]


def page_lines(rng: random.Random, lines: int = 35) -> list[str]:
    return [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(7, 10))) for _ in range(lines)]


def render(lines: list[str], degraded: bool, rng: random.Random) -> Image.Image:
    """One A4 page at 300 dpi; degraded: 200 dpi, tilted, blurred and speckled."""
    try:
        font = ImageFont.truetype(FONT, 50)
    except OSError:
        font = ImageFont.load_default(50)
    image = Image.new("L", (2480, 3508), 255)
    draw = ImageDraw.Draw(image)
    for n, line in enumerate(lines):
        draw.text((220, 260 + 86 * n), line, font=font, fill=0)
    if not degraded:
        return image
    image = image.resize((1654, 2339)).rotate(0.6, fillcolor=255).filter(ImageFilter.GaussianBlur(1.1))
    pixels = image.load()
    for _ in range(30_000):
        pixels[rng.randrange(image.width), rng.randrange(image.height)] = rng.choice((0, 110, 255))
    return image


def scanned_pdf(pages: list[Image.Image], dpi: int) -> bytes:
    buffer = io.BytesIO()
    pages[0].save(buffer, format="PDF", save_all=True, append_images=pages[1:], resolution=dpi)
    return buffer.getvalue()


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def accuracy(expected: list[list[str]], document) -> float:
    """Share of drawn words recognised in order, page by page."""
    got: dict[int, list[str]] = {}
    for chunk in document.chunks:  # chunks overlap: repeated words cannot add in-order matches
        got.setdefault(chunk.location.page, []).append(chunk.text)
    hits = total = 0
    for number, lines in enumerate(expected, start=1):
        want = words(" ".join(lines))
        have = words(" ".join(got.get(number, [])))
        hits += sum(block.size for block in difflib.SequenceMatcher(None, want, have, autojunk=False).get_matching_blocks())
        total += len(want)
    return hits / max(total, 1)


def run(kind: str, count: int, seed: int) -> dict:
    rng = random.Random(seed)
    expected = [page_lines(rng) for _ in range(count)]
    degraded = kind == "degraded"
    data = scanned_pdf([render(lines, degraded, rng) for lines in expected], 200 if degraded else 300)
    pages_done = []
    started = time.perf_counter()
    document = parse_bytes(data, f"{kind}.pdf", progress=lambda stage, done, total: stage == "ocr" and pages_done.append(done))
    seconds = time.perf_counter() - started
    confidence = re.search(r"mean (\d+)/100", " ".join(document.warnings))
    figure = {"pages": count, "ocr_pages": len(pages_done), "seconds": round(seconds, 1),
              "pages_per_s": round(count / seconds, 3), "word_accuracy": round(accuracy(expected, document), 4),
              "chunks": len(document.chunks), "warnings": list(document.warnings),
              "low_confidence_warning": confidence is not None}
    print(f"{kind:<9} {count:3} pages  {figure['seconds']:6.1f} s  {figure['pages_per_s']:.3f} pages/s  "
          f"word accuracy {figure['word_accuracy']:.4f}  warnings {len(document.warnings)}", flush=True)
    return figure


def mean_confidence(kind: str, seed: int) -> float:
    """Tesseract's mean word confidence on one page of the kind, read directly (not through a warning)."""
    from document_processor.readers import ocr

    rng = random.Random(seed)
    return round(ocr.recognise(render(page_lines(rng), kind == "degraded", rng)).mean_confidence or 0.0, 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4 + 4 pages")
    parser.add_argument("--smoke", action="store_true", help="a smoke run: 1 + 1 pages")
    args = parser.parse_args(argv)
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    if shutil.which("tesseract") is None:
        missing = "tesseract is not installed: run `make ocr` (or sudo apt-get install tesseract-ocr tesseract-ocr-eng)"
        if args.smoke:
            print(json.dumps({"bench": "ocr", "size": size, "skipped": missing}))
            return 0
        print(missing, file=sys.stderr)
        return 2
    count = {"smoke": 1, "quick": 4, "full": 20}[size]
    figures = {"bench": "ocr", "size": size, "quick": args.quick, "repo": REPO.name}
    for seed, kind in enumerate(("clean", "degraded")):
        figures[kind] = run(kind, count, seed)
        figures[kind]["mean_confidence_page1"] = mean_confidence(kind, seed)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
