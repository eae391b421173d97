"""agentic_rag.tables.compute through the real engine: a question about figures in a workbook or a CSV is
answered from the table by a query the engine runs (the rules offline, the model's SQL through the real Gemini
client against the local stub), cited to its cells, with the query in the trace; a failing query falls back."""

from __future__ import annotations

import csv
import io
import json
import re

import openpyxl
import pytest

import wiring
from agentic_rag import build_agent, make_gemini_brain
from testing.gemini_stub import GeminiStub, StubReply, plan_for

REGIONS = [("North", 15400), ("South", 12150), ("East", 18320), ("West", 10975), ("Central", 8410)]


@pytest.fixture
def library(tmp_path, fake_embedder):
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Units sold"
    sheet.append(["Region", "Units", "Manager"])
    for region, units in REGIONS:
        sheet.append([region, units, f"{region[0]}. Smith"])
    sheet.append(["Total", sum(u for _, u in REGIONS), ""])
    path = tmp_path / "regional_sales.xlsx"
    book.save(path)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["date", "station", "rain_mm"])
    for day in range(1, 31):
        writer.writerow([f"2021-06-{day:02d}", ("Halden", "Bergen", "Oslo")[day % 3], f"{day % 7 * 1.5:.1f}"])
    (tmp_path / "rainfall.csv").write_text(out.getvalue())
    results = kb.ingest_many([path, tmp_path / "rainfall.csv"])
    assert [r.status for r in results] == ["indexed", "indexed"], [r.reason for r in results]
    return kb


def test_offline_a_total_is_computed_from_the_cells_and_cited_to_them(library, fake_embedder):
    agent = wiring.build_for(wiring.ModelConfig("offline"), library, fake_embedder)
    result = agent.ask("What is the total of units sold across the regions?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert computed["rows"][0][0] == 65255.0 and computed["source"] == "rules"
    assert '"_row" NOT IN (6)' in computed["sql"]  # the sheet's own Total row is not counted twice
    assert "65,255" in result.answer and result.citations[0].location.sheet == "Units sold"
    assert computed["cells"] == "Units sold!B2:B6"
    assert result.claims and all(c.verdict == "supported" for c in result.claims)


def test_offline_an_aggregate_filtered_on_a_named_value(library, fake_embedder):
    agent = wiring.build_for(wiring.ModelConfig("offline"), library, fake_embedder)
    result = agent.ask("How much rain in total (rain_mm) fell at Halden station?")
    expected = sum(day % 7 * 1.5 for day in range(1, 31) if day % 3 == 0)
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert computed["rows"][0][0] == pytest.approx(expected) and "'Halden'" in computed["sql"]
    assert f"{expected:g}" in result.answer.replace(",", "")


def _responder(sql_for):
    def respond(request):
        if "You plan how to answer" in request.system:
            question = request.prompt.rsplit("Question:", 1)[-1].strip()
            return StubReply(text=json.dumps({**plan_for(question), "question_type": "numeric"}))
        if "You write one read-only SQL query" in request.system:
            table = re.search(r'Table "(t_[0-9a-f]+)": regional_sales', request.prompt)
            return StubReply(text=json.dumps({"sql": sql_for(table.group(1) if table else "missing"),
                                              "reason": "sum of the region rows"}))
        if "You answer questions using ONLY" in request.system:
            computed = re.search(r"^\[(P\d+)\] [^\n]*\nComputed by the engine[^\n]*\nResult:\n[^\n]*\n([\d,.]+)",
                                 request.prompt, re.MULTILINE)
            if computed:
                return StubReply(text=f"The regions sold {float(computed.group(2).replace(',', '')):,.0f} units in all "
                                      f"[{computed.group(1)}].")
            return StubReply(text="[[NOT FOUND]] I could not find this in the documents.")
        claims = re.findall(r"^(\d+)\. .*?\(cites (?:\[P(\d+)\])?", request.prompt, re.MULTILINE)
        return StubReply(text=json.dumps({"claims": [{"claim": int(i), "verdict": "supported",
                                                      "evidence": int(n or 0)} for i, n in claims], "missing": []}))
    return respond


def test_the_models_query_is_run_read_only_and_its_result_is_the_cited_figure(library, fake_embedder):
    with GeminiStub() as stub:
        stub.responder = _responder(lambda t: f'SELECT sum("Units") AS total FROM "{t}" WHERE "Region" <> \'Total\'')
        brain = make_gemini_brain("stub-key", model="gemini-3.8-flash", base_url=stub.base_url, timeout=5.0)
        agent = build_agent(brain, library.retriever, embedder=fake_embedder, tables=library.tables)
        result = agent.ask("How many units did all the regions sell together?")
        assert any("You write one read-only SQL query" in r.system for r in stub.requests)
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert computed["source"] == "model" and computed["rows"] == [[65255.0]]
    assert result.answer.startswith("The regions sold 65,255 units in all [1].")
    assert result.claims[0].verdict == "supported", result.claims[0].reason


@pytest.mark.parametrize("sql", ["DELETE FROM table_index", "SELECT * FROM no_such_table", "SELECT 1; SELECT 2"])
def test_a_query_that_fails_is_one_line_in_the_trace_and_the_answer_falls_back(library, fake_embedder, sql):
    with GeminiStub() as stub:
        stub.responder = _responder(lambda t: sql)
        brain = make_gemini_brain("stub-key", model="gemini-3.8-flash", base_url=stub.base_url, timeout=5.0)
        agent = build_agent(brain, library.retriever, embedder=fake_embedder, tables=library.tables)
        result = agent.ask("How many units did all the regions sell together?")
    retrieve = next(t for t in result.trace if t["step"] == "retrieve")
    assert retrieve["details"]["computed"]["note"].startswith("the query failed")
    assert "no calculation from the tables" in retrieve["summary"]
    assert "Traceback" not in result.answer and library.tables.tables()  # the tables are untouched


def test_a_computed_figure_keeps_the_unit_its_cells_print(tmp_path, fake_embedder):
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Regions"
    sheet.append(["Region", "Share", "Budget"])
    for region, share, budget in (("North", 0.351, 410000), ("South", 0.377, 385000), ("East", 0.272, 120500)):
        sheet.append([region, share, budget])
        sheet.cell(sheet.max_row, 2).number_format = "0.0%"
        sheet.cell(sheet.max_row, 3).number_format = '"$"#,##0'
    path = tmp_path / "regions.xlsx"
    book.save(path)
    assert [r.status for r in kb.ingest_many([path])] == ["indexed"]
    agent = wiring.build_for(wiring.ModelConfig("offline"), kb, fake_embedder)
    share = agent.ask("What is the share of the South region?")
    assert "37.7%" in share.answer and all(c.verdict == "supported" for c in share.claims)
    budget = agent.ask("What is the budget of the East region?")
    assert "$120,500" in budget.answer
    largest = agent.ask("Which region has the largest share?")
    assert "South (37.7%)" in largest.answer


def test_a_sheet_whose_headers_the_question_names_is_a_candidate_though_retrieval_missed_it(tmp_path):
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import candidate_tables
    from document_processor import DataTable, Location

    store = TableStore(tmp_path / "tables.duckdb")
    months = DataTable("Sales by Region", "Sales by Region", ("Region", "Jan", "Feb", "Dec"),
                       (("North", "10", "20", "30"), ("Total", "10", "20", "30")),
                       Location(sheet="Sales by Region", cells="A1:D3"))
    other = DataTable("Staff", "Staff", ("Name", "Age"), (("Ann", "40"),), Location(sheet="Staff", cells="A1:B2"))
    store.write("s", "Regional_Sales_FY2023.xlsx", [months])
    store.write("o", "staff.xlsx", [other])
    found, prior = candidate_tables(store, [], "how much higher were total company sales in December than in January?")
    assert [t.name for t in found] == ["Sales by Region"] and prior[found[0].table_id] > 0


def _word_agent(tmp_path, embedder, document, name: str) -> tuple:
    """The knowledge base and an offline agent over a Word `document` saved to tmp_path as `name`."""
    path = tmp_path / name
    document.save(path)
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=embedder, environ={}, isolate=False)
    assert [r.status for r in kb.ingest_many([path])] == ["indexed"]
    return kb, wiring.build_for(wiring.ModelConfig("offline"), kb, embedder)


def _word_table(document, rows):
    """A Word table of `rows` (tuples of cell texts) at the end of `document`."""
    grid = document.add_table(rows=len(rows), cols=len(rows[0]))
    for row, cells in zip(grid.rows, rows, strict=True):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text


