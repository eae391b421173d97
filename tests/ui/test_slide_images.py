"""ui.slide_images: a slide as LibreOffice draws it (its design included), the question's words highlighted, the
converted PDF kept beside the original and removed with it. Skips where LibreOffice is not installed."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from advanced_retrieval.library.originals import Originals, preview_path
from ui import slide_images
from ui.source_viewer import SourceError, render_slide

needs_office = pytest.mark.skipif(slide_images.office() is None,
                                  reason="LibreOffice is not installed (apt-get install libreoffice-impress)")
RED = (200, 30, 30)


def deck(path: Path) -> Path:
    """Three slides, the first hidden; the third has a red filled rectangle on its left half (design, no text)
    and a text box on its right half."""
    from pptx import Presentation
    from pptx.dml.color import RGBColor
    from pptx.enum.shapes import MSO_SHAPE
    from pptx.util import Inches, Pt

    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(10), Inches(7.5)
    blank = prs.slide_layouts[6]
    for text in ("Hidden draft slide", "Agenda for the quarter"):
        box = prs.slides.add_slide(blank).shapes.add_textbox(Inches(1), Inches(1), Inches(8), Inches(1))
        box.text_frame.text = text
    prs.slides[0]._element.set("show", "0")
    third = prs.slides.add_slide(blank)
    shape = third.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(0.5), Inches(1), Inches(4), Inches(5))
    shape.fill.solid()
    shape.fill.fore_color.rgb = RGBColor(*RED)
    shape.line.fill.background()
    box = third.shapes.add_textbox(Inches(5.5), Inches(3), Inches(4), Inches(1))
    box.text_frame.text = "Quarterly revenue grew 12 percent"
    box.text_frame.word_wrap = True
    box.text_frame.paragraphs[0].runs[0].font.size = Pt(24)
    prs.save(str(path))
    return path


def red_share(png: bytes, box: tuple[float, float, float, float]) -> float:
    """Share of the pixels in `box` (fractions of the width and height) that are the rectangle's red."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    w, h = image.size
    crop = np.asarray(image.crop((int(box[0] * w), int(box[1] * h), int(box[2] * w), int(box[3] * h))), dtype=int)
    red = (np.abs(crop[..., 0] - RED[0]) < 40) & (crop[..., 1] < 90) & (crop[..., 2] < 90)
    return float(red.mean())


@needs_office
def test_a_slide_is_drawn_as_libreoffice_draws_it_with_the_asked_words_marked(tmp_path):
    original = deck(tmp_path / ("a" * 64 + ".pptx"))  # kept copies are named <doc_id>.pptx
    image = slide_images.render_slide_image(original, 3, ["revenue"], width=800)
    assert image.page_count == 3  # the hidden slide is drawn too: page n is slide n
    assert image.width == 800 and abs(image.height - 600) <= 2
    assert image.highlighted_chars >= len("revenue")
    assert red_share(image.png, (0.1, 0.3, 0.4, 0.7)) > 0.9  # the design is there: the red rectangle
    drawn = render_slide(original, 3, ["revenue"], width=800)  # the drawing from shapes has no design
    assert red_share(drawn.png, (0.1, 0.3, 0.4, 0.7)) < 0.01
    assert slide_images.has_preview(original) and preview_path(original).is_file()
    second = slide_images.render_slide_image(original, 2, ["agenda"], width=800)  # no second conversion
    assert second.highlighted_chars >= len("agenda") and red_share(second.png, (0.1, 0.3, 0.4, 0.7)) < 0.01
    with pytest.raises(SourceError, match="no slide 4"):
        slide_images.render_slide_image(original, 4, [])


