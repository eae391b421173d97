"""agentic_rag.tables.plan: the common shapes of a question about a table mapped to one query, and nothing
planned when the question names a row, period or name the table does not have."""

from __future__ import annotations

import pytest

from advanced_retrieval.tables import TableStore
from agentic_rag.tables.compute import _distinct
from agentic_rag.tables.plan import TableAsk, plan
from document_processor import DataTable, Location

STATEMENT = DataTable(
    "p. 54 table 1", "Part II > CONSOLIDATED STATEMENTS OF INCOME", ("(in millions)", "2022", "2021", "2020"),
    (("Subscription", "$ 16,388", "$ 14,573", "$ 11,626"), ("Product", "532", "555", "507"),
     ("Services and other", "686", "657", "735"), ("Total revenue", "17,606", "15,785", "12,868"),
     ("Net income", "$ 4,756", "$ 4,822", "$ 5,260")),
    Location(page=54), note="(in millions)")
WEATHER = DataTable(
    "weather", "weather", ("date", "precipitation", "temp_max", "weather"),
    tuple((f"{2012 + i % 3}-0{1 + i % 9}-1{i % 10}", f"{(i * 7) % 13 / 2:.1f}", f"{10 + i % 15}",
           ("rain", "sun", "fog")[i % 3]) for i in range(60)),
    Location(sheet="weather", cells="A1:D61"),
    tuple(Location(sheet="weather", cells=f"A{r + 2}:D{r + 2}") for r in range(60)), ("A", "B", "C", "D"))


@pytest.fixture
def store(tmp_path):
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("adobe", "ADOBE_2022_10K.pdf", [STATEMENT])
    store.write("wx", "seattle.csv", [WEATHER])
    return store


def _answer(store, question):
    tables = store.tables()
    values = {t.table_id: _distinct(store, t) for t in tables}
    query = plan(question, tables, values)
    return query, (store.query(query.sql) if query else None)


@pytest.mark.parametrize("question, rows", [
    ("What was Adobe's total revenue in fiscal 2022?", ((4, "Total revenue", 17606.0),)),
    ("What was net income in 2021?", ((5, "Net income", 4822.0),)),
])
def test_a_row_and_a_period_the_question_names_are_one_cell(store, question, rows):
    query, result = _answer(store, question)
    assert query.op == "lookup" and result.rows == rows


HOTEL = DataTable(
    "p. 5 table 2", "The following table shows key hotel statistics for the Strip resorts:",
    ("Three Months Ended December 31,", "2022", "2021", "% Change"),
    (("Rooms revenue (In millions)", "$813", "$557", "46 %"), ("Occupancy", "91 %", "86 %", ""),
     ("Average daily rate (ADR)", "$260", "$201", "30 %")),
    Location(page=5))


@pytest.mark.parametrize("question, rows", [
    ("What was the Strip's occupancy in Q4 2022?", ((2, "Occupancy", 91.0),)),
    ("What was rooms revenue in the fourth quarter of 2021?", ((1, "Rooms revenue (In millions)", 557.0),)),
    ("How many dollars higher was the average daily rate in Q4 2022 than in Q4 2021?",
     (("Average daily rate (ADR)", 201.0, 260.0, 59.0, 29.35),)),
    ("What was the Strip's occupancy in Q3 2022?", None),  # the table is the fourth quarter's
    # "average" is the row's own name, its initials printed after it: a lookup, not a mean of the row
    ("What was the average daily rate at the Strip in Q4 2022?", ((3, "Average daily rate (ADR)", 260.0),)),
])
def test_a_quarters_span_printed_once_over_year_columns_names_each_years_quarter(tmp_path, question, rows):
    store = TableStore(tmp_path / "hotel.duckdb")
    store.write("mgm", "RESORTS_2022Q4_EARNINGS.pdf", [HOTEL])
    query, result = _answer(store, question)
    assert (result.rows if query else None) == rows


def test_a_change_between_two_periods_is_computed_from_both_cells(store):
    query, result = _answer(store, "By how much did Adobe's total revenue grow from fiscal 2021 to fiscal 2022?")
    assert query.op == "change" and query.rows == (4,)
    assert result.rows == (("Total revenue", 15785.0, 17606.0, 1821.0, 11.54),)


@pytest.mark.parametrize("question, op, value", [
    ("What was the total precipitation on days with weather rain?", "sum",
     sum(float(f"{(i * 7) % 13 / 2:.1f}") for i in range(60) if i % 3 == 0)),
    ("What was the average temp_max in 2013?", "avg",
     sum(10 + i % 15 for i in range(60) if i % 3 == 1) / 20),
])
def test_an_aggregate_of_a_column_over_the_rows_the_question_names(store, question, op, value):
    query, result = _answer(store, question)
    assert query.op == op and result.rows[0][0] == pytest.approx(value)


def test_which_row_has_the_largest_value(store):
    query, result = _answer(store, "Which date had the highest precipitation?")
    assert query.op == "top max"
    best = max(range(60), key=lambda i: ((i * 7) % 13, -i))
    assert result.rows[0][2] == pytest.approx((best * 7) % 13 / 2)


@pytest.mark.parametrize("question", [
    "What was Adobe's total revenue in fiscal 2019?",  # a period the table does not have
    "What was Diageo's total revenue in 2022?",  # a name no table's document holds
    "How many employees does Adobe have?",  # what is counted is not what the rows are
    "What is the average tax rate in Ireland?",  # "average" names the thing asked; no table has it
])
def test_nothing_is_planned_when_the_table_does_not_hold_what_is_asked(store, question):
    assert _answer(store, question)[0] is None


def test_an_operation_word_that_is_part_of_a_tables_names_asks_for_no_calculation(store):
    table = next(t for t in store.tables() if t.doc_id == "adobe")
    assert TableAsk.of("What was total revenue in 2022?").op == "sum"
    assert TableAsk.of("What was total revenue in 2022?").seen_by(table).op == "lookup"


CARS = DataTable(
    "cars", "cars", ("Name", "Miles_per_Gallon", "Cylinders", "Horsepower", "Origin"),
    (("mazda glc", "46.6", "4", "65", "Japan"), ("vw rabbit", "41.5", "4", "76", "Europe"),
     ("ford torino", "17", "8", "140", "USA"), ("peugeot 504", "25", "4", "88", "Europe"),
     ("toyota corona", "24", "4", "95", "Japan"), ("bmw 2002", "26", "6", "113", "Europe")),
    Location(sheet="cars", cells="A1:E7"), tuple(Location(sheet="cars", cells=f"A{r}:E{r}") for r in range(2, 8)),
    ("A", "B", "C", "D", "E"))
STOCKS = DataTable(
    "stocks", "stocks", ("symbol", "date", "price"),
    (("MSFT", "Jan 1 2000", "39.81"), ("MSFT", "Mar 1 2010", "28.80"), ("IBM", "Jan 1 2000", "100.52"),
     ("IBM", "Mar 1 2010", "125.55")),
    Location(sheet="stocks", cells="A1:C5"), tuple(Location(sheet="stocks", cells=f"A{r}:C{r}") for r in range(2, 6)),
    ("A", "B", "C"))
ENERGY = DataTable(
    "energy", "energy", ("year", "source", "net_generation"),
    (("2001-01-01", "Renewables", "1437"), ("2001-01-01", "Fossil Fuels", "35361"), ("2017-01-01", "Renewables", "21933"),
     ("2017-01-01", "Fossil Fuels", "29329")),
    Location(sheet="energy", cells="A1:C5"), tuple(Location(sheet="energy", cells=f"A{r}:C{r}") for r in range(2, 6)),
    ("A", "B", "C"))
WELLS = ("A1", "A2", "B1", "B2", "C1", "C2", "D7", "D8")
PLATE = DataTable(
    "FAM", "FAM", ("Cycle", *WELLS),
    tuple((str(cycle), *(str(1000 * (i + 1) - 10 * cycle) for i in range(len(WELLS)))) for cycle in (1, 2, 3)),
    Location(sheet="FAM", cells="A1:I4"), tuple(Location(sheet="FAM", cells=f"A{r}:I{r}") for r in range(2, 5)),
    tuple("ABCDEFGHI"))


@pytest.fixture
def data_store(tmp_path):
    store = TableStore(tmp_path / "data.duckdb")
    for doc, name, table in (("c", "cars.csv", CARS), ("s", "stocks.csv", STOCKS), ("e", "energy.csv", ENERGY),
                             ("p", "plate.xlsx", PLATE)):
        store.write(doc, name, [table])
    return store


@pytest.mark.parametrize("question, op, value", [
    ("average horsepower of japanese cars", "avg", (65 + 95) / 2),  # "japanese" names the value "Japan"
    ("How many European cars in the cars data have 4 cylinders?", "count", 2),  # "European", and "4 cylinders"
    ("By what percent did MSFT's price change from Jan 2000 to Mar 2010?", "series", -27.66),
    ("What's the mean FAM reading across all the wells at cycle 1?", "avg", sum(1000 * (i + 1) - 10 for i in range(8)) / 8),
    ("How many wells read below 3500 at cycle 2?", "count", 3),
    ("What is the value for well D7 at cycle 3?", "cell", 7000 - 30),
])
def test_values_dates_and_numbers_the_question_names_select_the_rows(data_store, question, op, value):
    query, result = _answer(data_store, question)
    assert query is not None and query.op == op, query
    row = dict(zip(result.columns, result.rows[0], strict=True))
    got = row.get("percent_change", row.get("value", row.get("count")))
    assert got == pytest.approx(value)


def test_a_header_is_named_by_its_initials_and_which_row_is_answered(data_store):
    query, result = _answer(data_store, "what's the best mpg of any car in the cars data, and which car is it?")
    assert query.op == "top max" and result.rows[0][1:] == ("mazda glc", 46.6)


def test_how_many_times_more_divides_the_first_date_named_by_the_second(data_store):
    query, result = _answer(data_store, "How many times more renewable power was generated in 2017 than in 2001?")
    row = dict(zip(result.columns, result.rows[0], strict=True))
    assert query.op == "series" and row["ratio"] == pytest.approx(round(21933 / 1437, 4))


@pytest.mark.parametrize("question, function", [
    ("How much more net_generation was there in total in 2017 than in 2001, summed over every source?", "sum"),
    ("How many more units of net_generation were produced altogether in 2017 than in 2001?", "sum"),
    ("By how much did net_generation change from 2001 to 2017?", "avg"),  # a date's rows, no sum asked: their mean
])
def test_a_change_of_dated_rows_adds_each_dates_rows_when_the_question_asks_a_total(data_store, question, function):
    query, result = _answer(data_store, question)
    row = dict(zip(result.columns, result.rows[0], strict=True))
    first, last = (1437 + 35361, 21933 + 29329) if function == "sum" else ((1437 + 35361) / 2, (21933 + 29329) / 2)
    assert query.op == "series" and (row["from"], row["to"]) == pytest.approx((first, last))
    assert row["difference"] == pytest.approx(last - first)


