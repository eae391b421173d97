"""Queries in the document's words (vocabulary expansion of the BM25 query) and one hit per page."""

from __future__ import annotations

import pytest

from advanced_retrieval import BM25Index, Filters, HybridRetriever, KeywordIndex
from advanced_retrieval.keyword.expansion import EXPANSION_SHARE, expansion_phrases, expansion_query, heading_phrases
from advanced_retrieval.keyword.vocabulary import ENTRIES
from document_processor import Chunk, Location, ParsedDocument, chunk_id
from vector_db import VectorStore, make_client


def chunk(text: str, page: int, ordinal: int, doc_id: str = "filing") -> Chunk:
    loc = Location(page=page)
    return Chunk(id=chunk_id(doc_id, loc, ordinal, text), doc_id=doc_id, file_name=f"{doc_id}.pdf", file_type="pdf",
                 text=text, location=loc, ordinal=ordinal)


def doc(chunks: list[Chunk], doc_id: str = "filing") -> ParsedDocument:
    return ParsedDocument(doc_id=doc_id, file_name=f"{doc_id}.pdf", file_type="pdf", size_bytes=100, title=doc_id,
                          unit_name="pages", units=max(c.location.page for c in chunks), chunks=tuple(chunks))


# -- the vocabulary and its matching ----------------------------------------------------------------------------


def test_metrics_and_abbreviations_expand_to_line_items_and_statements():
    assert "net cash provided by operating activities" in expansion_phrases("What was free cash flow in 2022?")
    assert "statements of cash flows" in expansion_phrases("Free-cash-flow of the group")
    assert expansion_phrases("SG&A as a share of sales")[0] == "selling general and administrative expenses"
    assert "depreciation and amortization" in expansion_phrases("How large was D&A?")
    assert "operating income" in expansion_phrases("What is the operating margin?")
    assert "term and termination" in expansion_phrases("Can the customer terminate early?")


def test_multiword_forms_match_after_stemming_one_word_forms_only_as_written():
    assert "capital expenditures" in expansion_phrases("the capital expenditure of the year")
    assert expansion_phrases("How is the BLEU score computed?") == ()  # "compute" is a form, "computed" is not
    assert expansion_phrases("") == expansion_phrases("   ") == ()
    assert expansion_query("the weather in Paris") == ""


def test_compounds_written_as_one_word_match_their_forms():
    assert "statements of cash flows" in expansion_phrases("Does Adobe have an improving Free cashflow conversion?")
    assert "statements of cash flows" in expansion_phrases("the freecashflow of the group")
    assert "net cash provided by operating activities" in expansion_phrases("operating cashflow in 2022")
    assert expansion_phrases("cash flowers") == ()  # whole words only, joined or not


def test_a_period_word_written_against_its_year_is_read_apart():
    assert "twelve months ended" in expansion_phrases("What was adjusted EBITDA for FY2023?")
    assert "twelve months ended" in expansion_phrases("What was adjusted EBITDA for FY 2023?")
    assert "three months ended" in expansion_phrases("Which region dropped most in Q22023?")
    assert expansion_phrases("the fyi and q9 notes") == ()


def test_heading_phrases_name_a_statement_by_all_its_titles():
    margin = heading_phrases("What drove Best Buy's gross margin in FY2023?")
    assert {"statements of income", "statements of earnings", "statements of operations"} <= set(margin)
    assert "net sales" not in margin  # a line item heads no page
    assert {"balance sheets", "statements of cash flows"} <= set(heading_phrases("Is 3M capital-intensive?"))
    turnover = heading_phrases("What is the FY2019 inventory turnover ratio?")  # COGS / average inventory
    assert {"balance sheets", "statements of income"} <= set(turnover)
    assert heading_phrases("What drove the increase in inventory?") == ()
    assert heading_phrases("the weather in Paris") == heading_phrases("") == ()
    assert len(margin) == len(set(margin))


def test_each_phrase_once_in_vocabulary_order():
    phrases = expansion_phrases("free cash flow and capex")
    assert len(phrases) == len(set(phrases))
    assert phrases.index("net cash provided by operating activities") < phrases.index("additions to property and "
                                                                                      "equipment")


def test_vocabulary_entries_are_well_formed():
    for forms, phrases in ENTRIES:
        assert forms and phrases
        assert all(f == f.lower() and f.strip() == f for f in forms)


# -- weighing: the expansion never outweighs the user's own words ---------------------------------------------


