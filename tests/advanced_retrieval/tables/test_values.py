"""advanced_retrieval.tables.values: numbers as documents write them, and the scale a table states."""

from __future__ import annotations

import pytest

from advanced_retrieval.tables.values import number, scale, unit


@pytest.mark.parametrize("cell, value, shown_unit", [
    ("1,234", 1234.0, ""), ("(56)", -56.0, ""), ("$ 4,321", 4321.0, "$"), ("12%", 12.0, "%"), ("10 %", 10.0, "%"),
    ("(3.2)%", -3.2, "%"), ("$(1,234)", -1234.0, "$"), ("-5.5", -5.5, ""), ("€ 24,960", 24960.0, "€"),
    ("1997", 1997.0, ""), ("—", None, ""), ("n/a", None, ""), ("12 months", None, ""), ("", None, ""),
])
def test_a_cell_is_read_as_the_number_it_shows(cell, value, shown_unit):
    assert number(cell) == value
    assert unit(cell) == shown_unit


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
