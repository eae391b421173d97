"""The Streamlit app through streamlit.testing's AppTest, with the hashing embedder and a tmp data dir per test.

Uploads go through the real file_uploader widget (AppTest 1.67 drives it), questions through chat_input;
Gemini mode runs against the local stub server in testing/gemini_stub.py.
"""

from __future__ import annotations

import io

import pytest
from streamlit.testing.v1 import AppTest

from testing.gemini_stub import GeminiStub, StubReply, docagent_responder
from tests.helpers.paths import REPO
from wiring import DEFAULT_GEMINI_MODEL, FALLBACK_GEMINI_MODELS

TIMEOUT = 90  # the first run in a process imports chromadb and langgraph
SECRET = "AIza-test-secret-key-0123456789"

ZEPHYR = (b"Zephyr project report.\n\nThe Zephyr project reduced energy use by 37 percent in 2023.\n\n"
          b"Heat pumps were supplied by Nordvarme AS.\n")
ORBIT = b"Orbit notes.\n\nThe Orbit satellite launched in May 2021 from Kourou.\n"


@pytest.fixture
def app(tmp_path, monkeypatch):
    """A fresh app (offline: no key in the environment) with its own data directory."""
    return start_app(tmp_path, monkeypatch)


def start_app(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "DOCAGENT_GEMINI_BASE_URL", "CHROMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT)
    return at.run()


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    """Drop files on the uploader, wait until the server's ingestion queue has indexed them, redraw."""
    at.file_uploader[0].set_value([(name, data, "application/octet-stream") for name, data in files])
    return settle(at.run())


def settle(at: AppTest) -> AppTest:
    """Wait (bounded) until the ingestion queue the app holds in st.cache_resource is idle, then redraw."""
    import wiring
    from ui import resources

    queue = resources.load_queue(wiring.Config.from_env())  # the app's queue, cached in st.cache_resource
    assert queue.wait(lambda items: all(i.finished for i in items), TIMEOUT), [i.state for i in queue.items()]
    return at.run()


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input[0].set_value(question)
    return at.run()


def texts(block) -> list[str]:
    """Every markdown/caption/alert/html text under `block`."""
    out = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "html"):
        out += [e.value for e in getattr(block, kind)]
    return out


def plain(markdown: str) -> str:
    """Markdown from md_text with its backslash escapes removed: the text the reader sees."""
    return markdown.replace("\\", "")