STATEMENTS = [
    "free cash flow is a non-GAAP measure we discuss with investors",  # the user's words
    "purchases of property and equipment, capital expenditures and other investing activities",  # the document's
    "the weather was fine and nobody talked about money",
]


def test_expansion_reorders_but_never_lifts_a_chunk_above_the_users_words():
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)])
    plain = index.search("free cash flow", 3)
    assert [cid for cid, _ in plain] == [index.chunk_ids[0]]  # only the chunk with the user's words
    grown = index.search("free cash flow", 3, expansion=expansion_query("free cash flow"))
    ids = [cid for cid, _ in grown]
    assert ids[:2] == [index.chunk_ids[0], index.chunk_ids[1]]  # the statement now found, below the user's match
    best_own = plain[0][1]
    assert grown[1][1] <= EXPANSION_SHARE * best_own + 1e-6


def test_expansion_alone_when_the_users_words_match_nothing():
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS[1:])])
    assert index.search("fcf", 3) == []
    found = index.search("fcf", 3, expansion=expansion_query("fcf"))
    assert found and found[0][0] == index.chunk_ids[0]


def test_expansion_tokens_already_in_the_query_count_once():
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)])
    same = index.search("capital expenditures", 3, expansion="capital expenditures")
    assert same == index.search("capital expenditures", 3)


def test_empty_index_and_empty_expansion():
    empty = BM25Index.build([])
    assert empty.search("free cash flow", 5, expansion="net cash provided") == []
    index = BM25Index.build([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)])
    assert index.search("free cash flow", 3, expansion="") == index.search("free cash flow", 3)


# -- one hit per page -------------------------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path, fake_embedder):
    yield VectorStore(make_client(tmp_path / "data"), fake_embedder)


PAGES = [  # (page, text): page 1 has three chunks about revenue, pages 2 and 3 one each
    (1, "revenue grew in fiscal 2022 revenue by segment"),
    (1, "revenue table continued revenue 2022 2021"),
    (1, "revenue footnotes for the revenue table"),
    (2, "revenue outlook for the next year"),
    (3, "revenue recognition policy"),
    (4, "the weather and the clouds"),
]


@pytest.mark.parametrize("strategy", ["bm25", "hybrid", "vector"])
def test_a_page_takes_one_place_and_its_other_chunks_ride_along(store, tmp_path, fake_embedder, strategy):
    store.add_document(doc([chunk(t, p, i) for i, (p, t) in enumerate(PAGES)]))
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    hits = retriever.retrieve("revenue 2022 revenue table", k=3, strategy=strategy)
    pages = [h.chunk.location.page for h in hits]
    assert len(pages) == len(set(pages)) == 3
    assert [h.rank for h in hits] == [1, 2, 3]
    first_page = next(h for h in hits if h.chunk.location.page == 1)
    assert {c.location.page for c in first_page.page_chunks} <= {1}
    assert all(c.id != first_page.chunk.id for c in first_page.page_chunks)


def test_one_per_page_off_gives_todays_chunk_ranking(store, tmp_path, fake_embedder):
    store.add_document(doc([chunk(t, p, i) for i, (p, t) in enumerate(PAGES)]))
    flat = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder, one_per_page=False)
    hits = flat.retrieve("revenue 2022 revenue table", k=3, strategy="bm25")
    assert [h.chunk.location.page for h in hits].count(1) >= 2
    assert all(h.page_chunks == () for h in hits)


def test_chunks_without_pages_are_never_grouped(store, tmp_path, fake_embedder):
    chunks = [Chunk(id=chunk_id("notes", Location(lines=(i, i)), i, t), doc_id="notes", file_name="notes.txt",
                    file_type="txt", text=t, location=Location(lines=(i, i)), ordinal=i)
              for i, t in enumerate(["revenue one", "revenue two", "revenue three"])]
    store.add_document(ParsedDocument(doc_id="notes", file_name="notes.txt", file_type="txt", size_bytes=10,
                                      title="notes", unit_name="lines", units=3, chunks=tuple(chunks)))
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    assert len(retriever.retrieve("revenue", k=3, strategy="bm25")) == 3


