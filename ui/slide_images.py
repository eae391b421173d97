"""Slides as they look: a presentation is converted once by LibreOffice (where it is installed) into a PDF kept
beside its original (originals/previews/<doc_id>.pdf, removed with the document), and a cited slide is that PDF's
page, drawn like any PDF page, with the question's words highlighted.

LibreOffice is optional (the README says how to install it): without it, or when it fails on a file, the source
viewer draws the slide from its shapes (source_viewer.render_slide) and says so. A conversion runs once per file
and one at a time (a first view of a deck waits a few seconds); a file LibreOffice could not convert is not tried
again by this process, while one that waited for another conversion or ran out of time is tried at its next view.

Nothing of a deck may reach the network (a picture linked by URL is fetched by LibreOffice as it converts): it
converts a copy without external links (embedded packages cleaned too), and without a network at all where the
system lets a process have its own (`unshare`). No streamlit here.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from ui.helpers import match_spans
from ui.source_viewer import SLIDE_FRAME, PageImage, SourceError, char_boxes, page_image, pdf_page

CONVERT_TIMEOUT_S = 120.0  # a 48-slide deck with pictures took 26 s on 2 busy cores
WAIT_FOR_OTHER_S = 5.0  # a view waits this long for another deck's conversion, then is drawn from its shapes
MAX_PACKAGE_BYTES = 1024**3  # uncompressed; the upload limit is 200 MB, compressed
EMBEDDED_PACKAGES = (".xlsx", ".xlsm", ".docx", ".docm", ".pptx", ".pptm")
# Hidden slides are exported too, so that page n of the PDF is slide n of the deck, as python-pptx counts them.
PDF_FILTER = 'pdf:impress_pdf_Export:{"ExportHiddenSlides":{"type":"boolean","value":"true"}}'
log = logging.getLogger(__name__)
_converting = threading.Lock()  # one LibreOffice at a time: each takes a core and a few hundred MB
_failed: dict[tuple[str, int], str] = {}  # (original, its mtime_ns) -> why LibreOffice could not convert it


class Busy(SourceError):
    """Not converted now (another conversion, the time limit, LibreOffice not starting): tried again later."""


def office() -> str | None:
    """LibreOffice's command (`soffice`), or None when it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def has_preview(original: Path) -> bool:
    """Whether the slides of `original` are already converted (a view needs no wait)."""
    return _fresh(_preview(original), original)


def failed(original: Path) -> bool:
    """Whether LibreOffice could not convert `original` (its slides are drawn from their shapes, at once)."""
    try:
        return (str(original), original.stat().st_mtime_ns) in _failed
    except OSError:
        return True


def preview_pdf(original: Path) -> Path:
    """The PDF of every slide of `original`, converted by LibreOffice on first use and kept.

    Raises:
        Busy: another deck is being converted, or this one ran out of time: tried again at the next view.
        SourceError: LibreOffice is not installed, failed, or gave a PDF with another number of slides.
    """
    target = _preview(original)
    if _fresh(target, original):
        return target
    command = office()
    if command is None:
        raise SourceError("LibreOffice is not installed")
    key = (str(original), original.stat().st_mtime_ns)
    if key in _failed:
        raise SourceError(_failed[key])
    if not _converting.acquire(timeout=WAIT_FOR_OTHER_S):
        raise Busy("LibreOffice is busy with another presentation; try this slide again in a moment")
    try:
        if _fresh(target, original):  # converted by another tab meanwhile
            return target
        _convert(command, original, target)
    except Busy:
        raise
    except SourceError as error:  # the file itself: not tried again
        _failed[key] = str(error)
        raise
    finally:
        _converting.release()
    return target


def render_slide_image(original: Path, number: int, terms: Sequence[str], width: int = 900) -> PageImage:
    """Slide `number` (1-based) as LibreOffice draws it, every word of `terms` highlighted.

    Raises:
        SourceError: as preview_pdf, or the deck has no such slide.
    """
    from PIL import ImageDraw

    with pdf_page(preview_pdf(original), number, "presentation", "slides") as (page, count):
        image = page.render(scale=width / max(page.get_width(), 1.0)).to_pil().convert("RGBA")
        ImageDraw.Draw(image).rectangle((0, 0, image.width - 1, image.height - 1), outline=SLIDE_FRAME)  # its edge
        return page_image(image, _word_boxes(page, terms, image.size), count)


def _word_boxes(page, terms: Sequence[str], size: tuple[int, int]) -> list[tuple[float, float, float, float]]:
    """Pixel boxes of the characters of every word of the page that `terms` match (ui.helpers.match_spans, as
    the passage's text marks them)."""
    wanted = [t for t in terms if t.strip()]
    return char_boxes(page, size, lambda text: [i for start, end in match_spans(text, wanted)
                                                for i in range(start, end)])


def _preview(original: Path) -> Path:
    from advanced_retrieval.library.originals import preview_path

    return preview_path(original)


def _fresh(target: Path, original: Path) -> bool:
    try:
        return target.stat().st_mtime_ns >= original.stat().st_mtime_ns
    except OSError:
        return False


