"""The Evaluate page: run a JSONL question set (uploaded or the bundled sample) through retrieval and the engine,
and show the metrics, the question table and any question's full answer."""

from __future__ import annotations

import streamlit as st

import wiring
from ui import answer_view as av
from ui import helpers as ui
from ui import resources
from ui import runtime as rt
from ui.seams import Library

SAMPLE_LABEL, UPLOAD_LABEL = "Bundled sample", "Upload a JSONL file"


def evaluate_page(kb: Library, config: wiring.Config, settings: rt.Settings) -> None:
    """Run a JSONL question set (uploaded or the bundled sample) and show its metrics, table and answers."""
    from advanced_retrieval import STRATEGIES

    st.header("Evaluate", anchor=False)  # h2 under the page title (h1): no level skipped
    st.caption("Each question is retrieved with every chosen strategy (hit@k, MRR@10 against its gold pages) and "
               "answered by the agent with the first one (key facts, refusals, citations).")
    source = st.radio("Dataset", (SAMPLE_LABEL, UPLOAD_LABEL), horizontal=True, key="eval_source")
    upload = None
    if source == UPLOAD_LABEL:
        upload = st.file_uploader("Dataset (JSONL: one question per line)", type=["jsonl", "json", "txt"],
                                  key="eval_upload")
    else:
        st.caption("The sample's five documents are generated and indexed in a library of their own when it "
                   "runs; your library is not changed.")
    strategies = st.multiselect("Retrieval strategies", list(STRATEGIES), default=["hybrid"], key="eval_strategies",
                                help="Answers use the first one.")
    if st.button("Run evaluation", type="primary", icon=":material/play_arrow:", key="eval_run",
                 disabled=not strategies or (source == UPLOAD_LABEL and upload is None)):
        run_evaluation(kb, config, settings, upload, strategies)
    report = st.session_state.get("eval_report")
    if report is not None:
        show_report(report)


def eval_questions(upload) -> tuple[list, str] | None:
    """The questions to run; None after showing why not."""
    from evaluation import SAMPLE_DATASET, DatasetError, load_dataset, parse_dataset

    try:
        if upload is None:
            return load_dataset(SAMPLE_DATASET), SAMPLE_DATASET.name
        return parse_dataset(upload.getvalue().decode("utf-8"), source=upload.name), upload.name
    except DatasetError as error:
        st.error(f"Bad dataset: {ui.md_text(str(error))}", icon=":material/error:")
    except UnicodeDecodeError:
        st.error(f"Bad dataset: {ui.md_text(upload.name)} is not UTF-8 text.", icon=":material/error:")
    return None


def sample_library(config: wiring.Config):
    """The sample's own library with its five generated documents indexed (already indexed ones come back as
    duplicates); None after showing why it could not be opened or filled."""
    import tempfile

    from evaluation import make_sample_corpus

    try:
        kb = resources.sample_library(config)
        with tempfile.TemporaryDirectory() as folder, st.spinner("Indexing the sample's documents…"):
            results = kb.ingest_many(make_sample_corpus(folder))
    except resources.library_errors() as error:
        st.error(f"The sample's library could not be opened: {ui.md_text(ui.error_reason(error))}",
                 icon=":material/error:")
        return None
    failed = [r for r in results if r.status == "failed"]
    for r in failed:
        st.warning(f"{ui.md_text(r.file_name)} could not be indexed: {ui.md_text(r.reason)}")
    return kb