def test_the_vocabulary_finds_the_statement_through_the_retriever(store, tmp_path, fake_embedder):
    store.add_document(doc([chunk(t, i + 1, i) for i, t in enumerate(STATEMENTS)]))
    on = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    off = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-off"), fake_embedder, expand=False)
    assert [h.chunk.location.page for h in on.retrieve("free cash flow", k=2, strategy="bm25")] == [1, 2]
    assert [h.chunk.location.page for h in off.retrieve("free cash flow", k=2, strategy="bm25")] == [1]
    assert all(h.bm25_score == h.score for h in off.retrieve("free cash flow", k=2, strategy="bm25"))


# -- documents the query names ----------------------------------------------------------------------------------


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


def test_document_rates_tell_how_much_of_each_document_holds_a_word():
    index = BM25Index.build([chunk("alpha beta", 1, 0, doc_id="a"), chunk("beta gamma", 1, 0, doc_id="b"),
                             chunk("gamma", 2, 1, doc_id="b"), chunk("delta", 3, 2, doc_id="b"),
                             chunk("beta", 4, 3, doc_id="b")])
    assert index.document_rates(["beta", "omega", ""]) == {"beta": {"a": 1.0, "b": 0.5}, "omega": {}, "": {}}


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


def test_the_named_document_outranks_the_same_passage_in_a_sibling(store, tmp_path, fake_embedder):
    text = "net cash provided by operating activities was 812 million in the year"
    for name in ("ACME_2021_10K", "ACME_2022_10K", "GLOBEX_2022_10K", "INITECH_2022_10K"):
        store.add_document(doc([chunk(f"{text} ({i})", i + 1, i, doc_id=name) for i in range(3)], doc_id=name))
    routed = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    flat = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-flat"), fake_embedder, route=False)
    question = "Globex net cash provided by operating activities"
    hits = routed.retrieve(question, k=3, strategy="hybrid")
    assert {h.chunk.doc_id for h in hits} == {"GLOBEX_2022_10K"}
    query = fake_embedder.embed_query(question)
    for h in hits:  # the cosine of the search within the named document, as a vector search reports it
        assert h.vector_score == pytest.approx(float(fake_embedder.embed([h.chunk.text])[0] @ query), abs=1e-5)
    assert {h.chunk.doc_id for h in flat.retrieve(question, k=3, strategy="hybrid")} != {"GLOBEX_2022_10K"}
    only_acme = Filters(doc_ids=("ACME_2021_10K",))  # the user's filter wins over the name
    assert {h.chunk.doc_id for h in routed.retrieve(question, k=3, filters=only_acme)} == {"ACME_2021_10K"}


# -- pages headed by what the query's vocabulary names ------------------------------------------------------------


def filing_pages(doc_id: str) -> list[Chunk]:
    """A filing whose every page opens with running heads; page 5 is the balance sheet (rows only, no question
    words in them), page 2 MD&A prose that talks about the balance sheet and liabilities."""
    heads = "Table of Contents\nACME Corp and Subsidiaries\n"
    pages = {
        1: heads + "Item 1. Business\nWe make anvils and rockets for road runners in the desert.",
        2: heads + "Liquidity\nOur balance sheet remained strong and our liabilities fell; the largest liability "
                   "in the balance sheet discussion is debt, as management sees it.",
        3: heads + "Risk Factors\nDemand for anvils may fall.",
        4: heads + "Consolidated Statements of Income\nNet sales 900 800\nCost of sales 500 450",
        5: heads + "CONSOLIDATED BALANCE SHEETS\nDecember 31 (Millions) 2022 2021\nCustomer deposits 7,100 6,900"
                   "\nAccounts payable 1,200 1,100\nTotal assets 9,000 8,500",
        6: heads + "Consolidated Statements of Cash Flows\nNet cash provided by operating activities 300 250",
    }
    return [chunk(text, page, page, doc_id=doc_id) for page, text in pages.items()]


def test_page_headings_are_titles_and_headings_without_running_heads():
    from advanced_retrieval.query.sections import document_pages

    long = "x" * 90
    chunks = [*filing_pages("acme"),
              chunk(f"Short title\n{long}\nAfter the long line", 7, 7, doc_id="acme"),
              chunk("| a | b |\n| --- | --- |\nTable title below rows", 8, 8, doc_id="acme"),
              Chunk(id="para", doc_id="acme", file_name="acme.docx", file_type="docx", text="Body text",
                    location=Location(paragraph=3), heading_path=("Term and Termination",))]
    pages = {p.key: p.headings for p in document_pages(chunks)}
    assert pages[("acme", "page", 5)] == ("CONSOLIDATED BALANCE SHEETS", "December 31 (Millions) 2022 2021",
                                          "Customer deposits 7,100 6,900", "Accounts payable 1,200 1,100")
    assert all("Table of Contents" not in h and "ACME Corp and Subsidiaries" not in h for h in pages.values())
    assert pages[("acme", "page", 7)] == ("Short title",)  # up to the first long line
    assert pages[("acme", "page", 8)] == ("Table title below rows",)  # table rows are not titles
    assert pages[("para",)] == ("Term and Termination",)  # a page-less chunk: its heading path


