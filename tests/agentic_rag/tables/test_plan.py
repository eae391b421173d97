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
