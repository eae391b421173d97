"""advanced_retrieval.tables.values: numbers as documents write them, and the scale a table states."""

from __future__ import annotations

import pytest

from advanced_retrieval.tables.values import decimal_comma, number, scale, space_grouped, unit


@pytest.mark.parametrize("cell, value, shown_unit", [
    ("1,234", 1234.0, ""), ("(56)", -56.0, ""), ("$ 4,321", 4321.0, "$"), ("12%", 12.0, "%"), ("10 %", 10.0, "%"),
    ("(3.2)%", -3.2, "%"), ("$(1,234)", -1234.0, "$"), ("-5.5", -5.5, ""), ("€ 24,960", 24960.0, "€"),
    ("1997", 1997.0, ""), ("—", None, ""), ("n/a", None, ""), ("12 months", None, ""), ("", None, ""),
])
def test_a_cell_is_read_as_the_number_it_shows(cell, value, shown_unit):
    assert number(cell) == value
    assert unit(cell) == shown_unit


@pytest.mark.parametrize("cell, value", [
    ("4068816,55", 4068816.55), ("3 449,18", 3449.18), ("39 921 700,00 руб.", 39921700.0), ("1.234,50 €", 1234.5),
    ("(1 234,5)", -1234.5), ("12,5%", 12.5), ("7", 7.0), ("—", None), ("Итого", None),
])
def test_a_column_written_with_decimal_commas_is_read_in_its_own_convention(cell, value):
    assert number(cell, decimal_comma=True) == value


def test_the_convention_is_the_column_s_and_a_thousands_comma_stays_one():
    assert decimal_comma(["4068816,55", "899621,85", ""]) and decimal_comma(["3 449,18", "620,85"])
    assert decimal_comma(["1.234,50", "12"])
    assert not decimal_comma(["1,234", "5,678"])  # thousands, as English writes them
    assert not decimal_comma(["1,234.5", "2,50"])  # a decimal point elsewhere in the column settles it
    assert number("1,234") == 1234.0


def test_thousands_written_with_spaces_are_read_where_the_column_writes_them_so():
    assert space_grouped(["39 921 700", "1 250.5", "12"]) and number("39 921 700", spaced=True) == 39921700.0
    # a PDF's two columns run together in one cell: no number, and no convention from one such cell
    assert number("8 123") is None and not space_grouped(["8 123", "1,234", "5,678"])


def test_the_scale_a_title_or_note_states():
    assert scale("(dollars in millions)") == 1e6
    assert scale("In thousands, except per share data") == 1e3
    assert scale("Net sales", "($ in billions)") == 1e9
    assert scale("Net sales") == 1.0


def test_a_date_column_is_written_iso_so_a_year_or_a_month_is_one_prefix():
    from advanced_retrieval.tables.values import iso_dates

    assert iso_dates(["Jan 1 2000", "Feb 1 2000", ""]) == ["2000-01-01", "2000-02-01", ""]
    assert iso_dates(["2010/01/01 00:00", "2010/01/01 01:00"]) == ["2010-01-01 00:00", "2010-01-01 01:00"]
    assert iso_dates(["12/31/2020", "01/05/2021"]) == ["2020-12-31", "2021-01-05"]
    assert iso_dates(["2001", "2002"]) is None and iso_dates(["rain", "sun"]) is None
