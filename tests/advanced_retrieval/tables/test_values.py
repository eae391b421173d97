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
