"""agentic_rag.language.quotes: units, windows and the passages the offline brain quotes."""

from __future__ import annotations

import numpy as np
import pytest

from advanced_retrieval import Hit
from agentic_rag.brains.offline import DEFAULT_QUOTES, QUOTE_LIMITS
from agentic_rag.language.question_rules import classify
from agentic_rag.language.quotes import find_quotes, units_of
from agentic_rag.types import ContextBlock
from tests.helpers.agent import _block, make_chunk


def test_a_window_stating_the_count_gets_its_cosine_even_when_it_lacks_the_other_words(monkeypatch):
    from agentic_rag.language.quotes import EMBED_TOP, Ask, Window, add_cosine

    ask = Ask.of("How many attention heads does the base Transformer use?")
    block = ContextBlock(1, Hit(make_chunk("d", "a.pdf", "x", page=1), 1.0, 1))
    wordy = [Window(block, (), own=0.8, score=2.0 - i / 100, number=True) for i in range(EMBED_TOP + 2)]
    count = Window(block, (), own=0.5, score=1.0, number=True, near=True)
    calls = []

    class Embedder:
        def embed(self, texts):
            calls.append(list(texts))
            return np.ones((len(texts), 3)) / np.sqrt(3)

        def embed_query(self, text):
            return np.ones(3) / np.sqrt(3)

    monkeypatch.setattr("agentic_rag.language.quotes.render", lambda w: f"window {w.score}")  # units are left empty here
    out = add_cosine(ask, [*wordy, count], Embedder())
    assert len(calls[0]) == EMBED_TOP + 1  # the best EMBED_TOP by words, and the one stating the count
    assert next(w for w in out if w.near).cosine is not None
    assert sum(w.cosine is not None for w in out) == EMBED_TOP + 1


def test_units_keep_rows_with_their_header_and_sentences_whole():
    sheet = "| Site | Technicians | Supervisor |\n| --- | --- | --- |\n| Halden | 12 | Ingrid |\n| Smola | 8 | Per |"
    units = units_of(sheet)
    assert [u.text for u in units] == ["| Halden | 12 | Ingrid |", "| Smola | 8 | Per |"]
    assert {u.header for u in units} == {"| Site | Technicians | Supervisor |"}
    pdf = ("Results\nOn the ImageNet dataset we evaluate residual nets with a depth of up to 152\nlayers. See the "
           "note.\n3\nWe report two model sizes:\nBASE (L=12) and LARGE (L=24).\nTransformer (big) 28.4 41.8 2.3\n"
           "Label Smoothing During training, we employed label smoothing of value ls = 0.1.")
    texts = [u.text for u in units_of(pdf)]
    assert "On the ImageNet dataset we evaluate residual nets with a depth of up to 152 layers." in texts
    assert "3" not in texts  # a footnote mark is not a sentence
    assert "We report two model sizes: BASE (L=12) and LARGE (L=24)." in texts  # a lead-in keeps what it leads to
    assert "Transformer (big) 28.4 41.8 2.3" in texts  # a flattened table row stays a row of its own
    assert texts[-1] == "Label Smoothing During training, we employed label smoothing of value ls = 0.1."
    flattened = " ".join(f"Model{i} {i}.1 {i}.2 {i}.3" for i in range(60)) + " and the answer is 42"
    pieces = units_of(flattened)
    assert len(pieces) > 3 and all(len(u.text) <= 300 for u in pieces)
    assert pieces[0].cut_after and not pieces[0].cut_before and pieces[-1].cut_before and not pieces[-1].cut_after
    assert units_of("") == []


ADAM = ("Algorithm 1: Adam, our proposed algorithm for stochastic optimization. Good default settings for the "
        "tested machine learning problems are α = 0.001, β1 = 0.9, β2 = 0.999 and ε = 10−8. All operations on "
        "vectors are element-wise.")


@pytest.mark.parametrize("question, passage, file, wanted", [
    ("What are the default values of beta1 and beta2 in Adam?", ADAM, "adam.pdf", "β2 = 0.999"),
    ("What was JnJ's revenue in FY2022?", "Worldwide sales were $94.9 billion in fiscal 2022, an increase of "
     "1.3%.", "JOHNSON_JOHNSON_2022_10K.pdf", "$94.9 billion"),
    ("How many parallel attention heads does the base model employ?", "Multi-head attention allows the model to "
     "attend jointly. In this work we employ h = 8 parallel attention layers, or heads. Each has dk = 64.",
     "attention.pdf", "h = 8 parallel attention layers"),
])
def test_alias_matching_answers_what_the_old_gate_refused(question, passage, file, wanted):
    block = _block(1, make_chunk("d", file, passage, page=2))
    quotes = _quotes(question, classify(question), [block])
    assert quotes and quotes[0][0] == 1 and wanted in quotes[0][1], quotes


def test_a_sheet_row_is_quoted_with_its_header_not_the_header_alone():
    sheet = make_chunk("x", "staff.xlsx", "| Site | Technicians | Supervisor |\n| --- | --- | --- |\n"
                       "| Halden | 12 | Ingrid Solberg |\n| Smola | 8 | Per Hansen |", sheet="Staff", cells="A1:C3")
    quotes = _quotes("Who is the supervisor at the Smola site?", "fact", [_block(1, sheet)])
    assert quotes[0] == (1, "| Site | Technicians | Supervisor | … | Smola | 8 | Per Hansen |")
    assert all("Ingrid" not in q for _, q in quotes)


