"""OCR with Tesseract: the words on a page image, each with its box and confidence.

Tesseract is Debian's `tesseract-ocr` package with its `tesseract-ocr-eng` language data, run as a command
(`make ocr` installs it; nothing is downloaded at run time). One process per page, the image as PNG on stdin
and TSV (word boxes) on stdout: a page that hangs is killed by its timeout and a crash costs that page only.
The command is called directly rather than through pytesseract because pytesseract hands every call this
process's environment, and each call needs OMP_THREAD_LIMIT=1: Tesseract's OpenMP threads made a page 2.8x
slower on a 2-core machine (7.4 s vs 2.7 s) and would fight the embedder for the cores.
"""

from __future__ import annotations

import functools
import io
import math
import os
import shutil
import subprocess
from dataclasses import dataclass, field

TESSERACT_CMD = "tesseract"  # the seam: point it at a missing binary to see the refusal without uninstalling
LANGUAGES = "eng"
INSTALL_COMMAND = "sudo apt-get install tesseract-ocr tesseract-ocr-eng"
OCR_DPI = 300  # Tesseract reads body text best at 300 dpi (x-height of 20-30 px)
MAX_OCR_PIXELS = 40_000_000  # a page image is scaled down to this (an A3 page at 300 dpi is 17.4 M)
PAGE_TIMEOUT_S = 120.0  # one page in this process; the isolated parser also kills at its own per-page deadline
LOW_CONFIDENCE = 60.0  # mean word confidence (0-100) under which a document is indexed with a warning
NOISE_CONFIDENCE = 10.0  # words below this are specks and picture edges, not text
Box = tuple[int, int, int, int]  # left, top, right, bottom in pixels of the recognised image


class OcrUnavailable(Exception):
    """Tesseract cannot run here; str(error) says why and the one command that fixes it."""


class OcrError(Exception):
    """Tesseract ran but failed on one page (timeout, crash, unreadable image)."""


@dataclass(frozen=True)
class Word:
    """One recognised word: its text, box, confidence (0-100) and the (block, paragraph, line) it sits in."""

    text: str
    box: Box
    confidence: float
    line: tuple[int, int, int]


@dataclass(frozen=True)
class OcrPage:
    """The words Tesseract found on one image of `width` x `height` pixels, in reading order."""

    words: tuple[Word, ...]
    width: int
    height: int

    def text_with_boxes(self) -> tuple[str, list[Box | None]]:
        """The page text (words by line, a blank line between paragraphs) and each character's box.

        Each character gets an equal slice of its word's box; spaces and line breaks get None. Parsing
        indexes this text and the source viewer rebuilds it, so both see the same characters.
        """
        parts: list[str] = []
        boxes: list[Box | None] = []
        previous = None
        for word in self.words:
            if previous is not None:
                gap = " " if word.line == previous else ("\n" if word.line[:2] == previous[:2] else "\n\n")
                parts.append(gap)
                boxes.extend([None] * len(gap))
            parts.append(word.text)
            boxes.extend(_char_boxes(word))
            previous = word.line
        return "".join(parts), boxes

    def text(self) -> str:
        return self.text_with_boxes()[0]

    @property
    def mean_confidence(self) -> float | None:
        """Mean word confidence, None when no word was found."""
        return sum(w.confidence for w in self.words) / len(self.words) if self.words else None


def _char_boxes(word: Word) -> list[Box]:
    left, top, right, bottom = word.box
    step = (right - left) / max(len(word.text), 1)
    return [(round(left + i * step), top, round(left + (i + 1) * step), bottom) for i in range(len(word.text))]


def check_available() -> None:
    """Raise OcrUnavailable unless the Tesseract command and its language data are installed."""
    _check(TESSERACT_CMD, LANGUAGES)


@functools.lru_cache(maxsize=8)
def _check(command: str, languages: str) -> None:
    path = shutil.which(command)
    if path is None:
        raise OcrUnavailable(f"Tesseract OCR is not installed; install it with: {INSTALL_COMMAND}")
    try:
        listed = subprocess.run([path, "--list-langs"], capture_output=True, text=True, timeout=30,
                                env=_environment())
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OcrUnavailable(f"Tesseract OCR does not run ({exc}); reinstall it with: {INSTALL_COMMAND}") from None
    installed = set(listed.stdout.split()) | set(listed.stderr.split())
    missing = [lang for lang in languages.split("+") if lang not in installed]
    if missing:
        packages = " ".join(f"tesseract-ocr-{lang}" for lang in missing)
        raise OcrUnavailable(f"Tesseract has no language data for {'+'.join(missing)}; install it with: "
                             f"sudo apt-get install {packages}")


def _environment() -> dict[str, str]:
    """This process's environment (TESSDATA_PREFIX and PATH stay as the user set them), one OpenMP thread."""
    return {**os.environ, "OMP_THREAD_LIMIT": "1"}


