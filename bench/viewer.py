"""How long the source viewer makes a person wait for a cited page: the page as it is (shown at once) against the
page with the passage found and highlighted (OCR on a scan or a photo), and a slide drawn by LibreOffice (its
first view converts the deck once) against one drawn from its shapes.

    .venv/bin/python bench/viewer.py --smoke   # one photo, one scanned PDF page (a smoke run)
    .venv/bin/python bench/viewer.py           # 3 photos, 3 scanned pages, a 30-slide deck

Photos and scans are bench/ocr.py's pages (A4, 300 dpi, ~35 lines; "degraded" ones scanned at 200 dpi, tilted,
blurred, speckled); the passage asked for is one of their lines. Each figure is the median over the pages of one
cold call (no cache: the first view of a page). The last line printed is one JSON object with every figure.
Without Tesseract the OCR figures are absent (the page is shown unhighlighted); without LibreOffice, the slide's.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import REPO  # noqa: F401  (puts the project on sys.path)
from ocr import page_lines, render

from ui import slide_images
from ui import source_viewer as sv


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def pages(folder: Path, count: int, rng: random.Random) -> list[tuple[Path, str]]:
    """(file, a line on it) for `count` photos (PNG) and `count` one-page image-only PDFs."""
    made = []
    for n in range(count):
        lines = page_lines(rng)
        picture = render(lines, degraded=n % 2 == 1, rng=rng).convert("RGB")
        photo = folder / f"photo{n}.png"
        picture.save(photo)
        made.append((photo, lines[len(lines) // 2]))
        scan = folder / f"scan{n}.pdf"
        buffer = io.BytesIO()
        picture.save(buffer, format="PDF", resolution=300)
        scan.write_bytes(buffer.getvalue())
        made.append((scan, lines[len(lines) // 3]))
    return made


def deck(path: Path, slides: int) -> Path:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    for n in range(slides):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = f"Quarter {n + 1} results"
        slide.placeholders[1].text = f"Revenue grew {n + 2} percent\nMargins held at {30 + n} percent"
        slide.shapes.add_textbox(Inches(6), Inches(6), Inches(3), Inches(1)).text_frame.text = f"Note {n}"
    prs.save(str(path))
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="one photo and one scanned page")
    args = parser.parse_args(argv)
    count, slides = (1, 3) if args.smoke else (3, 30)
    figures: dict = {"bench": "viewer", "size": "smoke" if args.smoke else "full"}
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        by_kind: dict[str, dict[str, list[float]]] = {}
        for path, line in pages(folder, count, rng):
            kind = "photo" if path.suffix == ".png" else "scanned_pdf"
            plain, _ = timed(lambda path=path: sv.render_plain(path, 1))
            full, image = timed(lambda path=path, line=line: sv.render_page(path, 1, line))
            seen = by_kind.setdefault(kind, {"plain": [], "highlighted": [], "found": []})
            seen["plain"].append(plain)
            seen["highlighted"].append(full)
            seen["found"].append(float(image.highlighted_chars > 0))
        for kind, seen in by_kind.items():
            figures[f"{kind}_first_image_s"] = round(statistics.median(seen["plain"]), 3)
            figures[f"{kind}_highlighted_s"] = round(statistics.median(seen["highlighted"]), 3)
            figures[f"{kind}_passage_found"] = sum(seen["found"]) / len(seen["found"])
            print(f"{kind:12s} page shown after {figures[f'{kind}_first_image_s']:.2f} s, highlighted after "
                  f"{figures[f'{kind}_highlighted_s']:.2f} s (passage found on "
                  f"{figures[f'{kind}_passage_found']:.0%} of the pages)")
        original = deck(folder / ("d" * 64 + ".pptx"), slides)
        drawn, _ = timed(lambda: sv.render_slide(original, 2, ["revenue"]))
        figures["slide_from_shapes_s"] = round(drawn, 3)
        if slide_images.office():
            first, _ = timed(lambda: slide_images.render_slide_image(original, 2, ["revenue"]))
            later, _ = timed(lambda: slide_images.render_slide_image(original, slides, ["revenue"]))
            figures.update(slides=slides, slide_libreoffice_first_view_s=round(first, 3),
                           slide_libreoffice_later_s=round(later, 3))
            print(f"slides       a {slides}-slide deck: first view {first:.2f} s (converted once), later views "
                  f"{later:.2f} s; drawn from shapes {drawn:.2f} s")
        else:
            print(f"slides       drawn from shapes {drawn:.2f} s (LibreOffice not installed)")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
