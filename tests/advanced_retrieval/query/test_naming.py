"""advanced_retrieval.query.naming: the documents a question names (file names, titles, short forms, periods)."""

from __future__ import annotations

import numpy as np
import pytest

from advanced_retrieval import BM25Index
from advanced_retrieval.query.naming import Names, _products
from tests.helpers.retrieval import chunk


def test_name_words_come_from_the_file_name_and_title():
    from advanced_retrieval.query.naming import name_words, query_keys

    assert name_words("GENERALMILLS_2020_10K.pdf") == {"generalmills", "2020", "10k", "10"}
    assert {"2022q4", "2022"} <= name_words("JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf")  # a period's pieces
    assert name_words("acme-lease.docx", "The Acme Lease of 2021") == {"acme", "lease", "2021"}
    assert {"general", "mills", "generalmills", "fy2022", "fy", "2022"} <= query_keys("General Mills FY2022 capex")


def records(*names):
    from types import SimpleNamespace

    return [SimpleNamespace(doc_id=f"d{i}", file_name=n, title="") for i, n in enumerate(names)]


def test_the_best_named_documents_win_years_only_tell_siblings_apart():
    from advanced_retrieval.query.naming import Names

    names = Names.of(records("PEPSICO_2021_10K.pdf", "PEPSICO_2022_10K.pdf", "GENERALMILLS_2020_10K.pdf",
                             "3M_2022_10K.pdf"))
    assert names.named("What was PepsiCo's FY2022 capex?") == ("d1",)
    assert names.named("How did PepsiCo's revenue change?") == ("d0", "d1")
    assert names.named("What is General Mills's working capital?") == ("d2",)
    assert names.named("Is 3M capital intensive?") == ("d3",)
    assert names.named("What happened in 2022?") == ()  # a year alone names nothing
    assert names.named("Which 10-K filings mention leases?") == ()  # a word every name shares names nothing
    assert Names.of(records("only.pdf")).named("only") == ()


def filings_index(texts: dict[str, str]) -> BM25Index:
    """A BM25 index with one chunk per document: what the library's text holds, for telling names from words."""
    return BM25Index.build(chunk(text, 1, 0, doc_id=name) for name, text in texts.items())


FILINGS = {  # file stem -> title; every filing's text says "company", "securities", "quarter" and "results"
    "3M_2022_10K": "10-K - 02/08/2023 - 3M Company", "AMERICANEXPRESS_2022_10K": "",
    "AMERICANWATERWORKS_2021_10K": "", "AMERICANWATERWORKS_2022_10K": "",
    "JOHNSON_JOHNSON_2022_10K": "", "JOHNSON_JOHNSON_2022Q4_EARNINGS": "", "JPMORGAN_2023Q2_10Q": "CORP Q2 2023",
    "VERIZON_2022_10K": "UNITED STATES SECURITIES AND EXCHANGE COMMISSION", "VERIZON_2021_10K": "",
    "PEPSICO_2021_10K": "", "PEPSICO_2022_10K": "", "MGMRESORTS_2022_10K": "",
    "MGMRESORTS_2022Q4_EARNINGS": "MGM Exhibit 99.1 Q4 2022", "BESTBUY_2024Q2_10Q": "",
    "ULTABEAUTY_2023Q4_EARNINGS": "Ulta Beauty Announces Fourth Quarter Fiscal 2022 Results",
}


@pytest.fixture
def filings():
    from types import SimpleNamespace

    from advanced_retrieval.query.naming import Names

    ordinary = "the company securities exchange quarter fiscal results exhibit form united states"
    index = filings_index({stem: f"{stem.split('_')[0].casefold()} {ordinary}" for stem in FILINGS})
    records = [SimpleNamespace(doc_id=stem, file_name=f"{stem}.pdf", title=title) for stem, title in FILINGS.items()]
    return Names.of(records, index.document_rates)