def test_word_tables_of_one_shape_are_told_apart_by_the_paragraphs_that_introduce_them(tmp_path, fake_embedder):
    """Illustrative cases, one table each (Mary, Eddie, Siobhan), introduced by a name and a sentence rather
    than a heading; a row printing a percentage among euro figures does not make the column a percentage."""
    import docx

    people = {"Mary": (15000, 15800, 1140, 832), "Eddie": (120000, 120000, 41730, 40300),
              "Siobhan": (24960, 24960, 1872, 1472)}
    document = docx.Document()
    document.add_heading("Illustrative cases", 1)
    document.add_paragraph("These cases deal with the basic personal tax credit and the standard rate band.")
    for name, (gross6, gross7, due6, due7) in people.items():
        document.add_paragraph(name)
        document.add_paragraph(f"{name} is single. The Budget changes the tax due as below. More follows.")
        _word_table(document, [("", "2006 €", "2007 €"), ("Gross Income", f"{gross6:,}", f"{gross7:,}"),
                               ("Total Income Tax Due", f"{due6:,}", f"{due7:,}"),
                               ("Deductions as a % of Gross Income", f"{due6 / gross6:.1%}", f"{due7 / gross7:.1%}")])
    kb, agent = _word_agent(tmp_path, fake_embedder, document, "cases.docx")
    assert [t.title for t in kb.tables.tables()][0] == "Illustrative cases > Mary: Mary is single"
    for name, (_, _, due6, due7) in people.items():
        result = agent.ask(f"By how much did {name}'s total income tax due change from 2006 to 2007?")
        computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
        assert tuple(computed["rows"][0][1:4]) == (due6, due7, due7 - due6), name
        assert "%" not in result.answer.split("(")[0], result.answer  # euros, not percentages
    # "as a percentage of gross income" is the row's own name ("as a % of"): its cell, not a ratio of two rows
    result = agent.ask("What were Eddie's deductions as a percentage of gross income in 2007?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert computed["rows"][0][1:] == ["Deductions as a % of Gross Income", 33.6], computed
    assert "Gross Income, 2007 €: 33.6%" in result.answer, result.answer  # the row's unit, not the column's


def test_a_question_of_two_parts_is_answered_part_by_part_beside_the_calculation(library, fake_embedder):
    agent = wiring.build_for(wiring.ModelConfig("offline"), library, fake_embedder)
    result = agent.ask("How many units did the South region sell, and who is the manager of the South region?")
    assert "12150" in result.answer.replace(",", "") and "S. Smith" in result.answer, result.answer



def test_a_table_whose_row_the_question_names_is_tried_though_retrieval_hit_other_tables_of_its_document(tmp_path):
    """A 10-K has a hundred tables; the hits' pages held others. The income statement, whose row "Net card fees"
    the question names, is still among the tables the rules try (they were cut to the first eighteen in the
    document's order)."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    others = [DataTable(f"p. {page} table 1", f"Segment data {page}", ("(Millions)", "2022", "2021"),
                        ((f"Billed business {page}", str(100 + page), str(90 + page)),
                         (f"Card Member loans {page}", str(200 + page), str(190 + page))), Location(page=page))
              for page in range(10, 70)]
    statement = DataTable("p. 96 table 1", "CONSOLIDATED STATEMENTS OF INCOME", ("(Millions)", "2022", "2021"),
                          (("Discount revenue", "30,739", "24,563"), ("Net card fees", "6,070", "5,195"),
                           ("Service fees and other revenue", "4,521", "3,316")), Location(page=96))
    store.write("amex", "AMERICANEXPRESS_2022_10K.pdf", [*others, statement])
    hit = _hit(make_chunk("amex", "AMERICANEXPRESS_2022_10K.pdf", "Card Member loans and billed business", page=10))
    done = compute("How much did American Express earn in net card fees in 2022?", [hit], store)
    assert done is not None and done.hit is not None, done and done.note
    assert done.table.name == "p. 96 table 1" and done.result.rows[0][-1] == 6070, (done.sql, done.result.rows)


def test_offline_a_question_naming_a_year_asks_the_tables_though_prose_ranks_first(tmp_path, fake_embedder):
    """"What were Verizon's wireless equipment revenues for 2022?" asks no "how much" and names no operation, and
    the passages that discuss wireless equipment revenue rank above the statement; offline, a quote of them gives
    no figure of 2022 (or another year's), where the statement's row in the 2022 column is the answer."""
    import docx

    document = docx.Document()
    for n in range(8):
        document.add_heading(f"Wireless equipment revenues, part {n}", 1)
        document.add_paragraph(" ".join([f"What were the wireless equipment revenues? Verizon's wireless equipment "
                                         f"revenues for 2022 increased, reason {n}: a shift to higher priced "
                                         "wireless equipment and more upgrades."] * 8))
    document.add_heading("Consolidated Statements of Income", 1)
    _word_table(document, [("(dollars in millions)", "2022", "2021"),
                           ("Service revenues and other", "109,625", "110,449"),
                           ("Wireless equipment revenues", "27,210", "23,343"),
                           ("Total Operating Revenues", "136,835", "133,613")])
    _, agent = _word_agent(tmp_path, fake_embedder, document, "VERIZON_2022_10K.docx")
    result = agent.ask("What were Verizon's wireless equipment revenues for 2022?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"].get("computed")
    assert computed is not None and computed["rows"][0][-1] == 27210, computed
    assert "27,210" in result.answer, result.answer


def test_a_table_whose_headers_name_the_figure_is_tried_though_its_rows_are_codes(tmp_path):
    """The divisions' table prints its rows as codes (FLNA, QFNA, PBNA) under "Net Revenue 2022"; thirty tables
    whose rows say "revenue" in another sense come first in the document and would fill the places."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    others = [DataTable(f"p. {page} table 1", f"Results {page}", ("", "2022", "2021"),
                        ((f"Organic revenue growth {page}", "4.1", "3.2"), ("Effective tax rate", "20.1", "19.5")),
                        Location(page=page)) for page in range(10, 40)]
    divisions = DataTable("p. 70 table 1", "Net Revenue and Operating Profit",
                          ("", "Net Revenue 2022", "Net Revenue 2021"),
                          (("FLNA (b)", "23,291", "21,000"), ("QFNA", "3,160", "3,000"), ("PBNA", "26,213", "24,000"),
                           ("LatAm", "9,779", "8,000"), ("Total", "86,392", "79,474")), Location(page=70))
    store.write("pep", "PEPSICO_2022_10K.pdf", [*others, divisions])
    hit = _hit(make_chunk("pep", "PEPSICO_2022_10K.pdf", "Our divisions in North America", page=4))
    done = compute("What was the combined 2022 net revenue of PepsiCo's three North American divisions (Frito-Lay "
                   "North America, Quaker Foods North America and PepsiCo Beverages North America)?", [hit], store)
    assert done is not None and done.hit is not None, done and done.note
    assert done.table.name == "p. 70 table 1" and done.result.rows[0][0] == 23291 + 3160 + 26213, done.sql