def test_wrapped_lines_of_a_two_column_page_are_no_titles():
    from advanced_retrieval.query.sections import document_pages

    references = ("Mandar Joshi, Eunsol Choi, Daniel S Weld, and Luke\nZettlemoyer. 2017. Triviaqa: A large scale"
                  "\nsupervised challenge datasets for reading comprehension.\nRyan Kiros, Yukun Zhu, Ruslan,\n"
                  "and Sanja Fidler. 2015. Skip-thought vectors.")
    appendix = "jority class.\nC Additional Ablation Studies\nC.1 Effect of Number of Training Steps\nFigure 5 shows MNLI Dev accuracy after\nfine-tuning from a checkpoint"
    pages = {p.key[2]: p for p in document_pages([chunk(references, 11, 1, doc_id="bert"),
                                                   chunk(appendix, 16, 2, doc_id="bert")])}
    assert not pages[11].holds(("dataset",))  # "datasets" is in a sentence wrapped over short lines
    assert pages[11].headings == ("Mandar Joshi, Eunsol Choi, Daniel S Weld, and Luke",)
    assert pages[16].headings == ("C Additional Ablation Studies", "C.1 Effect of Number of Training Steps")


def test_a_title_in_a_tables_header_row_heads_its_page():
    from advanced_retrieval.query.sections import document_pages

    table = ("| Year Ended December 31 (Millions) | CONSOLIDATED STATEMENTS OF EARNINGS 2022 | 2021 |\n"
             "| --- | --- | --- |\n| Net sales | 900 | 800 |")
    chunks = [chunk("Table of Contents", 4, 1, doc_id="acme"), chunk(table, 4, 2, doc_id="acme"),
              chunk("| Net sales | 900 | 800 |\n| Cost of sales | 500 | 450 |", 5, 3, doc_id="acme")]
    pages = {p.key[2]: p for p in document_pages(chunks)}
    assert "CONSOLIDATED STATEMENTS OF EARNINGS 2022" in pages[4].headings
    assert pages[4].holds(("statement", "earn"))
    assert pages[5].headings == ()  # rows without a separator line are no header


def test_the_statement_the_vocabulary_names_comes_first(store, tmp_path, fake_embedder):
    from advanced_retrieval.query.sections import Sections

    for name in ("ACME_2022_10K", "GLOBEX_2022_10K"):
        store.add_document(doc(filing_pages(name), doc_id=name))
    question = "What was the largest liability in ACME's balance sheet in 2022?"
    sections = Sections(store)
    headed = sections.pages(["ACME_2022_10K"], ["balance sheets", "statements of cash flows"], 1)
    assert [p.key[2] for p in headed] == [5, 6]
    with_sections = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    without = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-off"), fake_embedder, sections=False)
    first = with_sections.retrieve(question, k=3, strategy="hybrid")[0].chunk
    assert (first.doc_id, first.location.page) == ("ACME_2022_10K", 5)
    first = without.retrieve(question, k=3, strategy="hybrid")[0].chunk
    assert (first.doc_id, first.location.page) != ("ACME_2022_10K", 5)  # the prose page's words win without it
    # no named document: no headed pages, the ranking is the other searches'
    plain = "What was the largest liability in the balance sheet in 2022?"
    assert ([h.chunk.id for h in with_sections.retrieve(plain, k=3, strategy="hybrid")]
            == [h.chunk.id for h in without.retrieve(plain, k=3, strategy="hybrid")])