@pytest.mark.parametrize("question, named", [
    ("Does AMEX have an improving operating margin?", ("AMERICANEXPRESS_2022_10K",)),
    ("Are JnJ's FY2022 financials that of a high growth company?",
     ("JOHNSON_JOHNSON_2022Q4_EARNINGS", "JOHNSON_JOHNSON_2022_10K")),
    ("How did J&J's sales grow?", ("JOHNSON_JOHNSON_2022Q4_EARNINGS", "JOHNSON_JOHNSON_2022_10K")),
    ("Looking at VaR, did the risk that JPM faced in the second fiscal quarter of 2023 decrease?",
     ("JPMORGAN_2023Q2_10Q",)),
    ("What was Pepsi's FY2022 capex?", ("PEPSICO_2022_10K",)),
])
def test_short_forms_name_their_document(filings, question, named):
    assert filings.named(question) == tuple(sorted(named))


def test_a_term_of_the_vocabulary_is_no_abbreviation_of_a_name():
    from types import SimpleNamespace

    from advanced_retrieval.query.naming import Names

    records = [SimpleNamespace(doc_id=d, file_name=f"{d}.pdf", title="") for d in ("SUGAR_NATIONAL_2022", "ACME_2022")]
    names = Names.of(records)
    assert names.named("What drove SG&A in 2022?") == ()  # s..g..n..a spells SUGAR_NATIONAL, but SG&A is a term
    assert names.named("What did SuNa sell in 2022?") == ("SUGAR_NATIONAL_2022",)


def test_ordinary_words_of_a_title_name_nothing(filings):
    # "company" is 3M's title word, "securities exchange" Verizon's, "fiscal quarter results" Ulta's: every
    # filing's text holds them, so they are words, not names
    assert filings.named("If operating margin is not a useful metric for a company like this, say so") == ()
    assert filings.named("Which debt securities are registered on a national securities exchange?") == ()
    assert filings.named("What were the fiscal quarter results?") == ()
    assert filings.named("Does American Water Works have positive working capital based on FY2022 data? "
                         "If not relevant for this company, say so") == ("AMERICANWATERWORKS_2022_10K",)


def test_a_file_name_written_out_names_its_document_though_its_words_are_ordinary():
    from types import SimpleNamespace

    # every document's text says "charts" and "data": as words they name nothing; written out as a file, they do
    stems = {"charts.xlsx": "charts", "data.csv": "data", "old-data.csv": "data", "PEPSICO_2022_10K.pdf": "pepsico"}
    index = filings_index({name: f"{word} charts data sales" for name, word in stems.items()})
    names = Names.of([SimpleNamespace(doc_id=n, file_name=n, title="") for n in stems], index.document_rates)
    assert names.named("Which month on the charts has the highest value?") == ()
    assert names.named("Which month on the Dates sheet of charts.xlsx has the highest value?") == ("charts.xlsx",)
    assert names.named("Which month on the Dates sheet of Charts.XLSX has the highest value?") == ("charts.xlsx",)
    assert names.named("Compare data.csv with charts.xlsx") == ("charts.xlsx", "data.csv")
    assert names.named("What does old-data.csv hold?") == ("old-data.csv",)  # not data.csv inside it
    assert names.written_out("Is mydata.csv or data.csv.bak there?") == ()
    assert names.named("What does reports/data.csv (the export) hold?") == ("data.csv",)


def test_periods_only_tell_siblings_apart_and_count_alike(filings):
    # a question about two years names both years' filings (a rarer year is no better a name)
    assert filings.named("Has Verizon increased its debt between 2022 and the 2021 fiscal period?") == (
        "VERIZON_2021_10K", "VERIZON_2022_10K")
    assert filings.named("Has Pepsico reported legal battles from FY2022 and FY2021?") == (
        "PEPSICO_2021_10K", "PEPSICO_2022_10K")
    # "Q2" of another filing's title names nothing on its own; the quarter and the year pick the sibling
    assert filings.named("Was there any drop in cash between FY 2023 and Q2 of FY2024?") == ()
    assert filings.named("How many Best Buy stores in Q2 of FY2024?") == ("BESTBUY_2024Q2_10Q",)