def test_a_table_whose_header_is_a_name_the_question_gives_is_tried_first(tmp_path):
    """"Sam's Club's operating income": of a 10-K's many tables with an "Operating income" row, the segment note
    whose column is "Sam's Club" (the file is Walmart's: its own name would tell no table apart)."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    others = [DataTable(f"p. {page} table 1", f"Results {page}", ("(Amounts in millions)", "Walmart U.S.", "Total"),
                        (("Fiscal Year Ended January 31, 2018", "", ""), ("Operating income", "100", "200"),
                         ("Fiscal Year Ended January 31, 2017", "", ""), ("Operating income", "90", "180")),
                        Location(page=page)) for page in range(10, 40)]
    segments = DataTable(
        "p. 86 table 1", "Segments", ("(Amounts in millions)", "Walmart U.S.", "Sam's Club", "Consolidated"),
        (("Fiscal Year Ended January 31, 2018", "", "", ""), ("Operating income (loss)", "17,869", "982", "20,437"),
         ("Fiscal Year Ended January 31, 2017", "", "", ""), ("Operating income (loss)", "17,745", "1,671", "22,764")),
        Location(page=86))
    store.write("wmt", "WALMART_2018_10K.pdf", [*others, segments])
    hit = _hit(make_chunk("wmt", "WALMART_2018_10K.pdf", "Walmart operating income by fiscal year", page=4))
    done = compute("By what percentage did Sam's Club's operating income change in fiscal 2018 compared with "
                   "fiscal 2017?", [hit], store)
    assert done is not None and done.hit is not None, done and done.note
    assert done.table.name == "p. 86 table 1" and done.result.rows[0][-1] == pytest.approx(-41.23), done.sql


def test_a_sheet_holding_the_place_a_demonym_names_is_a_candidate_though_retrieval_missed_it(tmp_path):
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import candidate_tables
    from document_processor import DataTable, Location

    store = TableStore(tmp_path / "tables.duckdb")
    countries = DataTable("gapminder", "gapminder", ("country", "continent", "gdpPercap"),
                          (("Norway", "Europe", "49357.19"), ("Japan", "Asia", "31656.07")),
                          Location(sheet="gapminder", cells="A1:C3"))
    store.write("g", "gapminder.csv", [countries])
    found, _ = candidate_tables(store, [], "Which European country had the highest GDP per person in 2007?")
    assert [t.name for t in found] == ["gapminder"]


def test_a_file_the_question_names_is_the_only_one_whose_tables_are_candidates(tmp_path):
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import candidate_tables
    from document_processor import DataTable, Location

    store = TableStore(tmp_path / "tables.duckdb")
    budget = DataTable("Budget", "Budget", ("Item", "Amount"), (("Rent", "1200"), ("Food", "400")),
                       Location(sheet="Budget", cells="A1:B3"))
    other = DataTable("p. 2 table 1", "Costs", ("Item", "Amount"), (("Rent", "900"),), Location(page=2))
    store.write("b", "Budget_2023.xlsx", [budget])
    store.write("o", "report.pdf", [other])
    found, _ = candidate_tables(store, [], "What do the amounts in Budget_2023 add up to?")
    assert [t.file_name for t in found] == ["Budget_2023.xlsx"]
    found, _ = candidate_tables(store, [], "What do the amounts on the Budget sheet of budget_2023.xlsx add up to?")
    assert [t.file_name for t in found] == ["Budget_2023.xlsx"]
    # "report" alone is a plain word, not a file's name: nothing is narrowed to report.pdf
    found, _ = candidate_tables(store, [], "What does the report say the rent amount is?")
    assert found == []


def test_a_sheet_the_question_names_is_the_first_candidate(tmp_path):
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import candidate_tables
    from document_processor import DataTable, Location

    store = TableStore(tmp_path / "tables.duckdb")
    sheets = [DataTable(name, name, ("Item", "Field2"), (("a", "10"), ("z", "42")), Location(sheet=name, cells="A1:B3"))
              for name in ("Tabelle1", "Tabelle3", "Pie", "Summary")]
    store.write("x", "pivot.xlsx", sheets)
    found, prior = candidate_tables(store, [], "On Tabelle1, how much bigger is Field2 for item z than for item a?")
    assert [t.name for t in found if prior.get(t.table_id, 0) >= 1.0] == ["Tabelle1"]
    found, prior = candidate_tables(store, [], "On the Pie sheet, what share of the total is the largest value?")
    assert [t.name for t in found if prior.get(t.table_id, 0) >= 1.0] == ["Pie"]
    found, prior = candidate_tables(store, [], "What does the summary say about item z?")  # a plain word
    assert not [t for t in found if prior.get(t.table_id, 0) >= 1.0]


def _value(computed: dict):
    return computed["rows"][0][computed["columns"].index("value")]


def _budgets(tmp_path, fake_embedder, amounts: dict[str, dict[str, int]]):
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in amounts.items():
        sheet = book.create_sheet(name)
        sheet.append(["Item", "Amount"])
        for item, amount in rows.items():
            sheet.append([item, amount])
    path = tmp_path / "household.xlsx"
    book.save(path)
    assert kb.ingest_file(path).status == "indexed"
    return wiring.build_for(wiring.ModelConfig("offline"), kb, fake_embedder)


def test_when_another_table_reads_the_question_as_well_and_gives_another_figure_the_answer_says_so(
        tmp_path, fake_embedder):
    agent = _budgets(tmp_path, fake_embedder, {"Budget 2023": {"Rent": 1200, "Food": 400},
                                               "Budget 2024": {"Rent": 1350, "Food": 420}})
    result = agent.ask("What is the amount for rent?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    figures = {_value(computed), _value(computed["rival"])}
    assert figures == {1200, 1350}  # each sheet's cell, one the answer's, the other its rival's
    assert computed["table"] != computed["rival"]["table"]
    stated = [f for f in ("1,200", "1,350") if f in result.answer]
    assert len(stated) == 1, result.answer  # one answer to one question, never both figures
    assert "Another table reads the question almost as well" in result.answer
    assert computed["rival"]["cells"] in result.answer  # where the other figure is
    assert result.confidence <= 0.5 and result.confidence_features["rival"] == 1.0
    assert {c.location.sheet for c in result.citations} == {"Budget 2023", "Budget 2024"}  # both among the Sources
    assert all(c.verdict == "supported" for c in result.claims)  # the engine's note is not a claim


def test_a_year_or_a_sheet_the_question_names_leaves_no_rival(tmp_path, fake_embedder):
    agent = _budgets(tmp_path, fake_embedder, {"Budget 2023": {"Rent": 1200, "Food": 400},
                                               "Budget 2024": {"Rent": 1350, "Food": 420}})
    for question, figure in (("What is the amount for rent in 2024?", "1350"),
                             ("On the Budget 2023 sheet, what is the amount for rent?", "1200")):
        result = agent.ask(question)
        computed = next(t for t in result.trace if t["step"] == "retrieve")["details"].get("computed", {})
        assert "rival" not in computed and figure in result.answer.replace(",", ""), (question, result.answer)
        assert "Another table" not in result.answer and not result.confidence_features["rival"]


def test_tables_that_give_the_same_figure_are_no_rivals(tmp_path, fake_embedder):
    agent = _budgets(tmp_path, fake_embedder, {"Budget": {"Rent": 1200, "Food": 400},
                                               "Copy of Budget": {"Rent": 1200, "Food": 400}})
    result = agent.ask("What is the amount for rent?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert _value(computed) == 1200 and "rival" not in computed
    assert "1,200" in result.answer and "Another table" not in result.answer


def test_a_table_question_opens_the_tables_file_a_few_times_not_once_a_read(tmp_path, fake_embedder, monkeypatch):
    """The rules read ~30 things of up to 18 tables (layouts, values, results): one connection for them all, one for
    the listings, one for the schemas a model is shown; none held while the model writes its query."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute

    agent = _budgets(tmp_path, fake_embedder, {f"Budget {year}": {"Rent": year - 1000, "Food": 400}
                                               for year in range(2015, 2025)})
    hits = agent.retriever.retrieve("What is the amount for rent?", k=8)
    store = agent.tables
    opened, held = [], []
    real = TableStore._open
    monkeypatch.setattr(TableStore, "_open", lambda self, write: (opened.append(write), real(self, write))[1])

    def write_sql(question, schemas):  # a model that fails: the rules answer
        held.append(store._held is not None)
        return None

    done = compute("What is the amount for rent?", hits, store, write_sql)
    assert done is not None and done.hit is not None and done.rival is not None  # ten sheets of one shape
    assert len(opened) <= 4 and not any(opened) and held == [False]


def test_two_results_are_compared_by_what_they_state_not_by_the_rows_they_read(tmp_path):
    from advanced_retrieval.tables import QueryResult, TableStore
    from agentic_rag.tables.compute import _figures
    from document_processor import DataTable, Location

    store = TableStore(tmp_path / "tables.duckdb")
    store.write("d", "a.xlsx", [DataTable("S", "S", ("Item", "Growth"), (("x", "1"),), Location(sheet="S"))])
    table = store.tables()[0]
    one = QueryResult("", ("_row", "label", "Growth", "rows"), ((3, "Rent", 5.0, 2),))
    other = QueryResult("", ("_row", "label", "Growth", "rows"), ((9, "Rent", 5.0, 4),))
    grown = QueryResult("", ("_row", "label", "Growth", "rows"), ((3, "Rent", 6.0, 2),))
    assert _figures(one, table) == _figures(other, table)  # the same figure read at other rows
    assert _figures(one, table) != _figures(grown, table)  # a column whose name holds "row" is a figure


def _data_agent(tmp_path, embedder, files: dict) -> tuple:
    """The knowledge base and an offline agent over data files written to tmp_path ({name: (header, rows)})."""
    for name, (header, rows) in files.items():
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(rows)
        (tmp_path / name).write_text(out.getvalue())
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=embedder, environ={}, isolate=False)
    assert [r.status for r in kb.ingest_many([tmp_path / n for n in files])] == ["indexed"] * len(files)
    return kb, wiring.build_for(wiring.ModelConfig("offline"), kb, embedder)


def _computed_by(agent):
    """A function of a question: the retrieve step's record of what was computed for it (None: no table asked)."""
    def computed(question: str):
        return next(t for t in agent.ask(question).trace if t["step"] == "retrieve")["details"].get("computed")
    return computed