@pytest.mark.parametrize("question", [
    "How much bigger was the MSFT price in Mar 2010 than in Jan 2000?",
    "How many dollars lower was MSFT's price in Mar 2010 than in Jan 2000?",
])
def test_how_much_bigger_or_how_many_units_lower_asks_a_change(data_store, question):
    query, result = _answer(data_store, question)
    row = dict(zip(result.columns, result.rows[0], strict=True))
    assert query.op == "series" and row["difference"] == pytest.approx(28.80 - 39.81)


def test_how_many_times_larger_is_still_a_ratio_of_the_first_named_to_the_second(data_store):
    query, result = _answer(data_store, "How many times larger was MSFT's price in Jan 2000 than in Mar 2010?")
    row = dict(zip(result.columns, result.rows[0], strict=True))
    assert query.op == "series" and row["ratio"] == pytest.approx(round(39.81 / 28.80, 4))


def test_a_change_between_two_values_of_a_numeric_column(data_store):
    query, result = _answer(data_store, "By how many percent did well A1's FAM signal drop between cycle 1 and cycle 3?")
    row = dict(zip(result.columns, result.rows[0], strict=True))
    assert query.op == "series" and row["percent_change"] == pytest.approx(round((970 - 990) / 990 * 100, 2))


def test_which_column_of_a_row_is_lowest(data_store):
    query, result = _answer(data_store, "lowest FAM reading at cycle 2 - which well, and what's the value?")
    assert query.op == "top min" and result.rows[0] == ("A1", 980.0)


def test_a_name_the_table_does_not_hold_is_not_answered_from_it(data_store):
    assert _answer(data_store, "What was Apple's share price in June 2012?")[0] is None


def test_a_question_asking_no_figure_gets_no_lookup_of_a_column_it_does_not_name(tmp_path):
    from agentic_rag.tables.plan import plans

    store = TableStore(tmp_path / "tables.duckdb")
    store.write("b", "budget.csv", [DataTable("budget", "budget", ("item", "cost_eur"),
                                              (("heat pumps", "2100000"), ("insulation", "800000")),
                                              Location(sheet="budget", cells="A1:B3"))])
    tables = store.tables()
    values = {t.table_id: _distinct(store, t) for t in tables}
    asked = "Who supplies the heat pumps?"  # asked of the tables because the best passage was the budget's row
    assert plans(asked, tables, values, figures=False) == []
    assert plans("How much do the heat pumps cost?", tables, values, figures=False)[0].columns == (1,)  # named
    assert plans("What is the figure for heat pumps?", tables, values)[0].columns == (1,)  # its one figure


def test_a_cell_matched_only_by_a_name_is_no_answer_to_what_the_question_asks(tmp_path):
    """A paper's results table, its header unread: 'BERT (Single)' in 'column 4' is some score of BERT's, not
    its learning rate schedule; asked for the score the column's row names, the cell is read."""
    from agentic_rag.tables.plan import plans

    store = TableStore(tmp_path / "tables.duckdb")
    store.write("p", "bert.pdf", [DataTable("p. 7 table 3", "", ("label", "Published", "column 3"),
                                            (("BERT (Single)", "-", "85.1"), ("Human", "yes", "86.9")),
                                            Location(page=7))])
    tables = store.tables()
    values = {t.table_id: _distinct(store, t) for t in tables}
    assert plans("What learning rate schedule does BERT use?", tables, values) == []
    assert plans("What is the figure for BERT (Single)?", tables, values)[0].what.startswith("BERT")


def test_a_count_counts_what_the_rows_are(tmp_path):
    from agentic_rag.tables.plan import plans

    store = TableStore(tmp_path / "tables.duckdb")
    rows = (("January", "Halden", "5120"), ("February", "Halden", "4870"), ("January", "Smola", "3980"))
    store.write("p", "production.xlsx", [DataTable("Output", "Output", ("Month", "Site", "MWh"), rows,
                                                   Location(sheet="Output", cells="A1:C4"))])
    tables = store.tables()
    values = {t.table_id: _distinct(store, t) for t in tables}
    assert plans("How many turbines did the Halden survey inspect?", tables, values) == []  # not the log's rows
    counted = plans("How many rows have the site Halden?", tables, values)
    assert counted and counted[0].op == "count"


# -- shapes added for statements and data files whose questions went unanswered -----------------------------------

DIVISIONS = DataTable(
    "p. 70 table 1", "Net revenue and operating profit of each division",
    ("label", "Net Revenue 2022", "Net Revenue 2021", "COVID-19 charges 2022"),
    (("FLNA", "23,291", "19,608", "10"), ("QFNA", "3,160", "2,751", "3"), ("PBNA", "26,213", "25,276", "36"),
     ("LatAm", "9,779", "8,108", "5"), ("PepsiCo", "86,392", "79,474", "64")),
    Location(page=70))
SEGMENTS = DataTable(
    "p. 38 table 1", "Net revenues by segment", ("label", "2022", "2021"),
    (("Las Vegas Strip Resorts", "", ""), ("Casino", "2,104,096", "1,549,419"), ("Rooms", "2,729,715", "1,402,712"),
     ("MGM China", "", ""), ("Rooms (2)", "31,000", "62,000"), ("Las Vegas Strip Resorts total", "8,395,000", "5,000,000")),
    Location(page=38))
MONTHS = ("Jan", "Feb", "Mar", "Apr")
SALES = DataTable(
    "Sales by Region", "Sales by Region", ("Region", *MONTHS, "FY Total"),
    (("Northeast", "100", "110", "120", "130", "460"), ("Southwest", "90", "80", "70", "60", "300"),
     ("West Coast", "200", "100", "100", "100", "500"), ("Total", "390", "290", "290", "290", "1260")),
    Location(sheet="Sales by Region", cells="A1:F5"))
BUDGET = DataTable(
    "Budget", "Budget", ("Department", "Cost Line", "FY24 Budget", "Variance (Budget - Actual)"),
    (("IT", "Cloud", "600", "-50"), ("IT", "Laptops", "400", "20"), ("HR", "Payroll", "250", "5"),
     ("HR", "Training", "50", "-5")),
    Location(sheet="Budget", cells="A1:D5"))
RIOTS = DataTable(
    "victims", "victims", ("name", "age", "type", "gross"),
    (("A", "42", "Homicide", "1"), ("B", "40", "Homicide", "2"), ("C", "55", "Homicide", "3"), ("D", "61", "Other", "4"),
     ("E", "30", "Homicide", "400000000")),
    Location(sheet="victims", cells="A1:D6"))
MOVIES = DataTable(
    "movies", "movies", ("Title", "Distributor", "Worldwide_Gross", "Director"),
    (("A", "Warner", "500000000", "Steven Spielberg"), ("B", "Warner", "200000000", "Steven Spielberg"),
     ("C", "Disney", "650000000", "Other"), ("D", "Fox", "350000000", "Steven Spielberg"), ("Water", "Fox", "9", "X")),
    Location(sheet="movies", cells="A1:D6"))
WAR = DataTable("crimea", "crimea", ("date", "wounds", "disease"),
                (("1854-04-01", "10", "110"), ("1854-05-01", "20", "30")), Location(sheet="crimea", cells="A1:C3"))


def _plans(tmp_path, files, question, **kwargs):
    from agentic_rag.tables.compute import _layout
    from agentic_rag.tables.plan import plans

    store = TableStore(tmp_path / "shapes.duckdb")
    for i, (name, table) in enumerate(files):
        store.write(f"d{i}", name, [table])
    tables = store.tables()
    layouts = {t.table_id: _layout(store, t) for t in tables}
    values = {t.table_id: _distinct(store, t, (), layouts[t.table_id]) for t in tables}
    found = plans(question, tables, values, layouts=layouts, **kwargs)
    return (found[0], store.query(found[0].sql)) if found else (None, None)


def _row(result):
    return dict(zip(result.columns, result.rows[0], strict=True))


def test_the_rows_a_question_names_are_added_up_in_the_column_its_words_name(tmp_path):
    query, result = _plans(tmp_path, [("PEPSICO_2022_10K.pdf", DIVISIONS)],
                           "Combined 2022 net revenue of PepsiCo's three North American divisions (FLNA, QFNA and PBNA)?")
    assert query.op == "sum" and query.rows == (1, 2, 3)  # not the PepsiCo row: the document's own company
    assert _row(result)["value"] == 23291 + 3160 + 26213  # "Net Revenue 2022", not "COVID-19 charges 2022"


def test_rows_printed_as_the_initials_of_the_names_a_question_writes_out_are_those_rows(tmp_path):
    # the statement prints "FLNA", "QFNA", "PBNA (b)" (a footnote mark); the question writes the names out
    marked = DataTable(DIVISIONS.name, DIVISIONS.title, DIVISIONS.columns,
                       tuple((f"{r[0]} (b)" if r[0] == "PBNA" else r[0], *r[1:]) for r in DIVISIONS.rows),
                       DIVISIONS.location)
    query, result = _plans(tmp_path, [("PEPSICO_2022_10K.pdf", marked)],
                           "What was the combined 2022 net revenue of PepsiCo's three North American divisions "
                           "(Frito-Lay North America, Quaker Foods North America and PepsiCo Beverages North America)?")
    assert query is not None and query.op == "sum" and query.rows == (1, 2, 3)
    assert _row(result)["value"] == 23291 + 3160 + 26213
    # a name the table holds by no initials is still not the table's: no query
    other, _ = _plans(tmp_path / "b", [("PEPSICO_2022_10K.pdf", marked)],
                      "What was the combined 2022 net revenue of Walmart International and Sam's Club?")
    assert other is None


def test_footnote_marks_are_not_words_of_a_row_label():
    from agentic_rag.tables.plan import unmarked

    assert [unmarked(x) for x in ("PBNA (b)", "Europe (b)(c)", "Net sales(1)", "Revenue*", "Other (iii)")] == \
        ["PBNA", "Europe", "Net sales", "Revenue", "Other"]
    assert [unmarked(x) for x in ("Total (in millions)", "Class A", "Series (2022)")] == \
        ["Total (in millions)", "Class A", "Series (2022)"]


def test_a_company_name_written_run_together_in_the_file_name_is_the_documents(tmp_path):
    query, result = _plans(tmp_path, [("AMERICANWATERWORKS_2021_10K.pdf", SEGMENTS)],
                           "What were American Water's casino revenues in 2022?")
    assert query is not None and _row(result)["value"] == 2104096


def test_a_heading_row_without_figures_names_the_rows_below_it(tmp_path):
    query, result = _plans(tmp_path, [("MGMRESORTS_2022_10K.pdf", SEGMENTS)],
                           "Rooms revenue growth at MGM's Las Vegas Strip Resorts, 2022 vs 2021, in percent?")
    assert query.op == "change" and query.rows == (3,)  # Rooms under Las Vegas Strip Resorts, not under MGM China
    assert _row(result)["percent_change"] == pytest.approx(94.6, abs=0.01)


def test_a_span_of_months_of_one_row_is_added_up(tmp_path):
    query, result = _plans(tmp_path, [("Regional_Sales.xlsx", SALES)], "Add up the Q1 (Jan-Mar) revenue for the Southwest region.")
    assert query.op == "span" and _row(result)["value"] == 90 + 80 + 70