@needs_office
def test_a_file_libreoffice_cannot_convert_says_why_once(tmp_path):
    broken = tmp_path / ("b" * 64 + ".pptx")
    broken.write_bytes(b"PK\x03\x04 not a presentation")
    with pytest.raises(SourceError) as first:
        slide_images.preview_pdf(broken)
    with pytest.raises(SourceError) as again:  # not tried again by this process
        slide_images.preview_pdf(broken)
    assert str(first.value) == str(again.value) and not preview_path(broken).exists()


def test_the_preview_is_removed_with_its_document(tmp_path):
    originals = Originals(tmp_path / "originals")
    originals.keep("c" * 64, ".pptx", b"bytes of a deck", name="deck.pptx")
    copy = originals.path("c" * 64)
    preview = preview_path(copy)
    preview.parent.mkdir()
    preview.write_bytes(b"%PDF-")
    assert [doc_id for doc_id, _path in originals.entries()] == ["c" * 64]  # a preview is no kept copy
    originals.remove("c" * 64)
    assert not copy.exists() and not preview.exists()
    originals.keep("d" * 64, ".pptx", b"another deck")
    kept = originals.path("d" * 64)
    orphan, half = preview.parent / f"{'f' * 64}.pdf", preview.parent / f".incoming-{'d' * 64}.pdf"
    for path in (preview_path(kept), orphan, half):  # a conversion that ended after its document was deleted
        path.write_bytes(b"%PDF-")
    originals.prune(["d" * 64])
    assert sorted(p.name for p in preview.parent.iterdir()) == [f"{'d' * 64}.pdf"]


@pytest.fixture
def listener():
    """A local HTTP server recording every request it gets (the stand-in for a third party's server)."""
    import http.server
    import threading

    seen: list[str] = []

    class Record(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the standard library's name)
            seen.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", seen
    server.shutdown()
    thread.join(timeout=10)


def linked_deck(path: Path, url: str) -> Path:
    """One slide with a picture linked by URL (not embedded) and a hyperlink, beside a text box."""
    from pptx import Presentation
    from pptx.opc.constants import RELATIONSHIP_TYPE as RT
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    picture = path.with_suffix(".png")
    Image.new("RGB", (10, 10), "blue").save(picture)
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    shape = slide.shapes.add_picture(str(picture), Inches(1), Inches(1), Inches(2), Inches(2))
    blip = shape._element.blipFill.find(qn("a:blip"))
    del blip.attrib[qn("r:embed")]
    blip.set(qn("r:link"), slide.part.relate_to(f"{url}/tracker.png?opened=deck", RT.IMAGE, is_external=True))
    box = slide.shapes.add_textbox(Inches(4), Inches(1), Inches(4), Inches(1))
    box.text_frame.text = "Revenue by region"
    box.text_frame.paragraphs[0].runs[0].hyperlink.address = f"{url}/page"
    prs.save(str(path))
    return path


def test_a_linked_picture_is_never_fetched(tmp_path, listener):
    """LibreOffice fetches a picture linked by URL while it converts: the copy it gets has no external links."""
    url, seen = listener
    original = linked_deck(tmp_path / ("e" * 64 + ".pptx"), url)
    assert slide_images.without_external_links(original, tmp_path / "copy.pptx") == 2  # the picture, the link
    if slide_images.office() is not None:
        image = slide_images.render_slide_image(original, 1, ["revenue"])
        assert image.page_count == 1 and image.highlighted_chars >= len("revenue")
    assert seen == []


@needs_office
def test_a_view_waiting_for_another_conversion_is_drawn_later_not_given_up(tmp_path, monkeypatch):
    original = deck(tmp_path / ("9" * 64 + ".pptx"))
    monkeypatch.setattr(slide_images, "WAIT_FOR_OTHER_S", 0.01)
    # another tab's conversion under way
    with slide_images._converting, pytest.raises(slide_images.Busy, match="busy with another presentation"):
        slide_images.preview_pdf(original)
    assert not slide_images.failed(original)  # not remembered as a failure: the next view converts it
    assert slide_images.render_slide_image(original, 3, ["revenue"]).page_count == 3