def test_a_data_file_whose_headers_run_words_together_is_read_by_those_words(tmp_path, fake_embedder):
    # a statistics package's data file: "realgdp", "realcons", "tbilrate" are real GDP, real consumption and the
    # Treasury bill rate; a question writes the words
    rows = [(1959 + i // 4, 1 + i % 4, 2700.0 + 10 * i, 1700.0 + 7 * i, round(2.5 + 0.1 * i, 2)) for i in range(40)]
    header = ["year", "quarter", "realgdp", "realcons", "tbilrate"]
    _, agent = _data_agent(tmp_path, fake_embedder, {"macro.csv": (header, rows)})
    result = agent.ask("What was the highest Treasury bill rate in macro.csv?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert '"tbilrate"' in computed["sql"] and computed["rows"][0][-1] == pytest.approx(max(r[4] for r in rows))
    # the cited passage says how the header was read, for the user to check it
    assert 'Headers read as: tbilrate: "Treasury bill rate"' in result.citations[0].text, result.citations[0].text
    result = agent.ask("What was the average real GDP in 1961 in macro.csv?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert '"realgdp"' in computed["sql"], computed
    assert computed["rows"][0][0] == pytest.approx(sum(r[2] for r in rows if r[0] == 1961) / 4)


def test_a_data_files_years_months_and_run_together_headers_are_read_as_a_reader_names_them(tmp_path, fake_embedder):
    # years by month (a row a year, a column a month), a yearly series from the 1700s, and a file of districts whose
    # headers are abbreviations: "PTRATIO" (pupil-teacher ratio), "LOWINC" (percentage of low-income pupils)
    months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
    temps = {year: [round(20 + (year - 1950) * 0.3 + m * 0.5, 2) for m in range(12)] for year in range(1950, 1960)}
    spots = {year: (year * 7) % 113 for year in range(1700, 1800)}
    districts = [(f"D{i}", round(15 + (i * 7) % 13 + i / 100, 2), round(10 + (i * 11) % 80 + i / 100, 2))
                 for i in range(1, 41)]
    files = {"elnino.csv": (["YEAR", *months], [[y, *t] for y, t in temps.items()]),
             "sunspots.csv": (["YEAR", "SUNACTIVITY"], [[y, v] for y, v in spots.items()]),
             "schools.csv": (["DISTRICT", "PTRATIO", "LOWINC"], [list(d) for d in districts])}
    _, agent = _data_agent(tmp_path, fake_embedder, files)
    computed = _computed_by(agent)

    found = computed("What was the El Nino sea surface temperature in March 1952?")
    assert '"MAR"' in found["sql"] and found["rows"][0][-1] == temps[1952][2], found
    found = computed("What was the average January temperature in elnino.csv?")
    assert found["rows"][0][0] == pytest.approx(sum(t[0] for t in temps.values()) / len(temps)), found
    found = computed("What was the sunspot activity in 1750?")
    assert '"YEAR" = 1750' in found["sql"] and found["rows"][0][-1] == spots[1750], found
    found = computed("What is the highest pupil-teacher ratio among the school districts?")
    assert '"PTRATIO"' in found["sql"] and found["rows"][0][-1] == max(d[1] for d in districts), found
    found = computed("What is the largest percentage of low-income students in a district in schools.csv?")
    assert '"LOWINC"' in found["sql"] and found["rows"][0][-1] == max(d[2] for d in districts), found


def test_a_header_holding_the_number_a_name_qualifies_answers_for_that_name(tmp_path, fake_embedder):
    # a data file of committees whose headers hold the Congress they count ("BILLS104": bills of the 104th
    # Congress); the word "Congress" is nowhere in the file, and a question naming it is still this file's
    committees = [("Appropriations", 49, 56), ("Budget", 23, 41), ("Rules", 44, 104), ("Judiciary", 211, 258)]
    rows = [(name, b104, 30 + i, b103) for i, (name, b104, b103) in enumerate(committees)]
    header = ["COMMITTEE", "BILLS104", "SIZE", "BILLS103"]
    _, agent = _data_agent(tmp_path, fake_embedder, {"committee.csv": (header, rows)})
    computed = _computed_by(agent)

    found = computed("How many bills did the Rules committee handle in the 104th Congress?")
    assert found and '"BILLS104"' in found["sql"] and found["rows"][0][-1] == 44, found
    found = computed("What was the total number of bills across all committees in the 103rd Congress?")
    assert found and '"BILLS103"' in found["sql"] and found["rows"][0][0] == sum(c[2] for c in committees), found
    # no header holds the 105th, and "Canada" qualifies nothing the file holds: no figure
    for question in ("How many bills did the Rules committee handle in the 105th Congress?",
                     "How many bills did the Rules committee handle in the 104th Parliament of Canada?"):
        found = computed(question)
        assert not (found and found["sql"]), found


def test_how_many_rows_or_records_a_file_has_is_the_count_of_its_rows(tmp_path, fake_embedder):
    rows = [(f"item {i}", ("north", "south", "east")[i % 3], 10 + i) for i in range(37)]
    _, agent = _data_agent(tmp_path, fake_embedder, {"inventory.csv": (["name", "region", "units"], rows)})
    computed = _computed_by(agent)

    for question in ("How many rows does inventory.csv have?", "How many records are in inventory.csv?"):
        found = computed(question)
        assert found and "count(*)" in found["sql"] and found["rows"][0][0] == 37, (question, found)
    found = computed("How many entries in inventory.csv are from the south region?")
    assert found and found["rows"][0][0] == sum(1 for r in rows if r[1] == "south"), found


def test_a_median_is_the_middle_value_not_the_mean(tmp_path, fake_embedder):
    import statistics

    rows = [(f"h{i}", ("urban", "rural")[i % 2], 300 + (i * 37) % 500 + (4000 if i == 5 else 0)) for i in range(24)]
    _, agent = _data_agent(tmp_path, fake_embedder, {"households.csv": (["household", "area", "income"], rows)})
    computed = _computed_by(agent)

    incomes = [r[2] for r in rows]
    assert statistics.median(incomes) != pytest.approx(statistics.mean(incomes))  # one outlier pulls the mean
    found = computed("What is the median income in households.csv?")
    assert found and "median(" in found["sql"], found
    assert found["rows"][0][0] == pytest.approx(statistics.median(incomes)), found
    found = computed("What is the median income of rural households in households.csv?")
    assert found["rows"][0][0] == pytest.approx(statistics.median(r[2] for r in rows if r[1] == "rural")), found
    found = computed("What is the average income in households.csv?")
    assert found["rows"][0][0] == pytest.approx(statistics.mean(incomes)), found


def test_a_series_measure_is_what_its_file_is_named_for_and_comparatives_bound_a_column(tmp_path, fake_embedder):
    # years as a statistics package writes them, beside the measure (a column of figures, not of dates)
    spots = {year: round((year * 37) % 191 + 0.5, 1) for year in range(1700, 1790)}
    patients = [(50 + (i * 83) % 900, i % 2, 30 + i % 40) for i in range(50)]
    files = {"sunspots.csv": (["YEAR", "SUNACTIVITY"], [[f"{y}.0", v] for y, v in spots.items()]),
             "heart.csv": (["survival", "censors", "age"], [list(p) for p in patients])}
    _, agent = _data_agent(tmp_path, fake_embedder, files)
    computed = _computed_by(agent)

    # a yearly series named for what it measures: its one measure, not its years
    found = computed("Which year had the most sunspots?")
    assert found and '"SUNACTIVITY"' in found["sql"], found
    assert found["rows"][0][-1] == max(spots.values()), found
    # a thing the file does not hold is not its measure
    found = computed("Which year had the highest temperature in sunspots.csv?")
    assert not (found and found["sql"]), found
    # a decade or a century is its span of years, never every row
    found = computed("What was the average sunspot activity in the 1750s?")
    assert found["rows"][0][0] == pytest.approx(sum(v for y, v in spots.items() if 1750 <= y <= 1759) / 10), found
    found = computed("What was the median sunspot activity in the 1700s?")
    import statistics
    assert found["rows"][0][0] == pytest.approx(statistics.median(spots.values())), found  # 1700-1789: all of them
    assert "BETWEEN 1700 AND 1799" in found["sql"], found
    # "longer than 500 days", "younger than 40": a bound on the column the words name
    found = computed("How many patients in heart.csv survived longer than 500 days?")
    assert found and found["rows"][0][0] == sum(1 for p in patients if p[0] > 500), found
    found = computed("How many patients in heart.csv survived shorter than 200 days?")
    assert found and found["rows"][0][0] == sum(1 for p in patients if p[0] < 200), found


def test_a_bound_on_one_column_selects_the_rows_another_column_is_aggregated_over(tmp_path, fake_embedder):
    households = [(300 + (i * 97) % 2400, 150 + (i * 53) % 900) for i in range(60)]
    _, agent = _data_agent(tmp_path, fake_embedder, {"engel.csv": (["income", "foodexp"], households)})
    computed = _computed_by(agent)

    rich = [f for i, f in households if i > 1000]
    found = computed("What is the average food expenditure for households with income above 1000 in engel.csv?")
    assert found and '"income" > 1000' in found["sql"], found
    assert found["rows"][0][0] == pytest.approx(sum(rich) / len(rich)), found  # the food expenditure's, not income's
    # a bound the question puts on the column it aggregates stays on it
    found = computed("How many households in engel.csv have income above 1000?")
    assert found["rows"][0][0] == len(rich), found


def test_a_data_files_own_name_before_the_column_a_question_asks_of(tmp_path, fake_embedder):
    # "which barley variety", "how many different barley varieties": "barley" names the file, "variety" the column;
    # "the mpg of 8 cylinder cars": the 8 is the cylinders', not the mpg's
    varieties = ["Manchuria", "Glabron", "Svansota", "Velvet", "Trebi"]
    rows = [(round(20 + (i * 7) % 30 + (12 if v == "Trebi" else 0) + 0.5, 1), v, site)
            for i, (v, site) in enumerate((v, s) for v in varieties for s in ("Crookston", "Morris", "Waseca"))]
    cars = [(f"car {i}", 10 + (i * 3) % 25, (4, 6, 8)[i % 3]) for i in range(30)]
    files = {"barley.csv": (["yield", "variety", "site"], rows),
             "cars.csv": (["Name", "Miles_per_Gallon", "Cylinders"], cars)}
    _, agent = _data_agent(tmp_path, fake_embedder, files)
    computed = _computed_by(agent)

    totals = {v: sum(r[0] for r in rows if r[1] == v) for v in varieties}
    found = computed("Which barley variety had the highest total yield?")
    assert found and found["rows"][0][1] == max(totals, key=totals.get), found
    assert found["rows"][0][2] == pytest.approx(max(totals.values())), found
    found = computed("How many different barley varieties are there?")
    assert found and found["rows"][0][0] == len(varieties), found
    found = computed("What's the average mpg of 8-cylinder cars?")
    eights = [c[1] for c in cars if c[2] == 8]
    assert found and found["rows"][0][0] == pytest.approx(sum(eights) / len(eights)), found


def test_a_header_writing_its_operation_short_is_read_not_recomputed(tmp_path, fake_embedder):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Headcount"
    sheet.append(["Department", "Employees", "Avg salary"])
    for row in [("Engineering", 42, 98000), ("Sales", 25, 67000), ("Support", 18, 52000), ("Finance", 7, 88000)]:
        sheet.append(list(row))
    book.save(tmp_path / "staff.xlsx")
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    assert [r.status for r in kb.ingest_many([tmp_path / "staff.xlsx"])] == ["indexed"]
    agent = wiring.build_for(wiring.ModelConfig("offline"), kb, fake_embedder)
    # "Avg salary" is the average salary the question asks for: Finance's cell, not the mean of the column
    found = next(t for t in agent.ask("What is the average salary in Finance?").trace
                 if t["step"] == "retrieve")["details"].get("computed")
    assert found and found["rows"][0][-1] == 88000, found


def test_a_sheet_row_of_a_name_is_read_across_its_quarters(tmp_path, fake_embedder):
    import openpyxl

    sales = {"North": (120, 135, 150, 160), "South": (90, 95, 110, 105), "East": (200, 180, 210, 230)}
    staff = {"North": 12, "South": 30, "East": 21}
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sales 2023"
    sheet.append(["Region", "Q1", "Q2", "Q3", "Q4", "Staff"])
    for region, quarters in sales.items():
        sheet.append([region, *quarters, staff[region]])
    book.save(tmp_path / "sales.xlsx")
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    assert [r.status for r in kb.ingest_many([tmp_path / "sales.xlsx"])] == ["indexed"]
    agent = wiring.build_for(wiring.ModelConfig("offline"), kb, fake_embedder)
    computed = _computed_by(agent)

    found = computed("What was the average quarterly sales of the South region?")
    assert found and found["rows"][0][0] == pytest.approx(sum(sales["South"]) / 4), found
    found = computed("In which quarter did the East region sell the most?")
    assert found and found["rows"][0] == ["Q4", 230], found
    found = computed("Which region had the highest sales in Q4?")  # a column's ranking, as before
    assert found and found["rows"][0][1:] == ["East", 230], found
    # a question naming a column ("staff") ranks that column, though it also names a row ("North")
    found = computed("Which region had the largest staff, North or another?")
    assert found and found["rows"][0][1:] == ["South", 30], found


def test_what_columns_a_file_has_is_its_header_read_whole(tmp_path, fake_embedder):
    headers = {"inventory.csv": ["item", "region", "units", "unit_price"], "staff.csv": ["name", "department"]}
    kb, agent = _data_agent(tmp_path, fake_embedder, {
        name: (header, [[f"{h}{i}" if j < 2 else i * 3 for j, h in enumerate(header)] for i in range(12)])
        for name, header in headers.items()})
    for question in ("What columns does inventory.csv have?", "How many columns are in inventory.csv?"):
        result = agent.ask(question)
        computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
        assert computed["cells"] == "inventory!A1:D1", computed  # the header row's cells
        assert "inventory: 4 columns (item, region, units, unit_price) and 12 rows" in result.answer, result.answer
    # a question about the columns' figures is no question about the columns
    found = next(t for t in agent.ask("How many columns in inventory.csv hold prices?").trace
                 if t["step"] == "retrieve")["details"].get("computed")
    assert not (found and found["sql"].startswith('SELECT count(*) AS "rows"')), found
    found = next(t for t in agent.ask("What is the total of the units column in inventory.csv?").trace
                 if t["step"] == "retrieve")["details"]["computed"]
    assert found["rows"][0][0] == sum(i * 3 for i in range(12)), found
    # a workbook of two sheets: the sheet the question names, and no one sheet for the whole workbook
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Budget"
    book.active.append(["Line", "Planned", "Actual"])
    book.active.append(["Rent", 1200, 1250])
    people = book.create_sheet("People")
    people.append(["Name", "Role"])
    people.append(["Ann", "Lead"])
    book.save(tmp_path / "plan.xlsx")
    assert [r.status for r in kb.ingest_many([tmp_path / "plan.xlsx"])] == ["indexed"]
    assert "People: 2 columns (Name, Role) and 1 row" in agent.ask("What columns does the People sheet have?").answer
    whole = next(t for t in agent.ask("What columns does plan.xlsx have?").trace
                 if t["step"] == "retrieve")["details"].get("computed")
    assert not (whole and whole["sql"]), whole


def test_a_question_naming_quarters_reads_the_table_of_those_quarters_not_another_quarters(tmp_path):
    # retrieval found the 10-Q of 2Q22 (its table of the three months ended June 30, 2022 and 2021); the question
    # asks for 2Q20 to 1Q21, which the 10-Q of 1Q21 prints as columns
    from advanced_retrieval import Hit
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import candidate_tables
    from agentic_rag.tables.plan import plans
    from document_processor import Chunk, DataTable, Location

    store = TableStore(tmp_path / "tables.duckdb")
    later = DataTable("p. 5 table 1", "Selected income statement data",
                      ("(in millions)", "Three months ended June 30, 2022", "Three months ended June 30, 2021"),
                      (("Total net revenue", "31,630", "30,479"), ("Net income", "8,649", "11,948")), Location(page=5))
    earlier = DataTable("p. 3 table 1", "Consolidated financial highlights", ("", "1Q21", "4Q20", "3Q20", "2Q20", "1Q20"),
                        (("Total net revenue", "32,266", "29,335", "29,255", "33,075", "28,251"),
                         ("Net income", "14,300", "12,136", "9,443", "4,687", "2,865")), Location(page=3))
    store.write("q2", "BANK_2022Q2_10Q.pdf", [later])
    store.write("q1", "BANK_2021Q1_10Q.pdf", [earlier])
    question = "Add up the bank's net income for the four quarters from 2Q20 through 1Q21."
    hit = Hit(chunk=Chunk(id="c1", doc_id="q2", file_name="BANK_2022Q2_10Q.pdf", file_type="pdf", text="...",
                          location=Location(page=5)), score=1.0, rank=1, strategy="hybrid")
    found, prior = candidate_tables(store, [hit], question)
    assert {t.file_name for t in found} == {"BANK_2022Q2_10Q.pdf", "BANK_2021Q1_10Q.pdf"}
    best = plans(question, found, {t.table_id: {} for t in found}, prior)[0]
    assert best.table.file_name == "BANK_2021Q1_10Q.pdf", best
    assert store.query(best.sql).rows[0][-1] == 4687 + 9443 + 12136 + 14300
    # the table of other quarters answers none of it (it was read as "Net income" 2022 vs 2021 before)
    assert plans(question, [t for t in found if t.doc_id == "q2"], {t.table_id: {} for t in found}, prior) == []


def test_a_section_of_a_balance_sheet_ends_at_its_own_total(tmp_path):
    """"Current assets:" heads the rows down to "Total current assets"; "Total assets" below them is the whole
    statement's. Read as under "Current assets" too, it was the same words as "Total current assets", and the
    question for total assets got the current ones."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    rows = (("Assets", "", ""), ("Current assets:", "", ""), ("Cash and cash equivalents", "737,877", "431,560"),
            ("Merchandise inventories, net", "1,603,451", "1,499,218"),
            ("Total current assets", "2,709,304", "2,281,183"), ("Property and equipment, net", "1,009,273", "914,476"),
            ("Total assets", "5,370,411", "4,764,379"), ("Current liabilities:", "", ""),
            ("Accounts payable", "559,527", "552,730"), ("Total current liabilities", "1,681,775", "1,558,010"),
            ("Deferred income taxes", "55,346", "39,693"), ("Total liabilities", "3,410,600", "3,229,006"))
    sheet = DataTable("p. 7 table 1", "Condensed Consolidated Balance Sheets",
                      ("(In thousands)", "January 28, 2023", "January 29, 2022"), rows, Location(page=7))
    store.write("ulta", "RETAILER_2023_EARNINGS.pdf", [sheet])
    hit = _hit(make_chunk("ulta", "RETAILER_2023_EARNINGS.pdf", "Condensed Consolidated Balance Sheets", page=7))
    for question, value in (("What were the total assets as of January 28, 2023?", 5370411),
                            ("What were the total current assets as of January 28, 2023?", 2709304),
                            ("What were the total liabilities as of January 29, 2022?", 3229006),
                            ("What were the total current liabilities as of January 29, 2022?", 1558010)):
        done = compute(question, [hit], store)
        assert done is not None and done.hit is not None, (question, done and done.note)
        assert done.result.rows[0][-1] == value, (question, done.sql, done.result.rows)


def test_a_quarter_written_as_an_ordinal_number_is_the_quarter_a_question_spells_out(tmp_path):
    """A store update lists its rows as "1st Quarter" ... "4th Quarter"; "the third quarter" is the 3rd."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    update = DataTable("p. 8 table 1", "Store Update", ("Quarter", "Net sales", "Stores opened"),
                       (("1st Quarter", "2,350", "10"), ("2nd Quarter", "2,412", "7"), ("3rd Quarter", "2,518", "18"),
                        ("4th Quarter", "3,227", "12")), Location(page=8))
    store.write("shop", "SHOP_EARNINGS.pdf", [update])
    hit = _hit(make_chunk("shop", "SHOP_EARNINGS.pdf", "Store Update", page=8))
    for question, value in (("What were net sales in the third quarter?", 2518),
                            ("What were net sales in the 2nd quarter?", 2412)):
        done = compute(question, [hit], store)
        assert done is not None and done.hit is not None, (question, done and done.note)
        assert done.result.rows[0][-1] == value, (question, done.sql, done.result.rows)


def test_a_defined_ratio_tells_its_part_from_its_whole_when_their_labels_share_words(tmp_path):
    """"Effective tax rate": income taxes over earnings before income taxes. Both labels hold "income taxes", and
    the first mention of each in "the ratio of income tax expense to income before income taxes" put the whole
    first (2,600.2 / 480.5 = 5.41). A per-share row of a statement "in millions, except per share data" is not
    said in millions."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    earnings = DataTable("p. 48 table 1", "Consolidated Statements of Earnings (In Millions, Except per Share Data)",
                         ("(In Millions, Except per Share Data)", "Fiscal Year 2020", "2019"),
                         (("Net sales", "$ 17,626.6", "$ 16,865.2"),
                          ("Total earnings before income taxes and after-tax earnings from joint ventures", "2,600.2",
                           "2,082.0"),
                          ("Total income taxes", "480.5", "367.8"), ("Dividends per share", "$ 1.96", "$ 1.96")),
                         Location(page=48))
    store.write("gis", "MILLS_2020_10K.pdf", [earnings])
    hit = _hit(make_chunk("gis", "MILLS_2020_10K.pdf", "Consolidated Statements of Earnings", page=48))
    done = compute("What was the effective tax rate in fiscal 2020?", [hit], store)
    assert done.result.rows[0][-1] == pytest.approx(0.1848, abs=1e-4), (done.sql, done.result.rows)
    done = compute("What were the dividends per share in fiscal 2019?", [hit], store)
    assert done.result.rows[0][-1] == 1.96 and "million" not in done.hit.chunk.text.splitlines()[1], done.hit.chunk.text
    done = compute("What were net sales in fiscal 2019?", [hit], store)
    assert "$16,865.2 ($16.87 billion)" in done.hit.chunk.text, done.hit.chunk.text


def test_a_current_ratio_is_worked_out_from_the_balance_sheet_though_its_name_says_ratio(tmp_path):
    """"Current ratio" names a ratio by its own word: it is still the defined one (total current assets over
    total current liabilities), read as a ratio, not as a percentage."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    sheet = DataTable("p. 50 table 1", "Consolidated Balance Sheets", ("(In Millions)", "May 31, 2020", "May 26, 2019"),
                      (("Cash and cash equivalents", "1,677.8", "450.0"), ("Total current assets", "5,121.3", "4,186.5"),
                       ("Total assets", "30,806.7", "30,111.2"), ("Total current liabilities", "7,491.5", "7,087.1"),
                       ("Total liabilities", "21,912.6", "22,191.8")), Location(page=50))
    store.write("gis", "MILLS_2020_10K.pdf", [sheet])
    hit = _hit(make_chunk("gis", "MILLS_2020_10K.pdf", "Consolidated Balance Sheets", page=50))
    done = compute("What was the current ratio at May 31, 2020?", [hit], store)
    assert done.result.rows[0][-1] == pytest.approx(0.6836, abs=1e-4), (done.sql, done.result.rows)
    assert "current ratio:" in done.hit.chunk.text and "%" not in done.hit.chunk.text.splitlines()[1]


def test_a_row_of_the_rest_is_not_the_figure_a_question_names_without_other(tmp_path):
    """"Long-term debt at the end of 2022": the balance sheet's row, not "Other long-term debt" of the debt note
    (what is left after the notes listed above it), though the note is all about long-term debt."""
    from advanced_retrieval.tables import TableStore
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    sheet = DataTable("p. 10 table 1", "CONDENSED CONSOLIDATED BALANCE SHEETS", ("(MILLIONS)", "July 2, 2023",
                                                                              "December 31, 2022"),
                      (("Total current liabilities", "34,647", "42,138"), ("Long-term debt", "61,356", "32,884"),
                       ("Total liabilities", "120,875", "101,288")), Location(page=10))
    note = DataTable("p. 23 table 1", "Long-Term Debt", ("(MILLIONS)", "July 2, 2023", "December 31, 2022"),
                     (("Notes due 2024", "1,000", "1,000"), ("Total long-term debt, principal amount", "60,000", "31,000"),
                      ("Other long-term debt", "22", "20"),
                      ("Total long-term debt, carried at historical proceeds, as adjusted", "61,356", "32,884")),
                     Location(page=23))
    store.write("pfe", "PHARMA_2023Q2_10Q.pdf", [sheet, note])
    hits = [_hit(make_chunk("pfe", "PHARMA_2023Q2_10Q.pdf", "Long-Term Debt notes due", page=23)),
            _hit(make_chunk("pfe", "PHARMA_2023Q2_10Q.pdf", "balance sheets long-term debt", page=10))]
    done = compute("What was the long-term debt at the end of 2022?", hits, store)
    assert done.result.rows[0][1] != "Other long-term debt", (done.sql, done.result.rows)
    assert compute("What was the other long-term debt at the end of 2022?", hits, store).result.rows[0][1] == \
        "Other long-term debt"


def _statements(tmp_path, doc_id: str, file_name: str, *tables):
    """A table store holding `tables` of one document, and a hit on each table's page (in the order given)."""
    from advanced_retrieval.tables import TableStore
    from tests.helpers.agent import _hit, make_chunk

    store = TableStore(tmp_path / "tables.duckdb")
    store.write(doc_id, file_name, list(tables))
    return store, [_hit(make_chunk(doc_id, file_name, t.title, page=t.location.page)) for t in tables]


def test_diluted_earnings_per_share_is_the_per_share_row_not_the_diluted_shares(tmp_path):
    """"Diluted earnings per share": the row of that name, not "Diluted" under the weighted-average shares ("per"
    is a word of the label the question also writes); in a statement naming the owners ("Earnings per share
    attributable to ACME common shareholders — diluted") the owners are the question's company."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    earnings = DataTable("p. 40 table 1", "Consolidated Statements of Earnings",
                         ("$ and shares in millions, except per share amounts", "2022", "2021"),
                         (("Net earnings", "1,419", "2,454"), ("Basic earnings per share", "6.31", "9.94"),
                          ("Diluted earnings per share", "6.29", "9.84"),
                          ("Weighted-average common shares outstanding:", "", ""), ("Basic", "224.8", "246.8"),
                          ("Diluted", "225.7", "249.3")), Location(page=40))
    store, hits = _statements(tmp_path, "shop", "SHOP_2022_10K.pdf", earnings)
    done = compute("What were the diluted earnings per share for 2021?", hits, store)
    assert done.result.rows[0][-1] == 9.84, (done.sql, done.result.rows)

    income = DataTable("p. 48 table 1", "Consolidated Statement of Income",
                       ("(Millions, except per share amounts)", "2022", "2021"),
                       (("Net income attributable to ACME", "5,777", "5,921"),
                        ("Weighted average ACME common shares outstanding — diluted", "567.6", "585.3"),
                        ("Earnings per share attributable to ACME common shareholders — diluted", "10.18", "10.12")),
                       Location(page=48))
    store, hits = _statements(tmp_path / "acme", "acme", "ACME_2022_10K.pdf", income)
    done = compute("What were ACME's diluted earnings per share in 2021?", hits, store)
    assert done.result.rows[0][-1] == 10.12, (done.sql, done.result.rows)


def test_a_figure_asked_excluding_a_part_is_the_row_leaving_it_out_never_the_part(tmp_path):
    """"Long-term debt, excluding the current portion": the debt note's "Total long-term debt, less current
    portion" (not its total with the current portion, nor "Current portion of long-term debt")."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    note = DataTable("p. 56 table 1", "Long-Term Debt", ("($ in millions)", "January 28, 2023", "January 29, 2022"),
                     (("2028 Notes", "500", "500"), ("2030 Notes", "650", "650"),
                      ("Finance lease obligations", "42", "40"), ("Total long-term debt", "1,176", "1,229"),
                      ("Less: current portion", "16", "13"),
                      ("Total long-term debt, less current portion", "1,160", "1,216")), Location(page=56))
    store, hits = _statements(tmp_path, "shop", "SHOP_2023_10K.pdf", note)
    done = compute("What was the long-term debt, excluding the current portion, as of January 28, 2023?", hits, store)
    assert done.result.rows[0][-1] == 1160, (done.sql, done.result.rows)
    sheet = DataTable("p. 39 table 1", "Consolidated Balance Sheets",
                      ("$ in millions", "January 28, 2023", "January 29, 2022"),
                      (("Current portion of long-term debt", "16", "13"), ("Total current liabilities", "8,979", "10,674"),
                       ("Long-term debt", "1,160", "1,216")), Location(page=39))
    store, hits = _statements(tmp_path / "sheet", "shop", "SHOP_2023_10K.pdf", sheet)
    done = compute("What was the long-term debt excluding the current portion at January 29, 2022?", hits, store)
    assert done.result.rows[0][-1] == 1216, (done.sql, done.result.rows)


def test_what_a_verb_of_the_question_acts_on_names_the_row(tmp_path):
    """"How much did the company record in restructuring charges", "pay in dividends to shareholders": the row
    the verb's object names in full ("Restructuring charges", "Dividends paid to shareholders") answers, though
    the verb names no row."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    flows = DataTable("p. 52 table 1", "Consolidated Statement of Cash Flows", ("(Millions)", "2022", "2021"),
                      (("Net income", "5,791", "5,929"), ("Restructuring charges", "147", "254"),
                       ("Dividends paid to shareholders", "(3,369)", "(3,420)"),
                       ("Purchases of treasury stock", "(1,464)", "(2,199)")), Location(page=52))
    store, hits = _statements(tmp_path, "acme", "ACME_2022_10K.pdf", flows)
    for question, value in (("How much did ACME record in restructuring charges in 2021?", 254),
                            ("How much did ACME pay in dividends to shareholders in 2021?", -3420)):
        done = compute(question, hits, store)
        assert done is not None and done.hit is not None, (question, done and done.note)
        assert done.result.rows[0][-1] == value, (question, done.sql, done.result.rows)


def test_a_summary_reprinting_the_statements_figures_without_their_scale_is_no_rival(tmp_path):
    """The MD&A's "Consolidated Results" prints the income statement's figures, its "$ in millions" on a line
    the table did not keep: the same figures, so the answer is not "another table gives a different figure"."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    summary = DataTable("p. 25 table 1", "Consolidated Results", ("Consolidated Performance Summary", "2023", "2022"),
                        (("Revenue", "46,298", "51,761"), ("Net earnings", "1,419", "2,454")), Location(page=25))
    statement = DataTable("p. 40 table 1", "Consolidated Statements of Earnings",
                          ("$ and shares in millions", "2023", "2022"),
                          (("Revenue", "46,298", "51,761"), ("Net earnings", "1,419", "2,454")), Location(page=40))
    store, hits = _statements(tmp_path, "shop", "SHOP_2023_10K.pdf", statement, summary)
    for question in ("What was the revenue in 2022?", "What was the net profit margin in 2023?"):
        done = compute(question, hits, store)
        assert done.hit is not None and done.rival is None, (question, done.rival and done.rival.cells)


def test_a_year_named_alone_is_not_read_from_a_quarters_column(tmp_path):
    """"Diluted net income per share in 2016": the income statement's year, not the quarterly data's "First
    Quarter 2016" column, which is no rival either."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    quarters = DataTable("p. 151 table 2", "Quarterly Data (Unaudited)",
                         ("label", "First Quarter 2016", "Second Quarter", "Third Quarter", "Fourth Quarter"),
                         (("Net operating revenues", "10,282", "11,539", "10,633", "9,409"),
                          ("Diluted net income per share", "0.34", "0.79", "0.24", "0.12")), Location(page=151))
    statement = DataTable("p. 74 table 1", "Consolidated Statements of Income", ("Year Ended December 31,", "2017",
                                                                                 "2016"),
                          (("Net operating revenues", "35,410", "41,863"), ("Diluted net income per share", "0.29",
                                                                            "1.49")), Location(page=74))
    store, hits = _statements(tmp_path, "cola", "COLA_2017_10K.pdf", quarters, statement)
    done = compute("What was the diluted net income per share in 2016?", hits, store)
    assert done.result.rows[0][-1] == 1.49 and done.rival is None, (done.sql, done.rival and done.rival.cells)


def test_cash_from_operating_activities_is_not_read_from_the_investing_or_financing_rows(tmp_path):
    """A cash flow statement's three sections are three kinds of figure: "net cash provided by operating
    activities" is not the summary of investing activities' "Net cash provided by (used in) investing activities",
    which is no rival either."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    investing = DataTable("p. 62 table 1", "Investing activities", ("Year Ended December 31,", "2017", "2016"),
                          (("Purchases of investments", "(16,520)", "(15,499)"),
                           ("Net cash provided by (used in) investing activities", "(2,385)", "(999)")),
                          Location(page=62))
    flows = DataTable("p. 77 table 1", "Consolidated Statements of Cash Flows", ("Year Ended December 31,", "2017",
                                                                                 "2016"),
                      (("Net income", "1,283", "6,550"), ("Net cash provided by operating activities", "6,995", "8,792"),
                       ("Net cash provided by (used in) financing activities", "(7,409)", "(6,545)")),
                      Location(page=77))
    store, hits = _statements(tmp_path, "cola", "COLA_2017_10K.pdf", investing, flows)
    done = compute("How much net cash was provided by operating activities in 2017?", hits, store)
    assert done.result.rows[0][-1] == 6995 and done.rival is None, (done.sql, done.rival and done.rival.cells)