def test_in_total_reads_the_tables_own_total_column(tmp_path):
    query, result = _plans(tmp_path, [("Regional_Sales.xlsx", SALES)], "Which region sold the most in total over the year?")
    assert query.op == "top max" and result.rows[0][1:] == ("West Coast", 500.0)  # the Total row left out


def test_two_groups_of_rows_named_by_values_of_one_column_are_compared(tmp_path):
    query, result = _plans(tmp_path, [("FY2024_Budget.xlsx", BUDGET)],
                           "How many times larger is the IT department's total budget than HR's?")
    row = _row(result)
    assert query.op == "series" and (row["from"], row["to"]) == (300, 1000)  # "FY24 Budget", not the variance
    assert row["ratio"] == pytest.approx(1000 / 300, abs=1e-4)


def test_two_columns_are_compared_over_the_rows(tmp_path):
    query, result = _plans(tmp_path, [("crimea.csv", WAR)],
                           "how many times more soldiers died of disease than of wounds across the whole crimea table?")
    assert query.op == "series" and _row(result)["ratio"] == pytest.approx(140 / 30, abs=1e-4)


@pytest.mark.parametrize("question, count", [
    ("How many homicide victims in the riots dataset were older than 40?", 2),  # the rows are what is counted
    ("How many Steven Spielberg films made over $300 million worldwide?", 2),  # a scale word multiplies
])
def test_a_count_with_a_bound_on_a_column_counts_the_rows(tmp_path, question, count):
    query, result = _plans(tmp_path, [("la-riots.csv", RIOTS), ("movies.csv", MOVIES)], question)
    assert query.op == "count" and result.rows[0][0] == count


def test_top_n_of_a_noun_ranks_the_groups_it_names(tmp_path):
    query, result = _plans(tmp_path, [("movies.csv", MOVIES)], "top 2 distributors by total worldwide gross in movies.csv")
    assert [r[1] for r in result.rows] == ["Warner", "Disney"]  # summed by distributor; the top film is Disney's


def test_the_last_word_of_a_longer_name_is_not_a_value_to_filter_on(tmp_path):
    query, _ = _plans(tmp_path, [("movies.csv", MOVIES)], "In American Water's 2021 10-K, which movie grossed the most?")
    assert query is None or "Water" not in query.sql


LINES = DataTable(
    "slide 3 table 1", "Net revenue by product line ($K)", ("Product line", "FY2023", "FY2022", "YoY %"),
    (("Tents", "9190", "8420", "9.1%"), ("Lighting", "1630", "1150", "41.7%"), ("Total", "10820", "9570", "13.1%")),
    Location(slide=3))
SEGMENT_SALES = DataTable(
    "p. 30 table 1", "Net Sales:", ("label", "December 28, 2019 (in millions)", "December 29, 2018 (in millions)"),
    (("Net sales:", "", ""), ("United States", "16,582", "16,921"), ("Canada", "1,882", "2,173"),
     ("Rest of World", "2,788", "3,255"), ("Total net sales", "21,252", "22,349")),
    Location(page=30))


@pytest.mark.parametrize("question, files, label", [
    # the table's own change column
    ("Which product line had the strongest year-over-year growth in FY2023?",
     [("FY2023_QBR.pptx", LINES)], "Lighting"),
    # computed from the two years of one figure; a decline is the lowest change; the total row left out
    ("Which Kraft Heinz segment had the biggest net sales decline in 2019?",
     [("KRAFTHEINZ_2019_10K.pdf", SEGMENT_SALES)], "Rest of World"),
])
def test_which_row_changed_most(tmp_path, question, files, label):
    query, result = _plans(tmp_path, files, question)
    assert query.op in ("top max", "top min") and result.rows[0][1] == label


@pytest.mark.parametrize("text, periods", [
    ("Q1 2021", ("2021q1",)), ("1Q21", ("2021q1",)), ("first quarter of 2021", ("2021q1",)),
    ("Three months ended March 31, 2021", ("2021q1", "m03", "2021")), ("Q3", ("q3",)),
])
def test_a_quarter_with_its_year_is_one_period(text, periods):
    from agentic_rag.tables.plan import periods_of

    assert periods_of(text) == periods


QUARTERS = DataTable(
    "p. 3 table 1", "Consolidated Financial Highlights", ("label", "1Q21", "4Q20", "1Q20"),
    (("Total net revenue", "32,266", "29,224", "28,251"), ("Net income", "14,300", "12,136", "2,865")),
    Location(page=3))
CATEGORIES = DataTable("¶ 12 table 1", "Category mix", ("Category", "Q2 2023", "Q3 2023"),
                       (("Camping", "2,106,300", "2,458,170"), ("Cycling", "1,193,880", "1,047,620")),
                       Location(paragraph=12))


def test_quarters_of_two_years_and_quarters_without_a_year(tmp_path):
    query, result = _plans(tmp_path, [("JPMORGAN_2021Q1_10Q.pdf", QUARTERS)],
                           "JPMorgan's Q1 2021 net income was how many times its Q1 2020 net income?")
    assert query.op == "ratio" and _row(result)["ratio"] == pytest.approx(round(14300 / 2865, 4))
    query, result = _plans(tmp_path, [("Q3_Report.docx", CATEGORIES)],
                           "How much more revenue did the Camping category bring in during Q3 than in Q2?")
    assert _row(result)["difference"] == 2458170 - 2106300


@pytest.mark.parametrize("text, periods", [
    ("12 Weeks Ended 3/25/2023", ("2023q1", "m03", "2023")),  # a fiscal quarter of twelve weeks
    ("13 weeks ended July 29, 2023", ("m07", "2023")),  # a quarter ending in July: not a calendar quarter
    ("Three Months Ended July 2, 2023", ("2023q2", "m07", "2023")),  # a 52/53-week quarter ending June's week
    ("(unaudited) 3/25/2023", ("m03", "2023")),
    ("Twelve months ended December 31, 2022", ("m12", "2022")),  # a year, not its fourth quarter
    ("12 Months Ended Dec. 31, 2022", ("m12", "2022")),
])
def test_a_span_ended_on_a_date_is_the_quarter_that_month_ends(text, periods):
    from agentic_rag.tables.plan import periods_of

    assert periods_of(text) == periods


def test_a_quarter_asked_reads_the_column_of_the_weeks_ended_in_it(tmp_path):
    release = DataTable(
        "p. 4 table 1", "Condensed Consolidated Statement of Income",
        ("(in millions)", "12 Weeks Ended 3/25/2023", "12 Weeks Ended 3/19/2022"),
        (("Net Revenue", "17,846", "16,200"), ("Operating Profit", "2,528", "3,574")), Location(page=4))
    query, result = _plans(tmp_path, [("ACME_2023Q1_EARNINGS.pdf", release)],
                           "What was Acme's operating profit in the first quarter of 2023?")
    assert query.op == "lookup" and _row(result)["value"] == 2528


NET_SALES = DataTable(
    "p. 38 table 1", "CONSOLIDATED STATEMENTS OF OPERATIONS", ("(in millions)", "2016", "2017"),
    (("Net product sales", "94,665", "118,573"), ("Net service sales", "41,322", "59,293"),
     ("Total net sales", "135,987", "177,866"), ("Cost of sales", "88,265", "111,934"),
     ("Other revenue", "1,200", "1,450")),
    Location(page=38), note="(in millions)")


@pytest.mark.parametrize("question", [
    "What was Amazon's year-over-year change in revenue from FY2016 to FY2017?",
    # how the answer is to be written names no row: the same query
    "What is Amazon's year-over-year change in revenue from FY2016 to FY2017 (in units of percents and round to "
    "one decimal place)?",
    "What is Amazon's year-over-year change in revenue from FY2016 to FY2017? Round your answer to two decimal places.",
])
def test_total_and_net_in_a_label_do_not_hide_the_row_a_question_names_plainly(tmp_path, question):
    """"Total net sales" is the revenue asked for ("total" and "net" are what a statement adds to the plain
    figure); "Other revenue", "Cost of sales" and "Net product sales" name another kind, and are not read."""
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("amzn", "AMAZON_2017_10K.pdf", [NET_SALES])
    query, result = _answer(store, question)
    assert query.op == "change" and query.rows == (3,)
    assert result.rows[0][0] == "Total net sales" and result.rows[0][-1] == pytest.approx(30.8, abs=0.05)


BANKS = DataTable(
    "p. 19 table 1", "Segment results - managed basis",
    ("Three months ended March 31, (in millions)", "Commercial Banking 2021", "Commercial Banking 2020"),
    (("Total net revenue", "2,393", "2,165"), ("Total noninterest expense", "969", "986"),
     ("Pre-provision profit/(loss)", "1,424", "1,179"), ("Provision for credit losses", "(118)", "1,010")),
    Location(page=19))


def test_a_superlative_does_not_rank_a_statements_line_items_when_the_question_names_one_of_them(tmp_path):
    """"Which segment had the lowest net revenue in 2021": net revenue is a row, so the rows are figures of
    different kinds; ranking them in a column met only by its year ("Commercial Banking 2021") answered "Provision
    for credit losses". The lowest net revenue is read across the segments' 2021 columns, or not at all."""
    query, result = _plans(tmp_path, [("JPMORGAN_2021Q1_10Q.pdf", BANKS)],
                           "Which of JPM's business segments had the lowest net revenue in 2021?")
    assert query is None or "Provision" not in str(result.rows)


def test_a_header_met_only_by_its_year_is_not_the_column_a_question_names(tmp_path):
    from agentic_rag.tables.plan import _named_by_period_only

    ask = TableAsk.of("What was the highest net revenue in 2021?")
    assert _named_by_period_only(ask, "Commercial Banking 2021")  # the year, but a figure the question does not name
    for header in ("2021", "Year Ended December 31, 2021", "Three Months Ended March 31, 2021 (Unaudited)",
                   "Fiscal 2021 As Reported", "FY 2021", "Net revenue 2021"):
        assert not _named_by_period_only(ask, header), header


def test_an_operation_word_inside_a_name_asks_for_no_operation():
    assert TableAsk.of("What are major acquisitions that Best Buy has done in FY2023?").op == "lookup"
    assert TableAsk.of("What was Best Buy's highest quarterly revenue in FY2023?").op == "max"


@pytest.mark.parametrize("question", [
    "What drove the reduction in SG&A expense as a percent of net sales in FY2023?",
    "Why did net sales decline in 2017 compared with 2016?",
    "What were the main drivers of the increase in total net sales?",
])
def test_a_question_asking_for_a_cause_is_not_computed(tmp_path, question):
    query, _ = _plans(tmp_path, [("AMAZON_2017_10K.pdf", NET_SALES)], question)
    assert query is None


WALMART_QUARTERS = DataTable(
    "p. 87 table 2", "Note 17. Quarterly Financial Data (Unaudited)",
    ("(Amounts in millions)", "Q1", "Fiscal 2018 Q2", "Fiscal 2018 Q3", "Fiscal 2018 Q4", "Total"),
    (("Total revenues", "117,542", "123,355", "123,179", "136,267", "500,343"),
     ("Cost of sales", "87,688", "91,521", "91,547", "102,640", "373,396"),
     ("Consolidated net income", "3,152", "3,104", "1,904", "2,363", "10,523")),
    Location(page=87))
