"""advanced_retrieval.query.sections: a page's headings, and the statement the vocabulary names ranked first."""

from __future__ import annotations

import pytest

from advanced_retrieval import Filters, HybridRetriever, KeywordIndex
from document_processor import Chunk, Location
from tests.helpers.retrieval import CountingStore, chunk, doc


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


def test_a_page_holds_a_phrase_only_in_sequence_and_refuses_by_its_words_first():
    from advanced_retrieval.query.sections import Page

    page = Page(("a.pdf", 3), ("Consolidated Balance Sheets",), ("consolid", "balanc", "sheet"), ("c1",))
    assert page.vocabulary == {"consolid", "balanc", "sheet"}
    assert page.holds(("balanc", "sheet")) and page.holds(("consolid",)) and page.holds(["balanc", "sheet"])
    assert not page.holds(("sheet", "balanc")) and not page.holds(("cash", "flow")) and not page.holds(())
    assert not page.holds(("consolid", "sheet"))  # both words there, not in sequence


def test_reading_ahead_leaves_a_documents_first_question_nothing_to_read(store, tmp_path, fake_embedder):
    for name in ("ACME_2022_10K", "GLOBEX_2022_10K"):
        store.add_document(doc(filing_pages(name), doc_id=name))
    question = "What was the largest liability in ACME's balance sheet in 2022?"
    cold_store, warm_store = CountingStore(store), CountingStore(store)
    cold = HybridRetriever(cold_store, KeywordIndex(tmp_path / "bm25-cold"), fake_embedder)
    warm = HybridRetriever(warm_store, KeywordIndex(tmp_path / "bm25-warm"), fake_embedder)
    assert warm.warm() | {"seconds": 0} == {"documents": 2, "vectors": 12, "chunks": 12, "sections": 2,
                                            "seconds": 0}
    read_ahead = list(warm_store.reads)
    assert {(kind, len(ids)) for kind, ids in read_ahead if kind != "pages"} == {("vectors", 12), ("chunks", 12)}
    assert {("pages", "ACME_2022_10K"), ("pages", "GLOBEX_2022_10K")} <= set(read_ahead)
    got_cold = cold.retrieve(question, k=3, strategy="hybrid")
    got_warm = warm.retrieve(question, k=3, strategy="hybrid")
    # the same answer: the held vectors' exact search finds what the store's search found, with its cosines
    assert [h.chunk for h in got_warm] == [h.chunk for h in got_cold]
    assert [h.vector_score for h in got_warm] == pytest.approx([h.vector_score for h in got_cold], abs=1e-5)
    assert {kind for kind, _ in cold_store.reads} >= {"search", "chunks", "pages"}  # read by the question itself
    assert warm_store.reads[len(read_ahead):] == []  # nothing at all: vectors, chunks, pages all held


def test_a_library_larger_than_the_cache_reads_nothing_ahead(store, tmp_path, fake_embedder, monkeypatch):
    from advanced_retrieval.query.naming import NamedDocuments

    for name in ("ACME_2022_10K", "GLOBEX_2022_10K"):
        store.add_document(doc(filing_pages(name), doc_id=name))
    monkeypatch.setattr(NamedDocuments, "MAX_CACHED_VECTORS", 11)
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    assert retriever.warm() | {"seconds": 0} == {"documents": 2, "vectors": 0, "chunks": 0, "sections": 0,
                                                 "seconds": 0}


def test_warm_soon_warms_once_after_the_last_call_only_when_asked_and_logs_a_failure(store, tmp_path, fake_embedder,
                                                                                     caplog):
    import threading
    import time

    store.add_document(doc(filing_pages("ACME_2022_10K"), doc_id="ACME_2022_10K"))
    retriever = HybridRetriever(store, KeywordIndex(tmp_path / "bm25"), fake_embedder)
    calls = []
    done = threading.Event()
    retriever.warm = lambda: calls.append(time.monotonic()) or done.set() or {}
    retriever.warm_soon(0.0)
    assert not done.wait(0.3) and calls == []  # off unless the owner asks for it (the app's library does)
    retriever.read_ahead = True
    for _ in range(5):  # a batch of writes: one warm, after the last
        retriever.warm_soon(0.2)
    assert done.wait(10) and len(calls) == 1
    time.sleep(0.3)
    assert len(calls) == 1

    def broken():
        done.set()
        raise RuntimeError("store closed")

    done.clear()
    retriever.warm = broken
    with caplog.at_level("WARNING", logger="advanced_retrieval.hybrid"):
        retriever.warm_soon(0.0)
        assert done.wait(10)
        for _ in range(50):
            if caplog.records:
                break
            time.sleep(0.05)
    assert "reading ahead for the library's first questions failed" in caplog.text and "store closed" in caplog.text