def test_the_words_of_an_operation_do_not_rank_tables_for_a_growth_question(tmp_path):
    """"By what percentage did net sales grow from 2020 to 2021": the words "percentage" and "grow" say what to
    work out, not which table; sixty tables of percentage growth rates ("Growth in percent", "Percentage change")
    did not leave the income statement (whose page retrieval missed) among the tables tried."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    others = [DataTable(f"p. {page} table 1", f"Growth in percent {page}", ("Percentage change", "2021", "2020"),
                        ((f"Sales region {page}", "7.3", "1.0"), (f"Translation {page}", "1.9", "-4.2")),
                        Location(page=page)) for page in range(10, 70)]
    statement = DataTable("p. 90 table 1", "Consolidated Statement of Income", ("(Millions)", "2021", "2020"),
                          (("Net sales", "35,355", "32,184"), ("Cost of sales", "18,795", "16,605")), Location(page=90))
    store, hits = _statements(tmp_path, "acme", "ACME_2022_10K.pdf", *others, statement)
    done = compute("By what percentage did ACME's net sales grow from 2020 to 2021?", hits[:3], store)
    assert done is not None and done.hit is not None, done and done.note
    assert done.table.name == "p. 90 table 1", (done.table.name, done.sql)


def test_a_defined_ratio_reads_the_rows_its_definition_names_or_none(tmp_path):
    """"Gross profit margin" is gross profit over revenues: never gross profit over the consolidated net income
    (3.88, shown as the answer), nor, in a statement printing no gross profit, cost of sales over net sales."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    income = DataTable("p. 74 table 1", "CONSOLIDATED STATEMENTS OF INCOME", ("Year Ended December 31,", "2017", "2016"),
                       (("NET OPERATING REVENUES", "$ 35,410", "$ 41,863"), ("Cost of goods sold", "13,256", "16,465"),
                        ("GROSS PROFIT", "22,154", "25,398"), ("Selling, general and administrative expenses",
                                                               "12,834", "15,262"),
                        ("OPERATING INCOME", "7,501", "8,626"), ("CONSOLIDATED NET INCOME", "1,283", "6,550")),
                       Location(page=74))
    store, hits = _statements(tmp_path, "cola", "COLA_2017_10K.pdf", income)
    done = compute("What was the gross profit margin in 2016?", hits, store)
    assert done.hit is None or "NET INCOME" not in done.hit.chunk.text, done.hit.chunk.text
    income = DataTable("p. 48 table 1", "Consolidated Statement of Income", ("(Millions)", "2022", "2021"),
                       (("Net sales", "34,229", "35,355"), ("Cost of sales", "19,232", "18,795"),
                        ("Operating income", "6,539", "7,369")), Location(page=48))
    store, hits = _statements(tmp_path / "acme", "acme", "ACME_2022_10K.pdf", income)
    done = compute("What was the gross margin in 2021?", hits, store)
    assert done.hit is None or "Cost of sales" not in done.hit.chunk.text, done.hit.chunk.text
    done = compute("What was the operating margin in 2021?", hits, store)
    assert done.result.rows[0][-1] == pytest.approx(0.2084, abs=1e-4), (done.sql, done.result.rows)