RISK = DataTable(
    "p. 41 table 1", "Capital ratios", ("Year-end Data", "December 31, 2022", "December 31, 2021"),
    (("Risk-Weighted Assets", "194.4", "180.0"), ("Common equity tier 1", "10.4", "10.5")), Location(page=41))
EXPENSES = DataTable(
    "p. 96 table 1", "Consolidated Statements of Income", ("(Millions)", "2022", "2021"),
    (("Revenues", "", ""), ("Net card fees", "6,070", "5,195"), ("Discount revenue", "30,739", "24,563"),
     ("Expenses", "", ""), ("Card Member rewards", "14,002", "11,007"), ("Marketing", "5,458", "5,291"),
     ("Salaries and employee benefits", "7,252", "6,240")),
    Location(page=96))


@pytest.mark.parametrize(("question", "op", "expected"), [
    ("In which quarter of fiscal 2018 did Walmart report its lowest consolidated net income?", "top min",
     ("Fiscal 2018 Q3", 1904)),
    ("What were Walmart's average quarterly total revenues in fiscal 2018?", "avg", (500343 / 4, 4)),
])
def test_a_statement_row_the_question_names_is_ranked_or_averaged_across_its_quarters(tmp_path, question, op,
                                                                                        expected):
    query, result = _plans(tmp_path, [("WALMART_2018_10K.pdf", WALMART_QUARTERS)], question)
    assert query.op == op and query.rows == (3,) if op == "top min" else query.rows == (1,)
    assert result.rows[0][0] == pytest.approx(expected[0]) if op == "avg" else result.rows[0] == expected


def test_a_superlative_over_a_statement_ranks_the_section_the_question_names_or_nothing(tmp_path):
    """"The largest expense category in 2022": the rows under the "Expenses" heading, not every row of the
    statement (discount revenue) nor a table of other figures whose column is only a date (risk-weighted
    assets)."""
    query, result = _plans(tmp_path, [("AMERICANEXPRESS_2022_10K.pdf", EXPENSES)],
                           "What was American Express's largest expense category in 2022?")
    assert result.rows[0][1:] == ("Card Member rewards", 14002)
    query, _ = _plans(tmp_path, [("AMERICANEXPRESS_2022_10K.pdf", RISK)],
                      "What was American Express's largest expense category in 2022?")
    assert query is None


FULL_STATEMENT = DataTable(
    "p. 96 table 1", "Consolidated Statements of Income", ("(Millions)", "2022", "2021"),
    (("Revenues", "", ""), ("Discount revenue", "30,739", "24,563"), ("Interest expense", "", ""),
     ("Deposits", "1,527", "498"), ("Long-term debt and other", "1,900", "1,100"), ("Expenses", "", ""),
     ("Card Member rewards", "14,002", "11,007"), ("Marketing", "5,458", "5,291"),
     ("Earnings per Common Share", "", ""), ("Basic", "9.86", "10.04"), ("Diluted", "9.85", "10.02"),
     ("Average common shares outstanding", "", ""), ("Basic", "751", "789"), ("Diluted", "752", "790")),
    Location(page=96))


def test_a_superlative_ranks_the_section_its_heading_names_closest_though_labels_repeat_under_other_headings(
        tmp_path):
    """"Basic" and "Diluted" under two headings are still a statement's rows, not values to filter on ("Expenses"
    was taken for a filter and found no figure); "Expenses" names the expense categories more closely than
    "Interest expense" does."""
    query, result = _plans(tmp_path, [("AMERICANEXPRESS_2022_10K.pdf", FULL_STATEMENT)],
                           "What was American Express's largest expense category in 2022?")
    assert query is not None and result.rows[0][1:] == ("Card Member rewards", 14002), query and query.sql


SEGMENT_COLUMNS = DataTable(
    "p. 143 table 1", "Operating Segments",
    ("", "Europe, Middle East & Africa 2017", "Latin America", "North America", "Asia Pacific", "Corporate",
     "Eliminations", "Consolidated"),
    (("Net operating revenues", "7,374", "4,029", "10,637", "5,176", "138", "(2,549)", "35,410"),
     ("Operating income (loss)", "3,646", "2,214", "2,578", "2,163", "(1,983)", "—", "7,501"),
     ("Interest expense", "", "", "", "", "841", "—", "841")),
    Location(page=143))


@pytest.mark.parametrize(("question", "expected"), [
    ("Which of Coca-Cola's operating segments generated the highest operating income in 2017?",
     ("Europe, Middle East & Africa", 3646)),
    ("Which segment had the lowest net operating revenues in 2017?", ("Latin America", 4029)),
    ("Which segment had the lowest net operating revenues?", ("Latin America", 4029)),  # the table's one year
])
def test_which_part_ranks_a_statement_row_across_the_columns_of_its_parts(tmp_path, question, expected):
    """A segment table prints its parts as columns and the company's own figure beside them (Consolidated, with
    Corporate and Eliminations reconciling): the row the question names ranked across the parts, each named
    without the year printed in its header; "Operating income (loss)" is the row named "operating income"."""
    query, result = _plans(tmp_path, [("COCACOLA_2017_10K.pdf", SEGMENT_COLUMNS)], question)
    assert query is not None and query.op.startswith("top") and result.rows[0] == expected, query and query.sql
    query, _ = _plans(tmp_path, [("COCACOLA_2017_10K.pdf", SEGMENT_COLUMNS)],
                      "Which of Coca-Cola's operating segments generated the highest operating income in 2016?")
    assert query is None  # a table of 2017 holds no 2016 figure


CONSUMER = DataTable(
    "p. 29 table 1", "Item 7 > Segment Results of Operations > Verizon Consumer Group > Operating Revenues",
    ("Years Ended December 31,", "2022", "2021"),
    (("Service", "75,000", "74,000"), ("Wireless equipment", "23,168", "19,845"),
     ("Total Operating Revenues", "103,000", "98,000")), Location(page=29))
CONSOLIDATED = DataTable(
    "p. 54 table 1", "Item 8 > Consolidated Statements of Income", ("Years Ended December 31,", "2022", "2021"),
    (("Service revenues and other", "109,625", "110,449"), ("Wireless equipment revenues", "27,210", "23,343")),
    Location(page=54))


@pytest.mark.parametrize(("question", "expected"), [
    ("What were Verizon's wireless equipment revenues for 2022?", 27210),
    ("What were the Verizon Consumer Group's wireless equipment revenues for 2022?", 23168),
    ("What were the consumer segment's wireless equipment revenues in 2022?", 23168),
])
def test_a_table_under_a_part_of_the_company_answers_for_that_part_only_when_the_question_names_it(
        tmp_path, question, expected):
    """A filing's segment results hold a part's figures under the same row names as the consolidated statement:
    a question naming the company (not the part) reads the company's."""
    query, result = _plans(tmp_path, [("VERIZON_2022_10K.pdf", CONSUMER), ("VERIZON_2022_10K.pdf", CONSOLIDATED)],
                           question)
    assert query is not None and result.rows[0][-1] == expected, query and query.sql


COSTS = DataTable(
    "p. 30 table 1", "Operating Expenses", ("Years Ended December 31,", "2022", "2021"),
    (("Cost of services", "28,637", "27,000"), ("Cost of wireless equipment", "25,134", "21,500"),
     ("Cost of revenue", "53,771", "48,500")), Location(page=30))


def test_a_row_of_another_kind_of_figure_is_not_the_one_asked_though_it_shares_its_other_words(tmp_path):
    """"Cost of wireless equipment" holds two of the three words of "wireless equipment revenues": a cost, not
    revenue. The row asked for by its kind is still read."""
    query, _ = _plans(tmp_path / "a", [("VERIZON_2022_10K.pdf", COSTS)],
                      "What were Verizon's wireless equipment revenues for 2022?")
    assert query is None, query.sql
    query, result = _plans(tmp_path / "b", [("VERIZON_2022_10K.pdf", COSTS)],
                           "What was Verizon's cost of wireless equipment in 2022?")
    assert query is not None and result.rows[0][1:] == ("Cost of wireless equipment", 25134)


YEAR_BLOCKS = DataTable(
    "p. 86 table 1", "Segments", ("(Amounts in millions)", "Walmart U.S.", "Sam's Club", "Consolidated"),
    (("Fiscal Year Ended January 31, 2018", "", "", ""), ("Net sales", "318,477", "57,839", "495,761"),
     ("Operating income (loss)", "17,869", "982", "20,437"), ("Fiscal Year Ended January 31, 2017", "", "", ""),
     ("Net sales", "307,833", "57,365", "481,317"), ("Operating income (loss)", "17,745", "1,671", "22,764")),
    Location(page=86))


def test_a_change_between_years_printed_as_blocks_under_their_headings_reads_the_row_under_each(tmp_path):
    """A segment note prints each fiscal year as a block under its heading, the segments as columns: the change
    of Sam's Club's operating income is the row under 2018's heading against the same row under 2017's."""
    query, result = _plans(tmp_path / "a", [("WALMART_2018_10K.pdf", YEAR_BLOCKS)],
                           "By what percentage did Sam's Club's operating income change in fiscal 2018 compared with "
                           "fiscal 2017?")
    assert query is not None and query.op == "change", query and query.sql
    assert _row(result)["from"] == 1671 and _row(result)["to"] == 982
    assert _row(result)["percent_change"] == pytest.approx(-41.23, abs=0.01)
    query, _ = _plans(tmp_path / "b", [("WALMART_2018_10K.pdf", YEAR_BLOCKS)],
                      "By what percentage did Sam's Club's operating income change in fiscal 2018 compared with "
                      "fiscal 2016?")
    assert query is None  # no block of 2016


FLEET = DataTable(
    "¶ 8 table 1", "Annual report > Fleet", ("Vehicle type", "Count", "Average age (years)", "Fuel"),
    (("Heavy truck", "214", "6.2", "Diesel"), ("Light van", "388", "3.1", "Electric"),
     ("Refrigerated truck", "97", "7.8", "Diesel"), ("Cargo bike", "45", "1.4", "Electric")),
    Location(paragraph=8))


@pytest.mark.parametrize(("question", "op", "expected"), [
    # a row the question names: the count it states, in the column of whole numbers
    ("How many light vans are in the fleet?", "lookup", 388),
    # a value the question names in a table of things (not a statement): the rows counted
    ("How many vehicle types run on diesel?", "count", 2),
    # a superlative said with another adjective; "on average" names the column it ranks
    ("Which vehicle type has the oldest average age?", "top max", "Refrigerated truck"),
    ("Which vehicle type is the youngest on average?", "top min", "Cargo bike"),
    # a column of counts added up, not the rows counted
    ("What is the total vehicle count across all types?", "sum", 744),
])
def test_the_shapes_of_a_question_about_a_word_table_of_things(tmp_path, question, op, expected):
    query, result = _plans(tmp_path, [("fleet_report.docx", FLEET)], question)
    assert query is not None and query.op == op
    assert expected in result.rows[0]