def test_a_long_sentence_is_quoted_whole_and_a_flattened_table_by_its_piece():
    long = ("During training we used a schedule that was tuned over many weeks on several clusters, with a warm-up "
            "phase, a plateau, checkpoint averaging over the last twenty checkpoints, gradient clipping, mixed "
            "precision, an exponential moving average of the weights, a careful choice of batch sizes for each of "
            "the language pairs we report on, and after all of that the label smoothing value we settled on was "
            "0.1.")
    assert 400 < len(long) < 600  # the old quotes stopped at 400 characters, before the answer
    quotes = _quotes("What label smoothing value was used?", "fact", [_block(1, make_chunk(
        "p", "paper.pdf", long, page=8))])
    assert quotes == [(1, long)]
    table = " ".join(f"Model{i} {i}.1 {i}.2 {i}.3" for i in range(60)) + " and label smoothing of value 0.1"
    quotes = _quotes("What label smoothing value was used?", "fact", [_block(1, make_chunk(
        "p", "paper.pdf", table, page=8))])
    assert quotes and quotes[0][1].startswith("… ") and "label smoothing of value 0.1" in quotes[0][1]


def _quotes(question, qtype, blocks, embedder=None):
    """What the offline brain would quote for `question` from `blocks` (language.quotes.find_quotes)."""
    return find_quotes(question, qtype, blocks, embedder, limit=QUOTE_LIMITS.get(qtype, DEFAULT_QUOTES))


def test_off_topic_passages_are_refused_not_quoted(fake_embedder):
    acme = [_block(1, make_chunk("a", "acme.pdf", "Acme Corp annual report. Revenue in 2023 was $5.2 million, up "
                                 "12% from 2022. The company employs 140 people.", page=3))]
    def quotes(question, qtype, blocks):
        return _quotes(question, qtype, blocks, fake_embedder)

    assert quotes("What was the share price of Acme at the end of 2023?", "fact", acme) == []  # no focus
    assert quotes("How much did the Acme audit cost?", "numeric", acme) == []
    assert quotes("What was Initech's revenue in 2023?", "numeric", acme) == []  # a name nobody holds
    assert quotes("What was Acme's revenue in 2023?", "numeric", acme)[0][1].startswith("Revenue in 2023")
    assert quotes("", "fact", acme) == [] and quotes("What was Acme's revenue?", "fact", []) == []


def test_a_document_that_names_what_is_asked_about_wins_over_one_that_does_not():
    blocks = [_block(1, make_chunk("a", "acme.pdf", "Revenue in 2023 was $5.2 million.", page=3)),
              _block(2, make_chunk("g", "globex.docx", "Globex revenue reached $7.9 million in 2023.",
                                   paragraph=2), rank=2)]
    quotes = _quotes("What was Globex's revenue in 2023?", "numeric", blocks)
    assert quotes[0] == (2, "Globex revenue reached $7.9 million in 2023.")


@pytest.mark.parametrize("question", [
    "How soon must a reported outage be acknowledged by the on-call engineer?",
    "How quickly must a reported outage be acknowledged by the on-call engineer?",
])
def test_how_soon_asks_for_a_time_so_the_sentence_stating_one_is_quoted(question):
    runbook = [_block(1, make_chunk("r", "runbook.docx", "Every reported outage must be acknowledged by the on-call "
                                    "engineer before any other work. Escalation follows the severity table. "
                                    "A reported outage is acknowledged within 15 minutes of the alert.", paragraph=4))]
    quotes = _quotes(question, classify(question), runbook)
    assert quotes and "15 minutes" in quotes[0][1]


@pytest.mark.parametrize("question", ["On what date will the dividend be paid?", "What share of sales came from Asia?",
                                      "How long are the records kept?", "How soon is a page answered?"])
def test_questions_asking_a_date_an_amount_or_a_measure_want_a_number(question):
    from agentic_rag.language.quotes import Ask
    assert Ask.of(question).wants_number


def test_a_sibling_of_a_title_the_question_gives_is_not_its_answer(fake_embedder):
    release = [_block(1, make_chunk("o", "orbis_release.pdf", "Revenue grew 9% in the year, said Dana Whitfield, "
                                    "chief executive officer of Orbis. The board met in March.", page=1))]
    # "chief executive officer" holds two of "chief financial officer"'s three words, in place: another office
    assert _quotes("Who is Orbis's chief financial officer?", "fact", release, fake_embedder) == []
    assert "Dana Whitfield" in _quotes("Who is Orbis's chief executive officer?", "fact", release, fake_embedder)[0][1]
    cfo = [_block(1, make_chunk("o", "orbis_release.pdf", "Marco Lind, chief financial officer of Orbis, presented "
                                "the accounts.", page=1))]
    assert "Marco Lind" in _quotes("Who is Orbis's chief financial officer?", "fact", cfo, fake_embedder)[0][1]


class _SameMeaning:
    """An embedder to which every text means the same (cosine 1): only the words decide."""

    def embed(self, texts):
        return np.ones((len(texts), 4)) / 2.0

    def embed_query(self, text):
        return np.ones(4) / 2.0


def test_a_sentence_holding_only_the_names_the_question_gives_is_no_paraphrase_of_its_answer():
    news = [_block(1, make_chunk("o", "orbis_news.pdf", "Orbis Nordic reported record results for the year.", page=2))]
    # close in meaning to any question about Orbis Nordic, but none of what is asked is in it
    assert _quotes("Who is Orbis Nordic's auditor?", "fact", news, _SameMeaning()) == []
    audit = [_block(1, make_chunk("o", "orbis_news.pdf", "Orbis Nordic's accounts were examined by Kessel & Berg, "
                                  "whose audit opinion was unqualified.", page=2))]
    assert "Kessel & Berg" in _quotes("Who is Orbis Nordic's auditor?", "fact", audit, _SameMeaning())[0][1]