def _convert(command: str, original: Path, target: Path) -> None:
    """`original` to `target` with LibreOffice headless, in a profile of its own (a running LibreOffice of the
    user's is left alone), written whole or not at all."""
    with tempfile.TemporaryDirectory(prefix="docagent-slides-") as work:
        work_dir = Path(work)
        # A copy under a plain name: the original's name is its doc_id and suffix, but LibreOffice picks its
        # import filter by the suffix and names the output after the input. The copy has no external links.
        source = work_dir / f"deck{original.suffix.lower()}"
        without_external_links(original, source)
        args = [command, f"-env:UserInstallation={(work_dir / 'profile').as_uri()}", "--headless", "--norestore",
                "--nolockcheck", "--convert-to", PDF_FILTER, "--outdir", str(work_dir / "out"), str(source)]
        try:
            done = subprocess.run([*no_network(), *args], capture_output=True, text=True, timeout=CONVERT_TIMEOUT_S,
                                  check=False, env={**os.environ, "HOME": work})
        except subprocess.TimeoutExpired as error:
            raise Busy(f"LibreOffice did not finish within {CONVERT_TIMEOUT_S:.0f} s") from error
        except OSError as error:
            raise Busy(f"LibreOffice could not be started: {error}") from error
        made = work_dir / "out" / "deck.pdf"
        if done.returncode != 0 or not made.is_file():
            said = (done.stderr or done.stdout or "").strip().splitlines()[-1:] or ["no output"]
            raise SourceError(f"LibreOffice could not convert it (exit {done.returncode}: {said[0][:200]})")
        _check_pages(made, original)
        if not original.exists():  # deleted or replaced meanwhile: no preview of a document that is gone
            raise Busy("the document was deleted while its slides were being drawn")
        target.parent.mkdir(parents=True, exist_ok=True)
        staged = target.with_name(f".incoming-{target.name}")
        shutil.copyfile(made, staged)
        os.replace(staged, target)
    log.info("slides of %s converted by LibreOffice", original.name)


MAX_RELS_BYTES = 16 * 1024 * 1024  # a part's relationships list; far beyond any real deck's


def without_external_links(original: Path, copy: Path) -> int:
    """Copy the presentation `original` to `copy` without its external relationships (a picture, sound, video or
    OLE object linked by URL, a hyperlink), in the packages embedded in it too (a chart's workbook, an embedded
    document): LibreOffice fetches a linked picture while converting, which would tell a third party that the
    document was opened. Returns how many were left out.

    Raises:
        SourceError: `original` is not a readable ZIP package, or unpacks to more than MAX_PACKAGE_BYTES.
    """
    import zipfile

    try:
        with zipfile.ZipFile(original) as source, zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as target:
            return _clean_package(source, target, depth=0)
    except zipfile.BadZipFile as error:
        raise SourceError(f"cannot read the presentation's package: {error}") from error
    except OSError as error:
        raise SourceError(f"cannot copy the presentation for LibreOffice: {error}") from error


def _clean_package(source, target, depth: int) -> int:
    import io
    import zipfile

    from lxml import etree

    if sum(info.file_size for info in source.infolist()) > MAX_PACKAGE_BYTES:
        raise SourceError(f"the presentation unpacks to more than {MAX_PACKAGE_BYTES // 1024**2} MB")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    removed = 0
    for info in source.infolist():
        name = info.filename.lower()
        if name.endswith(".rels"):
            try:
                root = etree.fromstring(source.read(info), parser)
            except etree.XMLSyntaxError as error:
                raise SourceError(f"{info.filename} is not readable XML: {error}") from error
            for rel in [r for r in root if str(r.get("TargetMode", "")).strip().lower() == "external"]:
                root.remove(rel)
                removed += 1
            target.writestr(info.filename, etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                                          standalone=True))
        elif name.endswith(EMBEDDED_PACKAGES) and depth < 2:  # a package inside: cleaned the same way
            inner, cleaned = io.BytesIO(source.read(info)), io.BytesIO()
            try:
                with zipfile.ZipFile(inner) as package, zipfile.ZipFile(cleaned, "w", zipfile.ZIP_DEFLATED) as out:
                    removed += _clean_package(package, out, depth + 1)
            except zipfile.BadZipFile:  # not a package after all: left out rather than passed on unread
                continue
            target.writestr(info.filename, cleaned.getvalue())
        else:
            with source.open(info) as part, target.open(info.filename, "w") as out:
                shutil.copyfileobj(part, out)
    return removed


@functools.cache
def no_network() -> tuple[str, ...]:
    """The command prefix that gives LibreOffice a network namespace of its own (no network at all), where the
    system allows it; () where it does not (the copy without external links is then the only guard)."""
    command = shutil.which("unshare")
    prefix = (command, "--net", "--map-root-user") if command else ()
    try:
        works = bool(prefix) and subprocess.run([*prefix, "true"], capture_output=True, timeout=10,
                                                check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        works = False
    if not works:
        log.info("LibreOffice runs with the machine's network (no unshare here); decks are converted without "
                 "their external links")
    return prefix if works else ()


def _check_pages(pdf_path: Path, original: Path) -> None:
    """A PDF whose pages are not the deck's slides one for one would show the wrong slide: refused."""
    import pypdfium2 as pdfium
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    pdf = pdfium.PdfDocument(str(pdf_path))
    try:
        pages = len(pdf)
    finally:
        pdf.close()
    try:
        slides = len(Presentation(str(original)).slides)
    except (PackageNotFoundError, KeyError, ValueError, OSError) as error:
        raise SourceError(f"cannot open the presentation: {error}") from error
    if pages != slides:
        raise SourceError(f"LibreOffice drew {pages} pages for {slides} slides")