def test_a_query_word_counts_once_for_a_document(filings):
    # the earnings release's title says both "MGM" and (in its file name) "MGMResorts": not twice the name
    assert filings.named("Has MGM Resorts paid dividends in FY2022?") == (
        "MGMRESORTS_2022Q4_EARNINGS", "MGMRESORTS_2022_10K")


def test_a_name_cited_by_other_documents_is_still_a_name():
    from types import SimpleNamespace

    from advanced_retrieval.query.naming import Names

    # every paper cites Adam in its training section (one chunk in four); the Adam paper says it throughout
    papers = {"adam_1412.6980": "adam stochastic optimization", "bert_1810.04805": "bert pre-training",
              "resnet_1512.03385": "resnet residual", "attention_is_all_you_need": "transformer attention"}
    index = BM25Index.build(
        chunk(f"{text} {'trained with adam' if name.startswith('adam') or i == 0 else 'results'} {i}", i + 1, i,
              doc_id=name) for name, text in papers.items() for i in range(4))
    records = [SimpleNamespace(doc_id=name, file_name=f"{name}.pdf", title="") for name in papers]
    names = Names.of(records, index.document_rates)
    assert names.named("What are Adam's default settings for beta1 and beta2?") == ("adam_1412.6980",)


def test_a_long_document_does_not_outweigh_the_one_a_word_names():
    from types import SimpleNamespace

    from advanced_retrieval.query.naming import Names

    # the deck about evaluation says it on every slide; a long filing says it in 40 of 1,000 chunks: more chunks,
    # but the deck is what "evaluation" names
    chunks = [chunk(f"evaluation slide {i}", i + 1, i, doc_id="deck") for i in range(20)]
    chunks += [chunk(f"{'evaluation of' if i < 40 else 'revenue'} line {i}", i + 1, i, doc_id="filing")
               for i in range(1000)]
    chunks += [chunk("budget sheet", 1, 0, doc_id="sheet")]
    records = [SimpleNamespace(doc_id="deck", file_name="deck.pptx", title="Evaluation that matters"),
               SimpleNamespace(doc_id="filing", file_name="ACME_10K.pdf", title=""),
               SimpleNamespace(doc_id="sheet", file_name="budget.xlsx", title="")]
    names = Names.of(records, BM25Index.build(chunks).document_rates)
    assert names.named("How long did the evaluation of the program run?") == ("deck",)


def test_a_title_word_weighs_less_than_a_file_name_and_a_repeated_word_counts_once():
    from types import SimpleNamespace

    from advanced_retrieval.query.naming import Names

    # only Ulta's release says "fiscal" (its title too: "Fourth Quarter Fiscal 2022 Results"); the question names
    # Amcor by its file name and says "fiscal" twice
    chunks = [chunk(f"ulta fiscal results {i}", i + 1, i, doc_id="ulta") for i in range(4)]
    chunks += [chunk(f"amcor net income {i}", i + 1, i, doc_id="amcor") for i in range(4)]
    chunks += [chunk(f"3m revenue {i}", i + 1, i, doc_id="3m") for i in range(4)]
    records = [SimpleNamespace(doc_id="ulta", file_name="ULTABEAUTY_2023Q4_EARNINGS.pdf",
                               title="Ulta Beauty Announces Fourth Quarter Fiscal 2022 Results"),
               SimpleNamespace(doc_id="amcor", file_name="AMCOR_2023Q4_EARNINGS.pdf", title="Amcor 4Q 2023"),
               SimpleNamespace(doc_id="3m", file_name="3M_2022_10K.pdf", title="")]
    names = Names.of(records, BM25Index.build(chunks).document_rates)
    assert names.named("How did Amcor's GAAP net income change from fiscal 2022 to fiscal 2023?") == ("amcor",)
    assert names.named("What were the fiscal results?") == ("ulta",)  # a title word still names when alone