def run_evaluation(kb: Library, config: wiring.Config, settings: rt.Settings, upload,
                   strategies: list[str]) -> None:
    """Run the dataset with a progress bar, keep the report in this tab's session state, redraw the page. The
    bundled sample runs in a library of its own; an uploaded set asks the user's library."""
    from evaluation import run_eval

    loaded = eval_questions(upload)
    if loaded is None:
        return
    questions, name = loaded
    if not questions:
        st.warning("The dataset has no questions.")
        return
    try:
        if upload is None:
            kb = sample_library(config)
            if kb is None:
                return
            agent = resources.engine_over(kb, config, settings)
        else:
            agent = resources.session_engine(config, settings)
    except (ValueError, ImportError, *resources.library_errors()) as error:
        st.error(f"The engine could not start: {ui.md_text(str(error))}", icon=":material/error:")
        return
    bar = st.progress(0.0, text=f"0/{len(questions)} questions")

    def progress(done: int, total: int, question: str) -> None:
        bar.progress(done / total, text=f"{done}/{total} — {ui.md_text(question[:80])}")

    st.session_state.eval_report = run_eval(questions, kb, agent, strategies=strategies, k=settings.k,
                                            progress=progress, dataset=name)
    st.rerun()  # redraws the report from session state


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _number(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def show_report(report) -> None:
    """Summary figures, the question table and one question's full answer."""
    st.markdown(f"##### {ui.md_text(report.dataset)}: {ui.plural(len(report.questions), 'question')}, "
                f"k={report.k}, answers with {report.answer_strategy}")
    for m in report.retrieval:
        cols = st.columns(4)
        cols[0].metric("Strategy", m.strategy)
        cols[1].metric("hit@1", _rate(m.hit_at.get(1)))
        cols[2].metric("hit@5", _rate(m.hit_at.get(5)))
        cols[3].metric("MRR@10", _number(m.mrr, 3))
    answer_metrics(report)
    st.dataframe(question_rows(report), hide_index=True,  # ranks as text: "—" where none was found, not "None"
                 column_config={"reason": st.column_config.TextColumn(width="large"),
                                "question": st.column_config.TextColumn(width="medium")})
    question_detail(report)


def answer_metrics(report) -> None:
    """Pass count, accuracy, refusal accuracy, citation validity, p50 seconds and LLM calls per question."""
    a, c = report.answers, report.cost
    if a is None:
        return
    passed = sum(1 for r in report.questions if r.passed)
    cols = st.columns(6)
    cols[0].metric("Passed", f"{passed}/{a.scored}")
    cols[1].metric("Accuracy", _rate(a.accuracy))
    cols[2].metric("Refusal accuracy", _rate(a.refusal_accuracy), help=f"{a.unanswerable} unanswerable")
    cols[3].metric("Citation validity", _rate(a.citation_validity), help=f"{a.citations_scored} answers scored")
    cols[4].metric("p50 seconds", _number(c.seconds_p50 if c else None))
    cols[5].metric("LLM calls/question", _number(c.llm_calls_per_question if c else None, 1))


def question_rows(report) -> list[dict]:
    """One table row per question; the rank is the first gold chunk's under the answering strategy."""
    verdict = {True: "pass", False: "fail", None: "—"}

    def rank(r) -> str:
        found = r.ranks.get(report.answer_strategy)
        return str(found) if found is not None else "—" if r.question.gold else "no gold"

    return [{"id": r.question.id, "kind": r.question.kind or "—", "question": r.question.question,
             "first-hit rank": rank(r), "result": verdict[r.passed],
             "reason": r.reason or "; ".join(r.errors) or "—"} for r in report.questions]


def question_detail(report) -> None:
    """A selectbox of the questions; the chosen one's verdict, answer (escaped), sources and reasoning."""
    results = report.questions
    index = st.selectbox("Open a question", range(len(results)), key="eval_question",
                         format_func=lambda i: f"{results[i].question.id} — {results[i].question.question[:90]}")
    if index is None:
        return
    result = results[index]
    st.markdown(f"**{ui.md_text(result.question.question)}**")
    verdict = {True: ":green-badge[pass]", False: ":red-badge[fail]", None: ":gray-badge[not scored]"}[result.passed]
    st.markdown(f"{verdict} {ui.md_text(result.reason or '')}")
    for error in result.errors:
        st.error(ui.md_text(error), icon=":material/error:")
    answer = result.answer
    if answer is None:
        return
    sources, reasoning = st.tabs([f"Answer and sources ({len(answer.citations)})", "Reasoning"])
    with sources:
        st.markdown(ui.md_safe(answer.answer) or "_(no answer)_")
        for citation in answer.citations:
            st.caption(ui.md_text(ui.citation_label(citation)))
        if result.citation_reason:
            st.caption(f"Citations: {ui.md_text(result.citation_reason)}")
    with reasoning:
        st.markdown("##### Verification")
        st.markdown(av.claims_markdown(answer))
        st.markdown("##### Steps")
        st.dataframe(av.trace_rows(answer.trace), hide_index=True)
        with st.expander("Every step's details (JSON)"):
            st.json(list(answer.trace), expanded=False)