def no_failures(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def docx_bytes(*paragraphs: str) -> bytes:
    from docx import Document

    doc = Document()
    for p in paragraphs:
        doc.add_paragraph(p)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def xlsx_bytes() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    ws = book.active
    ws.title = "Costs"
    ws.append(["item", "cost_eur"])
    for row in (["heat pumps", 2100000], ["insulation", 1500000], ["monitoring", 600000]):
        ws.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_without_key_the_offline_mode_is_shown(app):
    no_failures(app)
    assert any("Offline (extractive)" in m.value and "badge" in m.value for m in app.markdown)
    assert any("Offline mode" in i.value for i in app.info)
    assert app.text_input(key="gemini_key").proto.type == app.text_input(key="gemini_key").proto.PASSWORD
    # Settings say what answers, as the badge does, and why it is not Gemini although Gemini is chosen
    in_use = [m.value for m in app.sidebar.markdown if "**In use:**" in m.value]
    assert in_use == ["**In use:** Offline (extractive) — add a Gemini API key below for written answers."]


def test_empty_library_asks_for_documents_and_disables_the_chat(app):
    assert any("No documents yet" in i.value for i in app.sidebar.info)
    assert any("Add documents in the sidebar" in i.value for i in app.main.info)
    assert app.chat_input[0].proto.disabled
    assert all(b.disabled for b in app.button if b.key and b.key.startswith("example_"))


def test_upload_indexes_files_and_lists_them(app):
    at = upload(app, ("zephyr.txt", ZEPHYR), ("costs.xlsx", xlsx_bytes()))
    no_failures(at)
    lines = [m.value for m in at.sidebar.markdown]
    assert any("**zephyr.txt** — indexed (1 chunk, 6 lines" in line for line in lines), lines
    assert any("**costs.xlsx** — indexed" in line and "1 sheet" in line for line in lines), lines
    assert sorted(c.label for c in at.sidebar.checkbox) == ["costs.xlsx", "zephyr.txt"]
    captions = [c.value for c in at.sidebar.caption]
    assert any(c.startswith("XLSX · 1 sheet · 1 chunk") for c in captions), captions
    assert "2 documents" in " ".join(captions)
    assert not at.chat_input[0].proto.disabled


def test_a_set_aside_queue_file_and_a_full_disk_are_said_in_the_queue_panel(tmp_path, monkeypatch):
    queue_dir = tmp_path / "data" / "queue"
    queue_dir.mkdir(parents=True)
    (queue_dir / "01795700000000000000-0badc0de.json").write_text('{"entry_id": "../../outside/x", "seq": 1}')
    (queue_dir / "01795700000000000000-0badc0de.upload").write_bytes(b"someone's bytes")
    at = start_app(tmp_path, monkeypatch)  # the queue folder as a tampered run left it
    no_failures(at)
    warnings = [w.value for w in at.sidebar.warning]
    assert any("set aside as **01795700000000000000-0badc0de.json.damaged**" in w and "upload is kept" in w
               for w in warnings), warnings
    import wiring
    from advanced_retrieval.ingest import Pause
    from ui import resources

    queue = resources.load_queue(wiring.Config.from_env())
    with queue._cond:  # as the worker leaves it when the disk refused a write (tests/advanced_retrieval/ingest)
        queue._pause = Pause("Chroma at x failed: database or disk is full")
    at.file_uploader[0].set_value([("zephyr.txt", ZEPHYR, "application/octet-stream")])
    at = at.run()
    no_failures(at)
    errors = [plain(e.value) for e in at.sidebar.error]
    assert any(e.startswith("**The disk is full**: 1 file waits, its upload kept. Free some disk space and start "
                            "the program again") for e in errors), errors
    assert "Paused: the disk is full · 1 file waits" in [c.value for c in at.sidebar.caption]


def test_uploads_are_processed_once_and_a_second_copy_is_a_duplicate(app):
    at = upload(app, ("zephyr.txt", ZEPHYR))
    assert at.session_state.uploader_key == 1 and len(at.session_state.seen_uploads) == 1
    at.run()
    assert at.session_state.uploader_key == 1  # a rerun does not ingest again
    at = upload(at, ("copy.txt", ZEPHYR))
    assert any("**copy.txt** — duplicate of zephyr.txt (skipped)" in m.value for m in at.sidebar.markdown)
    assert [c.label for c in at.sidebar.checkbox] == ["zephyr.txt"]


def test_a_bad_file_gets_its_reason_and_the_batch_goes_on(app):
    at = upload(app, ("broken.pdf", b"this is not a PDF"), ("empty.txt", b""), ("orbit.txt", ORBIT))
    no_failures(at)
    lines = " ".join(m.value for m in at.sidebar.markdown)
    assert "**broken.pdf** — failed: " in lines and "**empty.txt** — failed: " in lines
    assert "**orbit.txt** — indexed" in lines
    assert [c.label for c in at.sidebar.checkbox] == ["orbit.txt"]
    assert not at.error


def test_ask_gives_a_cited_answer_with_sources_and_reasoning(app):
    at = ask(upload(app, ("zephyr.txt", ZEPHYR), ("orbit.txt", ORBIT)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assistant = [m for m in at.chat_message if m.name == "assistant"][0]
    answer = " ".join(m.value for m in assistant.markdown)
    assert "37 percent" in answer and "[1]" in answer
    assert [t.label for t in assistant.tabs] == ["Sources (1)", "Source viewer", "Reasoning"]
    sources = " ".join(h.value for h in assistant.tabs[0].get("html"))
    assert "zephyr.txt" in sources and "<mark>energy</mark>" in sources and "score " in sources
    reasoning = " ".join(m.value for m in assistant.tabs[2].markdown)
    assert "**Understood as:** How much did Zephyr reduce energy use?" in reasoning
    assert ":green-badge[supported]" in reasoning and "**Confidence:**" in reasoning
    steps = assistant.tabs[2].dataframe[0].value
    assert list(steps["step"]) == ["Analyse", "Decompose", "Retrieve", "Synthesise", "Verify"]
    assert any(c.value.startswith("Offline (extractive) · confidence") for c in assistant.caption)


def test_history_is_redrawn_and_new_chat_keeps_the_library(app):
    at = ask(upload(app, ("zephyr.txt", ZEPHYR)), "Who supplied the heat pumps?")
    at.run()  # a rerun redraws the conversation from session state
    assert [m.name for m in at.chat_message] == ["user", "assistant"]
    assert any("Nordvarme" in m.value for m in at.chat_message[1].markdown)
    at.button(key="new_chat").click().run()
    assert not at.chat_message and [c.label for c in at.sidebar.checkbox] == ["zephyr.txt"]
    assert any(b.key == "example_0" and not b.disabled for b in at.button)


def test_example_question_is_asked_when_clicked(app):
    at = upload(app, ("zephyr.txt", ZEPHYR))
    at.button(key="example_0").click().run()  # one document: one suggestion, its summary
    no_failures(at)
    assert [m.name for m in at.chat_message] == ["user", "assistant"]


def test_document_text_is_never_rendered_as_html(app):
    evil = "<script>alert('x')</script> The Zephyr budget was <b>large</b> and $5 $6."
    at = ask(upload(app, ("evil.docx", docx_bytes("Zephyr budget notes.", evil))), "What was the Zephyr budget?")
    no_failures(at)
    html_out = " ".join(h.value for h in at.html)
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html_out
    assert "<script>" not in html_out and "<b>large" not in html_out
    answer = " ".join(m.value for m in at.chat_message[1].markdown)
    assert "&lt;script>" in answer and "<script>" not in answer and "\\$5" in answer


def test_ticked_documents_scope_the_question(app):
    at = upload(app, ("zephyr.txt", ZEPHYR), ("orbit.txt", ORBIT))
    at.sidebar.checkbox[0].check().run()  # orbit.txt (sorted by name)
    at = ask(at, "How much did Zephyr reduce energy use?")
    no_failures(at)
    sources = " ".join(h.value for h in at.chat_message[1].tabs[0].get("html"))
    assert "zephyr.txt" not in sources


def test_delete_one_document_after_its_confirmation(app):
    at = upload(app, ("zephyr.txt", ZEPHYR), ("orbit.txt", ORBIT))
    delete = [b for b in at.sidebar.button if b.key and b.key.startswith("delete_")][0]
    assert delete.label == "Delete orbit.txt"  # the name a screen reader announces (shown as the icon alone)
    at = delete.click().run()
    assert any("Delete **orbit.txt** from the library?" in w.value for w in at.sidebar.warning)
    at = next(b for b in at.sidebar.button if b.key.startswith("cancel_delete_")).click().run()
    assert len(at.sidebar.checkbox) == 2 and not at.sidebar.warning
    at = next(b for b in at.sidebar.button if b.key.startswith("delete_") and "orbit" in b.label).click().run()
    at = next(b for b in at.sidebar.button if b.key.startswith("confirm_delete_")).click().run()
    no_failures(at)
    assert [c.label for c in at.sidebar.checkbox] == ["zephyr.txt"]
    assert any("Deleted orbit.txt" in s.value for s in at.sidebar.success)


def test_clear_library_asks_for_confirmation(app):
    at = upload(app, ("zephyr.txt", ZEPHYR), ("orbit.txt", ORBIT))
    at = at.sidebar.button(key="clear").click().run()
    assert any("Delete all 2 documents" in w.value for w in at.sidebar.warning)
    at = at.sidebar.button(key="clear_cancel").click().run()
    assert len(at.sidebar.checkbox) == 2
    assert any("**zephyr.txt** — indexed" in m.value for m in at.sidebar.markdown)
    at = at.sidebar.button(key="clear").click().run()
    at = at.sidebar.button(key="clear_yes").click().run()
    no_failures(at)
    assert not at.sidebar.checkbox and any("No documents yet" in i.value for i in at.sidebar.info)
    # the queue's green "indexed" lines went with the documents they were about
    assert not [m.value for m in at.sidebar.markdown if "— indexed" in m.value]
    assert not [c.value for c in at.sidebar.caption if "indexed" in c.value]


def test_sheet_source_is_shown_as_a_table(app):
    at = ask(upload(app, ("costs.xlsx", xlsx_bytes())), "What did the heat pumps cost?")
    no_failures(at)
    viewer = at.chat_message[1].tabs[1]
    table = viewer.dataframe[0].value
    assert list(table.columns) == ["A · item", "B · cost_eur"] and "heat pumps" in list(table["A · item"])


def test_word_source_shows_the_passage_with_its_neighbours(app):
    paragraphs = [f"Paragraph {i}: " + " ".join(f"filler{i}word{j}" for j in range(120)) for i in range(4)]
    paragraphs[2] = "The Zephyr retrofit was signed by Ada Lovelace in 2022. " + paragraphs[2]
    at = ask(upload(app, ("long.docx", docx_bytes(*paragraphs))), "Who signed the Zephyr retrofit?")
    no_failures(at)
    viewer_html = " ".join(h.value for h in at.chat_message[1].tabs[1].get("html"))
    assert "Ada Lovelace" in viewer_html
    assert 'class="text neighbour"' in viewer_html  # the chunks before/after, greyed


def test_engine_failure_is_a_short_message_not_a_traceback(app, monkeypatch):
    from agentic_rag import Agent

    def broken(self, question, **kwargs):
        raise RuntimeError("the index went away")

    at = upload(app, ("zephyr.txt", ZEPHYR))
    with monkeypatch.context() as patch:  # no seam makes the real engine crash on demand
        patch.setattr(Agent, "ask", broken)
        at = ask(at, "Anything?")
    no_failures(at)
    assert any(plain(e.value) == "RuntimeError: the index went away" for e in at.error)
    at.run()
    assert not at.exception and any("the index went away" in e.value for e in at.error)  # kept in the history


@pytest.fixture
def stub():
    with GeminiStub(responder=docagent_responder) as server:
        yield server


def gemini_app(tmp_path, monkeypatch, stub, key: str | None) -> AppTest:
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    monkeypatch.setenv("DOCAGENT_GEMINI_BASE_URL", stub.base_url)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("DOCAGENT_GEMINI_MODEL", raising=False)
    if key:
        monkeypatch.setenv("GOOGLE_API_KEY", key)
    else:
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()


def test_gemini_mode_with_a_key_in_the_environment(tmp_path, monkeypatch, stub):
    at = gemini_app(tmp_path, monkeypatch, stub, SECRET)
    assert any(f"Gemini · {DEFAULT_GEMINI_MODEL}" in m.value for m in at.markdown)
    assert not any("Offline mode" in i.value for i in at.info)
    assert not at.text_input  # no key field when the environment has one
    at = ask(upload(at, ("zephyr.txt", ZEPHYR)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assert stub.requests and all(r.api_key == SECRET for r in stub.requests)
    assert any("[1]" in m.value for m in at.chat_message[1].markdown)
    assert any(c.value.startswith("Gemini · confidence") for c in at.chat_message[1].caption)
    assert not any(SECRET in t for t in texts(at))


def test_a_key_typed_in_the_sidebar_is_used_and_never_shown(tmp_path, monkeypatch, stub):
    at = gemini_app(tmp_path, monkeypatch, stub, None)
    at.text_input(key="gemini_key").input(SECRET).run()
    assert any(f"Gemini · {DEFAULT_GEMINI_MODEL}" in m.value for m in at.markdown)
    at = ask(upload(at, ("zephyr.txt", ZEPHYR)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assert stub.requests and stub.requests[-1].api_key == SECRET
    assert not any(SECRET in t for t in texts(at))
    at.toggle(key="offline").set_value(True).run()
    assert any("Offline (extractive)" in m.value for m in at.markdown)


def test_gemini_failure_falls_back_offline_with_a_warning(tmp_path, monkeypatch, stub):
    at = upload(gemini_app(tmp_path, monkeypatch, stub, SECRET), ("zephyr.txt", ZEPHYR))
    stub.responder = lambda request: StubReply(status=500, message="backend exploded")
    at = ask(at, "How much did Zephyr reduce energy use?")
    no_failures(at)
    assistant = at.chat_message[1]
    assert any("37 percent" in m.value for m in assistant.markdown)
    assert assistant.warning and not at.error
    assert not any(SECRET in t for t in texts(at))


@pytest.fixture
def originals(monkeypatch):
    """Stored originals by doc_id (the sha256 of the bytes), served as KnowledgeBase.original_path would.

    The knowledge base's own original_path is the lead's to add; until then this stands in for it.
    """
    import hashlib

    from advanced_retrieval import KnowledgeBase

    files: dict[str, object] = {}

    def keep(path):
        files[hashlib.sha256(path.read_bytes()).hexdigest()] = path
        return path.name, path.read_bytes()

    monkeypatch.setattr(KnowledgeBase, "original_path", lambda self, doc_id: files.get(doc_id), raising=False)
    return keep


def test_pdf_source_is_the_page_image_with_the_passage_highlighted(app, originals, tmp_path):
    from tests.helpers.documents import write_pdf

    pdf = tmp_path / "report.pdf"
    write_pdf(pdf, [["Cover page of the report."], ["Results", "The Zephyr project reduced energy use by 37 percent."]])
    at = ask(upload(app, originals(pdf)), "How much did the Zephyr project reduce energy use?")
    no_failures(at)
    viewer = at.chat_message[1].tabs[1]
    band, page = viewer.image  # opened on the passage's band of the page; the whole page in an expander
    assert band.captions[0].startswith("Page 2 of 2 — the passage is highlighted (the part of the page around it")
    assert page.captions == ["Page 2 of 2"] and band.value[0] and page.value[0]
    assert [e.label for e in viewer.expander] == ["Whole page 2"]


@pytest.mark.parametrize("office", [True, False], ids=["libreoffice", "without-libreoffice"])
def test_slide_source_shows_the_slide_text_and_its_notes(app, originals, tmp_path, monkeypatch, office):
    from pptx import Presentation

    from ui import slide_images

    if office and slide_images.office() is None:
        pytest.skip("LibreOffice is not installed (apt-get install libreoffice-impress)")
    if not office:
        monkeypatch.setattr(slide_images, "office", lambda: None)

    deck = Presentation()
    for title, body, notes in (("Intro", "Welcome", ""), ("Budget", "The Zephyr retrofit cost 4.2 million euros",
                                                          "Say that <b>heat pumps</b> were half of it.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text, slide.placeholders[1].text = title, body
        if notes:
            slide.notes_slide.notes_text_frame.text = notes
    path = tmp_path / "deck.pptx"
    deck.save(path)
    at = ask(upload(app, originals(path)), "What did the Zephyr retrofit cost?")
    no_failures(at)
    viewer = at.chat_message[1].tabs[1]
    (slide,) = viewer.image  # the slide as LibreOffice draws it, or from its shapes; the asked words marked
    drawn = "" if office else (" (drawn from its text boxes, without its design or pictures: LibreOffice is not "
                               "installed; see the README to install it)")
    assert slide.captions == [f"Slide 2 of 2 — the question's words are highlighted{drawn}"]
    assert "Budget\nThe <mark>Zephyr</mark> <mark>retrofit</mark> <mark>cost</mark>" in viewer.get("html")[0].value
    assert any(m.value == "**Speaker notes:** Say that \\<b\\>heat pumps\\</b\\> were half of it."
               for m in viewer.markdown)


def test_sheet_source_from_the_original_workbook(app, originals, tmp_path):
    path = tmp_path / "costs.xlsx"
    path.write_bytes(xlsx_bytes())
    at = ask(upload(app, originals(path)), "What did the heat pumps cost?")
    no_failures(at)
    viewer = at.chat_message[1].tabs[1]
    table = viewer.dataframe[0].value  # the sheet's column letters and row numbers, values as the file shows them
    assert list(table.columns) == ["A · item", "B · cost_eur"] and list(table.index)[0] == "2"
    assert table.loc["2", "B · cost_eur"] == "2100000"  # "General": no thousands separator in the file either
    captions = [c.value for c in viewer.caption]  # the engine computed it from B2, and marks it
    assert "Cells read: Costs!B2" in captions and "Highlighted: the cells the engine read." in captions


def test_a_library_failure_on_one_file_is_its_line_and_the_batch_goes_on(app, monkeypatch):
    from advanced_retrieval import KnowledgeBase

    real = KnowledgeBase.ingest_file

    def flaky(self, path, *, name=None, **kwargs):
        if name == "zephyr.txt":
            raise RuntimeError("disk on fire")
        return real(self, path, name=name, **kwargs)

    monkeypatch.setattr(KnowledgeBase, "ingest_file", flaky)  # no seam makes the store fail on one file
    at = upload(app, ("zephyr.txt", ZEPHYR), ("orbit.txt", ORBIT))
    no_failures(at)
    lines = [plain(m.value) for m in at.sidebar.markdown]
    assert any("**zephyr.txt** — failed: RuntimeError: disk on fire" in line for line in lines), lines
    assert any("**orbit.txt** — indexed" in line for line in lines)
    assert [c.label for c in at.sidebar.checkbox] == ["orbit.txt"]


def test_streamlit_config_binds_locally_and_states_the_same_upload_limit():
    import tomllib

    from document_processor import Limits
    from document_processor.limits import MB
    from ui.helpers import MAX_UPLOAD_MB

    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["address"] == "127.0.0.1" and config["server"]["headless"] is True
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB == Limits().max_bytes // MB


def test_a_library_owned_by_another_program_opens_read_only_with_the_reason(tmp_path, monkeypatch):
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from vector_db import owner; "
         "owner.claim(sys.argv[2]); print('held', flush=True); sys.stdin.read()",
         str(REPO), str(tmp_path / "data" / "chroma")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
        monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
        for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "DOCAGENT_GEMINI_BASE_URL", "CHROMA_HOST"):
            monkeypatch.delenv(name, raising=False)
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
        no_failures(at)
        warning = plain(" ".join(w.value for w in at.main.warning))
        assert "Read-only library:" in warning and f"pid {holder.pid}" in warning and "CHROMA_HOST" in warning
        at = upload(at, ("zephyr.txt", ZEPHYR))
        no_failures(at)
        shown = plain(" ".join(texts(at.sidebar)))
        assert "**zephyr.txt** — not added: the library is read-only here (see the notice above)" in shown, shown
        assert "one writing program at a time" not in shown  # said once, in the notice
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_the_model_box_lists_the_models_the_key_can_use(tmp_path, monkeypatch, stub):
    at = gemini_app(tmp_path, monkeypatch, stub, SECRET)
    box = at.selectbox(key="model")
    assert box.options == ["gemini-3.8-flash", "gemini-3.6-flash", "gemini-3.1-pro-preview"]  # text models only
    assert box.value == DEFAULT_GEMINI_MODEL and any("3 models available" in c.value for c in at.caption)
    box.set_value("gemini-3.6-flash").run()
    assert any("Gemini · gemini-3.6-flash" in m.value for m in at.markdown)
    at = ask(upload(at, ("zephyr.txt", ZEPHYR)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assert stub.requests and all("/models/gemini-3.6-flash:" in r.path for r in stub.requests)
    assert stub.list_requests == 1  # listed once for this key, not on every rerun


def test_the_model_box_falls_back_to_the_built_in_list_with_the_reason(tmp_path, monkeypatch, stub):
    stub.list_status = 403
    at = gemini_app(tmp_path, monkeypatch, stub, SECRET)
    assert at.selectbox(key="model").options == list(FALLBACK_GEMINI_MODELS)
    note = next(c.value for c in at.caption if "Could not list" in c.value)
    assert "HTTP 403" in note and "built-in list" in note
    assert not any(SECRET in t for t in texts(at))


LOCAL_ENV = ("DOCAGENT_PROVIDER", "DOCAGENT_LOCAL_BASE_URL", "DOCAGENT_LOCAL_MODEL", "DOCAGENT_LOCAL_API_KEY")


@pytest.fixture(autouse=True)
def _no_local_model_configured(monkeypatch):
    """Every test here starts from no provider configured, whatever the developer's shell sets."""
    for name in LOCAL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def local_server():
    from testing.openai_stub import OpenAIStub

    with OpenAIStub() as server:
        yield server


def local_app(tmp_path, monkeypatch, base_url: str, provider: str | None = "local") -> AppTest:
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "DOCAGENT_GEMINI_BASE_URL", "CHROMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DOCAGENT_LOCAL_BASE_URL", base_url)
    monkeypatch.setenv("DOCAGENT_LOCAL_MODEL", "llama3.2")
    if provider:
        monkeypatch.setenv("DOCAGENT_PROVIDER", provider)
    return AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()


def test_a_local_model_answers_and_the_badge_names_it(tmp_path, monkeypatch, local_server):
    at = local_app(tmp_path, monkeypatch, local_server.base_url)
    host = local_server.base_url.split("/")[2]
    assert any(f"Local · llama3.2 @ {host}" in m.value and "badge" in m.value for m in at.markdown)
    assert at.radio(key="provider").value == "local" and not any("Offline mode" in i.value for i in at.info)
    assert any(plain(m.value) == f"**In use:** Local · llama3.2 @ {host}" for m in at.sidebar.markdown)
    assert at.selectbox(key="local_model").options == ["llama3.2", "qwen2.5:3b-instruct"]
    at = ask(upload(at, ("zephyr.txt", ZEPHYR)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    # the answer and its check: a simple standalone question is planned without a call (LOCAL_BUDGETS)
    assert [r.body["model"] for r in local_server.requests] == ["llama3.2"] * 2
    assistant = at.chat_message[1]
    assert any("[1]" in m.value for m in assistant.markdown) and any("37 percent" in t for t in texts(assistant))
    assert not assistant.warning and local_server.list_requests == 1  # listed once, not on every rerun


def test_choosing_a_local_model_in_settings(tmp_path, monkeypatch, local_server):
    at = local_app(tmp_path, monkeypatch, local_server.base_url, provider=None)
    assert at.radio(key="provider").value == "gemini" and local_server.list_requests == 0  # not asked unless chosen
    at.radio(key="provider").set_value("local").run()
    at.selectbox(key="local_model").set_value("qwen2.5:3b-instruct").run()
    assert any("Local · qwen2.5:3b-instruct @" in m.value for m in at.markdown)
    at = ask(upload(at, ("zephyr.txt", ZEPHYR)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assert {r.body["model"] for r in local_server.requests} == {"qwen2.5:3b-instruct"}


def test_a_local_server_that_is_down_is_named_and_the_answer_is_offline(tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    at = local_app(tmp_path, monkeypatch, f"http://127.0.0.1:{port}/v1")
    note = next(w.value for w in at.warning if "could not be reached" in w.value)
    assert "ollama serve" in plain(note) and "\\`" not in note  # shown as code, not as literal backticks
    assert "Server address" in note  # names the field beside it, not only the environment variable
    assert at.selectbox(key="local_model").options == ["llama3.2"]  # the configured model, still offered
    at = ask(upload(at, ("zephyr.txt", ZEPHYR)), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assistant = at.chat_message[1]
    assert any("37 percent" in t for t in texts(assistant))
    assert any("could not be reached" in plain(w.value) for w in assistant.warning) and not at.exception


def test_a_library_that_lost_its_data_offers_the_rebuild_and_does_it(tmp_path, monkeypatch):
    """A lost store is an error with a Rebuild button, never an emptied library; the button reopens the library
    with rebuild=True (which indexes the kept originals again: tests/advanced_retrieval/library/test_restore.py).
    """
    import wiring
    from advanced_retrieval import IngestResult
    from vector_db import LibraryDamaged

    real_open, calls = wiring.open_knowledge_base, []

    def open_knowledge_base(data_dir, *, embedder=None, rebuild=False, **options):
        calls.append(rebuild)
        if not rebuild:
            raise LibraryDamaged(f"the library at {data_dir} lost its data (its index is empty); your files are "
                                 "kept: run `python cli.py rebuild`")
        kb = real_open(data_dir, embedder=embedder, **options)
        kb.rebuilt = [IngestResult("a.txt", "indexed"), IngestResult("b.pdf", "failed", reason="corrupt")]
        return kb

    monkeypatch.setattr(wiring, "open_knowledge_base", open_knowledge_base)
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "lost"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    assert any("lost its data" in e.value for e in at.error) and calls == [False]
    button = next(b for b in at.button if b.key == "rebuild_library")
    at = button.click().run()
    no_failures(at)
    assert calls[-1] is True
    assert any("Library rebuilt from the kept originals: 1 of 2 files indexed again." in s.value for s in at.success)
    assert not at.error


def test_the_chat_answers_while_a_file_is_indexing_and_says_which_one(app, monkeypatch):
    import threading

    import wiring
    from advanced_retrieval import KnowledgeBase
    from ui import resources

    real, entered, release = KnowledgeBase.ingest_file, threading.Event(), threading.Event()

    def slow(self, path, *, name=None, **kwargs):
        if name == "orbit.txt":
            entered.set()
            assert release.wait(TIMEOUT)
        return real(self, path, name=name, **kwargs)

    monkeypatch.setattr(KnowledgeBase, "ingest_file", slow)  # holds one file in the worker, nothing else
    at = upload(app, ("zephyr.txt", ZEPHYR))
    at.file_uploader[0].set_value([("orbit.txt", ORBIT, "text/plain")])
    at.run()
    assert entered.wait(TIMEOUT)
    at = ask(at.run(), "How much did Zephyr reduce energy use?")
    no_failures(at)
    assistant = [m for m in at.chat_message if m.name == "assistant"][0]
    assert "37 percent" in " ".join(m.value for m in assistant.markdown)
    notes = " ".join(plain(c.value) for c in assistant.caption)
    assert "Not searched for this answer: orbit.txt was still being indexed" in notes, notes
    assert any("**orbit.txt** — reading" in plain(p.proto.text) for p in at.sidebar.get("progress")), \
        [p.proto.text for p in at.sidebar.get("progress")]
    queue = resources.load_queue(wiring.Config.from_env())
    assert [i.attempts for i in queue.items() if i.name == "orbit.txt"] == [1]  # not restarted by the question
    release.set()
    at = settle(at)
    assert [c.label for c in at.sidebar.checkbox] == ["orbit.txt", "zephyr.txt"]
    assistant = [m for m in at.chat_message if m.name == "assistant"][0]
    assert "was still being indexed" in " ".join(plain(c.value) for c in assistant.caption)  # kept with it
    fresh = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()  # a reload: saved with the chat
    fresh = next(b for b in fresh.sidebar.button if b.label.startswith("How much did Zephyr")).click().run()
    assert "orbit.txt was still being indexed" in " ".join(plain(c.value) for c in fresh.chat_message[1].caption)


def test_a_chat_is_saved_and_comes_back_in_a_new_session_with_its_answer(app, tmp_path):
    at = ask(upload(app, ("zephyr.txt", ZEPHYR)), "Who supplied the heat pumps?")
    no_failures(at)
    chat_buttons = [b for b in at.sidebar.button if b.key.startswith("chat_") and len(b.key) == 37]  # chat_<uuid>
    assert [b.label for b in chat_buttons] == ["Who supplied the heat pumps?"]
    fresh = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()  # a reload: a new session
    assert not fresh.chat_message
    fresh = next(b for b in fresh.sidebar.button if b.label == "Who supplied the heat pumps?").click().run()
    no_failures(fresh)
    assert [m.name for m in fresh.chat_message] == ["user", "assistant"]
    assistant = fresh.chat_message[1]
    assert any("Nordvarme" in m.value for m in assistant.markdown)
    assert [t.label for t in assistant.tabs] == ["Sources (1)", "Source viewer", "Reasoning"]
    assert any(":green-badge[supported]" in m.value for m in assistant.tabs[2].markdown)


def test_a_citation_of_a_deleted_document_says_so(app):
    at = ask(upload(app, ("zephyr.txt", ZEPHYR)), "Who supplied the heat pumps?")
    at = next(b for b in at.sidebar.button if b.key.startswith("delete_")).click().run()
    at = next(b for b in at.sidebar.button if b.key.startswith("confirm_delete_")).click().run()
    no_failures(at)
    assistant = at.chat_message[1]
    assert any("deleted from the library since" in h.value for h in assistant.tabs[0].get("html"))
    assert any("deleted from the library since" in i.value for i in assistant.tabs[1].info)


def test_a_citation_of_a_replaced_document_says_replaced_not_deleted(app):
    at = ask(upload(app, ("zephyr.txt", ZEPHYR)), "Who supplied the heat pumps?")
    at = upload(at, ("zephyr.txt", ZEPHYR + b"\nA second phase adds rooftop solar panels.\n"))  # a new version
    no_failures(at)
    assert [c.label for c in at.sidebar.checkbox] == ["zephyr.txt"]
    assistant = at.chat_message[1]
    cards = " ".join(h.value for h in assistant.tabs[0].get("html"))
    assert "replaced by a newer version since" in cards and "deleted from the library" not in cards
    assert any("replaced by a newer version since" in i.value for i in assistant.tabs[1].info)


def test_the_scope_is_shown_by_the_chat_box(app):
    at = upload(app, ("zephyr.txt", ZEPHYR), ("orbit.txt", ORBIT))
    assert not any("Asking only about" in c.value for c in at.caption)
    at.sidebar.checkbox[0].check().run()
    assert any("Asking only about orbit.txt" in c.value for c in at.caption)


def test_rename_and_delete_a_chat(app):
    at = ask(upload(app, ("zephyr.txt", ZEPHYR)), "Who supplied the heat pumps?")
    chat_id = at.session_state.chat_id
    title_box = next(t for t in at.sidebar.text_input if t.key.startswith("title_"))
    at = title_box.input("Heat pumps").run()
    at = at.sidebar.button(key="chat_rename").click().run()
    assert any(b.label == "Heat pumps" for b in at.sidebar.button) and chat_id
    at = at.sidebar.button(key="chat_delete").click().run()
    at = at.sidebar.button(key="chat_delete_yes").click().run()
    no_failures(at)
    assert not any(b.label == "Heat pumps" for b in at.sidebar.button) and not at.chat_message