def test_how_many_of_a_row_label_that_repeats_counts_rows_not_one_row_s_figure(tmp_path):
    films = DataTable("films", "films", ("Director", "Year", "Gross"),
                      (("Spielberg", "1993", "1,000"), ("Cameron", "1997", "2,100"), ("Spielberg", "2002", "358")),
                      Location(sheet="films", cells="A1:C4"),
                      tuple(Location(sheet="films", cells=f"A{r}:C{r}") for r in (2, 3, 4)), ("A", "B", "C"))
    query, result = _plans(tmp_path, [("films.csv", films)], "How many films did Spielberg direct?")
    assert query.op == "count" and result.rows == ((2,),)


def test_a_named_row_s_cell_of_words_is_read_from_a_key_value_table_or_a_named_column(tmp_path):
    entry = DataTable("slide 17 table 1", "Combined Log Format", ("Field", "Example"),
                      (("Request", '"GET /index.html HTTP/1.1"'), ("Status Code", "200"), ("Referer", "-")),
                      Location(slide=17))
    query, result = _plans(tmp_path, [("logs.pptx", entry)], "What HTTP status code did the request return?")
    assert query.op == "lookup" and result.rows == ((2, "Status Code", "200"),)
    query, result = _plans(tmp_path / "fleet", [("fleet_report.docx", FLEET)], "Which fuel does the heavy truck use?")
    assert query.op == "lookup" and result.rows == ((1, "Heavy truck", "Diesel"),)


@pytest.mark.parametrize("question", ["How many of the numbers on the Readings sheet are below zero?",
                                      "How many of the values on the Readings sheet are negative?"])
def test_a_bound_at_zero_counts_the_rows_of_a_sheet_without_a_header(tmp_path, question):
    cells = ("-5", "3", "-1", "0", "-2", "7")
    readings = DataTable("Readings", "Readings", ("column A",), tuple((c,) for c in cells),
                         Location(sheet="Readings", cells="A1:A6"),
                         tuple(Location(sheet="Readings", cells=f"A{r}:A{r}") for r in range(1, 7)), ("A",))
    query, result = _plans(tmp_path, [("readings.xlsx", readings)], question)
    assert query.op == "count" and result.rows == ((3,),)


def test_a_name_that_begins_like_a_month_is_a_name():
    from agentic_rag.tables.plan import is_month

    assert all(is_month(w) for w in ("March", "mar", "Sept.", "December", "may"))
    assert not any(is_month(w) for w in ("Mary", "Junior", "Augustus", "Decker", "Octavia"))


def test_a_day_the_question_names_picks_its_column_and_a_position_is_read_where_positions_are(tmp_path):
    """"fiscal 2022 (January 28, 2023)": the column of that day, not the one of the first year said; inventory
    "at the end of" the year is the balance sheet's, not the cash flow statement's change in it."""
    balance = DataTable("p. 7 table 1", "Condensed Consolidated Balance Sheets",
                        ("(In thousands)", "January 28, 2023 (Unaudited)", "January 29, 2022"),
                        (("Cash and cash equivalents", "737,877", "431,560"),
                         ("Merchandise inventories, net", "1,603,451", "1,499,218")), Location(page=7))
    flows = DataTable("p. 8 table 1", "Condensed Consolidated Statements of Cash Flows",
                      ("(In thousands)", "52 Weeks Ended January 28, 2023 (Unaudited)", "52 Weeks Ended January 29, 2022"),
                      (("Net income", "1,242,408", "985,837"), ("Merchandise inventories", "(104,233)", "(331,003)")),
                      Location(page=8))
    query, result = _plans(tmp_path, [("ULTABEAUTY_2023Q4_EARNINGS.pdf", DataTable(
        "p. 7 table 1", balance.title, balance.columns, balance.rows, balance.location, note="(In thousands)"))],
        "What was Ulta Beauty's merchandise inventory at the end of fiscal 2022 (January 28, 2023)?")
    assert result.rows == ((2, "Merchandise inventories, net", 1603451.0),)
    from agentic_rag.tables.compute import _distinct as distinct
    from agentic_rag.tables.plan import plans

    store = TableStore(tmp_path / "both.duckdb")
    store.write("ulta", "ULTABEAUTY_2023Q4_EARNINGS.pdf", [balance, flows])
    tables = store.tables()
    found = plans("What was Ulta Beauty's merchandise inventory at the end of fiscal 2022 (January 28, 2023)?",
                  tables, {t.table_id: distinct(store, t) for t in tables})
    assert found[0].table.name == "p. 7 table 1" and "January 28, 2023" in found[0].what


def test_a_flow_column_answers_a_position_only_where_its_row_is_one(tmp_path):
    flows = DataTable("p. 8 table 1", "Condensed Consolidated Statements of Cash Flows",
                      ("(In thousands)", "52 Weeks Ended January 28, 2023", "52 Weeks Ended January 29, 2022"),
                      (("Merchandise inventories", "(104,233)", "(331,003)"),
                       ("Cash and cash equivalents at end of year", "737,877", "431,560")), Location(page=8))
    query, _ = _plans(tmp_path, [("ULTA.pdf", flows)],
                      "What was the merchandise inventory at the end of the year ended January 28, 2023?")
    assert query is None  # the year's change in inventories is no inventory
    query, result = _plans(tmp_path / "cash", [("ULTA.pdf", flows)],
                           "What were cash and cash equivalents at the end of the year ended January 28, 2023?")
    assert result.rows == ((2, "Cash and cash equivalents at end of year", 737877.0),)


def test_how_many_of_a_named_row_needs_the_row_column_or_table_to_say_what_is_counted(tmp_path):
    stores = DataTable("p. 20 table 1", "Store count by country", ("Country", "Stores"),
                       (("Mexico", "12"), ("Canada", "40"), ("Chile", "7")), Location(page=20))
    query, result = _plans(tmp_path, [("RETAILER_10K.pdf", stores)], "How many stores did it have in Mexico?")
    assert query.op == "lookup" and result.rows == ((1, "Mexico", 12.0),)
    query, _ = _plans(tmp_path / "x", [("RETAILER_10K.pdf", stores)], "How many employees worked in Mexico?")
    assert query is None  # the table counts stores


def test_a_period_in_a_table_s_title_is_not_what_its_rows_count(tmp_path):
    activity = DataTable("p. 120 table 2", "The following table summarizes share activity during the year ended",
                         ("(Shares in thousands)", "2022 Number of Shares", "2021 Number of Shares"),
                         (("As of January 1", "481", "423"), ("Granted", "180", "150"), ("Vested", "(112)", "(92)"),
                          ("As of December 31", "549", "481")), Location(page=120))
    query, _ = _plans(tmp_path, [("3M_2022_10K.pdf", activity)], "For how many years in a row has 3M raised its dividend?")
    assert query is None


def test_how_many_of_a_measure_the_question_names_adds_up_that_column(tmp_path):
    output = DataTable("Output", "Output", ("Month", "Site", "MWh"),
                       (("January", "Halden", "5,120"), ("March", "Halden", "6,315"), ("March", "Bergen", "4,410")),
                       Location(sheet="Output", cells="A1:C4"),
                       tuple(Location(sheet="Output", cells=f"A{r}:C{r}") for r in (2, 3, 4)), ("A", "B", "C"))
    query, result = _plans(tmp_path, [("plant_output.xlsx", output)], "How many MWh did the Halden site produce in March?")
    assert query.op == "sum" and result.rows == ((6315.0, 1),)

SEGMENT_CATEGORIES = DataTable(
    "p. 63 table 1", "Revenue by product category", ("(In millions)", "2023", "2022"),
    (("Domestic:", "", ""), ("Computing and Mobile Phones", "18,191", "20,693"), ("Appliances", "6,381", "6,784"),
     ("Total Domestic revenue", "42,794", "47,830"), ("International:", "", ""),
     ("Computing and Mobile Phones", "1,575", "1,785"), ("Appliances", "355", "383"),
     ("Total International revenue", "3,504", "3,931")),
    Location(page=63))


def test_a_sum_of_rows_under_two_headings_adds_the_rows_not_the_headings_totals(tmp_path):
    query, result = _plans(tmp_path, [("BESTBUY_2023_10K.pdf", SEGMENT_CATEGORIES)],
                           "What was Best Buy's total appliances revenue in fiscal 2023, Domestic and International "
                           "combined?")
    assert query.op == "sum" and query.rows == (3, 7) and result.rows[0][0] == 6381 + 355
    assert "Appliances (Domestic), Appliances (International)" in query.what


def test_one_figure_asked_across_every_heading_it_names_adds_that_row_under_each(tmp_path):
    # no sum word: "counting both Domestic and International" names both headings of one label; the whole date
    # glossing the fiscal year names no month column of its own
    asked = ("How much revenue did Best Buy make from appliances in fiscal 2023 (year ended January 28, 2023), "
             "counting both Domestic and International?")
    query, result = _plans(tmp_path, [("BESTBUY_2023_10K.pdf", SEGMENT_CATEGORIES)], asked)
    assert query.op == "sum" and query.rows == (3, 7) and result.rows[0][0] == 6381 + 355
    # one heading named: that row alone; each figure asked for ("were ... revenues"): no sum of them
    for sub, asked in (("a", "How much appliances revenue did the International segment make in fiscal 2023?"),
                       ("b", "What were the Domestic and International appliances revenues in fiscal 2023?")):
        (tmp_path / sub).mkdir()
        query, result = _plans(tmp_path / sub, [("BESTBUY_2023_10K.pdf", SEGMENT_CATEGORIES)], asked)
        assert query is None or query.op != "sum", (asked, query.what)
        if sub == "a":
            assert query.rows == (7,) and result.rows[0][2] == 355


def test_a_table_of_name_value_pairs_reads_the_value_of_the_row_the_question_names(tmp_path):
    # a slide's spec table: its values are numbers and words, so neither column is numeric as a whole
    spec = DataTable("slide 4 table 1", "Pump P-200", ("Property", "Value"),
                     (("Model", "P-200 Compact"), ("Flow rate", "12 m3/h"), ("Impellers", "3"),
                      ("Supplier", "Nordvarme AS")), Location(slide=4))
    for sub, asked, expected in (("a", "What is the flow rate of the P-200 pump?", "12 m3/h"),
                                 ("b", "How many impellers does the P-200 have?", "3"),
                                 ("c", "Who supplies the pump?", "Nordvarme AS"),
                                 ("d", "What is the pump's noise level?", None)):
        (tmp_path / sub).mkdir()
        query, result = _plans(tmp_path / sub, [("pump_review.pptx", spec)], asked)
        if expected is None:  # a row the table does not have: no cell of another
            assert query is None, (asked, query.what)
            continue
        assert query.op == "lookup" and str(_row(result)["value"]) == expected, (asked, query and query.what)