def test_a_cash_flow_row_under_changes_in_operating_assets_is_no_balance(tmp_path):
    """"Merchandise inventories" under the cash flow statement's "Changes in operating assets and liabilities:" is
    the year's change; the inventories from one year end to the next are the balance sheet's (-13.83%), not a
    change of those changes (from -$328 to $809)."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    flows = DataTable("p. 42 table 1", "Consolidated Statements of Cash Flows",
                      ("$ in millions", "January 28, 2023", "January 29, 2022"),
                      (("Net earnings", "1,419", "2,454"),
                       ("Changes in operating assets and liabilities, net of acquired assets and liabilities:", "", ""),
                       ("Receivables", "(103)", "17"), ("Merchandise inventories", "809", "(328)"),
                       ("Total cash provided by operating activities", "1,824", "3,252")), Location(page=42))
    sheet = DataTable("p. 39 table 1", "Consolidated Balance Sheets",
                      ("$ in millions", "January 28, 2023", "January 29, 2022"),
                      (("Receivables, net", "1,141", "1,042"), ("Merchandise inventories", "5,140", "5,965"),
                       ("Total current assets", "8,802", "10,539")), Location(page=39))
    store, hits = _statements(tmp_path, "shop", "SHOP_2023_10K.pdf", flows, sheet)
    done = compute("By what percentage did merchandise inventories decrease from January 29, 2022 to January 28, "
                   "2023?", hits, store)
    assert done.table.name == "p. 39 table 1" and done.rival is None, (done.sql, done.rival and done.rival.cells)


def test_a_change_computed_between_two_dates_leaves_no_side_of_it_unanswered(tmp_path, fake_embedder):
    """"By how much did the stock price change between January 2000 and January 2010, in percent?": the engine
    computes the change from the two months' cells; the two sides the question is searched as ("stock price in
    January 2000", "... in January 2010") are that calculation's operands, not parts left unanswered (which capped
    the answer at 30% beside "Not found in the documents")."""
    rows = [("MSFT", f"{year}-{month:02d}-01", f"{20 + year - 2000 + month / 10:.2f}")
            for year in range(2000, 2011) for month in (1, 6)]
    kb, agent = _data_agent(tmp_path, fake_embedder, {"stocks.csv": (("symbol", "date", "price"), rows)})
    result = agent.ask("By how much did MSFT's stock price change between January 2000 and January 2010, in percent?")
    assert "computed by the engine" in result.answer and "Not found in the documents" not in result.answer, \
        result.answer


def test_the_parent_companys_own_statements_answer_only_a_question_about_the_parent(tmp_path):
    """A bank's 10-K ends with the holding company's condensed statements ("PARENT COMPANY – CONDENSED STATEMENTS
    OF CASH FLOWS"); the company's operating cash flow is the consolidated statement's, and the parent's is read
    only when the question says parent."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    parent = DataTable("p. 157 table 1", "PARENT COMPANY – CONDENSED STATEMENTS OF CASH FLOWS",
                       ("Years Ended December 31 (Millions)", "2022", "2021"),
                       (("Net income", "7,514", "8,060"), ("Net cash provided by operating activities", "5,931", "8,297")),
                       Location(page=157))
    flows = DataTable("p. 99 table 1", "CONSOLIDATED STATEMENTS OF CASH FLOWS",
                      ("Years Ended December 31 (Millions)", "2022", "2021"),
                      (("Net income", "7,514", "8,060"), ("Net cash provided by operating activities", "21,079",
                                                          "14,645")), Location(page=99))
    store, hits = _statements(tmp_path, "card", "CARDCO_2022_10K.pdf", parent, flows)
    done = compute("What was the net cash provided by operating activities in 2021?", hits, store)
    assert done.result.rows[0][-1] == 14645 and done.rival is None, (done.sql, done.rival and done.rival.cells)
    done = compute("What was the parent company's net cash provided by operating activities in 2021?", hits, store)
    assert done.result.rows[0][-1] == 8297, (done.sql, done.result.rows)