def earnings_release(doc_id: str) -> list[Chunk]:
    """A release whose income statement is titled "of Earnings" inside its table's header row; its prose pages talk
    about margins in the question's own words."""
    statement = ("| (Millions) | CONSOLIDATED STATEMENTS OF EARNINGS 2023 | 2022 |\n| --- | --- | --- |\n"
                 "| Revenue | 46,298 | 51,761 |\n| Cost of sales | 35,934 | 40,121 |\n| Gross profit | 10,364 | 11,640 |")
    pages = {1: "Gross margin for the year was 22.4%; the gross margin rate fell on lower product margins in 2023.",
             2: "Our gross margin outlook for 2024 assumes the gross margin pressure of 2023 eases.",
             3: "Table of Contents\nSegment results by channel and region for the year.",
             4: statement}
    return [chunk(text, page, page, doc_id=doc_id) for page, text in pages.items()]


def test_a_statement_titled_by_another_name_in_its_table_comes_first(store, tmp_path, fake_embedder):
    for name in ("BESTBUY_2023_10K", "GLOBEX_2023_10K"):
        store.add_document(doc(earnings_release(name), doc_id=name))
    question = "Are Best Buy's gross margins consistent from year to year?"
    on = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    off = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-off"), fake_embedder, sections=False)
    first = on.retrieve(question, 3, "hybrid")[0].chunk
    assert (first.doc_id, first.location.page) == ("BESTBUY_2023_10K", 4)
    first = off.retrieve(question, 3, "hybrid")[0].chunk
    assert (first.doc_id, first.location.page) != ("BESTBUY_2023_10K", 4)  # the prose's words win without it


def test_the_first_headed_page_counts_as_much_as_every_other_search_together():
    from advanced_retrieval.hybrid import _Candidates
    from advanced_retrieval.query.plan import QueryPlan

    prose = chunk("prose", 1, 1)

    def fused(keyword_weight: float) -> list[str]:
        # the prose chunk is first in three searches and second in the library-wide BM25; "statement" only heads
        # its page
        found = _Candidates(vector=[(prose, 0.9)], bm25=[("other", 9.0), (prose.id, 8.0)],
                            extra=(([prose.id], 1.0), ([prose.id], keyword_weight)), headed=["statement"])
        retriever = HybridRetriever(None, None, None)
        return [cid for cid, _ in retriever._rank(QueryPlan("hybrid", "test", keyword_weight), found, {})]

    for keyword_weight in (1.0, 2.0):
        assert fused(keyword_weight) == ["statement", prose.id, "other"]


def test_a_line_item_heads_no_page(store, tmp_path, fake_embedder):
    # page 4's first rows print "Net sales", the vocabulary's document form for "sales"; it is a line item, not a
    # statement's name, so the prose that answers the question keeps its first place
    prose = chunk("ACME net sales in 2022 rose because ACME sold more rockets; net sales grew in every region.",
                  7, 7, doc_id="ACME_2022_10K")
    for name, extra in (("ACME_2022_10K", [prose]), ("GLOBEX_2022_10K", [])):
        store.add_document(doc([*filing_pages(name), *extra], doc_id=name))
    question = "Why did ACME's net sales rise in 2022?"
    hits = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder).retrieve(question, 3, "hybrid")
    assert (hits[0].chunk.doc_id, hits[0].chunk.location.page) == ("ACME_2022_10K", 7)


def test_headings_are_document_forms_of_the_vocabulary():
    from advanced_retrieval.keyword.vocabulary import HEADINGS

    assert {phrase for _, phrases in ENTRIES for phrase in phrases} >= HEADINGS
    assert "balance sheets" in HEADINGS and "net sales" not in HEADINGS


def test_headed_pages_of_the_only_document_or_of_the_asked_ones(store, tmp_path, fake_embedder):
    question = "What was the largest liability in the balance sheet in 2022?"  # names no document

    def first_page(retriever, filters=None):
        hit = retriever.retrieve(question, 3, "hybrid", filters)[0].chunk
        return hit.doc_id, hit.location.page

    store.add_document(doc(filing_pages("ACME_2022_10K"), doc_id="ACME_2022_10K"))
    on = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    off = HybridRetriever(store, KeywordIndex(tmp_path / "bm25-off"), fake_embedder, sections=False)
    assert first_page(on) == ("ACME_2022_10K", 5)  # the library's only document
    assert first_page(off) != ("ACME_2022_10K", 5)
    store.add_document(doc(filing_pages("GLOBEX_2022_10K"), doc_id="GLOBEX_2022_10K"))
    asked = Filters(doc_ids=("GLOBEX_2022_10K",))  # "asking only about" one document
    assert first_page(on, asked) == ("GLOBEX_2022_10K", 5)
    assert first_page(on)[1] != 5  # two documents, none named or asked: no headed pages


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