def test_a_unit_in_a_header_s_note_is_no_name_that_turns_a_share_into_a_lookup(tmp_path):
    results = DataTable("p. 1 table 1", "Fourth quarter results", ("(Dollars in millions, except per share data)",
                                                                     "2022", "2021"),
                        (("Net sales", "2,729.4", "2,492.2"), ("Gross profit", "1,065.9", "963.4"),
                         ("Diluted earnings per share", "6.68", "5.41")), Location(page=1))
    # the part it asks the share of is in no row: nothing to compute, not the whole's own figure
    query, _ = _plans(tmp_path, [("ULTABEAUTY_2023Q4_EARNINGS.pdf", results)],
                      "What share of Ulta Beauty's fiscal 2022 net sales came from nail products?")
    assert query is None, query.what
    (tmp_path / "b").mkdir()
    query, result = _plans(tmp_path / "b", [("ULTABEAUTY_2023Q4_EARNINGS.pdf", results)],
                           "What share of Ulta Beauty's 2022 net sales was gross profit?")
    assert query.op == "ratio" and abs(_row(result)["ratio"] - 1065.9 / 2729.4) < 1e-4, query.what
    (tmp_path / "c").mkdir()  # "X to Y" keeps its order after "percentage of"
    query, result = _plans(tmp_path / "c", [("ULTABEAUTY_2023Q4_EARNINGS.pdf", results)],
                           "What was the percentage of net sales to gross profit in 2022?")
    assert query.op == "ratio" and abs(_row(result)["ratio"] - 2729.4 / 1065.9) < 1e-4, query.what


def test_a_row_without_the_name_the_question_gives_is_not_read_when_other_rows_carry_that_name(tmp_path):
    summary = DataTable(
        "p. 35 table 1", "Five-Year Financial Summary", ("(Amounts in millions)", "2018", "2017"),
        (("Total revenues", "500,343", "485,873"), ("Walmart U.S.", "2.1%", "1.6%"), ("Sam's Club", "2.5%", "0.5%"),
         ("Operating income", "20,437", "22,764"), ("Sam's Club segment", "597", "660")),
        Location(page=35))
    asked = "By what percentage did Sam's Club's operating income change in fiscal 2018 compared with fiscal 2017?"
    query, _ = _plans(tmp_path, [("WALMART_2018_10K.pdf", summary)], asked)
    assert query is None  # the consolidated row; Sam's Club's own figures are in a segment table
    (tmp_path / "b").mkdir()
    query, result = _plans(tmp_path / "b", [("WALMART_2018_10K.pdf", summary)],
                           "By what percentage did Walmart's operating income change in fiscal 2018 compared with "
                           "fiscal 2017?")
    assert query.op == "change" and query.rows == (4,)


def _monthly(symbol: str, prices: dict[str, float]) -> list[tuple[str, str, str]]:
    return [(symbol, f"{year}-{month:02d}-01", str(prices.get(f"{year}-{month:02d}", 50.0)))
            for year in (2008, 2009) for month in range(1, 13)]


# two symbols priced monthly over two years: AMZN peaks in Nov 2009, while its Januaries add up to more than its
# Novembers (a month of the year is not a month of the series)
MONTHLY = DataTable(
    "prices", "prices", ("symbol", "date", "price"),
    tuple(_monthly("AMZN", {"2008-01": 100.0, "2009-01": 90.0, "2009-11": 130.0})
          + _monthly("GOOG", {"2009-03": 320.0})),
    Location(sheet="prices", cells="A1:C49"))


def test_which_month_of_a_monthly_series_is_a_month_of_the_series_not_of_the_year(tmp_path):
    query, result = _plans(tmp_path, [("stocks.csv", MONTHLY)],
                           "In which month did AMZN's stock price peak, and at what price?")
    assert result.rows[0][1:3] == ("2009-11", 130.0), query.sql
    # an average asks about a month of the year, over the years
    query, result = _plans(tmp_path, [("stocks.csv", MONTHLY)],
                           "Which month of the year has the highest average price for AMZN?")
    assert result.rows[0][1:3] == ("01", 95.0), query.sql


@pytest.mark.parametrize("question, value", [
    ("In which month did Amazon's stock price peak, and at what price?", 130.0),  # AMZN
    ("What was Google's stock price in March 2009?", 320.0),  # GOOG
])
def test_a_value_printed_as_a_contraction_of_a_name_the_question_writes_is_that_name(tmp_path, question, value):
    query, result = _plans(tmp_path, [("stocks.csv", MONTHLY)], question)
    assert query is not None and value in result.rows[0], (query.sql, result.rows)


STRIP_NET = DataTable(
    "p. 13 table 1", "SUPPLEMENTAL DATA – NET REVENUES",
    ("", "(In thousands) (Unaudited) Three months ended December 31, 2022", "Three months ended December 31, 2021",
     "Twelve months ended December 31, 2022", "Twelve months ended December 31, 2021"),
    (("Las Vegas Strip Resorts", "$ 2,232,402", "$ 1,801,549", "$ 8,422,117", "$ 4,750,624"),
     ("Regional Operations", "902,190", "893,567", "3,618,063", "3,427,875")),
    Location(page=13))


@pytest.mark.parametrize("question, value", [
    ("By what percentage did Las Vegas Strip Resorts net revenues grow in full-year 2022 compared with 2021?",
     round((8422117 - 4750624) / 4750624 * 100, 2)),  # the years' columns, not their fourth quarters'
    ("What were Regional Operations net revenues in 2021?", 3427875.0),
    ("What were Regional Operations net revenues in Q4 2021?", 893567.0),
])
def test_a_year_named_alone_reads_the_years_column_beside_its_quarters(tmp_path, question, value):
    query, result = _plans(tmp_path, [("MGMRESORTS_2022Q4_EARNINGS.pdf", STRIP_NET)], question)
    assert query is not None and value in result.rows[0], (query and query.sql, result and result.rows)


ADJUSTED = DataTable(
    "p. 15 table 1", "RECONCILIATION OF NET INCOME TO ADJUSTED PROPERTY EBITDAR",
    ("", "Twelve months ended December 31, 2022", "Twelve months ended December 31, 2021"),
    (("Table Games Hold Adjusted Las Vegas Strip Resorts Same-Store", "", ""),
     ("Net Revenues", "$ 5,566,836", "$ 3,923,612"), ("Hold adjustment", "12,000", "(4,000)")),
    Location(page=15))


def test_a_heading_naming_more_than_the_question_asks_is_a_variant_it_did_not_ask_for(tmp_path):
    # "Net Revenues" under a hold-adjusted, same-store heading is not the segment's net revenues the other table
    # prints in its own row
    query, result = _plans(tmp_path, [("MGMRESORTS_2022Q4_EARNINGS.pdf", ADJUSTED),
                                      ("MGMRESORTS_2022Q4_EARNINGS.pdf", STRIP_NET)],
                           "By what percentage did Las Vegas Strip Resorts net revenues grow in full-year 2022 "
                           "compared with 2021?")
    assert result.rows[0][0] == "Las Vegas Strip Resorts", (query.sql, result.rows)


RETAIL_GROUP = DataTable(
    "p. 31 table 1", "Item 7 > Segment Results of Operations > Northwind Retail Group > Operating Revenues",
    ("Years Ended December 31,", "2022", "2021"),
    (("Service", "48,200", "45,100"), ("Devices", "12,300", "11,900"), ("Total Operating Revenues", "60,500", "57,000")),
    Location(page=31))
WIRELESS_BY_SEGMENT = DataTable(
    "p. 98 table 2", "Item 8 > Note 12. Segment Information > Reconciliation to Consolidated Financial Information",
    ("Years Ended December 31,", "2022", "2021", "2020"),
    (("Retail", "30,400", "28,000", "26,500"), ("Enterprise", "9,100", "8,800", "8,600"),
     ("Total Wireless service revenue", "39,500", "36,800", "35,100")), Location(page=98))


def test_a_tables_total_row_says_what_its_rows_count(tmp_path):
    """"Total Wireless service revenue" closing a table of segments says each row is that segment's wireless
    service revenue, which the segment's own table ("Service") does not."""
    query, result = _plans(tmp_path, [("NORTHWIND_2022_10K.pdf", RETAIL_GROUP),
                                      ("NORTHWIND_2022_10K.pdf", WIRELESS_BY_SEGMENT)],
                           "By what percentage did Northwind's Retail segment wireless service revenue grow from 2021 "
                           "to 2022?")
    assert query is not None and query.table.name == "p. 98 table 2", query and query.sql
    assert _row(result)["percent_change"] == round((30400 - 28000) / 28000 * 100, 2)


PRICES = DataTable(
    "prices", "prices", ("date", "open", "close"),
    (("2021-03-01", "10.0", "10.5"), ("2021-03-03", "10.5", "11.0"), ("2021-03-09", "11.0", "11.7"),
     ("2021-03-31", "11.7", "12.4"), ("2021-04-01", "12.4", "12.0")),
    Location(sheet="prices", cells="A1:C6"))


@pytest.mark.parametrize(("question", "expected"), [
    ("What was the close on 2021-03-31 in the prices data?", 12.4),  # not 2021-03-03: "2021", "03" and "03"
    ("What was the close on 2021-03-09 in the prices data?", 11.7),
])
def test_a_date_cell_is_named_by_the_whole_date_the_question_writes(tmp_path, question, expected):
    query, result = _plans(tmp_path, [("prices.csv", PRICES)], question)
    assert query is not None and result.rows[0][-1] == expected, query and query.sql


def test_a_change_between_two_dates_reads_those_two_days(tmp_path):
    query, result = _plans(tmp_path, [("prices.csv", PRICES)],
                           "By how much did the close change from 2021-03-01 to 2021-03-31 in the prices data?")
    assert query is not None and _row(result)["difference"] == pytest.approx(12.4 - 10.5), query and query.sql


PLANTS = DataTable(
    "plants", "plants", ("group", "X", "Y", "leafWidth", "leafLength"),
    (("tulip", "1", "2.0", "3.0", "9.0"), ("tulip", "2", "4.0", "3.4", "8.0"), ("tulip", "3", "6.0", "3.2", "8.5"),
     ("fern", "1", "1.0", "1.0", "12.0"), ("fern", "2", "1.5", "1.2", "13.0")),
    Location(sheet="plants", cells="A1:E6"))


@pytest.mark.parametrize(("question", "op", "value"), [
    ("How many tulips are in the plants data?", "count", 3),  # the value selecting the rows is what they are
    ("How many points does the fern group have in the plants data?", "count", 2),  # data points are its rows
    ("What is the mean Y of the tulip group in the plants data?", "avg", 4.0),  # a column named by one capital
    ("Which group has the widest leaves on average in the plants data?", "top max", "tulip"),  # widest: leafWidth
    ("Which group has the longest leaves on average in the plants data?", "top max", "fern"),
])
def test_a_data_files_rows_columns_and_measures_as_people_name_them(tmp_path, question, op, value):
    query, result = _plans(tmp_path, [("plants.csv", PLANTS)], question)
    assert query is not None and query.op == op, query and query.sql
    row = _row(result)
    if isinstance(value, str):
        assert row["label"] == value, row
    else:
        assert row.get("count", row.get("value")) == pytest.approx(value), row