def test_a_share_of_a_total_is_the_part_over_the_tables_total_row(tmp_path):
    """"What share of net revenue came from the PBNA division": PBNA over "Total division" (30.34%), though the
    question's "division" is also a word of the total's label and comes after PBNA (it was 3.3, the total over
    PBNA)."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    divisions = DataTable("p. 70 table 1", "Net Revenue and Operating Profit", ("label", "Net Revenue 2022",
                                                                               "Net Revenue 2021"),
                          (("FLNA", "23,291", "19,608"), ("QFNA", "3,160", "2,751"), ("PBNA (b)", "26,213", "25,276"),
                           ("LatAm", "9,779", "8,108"), ("Total division", "86,392", "79,474")), Location(page=70))
    store, hits = _statements(tmp_path, "pep", "DRINKS_2022_10K.pdf", divisions)
    done = compute("What share of the 2022 net revenue came from the PBNA division, in percent?", hits, store)
    assert done.result.rows[0][-1] == pytest.approx(0.3034, abs=1e-4), (done.sql, done.result.rows)


def test_a_rows_note_in_brackets_on_what_it_includes_is_not_part_of_its_name(tmp_path):
    """"Long-term debt (includes debt issued by consolidated variable interest entities: 2022, $12,662; 2021,
    $13,803)" is the long-term debt a question names in three words."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    sheet = DataTable("p. 98 table 1", "CONSOLIDATED BALANCE SHEETS", ("December 31 (Millions)", "2022", "2021"),
                      (("Customer deposits", "$110,239", "$84,382"), ("Short-term borrowings", "1,348", "2,243"),
                       ("Long-term debt (includes debt issued by consolidated variable interest entities: 2022, "
                        "$12,662; 2021, $13,803)", "42,573", "38,675"), ("Total liabilities", "$203,643", "$166,371")),
                      Location(page=98))
    store, hits = _statements(tmp_path, "card", "CARDCO_2022_10K.pdf", sheet)
    done = compute("How much long-term debt did the company have at the end of 2022?", hits, store)
    assert done is not None and done.hit is not None, done and done.note
    assert done.result.rows[0][-1] == 42573, (done.sql, done.result.rows)


