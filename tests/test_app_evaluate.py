"""The app's Evaluate page (ui/evaluate.py) through AppTest: the bundled sample end to end, and a bad dataset's error."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.paths import REPO
from ui import answer_view as av

TIMEOUT = 180  # the sample indexes five documents and answers 14 questions offline


@pytest.fixture
def app(tmp_path, monkeypatch):
    """A fresh offline app with its own data directory, switched to the Evaluate page."""
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "DOCAGENT_GEMINI_BASE_URL", "CHROMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    at.radio(key="page").set_value("Evaluate")
    return at.run()


def no_failures(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_chat_is_the_default_page(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCAGENT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DOCAGENT_FAKE_EMBEDDER", "1")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT).run()
    no_failures(at)
    assert at.radio(key="page").value == "Chat"
    assert len(at.chat_input) == 1
    assert "eval_run" not in [b.key for b in at.button]


def test_evaluate_page_has_no_chat_and_no_report_yet(app):
    no_failures(app)
    assert len(app.chat_input) == 0
    assert app.button(key="eval_run").label == "Run evaluation"
    assert not app.metric and not app.dataframe


def test_sample_dataset_runs_in_its_own_library_and_shows_metrics_table_and_answers(app, tmp_path):
    app.multiselect(key="eval_strategies").set_value(["hybrid", "bm25"])
    app.button(key="eval_run").click()
    at = app.run()
    no_failures(at)
    figures = metrics(at)
    for label in ("hit@1", "hit@5", "MRR@10", "Accuracy", "Refusal accuracy", "Citation validity",
                  "p50 seconds", "LLM calls/question"):
        assert label in figures, label
    strategies = [m.value for m in at.metric if m.label == "Strategy"]
    assert strategies == ["hybrid", "bm25"]
    passed, scored = (int(n) for n in figures["Passed"].split("/"))
    assert 0 < passed <= scored <= 14
    table = next(d.value for d in at.dataframe if "question" in d.value.columns)
    assert list(table.columns) == ["id", "kind", "question", "first-hit rank", "result", "reason"]
    assert len(table) == 14 and (table["result"] == "pass").sum() == passed
    assert [c.label for c in at.sidebar.checkbox] == []  # the user's library is not changed by the sample ...
    from vector_db import HashingEmbedder
    from wiring import open_knowledge_base  # ... which has a library of its own under the data directory

    sample = open_knowledge_base(tmp_path / "data" / "evaluation-sample", embedder=HashingEmbedder(), environ={})
    assert len(sample.documents()) == 5 and any("report.pdf" in d.file_name for d in sample.documents())
    assert at.session_state["eval_report"].dataset == "sample.jsonl"
    assert "None" not in table.astype(str).to_numpy().ravel().tolist()  # no rank or reason shows as "None"
    at.selectbox(key="eval_question").set_value(1)
    at = at.run()
    no_failures(at)
    assert any("median blade vibration" in m.value for m in at.markdown)
    assert any(":green-badge[pass]" in m.value for m in at.markdown)  # the question's verdict
    assert any("**Confidence:**" in m.value for m in at.markdown)  # its verified claims
    steps = next(d.value for d in at.dataframe if "step" in d.value.columns)
    assert set(av.STEP_TITLES.values()) <= set(steps["step"]), list(steps["step"])


def test_bad_dataset_upload_shows_the_line(app):
    app.radio(key="eval_source").set_value("Upload a JSONL file")
    at = app.run()
    good = '{"id": "q1", "question": "What is here?"}\n'
    at.file_uploader(key="eval_upload").set_value([("broken.jsonl", (good + "{not json\n").encode(), "text/plain")])
    at = at.run()
    at.button(key="eval_run").click()
    at = at.run()
    no_failures(at)
    errors = [e.value for e in at.error]
    assert any("broken.jsonl line 2" in e and "not valid JSON" in e for e in errors), errors
    assert "eval_report" not in at.session_state
    assert not at.metric


def test_non_utf8_upload_is_refused(app):
    app.radio(key="eval_source").set_value("Upload a JSONL file")
    at = app.run()
    at.file_uploader(key="eval_upload").set_value([("latin.jsonl", b'{"question": "caf\xe9"}\n', "text/plain")])
    at = at.run()
    at.button(key="eval_run").click()
    at = at.run()
    no_failures(at)
    assert any("not UTF-8" in e.value for e in at.error)