def test_beginnings_are_the_scan_of_every_longer_name_word():
    """Names._beginnings (a set per document) answers what scanning the name words for a longer word that begins
    with the query word answered."""
    names = Names.of([])
    words = frozenset({"mgmresorts", "amex", "americanexpress", "3m", "pepsico", "jpmorgan"})
    beginnings = names._beginnings(words)
    for key in ("mgmr", "mgmresort", "mgmresorts", "amer", "amex", "pepsi", "jpmo", "3mco", "zzzz", "american"):
        assert (key in beginnings) == any(len(w) > len(key) and w.startswith(key) for w in words), key
    assert names._beginnings(words) is beginnings  # made once per set of words


def test_one_product_over_a_block_equals_a_product_per_document():
    rng = np.random.default_rng(7)
    block = rng.standard_normal((40, 8)).astype(np.float32)
    vector = rng.standard_normal(8).astype(np.float32)
    parts = [block[0:10], block[10:10], block[10:25], block[25:40]]
    expected = np.concatenate([p @ vector for p in parts])
    assert np.allclose(_products(parts, vector), expected)
    assert np.allclose(_products(parts[1:], vector), np.concatenate([p @ vector for p in parts[1:]]))
    out_of_order = [parts[3], parts[0], parts[2]]  # views of one block, not in its order
    assert np.allclose(_products(out_of_order, vector), np.concatenate([p @ vector for p in out_of_order]))
    gapped = [block[0:5], block[8:20]]
    assert np.allclose(_products(gapped, vector), np.concatenate([p @ vector for p in gapped]))
    separate = [rng.standard_normal((3, 8)).astype(np.float32), block[:4]]
    assert np.allclose(_products(separate, vector), np.concatenate([p @ vector for p in separate]))


def test_a_large_product_shared_with_a_helper_thread_gives_the_products_scores():
    """Over SHARED_ROWS rows the product is computed in two halves on two threads (memory-bound: ~2x faster on
    two cores); every row's score is the one product's, so the ranks cannot change."""
    from advanced_retrieval.query.naming import SHARED_ROWS, shared_product

    rng = np.random.default_rng(7)
    vector = rng.standard_normal(384).astype(np.float32)
    for rows in (10, SHARED_ROWS + 1, 3 * SHARED_ROWS + 77):
        block = rng.standard_normal((rows, 384)).astype(np.float32)
        got = shared_product(block, vector)
        assert got.shape == (rows,) and np.allclose(got, block @ vector, rtol=1e-6, atol=1e-5)
        assert np.array_equal(np.argsort(-got, kind="stable")[:30], np.argsort(-(block @ vector), kind="stable")[:30])


@pytest.mark.parametrize("query", [
    "What was PepsiCo's FY2022 capex?", "AMEX net card fees in 2022", "J&J's Q4 2022 earnings per share",
    "MGM Resorts casino revenue", "How did mgmre do in 4Q 2022?", "Verizon 2021 wireless service revenue",
    "American Water Works capital expenditures", "Ulta Beauty fiscal 2022 results", "BBY Q2 2024 comparable sales",
    "3M Company free cash flow", "johnsonjohnson and americanexpress", "",
])
def test_the_names_looked_up_by_word_are_the_ones_a_scan_of_every_document_finds(query):
    """Names.matches looks the query's spans up in the name words and their beginnings; it must give, document by
    document and in order, what _matches (the scan of every document per span) gives."""
    from types import SimpleNamespace

    from advanced_retrieval.query.naming import _abbreviations, _query_spans

    docs = [SimpleNamespace(doc_id=stem, file_name=f"{stem}.pdf", title=title) for stem, title in FILINGS.items()]
    names = Names.of(docs)
    spans, abbreviations = _query_spans(query), _abbreviations(query)
    assert names.matches(spans, abbreviations) == {
        d: names._matches(d, words, spans, abbreviations) for d, words in names.words.items()}
