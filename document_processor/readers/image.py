"""Images as documents: PNG, JPEG, TIFF (every page) and WebP, each frame a page, its text read by OCR.

An image has no text layer, so without Tesseract it is refused with the command that installs it, before
any pixel is decoded. Pillow decodes; a pixel limit checked on every frame's header (under Pillow's own
decompression-bomb limit, whose error is caught too) refuses a 100,000 x 100,000 picture by its size, before
it can run the parser out of memory.
"""

from __future__ import annotations

import io
import warnings

from document_processor.blocks import Block, Reading, clean_text
from document_processor.readers import ocr
from document_processor.readers.ocr import OcrError, OcrLog, OcrUnavailable
from document_processor.types import DocumentError, Location

MAX_IMAGE_PIXELS = 150_000_000  # per frame; an A4 page scanned at 1200 dpi is 140 M pixels


def read_image(data: bytes, name: str, progress=None) -> Reading:
    """One block of OCR text per frame (page); DocumentError when OCR is unavailable or finds no text."""
    try:
        ocr.check_available()
    except OcrUnavailable as exc:
        raise DocumentError(name, "no_text", f"an image has no text layer and needs OCR, but {exc}") from None
    image = open_image(data, name)
    frames = getattr(image, "n_frames", 1)
    blocks, failures, log = [], [], OcrLog()
    for index in range(frames):
        if progress is not None:
            progress("ocr", index + 1, frames)
        try:
            page = ocr.recognise(frame(image, index, name))
        except (OcrError, OcrUnavailable) as exc:  # one page lost, reported; the other pages are still read
            failures.append(f"p. {index + 1}: {exc} (page skipped)")
            continue
        log.record(index + 1, page)
        text = clean_text(page.text())
        if text:
            blocks.append(Block(text, Location(page=index + 1)))
        if progress is not None:
            progress("reading", index + 1, frames)
    if not blocks:
        if failures:
            raise DocumentError(name, "corrupt", f"no page could be read by OCR ({failures[0]})")
        pages = "the image" if frames == 1 else f"any of the {frames} pages"
        raise DocumentError(name, "no_text", f"OCR found no text in {pages}")
    return Reading(tuple(blocks), "pages", frames, "", tuple(failures + log.warnings()))


def open_image(data: bytes, name: str):
    """The image, opened lazily (header only); DocumentError for unreadable or oversized images."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # Pillow warns from 89 M pixels; our limit is the one that counts
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise DocumentError(name, "too_large", f"the image is over the {MAX_IMAGE_PIXELS / 1e6:.0f} megapixel "
                            f"limit ({_first_line(exc)})") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise DocumentError(name, "corrupt", f"not a readable image ({_first_line(exc)})") from None
    _check_pixels(image, name)
    return image


def frame(image, index: int, name: str):
    """Frame `index` (0-based) decoded and prepared for OCR; DocumentError when it is damaged or too big."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image.seek(index)
            _check_pixels(image, name)
            image.load()
            return ocr.prepare_image(image.copy())
    except DocumentError:
        raise
    except Image.DecompressionBombError as exc:
        raise DocumentError(name, "too_large", f"page {index + 1} of the image is over the "
                            f"{MAX_IMAGE_PIXELS / 1e6:.0f} megapixel limit ({_first_line(exc)})") from None
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise DocumentError(name, "corrupt", f"page {index + 1} of the image cannot be decoded "
                            f"({_first_line(exc)})") from None


def _check_pixels(image, name: str) -> None:
    width, height = image.size
    if width * height > MAX_IMAGE_PIXELS:
        raise DocumentError(name, "too_large", f"the image is {width:,} x {height:,} pixels, over the "
                            f"{MAX_IMAGE_PIXELS / 1e6:.0f} megapixel limit")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else type(exc).__name__