def test_a_word_beginning_like_a_month_is_no_period():
    from agentic_rag.tables.plan import TableAsk, _named_by_period_only
    ask = TableAsk.of("What were the sepals of the alpha group like, on average?")
    assert not _named_by_period_only(ask, "sepalWidth")  # "sep" begins "sepal", it is no September
    assert _named_by_period_only(TableAsk.of("What were sales in March 2022?"), "Returns March 2022")


SALES_LOG = DataTable(
    "sales", "sales", ("date", "rep", "region", "amount"),
    (("2022-01-03", "Ana", "East", "120"), ("2022-01-04", "Ben", "West", "340"), ("2022-01-05", "Ana", "East", "90"),
     ("2022-01-06", "Cy", "East", "410"), ("2022-01-07", "Ben", "West", "75"), ("2022-01-10", "Ana", "East", "260")),
    Location(sheet="sales", cells="A1:D7"))


@pytest.mark.parametrize(("question", "expected"), [
    ("How many different reps appear in the sales data?", 3),  # each name once, not its six rows
    ("How many reps sold in the East region?", 2),
    ("How many sales exceeded 200?", 3),  # "exceed" bounds the amount
    ("On how many days did the amount exceed 100 in the sales data?", 4),
])
def test_counts_of_names_and_of_rows_over_a_bound(tmp_path, question, expected):
    query, result = _plans(tmp_path, [("sales.csv", SALES_LOG)], question)
    assert query is not None and query.op == "count" and result.rows[0][0] == expected, query and query.sql


def test_the_three_highest_asks_for_three_rows(tmp_path):
    query, result = _plans(tmp_path, [("sales.csv", SALES_LOG)], "What were the three highest amounts in the sales data?")
    assert query is not None and [r[-1] for r in result.rows] == [410, 340, 260], query and query.sql


def test_how_much_longer_one_group_than_another_is_the_difference_of_their_averages(tmp_path):
    query, result = _plans(tmp_path, [("plants.csv", PLANTS)],
                           "How much longer are fern leaves than tulip leaves on average in the plants data?")
    assert query is not None and _row(result)["difference"] == pytest.approx(12.5 - 8.5), query and query.sql


CHART = DataTable("slide 2 table 1", "Units by region", ("Category", "Units"),
                  (("North", "4.1"), ("South", "7.6"), ("East", "2.2"), ("West", "5.0")), Location(slide=2))


def test_which_after_a_leading_phrase_still_asks_for_the_row(tmp_path):
    query, result = _plans(tmp_path, [("deck.pptx", CHART)], "In the units chart, which region sold the most?")
    assert query is not None and query.op.startswith("top") and result.rows[0][1] == "South", query and query.sql


PIVOT = DataTable("Sheet4", "Sheet4", ("Row Labels", "Sum of Cost", "Sum of Revenue"),  # years nested under each
                  (("Books", "2,000,000", "2,620,585"), ("2005", "990,000", "1,300,000"),
                   ("2006", "1,010,000", "1,320,585"), ("Music", "1,000,000", "1,405,000"),
                   ("2005", "490,000", "700,000"), ("2006", "510,000", "705,000")),
                  Location(sheet="Sheet4", cells="A3:C9"))
BY_YEAR = DataTable("Sheet5", "Sheet5", ("Row Labels", "2005 Sum of Revenue", "2006 Sum of Revenue"),
                    (("Books", "1,300,000", "1,320,585"), ("Music", "700,000", "705,000")),
                    Location(sheet="Sheet5", cells="A3:C5"))


def test_a_table_showing_none_of_the_years_asked_does_not_answer_for_them(tmp_path):
    files = [("sales.xlsx", PIVOT), ("sales.xlsx", BY_YEAR)]
    query, _ = _plans(tmp_path, files, "How much revenue did the Books category bring in during 2008?")
    assert query is None  # the pivot's total is of other years; the yearly table has no 2008
    query, result = _plans(tmp_path, files, "How much revenue did the Books category bring in during 2006?")
    assert query is not None and result.rows[0][-1] == 1320585, query and query.sql


YEARLY = DataTable("Sheet1", "Sheet1", ("Year", "Category", "Revenue"),
                   (("2019", "Lighting", "100"), ("2020", "Lighting", "120"), ("2021", "Lighting", "150"), ("2022", "Lighting", "90"),
                    ("2019", "Furniture", "300"), ("2020", "Furniture", "310"), ("2021", "Furniture", "330")),
                   Location(sheet="Sheet1", cells="A1:C8"))
YEAR_COLUMNS = DataTable("Sheet2", "Sheet2", ("Category", "2019 Revenue", "2020 Revenue", "2021 Revenue"),
                         (("Lighting", "100", "120", "150"), ("Furniture", "300", "310", "330")),
                         Location(sheet="Sheet2", cells="A1:D3"))


@pytest.mark.parametrize("question", ["What was the combined revenue of the Furniture category over 2019 to 2021?",
                                      "What was the total revenue of Furniture from 2019 through 2021?"])
def test_a_total_over_a_span_of_years_adds_each_year_of_it(tmp_path, question):
    # "over 2019" is no bound on the revenue, and one year's cell is not the total
    query, result = _plans(tmp_path, [("sales.xlsx", YEARLY), ("sales.xlsx", YEAR_COLUMNS)], question)
    assert query is not None and query.op == "sum" and result.rows[0][0] == 940, query and query.sql


def test_a_year_is_no_period_of_a_table_that_shows_none(tmp_path):
    # the year says which study it is; the table of that study prints no period to contradict it
    query, result = _plans(tmp_path, [("plants.csv", PLANTS)], "How many tulips were in the 1936 plants data?")
    assert query is not None and result.rows[0][0] == 3, query and query.sql


EVENTS = DataTable("events", "events", ("name", "death_date", "type"),
                   (("A", "1992-04-30", "Homicide"), ("B", "1992-04-30", "Homicide"), ("C", "1992-05-01", "Other"),
                    ("D", "1992-05-01", "Homicide")), Location(sheet="events", cells="A1:C5"))


def test_deaths_counted_by_a_column_of_their_dates_are_its_rows(tmp_path):
    query, result = _plans(tmp_path, [("events.csv", EVENTS)], "How many deaths in the events data were homicides?")
    assert query is not None and result.rows[0][0] == 3, query and query.sql  # not the 2 days they fell on


def test_a_year_that_only_names_the_data_does_not_hide_a_table_that_shows_no_period(tmp_path):
    # one state per row, rates in columns, no date anywhere: "the 2009 data" says which data, not which column
    crime = DataTable("statecrime", "statecrime", ("state", "violent", "murder", "poverty"),
                      (("Alabama", "459.9", "7.1", "17.5"), ("Florida", "612.6", "5.5", "14.9"),
                       ("New York", "385.5", "4.0", "14.2"), ("Texas", "491.4", "5.4", "17.2")), Location(sheet="statecrime"))
    query, result = _plans(tmp_path, [("statecrime.csv", crime)], "What was the murder rate in Texas in the 2009 data?")
    assert query.op == "lookup" and _row(result)["value"] == 5.4
    # a table that prints its years still needs the one asked
    dated = DataTable("p. 3 table 1", "Rates", ("State", "2019", "2020"), (("Texas", "5.0", "5.8"),), Location(page=3))
    (tmp_path / "b").mkdir()
    query, _ = _plans(tmp_path / "b", [("rates.pdf", dated)], "What was the rate in Texas in 2009?")
    assert query is None


def test_how_much_higher_one_row_is_than_another_is_their_difference_in_the_column_named(tmp_path):
    crime = DataTable("statecrime", "statecrime", ("state", "violent", "murder"),
                      (("Alabama", "459.9", "7.1"), ("Florida", "612.6", "5.5"), ("New York", "385.5", "4.0")),
                      Location(sheet="statecrime"))
    query, result = _plans(tmp_path, [("statecrime.csv", crime)],
                           "How much higher was Florida's violent crime rate than New York's?")
    assert query.op == "change" and round(_row(result)["difference"], 1) == 227.1  # Florida less New York
    (tmp_path / "b").mkdir()
    query, result = _plans(tmp_path / "b", [("statecrime.csv", crime)],
                           "How much lower was the murder rate in New York than in Alabama?")
    assert query.op == "change" and round(_row(result)["difference"], 1) == -3.1  # New York less Alabama


def test_a_value_the_question_sets_aside_is_left_out_not_selected(tmp_path):
    rows = [("General Motors", "1954", "1486.7"), ("US Steel", "1954", "459.3"), ("General Electric", "1954", "189.6"),
            ("US Steel", "1953", "645.5"), ("General Motors", "1953", "1304.4")]
    panel = DataTable("grunfeld", "grunfeld", ("firm", "year", "invest"), tuple(rows), Location(sheet="grunfeld"))
    for sub, asked in (("a", "Setting General Motors aside, which firm invested the most in 1954?"),
                       ("b", "Excluding General Motors, which firm invested the most in 1954?"),
                       ("c", "Which firm other than General Motors invested the most in 1954?")):
        (tmp_path / sub).mkdir()
        query, result = _plans(tmp_path / sub, [("grunfeld.csv", panel)], asked)
        assert _row(result)["label"] == "US Steel" and _row(result)["value"] == 459.3, (asked, query.sql)
    (tmp_path / "d").mkdir()
    query, result = _plans(tmp_path / "d", [("grunfeld.csv", panel)], "How much did General Motors invest in 1954?")
    assert _row(result)["value"] == 1486.7


def test_a_length_or_a_rate_ranks_groups_by_their_largest_row_never_by_their_sum(tmp_path):
    # many Adelie rows add up to more than the few Gentoo ones; the longest flipper is a Gentoo's
    rows = [("Adelie", "190")] * 6 + [("Gentoo", "231"), ("Gentoo", "215")]
    penguins = DataTable("penguins", "penguins", ("species", "flipper_length_mm"), tuple(rows), Location(sheet="penguins"))
    query, result = _plans(tmp_path, [("penguins.csv", penguins)],
                           "Which species does the penguin with the longest flippers belong to?")
    assert _row(result)["label"] == "Gentoo" and _row(result)["value"] == 231
    # an amount is still added up over the group's rows
    sales = DataTable("sales", "sales", ("region", "sales"), (("East", "100"), ("East", "100"), ("West", "150")),
                      Location(sheet="sales"))
    (tmp_path / "b").mkdir()
    query, result = _plans(tmp_path / "b", [("sales.csv", sales)], "Which region had the highest sales?")
    assert _row(result)["label"] == "East" and _row(result)["value"] == 200


def test_a_share_of_named_as_x_as_a_share_of_y_divides_x_by_y_even_when_their_labels_share_words(tmp_path):
    taxes = DataTable("p. 14 table 2", "Income taxes", ("label", "Three months ended June 30, 2022"),
                      (("Income before income tax expense", "10,865"), ("Income tax expense", "2,216")),
                      Location(page=14))
    query, result = _plans(tmp_path, [("JPMORGAN_2022Q2_10Q.pdf", taxes)],
                           "What was the effective tax rate in 2Q22, i.e. income tax expense as a share of income "
                           "before tax?")
    assert query.op == "ratio" and round(_row(result)["ratio"], 3) == 0.204
    # the passage states the part of the whole as the percentage it is asked in, too
    from agentic_rag.tables.compute import _result_lines

    assert "= 0.204 (20.4%)" in _result_lines(query, result)[0]