def test_a_name_the_question_abbreviates_itself_is_held_as_its_abbreviation(tmp_path):
    """"the Global Merchant and Network Services (GMNS) segment": the segment's table says "GMNS" (and
    "network" in a row of its own), not the words of its name; the question's own brackets say they are one."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    segment = DataTable("p. 63 table 1", "TABLE 15: GMNS SELECTED INCOME STATEMENT AND OTHER DATA",
                        ("Years Ended December 31, (Millions)", "2022", "2021"),
                        (("Total revenues net of interest expense", "6,475", "5,419"),
                         ("Pretax segment income", "2,337", "1,874"), ("Network volumes (billions)", "1,556", "1,284")),
                        Location(page=63))
    store, hits = _statements(tmp_path, "card", "CARDCO_2022_10K.pdf", segment)
    done = compute("What was the pretax income of the Global Merchant and Network Services (GMNS) segment in 2021?",
                   hits, store)
    assert done is not None and done.hit is not None, done and done.note
    assert done.result.rows[0][-1] == 1874, (done.sql, done.result.rows)


def test_a_column_naming_more_than_its_period_is_no_rival(tmp_path):
    """A segment table whose first column carries the year ("Europe, Middle East & Africa 2016", the year being
    printed above all its columns) reads "net operating revenues in 2016" almost as well as the income statement;
    its figure is one region's, not another reading of the question, and the answer is not capped as if it were."""
    from agentic_rag.tables.compute import compute
    from document_processor import DataTable, Location

    statement = DataTable("p. 74 table 1", "CONSOLIDATED STATEMENTS OF INCOME", ("Year Ended December 31,", "2017",
                                                                                 "2016"),
                          (("NET OPERATING REVENUES", "$ 35,410", "$ 41,863"), ("Cost of goods sold", "13,256",
                                                                                 "16,465")), Location(page=74))
    segments = DataTable("p. 143 table 2", "Operating Segments", ("label", "Europe, Middle East & Africa 2016",
                                                                   "Latin America", "North America", "Consolidated"),
                         (("Third party", "7,014", "3,819", "6,437", "41,863"),
                          ("Total net operating revenues", "7,278", "3,819", "8,135", "41,863")), Location(page=143))
    store, hits = _statements(tmp_path, "cola", "COLA_2017_10K.pdf", statement, segments)
    done = compute("What were the net operating revenues in 2016?", hits, store)
    assert done.result.rows[0][-1] == 41863 and done.rival is None, (done.sql, done.rival and done.rival.cells)