def recognise(image, dpi: int = OCR_DPI, timeout_s: float = PAGE_TIMEOUT_S) -> OcrPage:
    """Words with boxes on a PIL image (scaled down past MAX_OCR_PIXELS; boxes are in `image`'s pixels).

    Raises:
        OcrUnavailable: Tesseract is not installed (or lacks the language data).
        OcrError: Tesseract failed or timed out on this image.
    """
    check_available()
    shrink = min(1.0, math.sqrt(MAX_OCR_PIXELS / max(image.width * image.height, 1)))
    work = image if shrink >= 1.0 else image.resize((max(1, int(image.width * shrink)), max(1, int(image.height * shrink))))
    buffer = io.BytesIO()
    work.save(buffer, format="PNG", compress_level=1)  # fast: the bytes only cross a pipe
    command = [TESSERACT_CMD, "stdin", "stdout", "--dpi", str(max(70, round(dpi * shrink))), "-l", LANGUAGES,
               "--psm", "3", "tsv"]
    try:
        done = subprocess.run(command, input=buffer.getvalue(), capture_output=True, timeout=timeout_s,
                              env=_environment())
    except FileNotFoundError:
        raise OcrUnavailable(f"Tesseract OCR is not installed; install it with: {INSTALL_COMMAND}") from None
    except subprocess.TimeoutExpired:
        raise OcrError(f"OCR took longer than {timeout_s:g} s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OcrError(f"Tesseract failed (exit {done.returncode}: {message[-1][:160] if message else 'no message'})")
    words = parse_tsv(done.stdout.decode("utf-8", "replace"), scale=1.0 / shrink)
    return OcrPage(words, image.width, image.height)


def parse_tsv(tsv: str, scale: float = 1.0) -> tuple[Word, ...]:
    """Tesseract's TSV rows of level 5 (words) as Words, boxes multiplied by `scale`; noise dropped."""
    words = []
    for row in tsv.splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or cells[0] != "5" or not cells[11].strip():
            continue
        try:
            block, par, line = int(cells[2]), int(cells[3]), int(cells[4])
            left, top, width, height = (int(c) for c in cells[6:10])
            confidence = float(cells[10])
        except ValueError:
            continue  # a malformed row is one word lost, never the page
        if confidence < NOISE_CONFIDENCE:
            continue
        box = (round(left * scale), round(top * scale), round((left + width) * scale), round((top + height) * scale))
        words.append(Word(cells[11].strip(), box, confidence, (block, par, line)))
    return tuple(words)


def prepare_image(image):
    """A PIL image as Tesseract should see it: upright by its EXIF orientation, transparency on white, 8-bit.

    The image reader and the source viewer both call this, so the boxes they compute agree.
    """
    from PIL import Image, ImageOps

    image = ImageOps.exif_transpose(image)
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    if image.mode.startswith("I"):  # 16-bit greyscale (scanners, TIFF): keep the top 8 bits, not a clipped copy
        return image.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    return image if image.mode in ("1", "L", "RGB") else image.convert("RGB")


@dataclass
class OcrLog:
    """What OCR did across one document, for its warnings: confidence per page, pages it could not read."""

    confidences: dict[int, tuple[float, int]] = field(default_factory=dict)  # page -> (mean, words)
    unavailable: str = ""
    unread: list[int] = field(default_factory=list)
    tried: list[int] = field(default_factory=list)  # pages OCR read, with or without words

    def record(self, page_number: int, page: OcrPage) -> None:
        self.tried.append(page_number)
        if page.words:
            self.confidences[page_number] = (page.mean_confidence or 0.0, len(page.words))

    def skip(self, page_number: int, reason: str) -> None:
        """A page that needed OCR while Tesseract cannot run."""
        self.unavailable = reason
        self.unread.append(page_number)

    def mean_confidence(self) -> float | None:
        words = sum(n for _, n in self.confidences.values())
        return sum(c * n for c, n in self.confidences.values()) / words if words else None

    def warnings(self) -> list[str]:
        """One line per problem: scanned pages left unread, and a low mean confidence with its worst pages."""
        out = []
        if self.unread:
            out.append(f"{_pages(self.unread)}: scanned, not read ({self.unavailable})")
        mean = self.mean_confidence()
        if mean is not None and mean < LOW_CONFIDENCE:
            worst = sorted(self.confidences, key=lambda p: self.confidences[p][0])[:5]
            out.append(f"OCR confidence is low (mean {mean:.0f}/100; worst {_pages(sorted(worst))}): "
                       "words may be misread or missing, check the source before relying on it")
        return out


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10]) + (f" and {len(numbers) - 10} more" if len(numbers) > 10 else "")
    return f"p. {shown}" if len(numbers) == 1 else f"pp. {shown}"