def test_a_span_of_quarters_adds_up_the_row_s_quarter_columns_from_the_first_to_the_last(tmp_path):
    highlights = DataTable("p. 3 table 1", "Financial highlights", ("label", "1Q21", "4Q20", "3Q20", "2Q20", "1Q20"),
                           (("Total net revenue", "32,266", "29,335", "29,255", "33,075", "28,286"),
                            ("Net income", "14,300", "12,136", "9,443", "4,687", "2,865")), Location(page=3))
    query, result = _plans(tmp_path, [("JPMORGAN_2021Q1_10Q.pdf", highlights)],
                           "Add up net income for the four quarters from 2Q20 through 1Q21. What's the total?")
    assert _row(result)["value"] == 14300 + 12136 + 9443 + 4687


def test_a_figure_defined_as_a_ratio_is_worked_out_from_its_rows_unless_the_table_prints_it(tmp_path):
    statement = DataTable("p. 63 table 1", "Consolidated Statements of Operations",
                          ("label", "For the Years Ended December 31, 2021", "For the Years Ended December 31, 2020"),
                          (("Operating revenues", "3,930", "3,777"), ("Operation and maintenance", "1,777", "1,622"),
                           ("Operating income", "1,196", "1,248"), ("Income before income taxes", "1,397", "885"),
                           ("Provision for income taxes", "134", "176")), Location(page=63))
    query, result = _plans(tmp_path, [("AMERICANWATERWORKS_2021_10K.pdf", statement)],
                           "What was American Water's operating margin in 2021?")
    # operating income over revenues, not revenues over income (their labels share "operating")
    assert query.op == "ratio" and round(_row(result)["ratio"], 3) == round(1196 / 3930, 3)
    from agentic_rag.tables.compute import _result_lines

    assert _result_lines(query, result)[0].startswith("operating margin: Operating income")  # what it worked out
    printed = DataTable("p. 40 table 1", "Key figures", ("label", "2021"),
                        (("Operating revenues", "3,930"), ("Operating income", "1,196"), ("Operating margin", "30.1")),
                        Location(page=40))
    (tmp_path / "b").mkdir()
    query, result = _plans(tmp_path / "b", [("report.pdf", printed)], "What was the operating margin in 2021?")
    assert query.op == "lookup" and _row(result)["value"] == 30.1  # printed: read, not recomputed


def test_a_verb_of_business_reads_the_table_of_its_noun(tmp_path):
    sales = DataTable("p. 9 table 1", "Supplementary Sales Data", ("(Dollars in Millions)", "2023", "2022"),
                      (("U.S.", "11,744", "10,931"), ("Europe", "5,590", "6,022")), Location(page=9))
    query, result = _plans(tmp_path, [("JNJ_8K.pdf", sales)], "How much did the company sell in Europe in 2023?")
    assert query.op == "lookup" and _row(result)["value"] == 5590


def test_a_full_year_is_not_read_from_a_table_of_quarters_and_half_years(tmp_path):
    quarterly = DataTable("p. 5 table 1", "Selected income statement data",
                          ("Three months ended June 30, Six months ended June 30, As of", "2022", "2021"),
                          (("Total net revenue", "30,715", "30,479"),), Location(page=5))
    query, _ = _plans(tmp_path, [("JPMORGAN_2022Q2_10Q.pdf", quarterly)],
                      "What total net revenue did JPMorgan report for the full year 2022?")
    assert query is None  # a quarterly report holds no year's figure
    yearly = DataTable("p. 40 table 1", "Selected data", ("Year ended December 31,", "2022", "2021"),
                       (("Total net revenue", "128,695", "121,649"),), Location(page=40))
    (tmp_path / "b").mkdir()
    query, result = _plans(tmp_path / "b", [("JPMORGAN_2022_10K.pdf", yearly)],
                           "What total net revenue did JPMorgan report for the full year 2022?")
    assert _row(result)["value"] == 128695


def test_a_heading_written_out_in_full_picks_its_row_even_when_it_shares_the_file_s_name(tmp_path):
    # "Casino" under each segment; the question writes "MGM China", whose "MGM" is also the file's company
    segments = DataTable("p. 38 table 1", "Net revenues by segment", ("label", "2022", "2021"),
                         (("Las Vegas Strip Resorts", "", ""), ("Casino", "2,118,292", "1,489,291"),
                          ("Rooms", "2,729,715", "1,513,611"), ("MGM China", "", ""), ("Casino", "567,573", "1,057,962"),
                          ("Rooms", "106,524", "120,373")), Location(page=38))
    query, result = _plans(tmp_path, [("MGMRESORTS_2022_10K.pdf", segments)],
                           "By what percentage did MGM China's casino revenue change from 2021 to 2022?")
    assert query.rows == (5,) and _row(result)["percent_change"] == -46.35


QUARTER_AND_HALF = DataTable(
    "p. 5 table 1", "Selected income statement data",
    # the table pass reads the spans printed over the two groups of years into the label column's header
    ("Three months ended June 30, Six months ended June 30, (in millions)", "2022", "2021", "Change",
     "2022 (2)", "2021 (2)", "Change (2)"),
    (("Total noninterest expense", "18,749", "17,667", "6", "37,940", "36,392", "4"),
     ("Net income", "8,649", "11,948", "(28)", "16,931", "26,248", "(35)")), Location(page=5))


@pytest.mark.parametrize("question, key, value", [
    ("By how much did noninterest expense grow in the first half of 2022 versus the first half of 2021, in percent?",
     "percent_change", 4.25),
    ("What was net income in H1 2021?", "value", 26248),
    ("What was net income for the six months ended June 30, 2022?", "value", 16931),
    ("What was net income in the second quarter of 2022?", "value", 8649),
])
def test_the_spans_printed_over_groups_of_year_columns_name_those_columns(tmp_path, question, key, value):
    query, result = _plans(tmp_path, [("JPMORGAN_2022Q2_10Q.pdf", QUARTER_AND_HALF)], question)
    assert _row(result)[key] == value


def test_a_spanned_column_is_cited_by_its_span_and_year(tmp_path):
    store = TableStore(tmp_path / "t.duckdb")
    store.write("d", "JPMORGAN_2022Q2_10Q.pdf", [QUARTER_AND_HALF])
    (table,) = store.tables()
    assert [c.name for c in table.columns[1:3]] == ["Three months ended June 30, 2022", "Three months ended June 30, 2021"]
    assert table.columns[4].name == "Six months ended June 30, 2022"
    assert table.columns[6].name == "Change, Six months ended June 30"


GAPMINDER = DataTable(
    "gapminder", "gapminder", ("country", "continent", "year", "lifeExp", "pop", "gdpPercap"),
    (("Nigeria", "Africa", "1952", "36.324", "33119096", "1077.28"),
     ("Nigeria", "Africa", "2007", "46.859", "135031164", "2013.98"),
     ("Japan", "Asia", "1952", "63.03", "86459025", "3216.96"),
     ("Japan", "Asia", "2007", "82.603", "127467972", "31656.07"),
     ("Norway", "Europe", "2007", "80.196", "4627926", "49357.19")),
    Location(sheet="gapminder", cells="A1:F6"),
    tuple(Location(sheet="gapminder", cells=f"A{r}:F{r}") for r in range(2, 7)), ("A", "B", "C", "D", "E", "F"))


@pytest.mark.parametrize("question, key, value", [
    ("By what percentage did Nigeria's population grow between 1952 and 2007?", "percent_change", 307.71),
    ("What was the life expectancy in Japan in 2007?", "value", 82.603),
])
def test_a_csv_header_cut_short_is_the_column_of_the_word_the_question_writes_out(tmp_path, question, key, value):
    _, result = _plans(tmp_path, [("gapminder.csv", GAPMINDER)], question)
    assert _row(result)[key] == value


@pytest.mark.parametrize("question, label, value", [
    ("Which revenue line brought in the most money at the Las Vegas Strip resorts in 2022?", "Rooms", 2729715),
    # the heading written out as a name, and another section's
    ("Which revenue line brought in the most money at the Las Vegas Strip Resorts in 2022?", "Rooms", 2729715),
    ("Which line was largest at Regional Operations in 2021?", "Casino", 2844478),
])
def test_a_row_printed_without_a_name_is_never_the_answer_to_which(tmp_path, question, label, value):
    # each section ends in its sum line, printed with no label
    segments = DataTable("p. 38 table 1", "The following table presents a detail by segment of net revenues:",
                         ("label", "2022", "2021"),
                         (("Las Vegas Strip Resorts", "", ""), ("Casino", "2,118,292", "1,489,291"),
                          ("Rooms", "2,729,715", "1,513,611"), ("Food and beverage", "2,088,490", "1,153,047"),
                          ("", "8,398,372", "4,991,487"), ("Regional Operations", "", ""),
                          ("Casino", "2,863,318", "2,844,478"), ("Rooms", "234,119", "218,761"),
                          ("", "3,499,127", "3,401,062")), Location(page=38))
    query, result = _plans(tmp_path, [("MGMRESORTS_2022_10K.pdf", segments)], question)
    assert _row(result)["label"] == label and _row(result)["value"] == value


@pytest.mark.parametrize("question, rows", [
    ("By how much did total revenue grow in fiscal 2022 compared with the year before?",
     (("Total revenue", 15785.0, 17606.0, 1821.0, 11.54),)),
    ("How much did net income change in 2021 from the prior year?", (("Net income", 5260.0, 4822.0, -438.0, -8.33),)),
    ("By what percentage did total revenue rise in 2022 over the previous year?",
     (("Total revenue", 15785.0, 17606.0, 1821.0, 11.54),)),
    ("What was total revenue in 2022?", ((4, "Total revenue", 17606.0),)),  # no year before asked: a lookup
])
def test_the_year_before_the_one_named_is_the_other_side_of_a_change(store, question, rows):
    _, result = _answer(store, question)
    assert result.rows == rows  # not the named year's figure shown as the change


def test_a_total_row_labelled_in_another_language_is_not_added_again(tmp_path):
    # a German pivot table prints its grand total as "Gesamtergebnis": a computed total leaves it out
    pivot = DataTable("Tabelle3", "Tabelle3", ("Zeilenbeschriftungen", "Summe von Umsatz"),
                      (("Nord", "11"), ("Süd", "33"), ("Gesamtergebnis", "44")),
                      Location(sheet="Tabelle3", cells="A1:B4"),
                      tuple(Location(sheet="Tabelle3", cells=f"A{r}:B{r}") for r in (2, 3, 4)), ("A", "B"))
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("p", "pivot.xlsx", [pivot])
    query, result = _answer(store, "What is the overall sum of the Umsatz column?")
    assert result.rows[0][0] == 44.0 and '"_row" NOT IN (3)' in query.sql
