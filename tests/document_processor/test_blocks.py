"""document_processor.blocks: values rendered as people read them."""

from __future__ import annotations

import datetime as dt

import pytest

from document_processor.blocks import format_number, format_value


@pytest.mark.parametrize(("value", "number_format", "text"), [
    (3.0, "General", "3"), (0.1 + 0.2, "General", "0.3"), (1.0000000000000002, "General", "1"), (7, "", "7"),
    (1e20, "", "100000000000000000000"), (0.0000015, "", "0.0000015"), (0.25, "0%", "25%"), (-0.0, "", "0"),
    (1.0000000002, "General", "1"), (1234.5, "#,##0.00", "1,234.50"), (2.5, "#,##0", "3"), (-0.001, "0.00", "0.00"),
    (1234567, "#,##0", "1,234,567"), (5, "0.00", "5.00"), (1234.5, '"$"#,##0.00', "$1,234.50"),
    (1234.5, "[$€-407]#,##0", "€1,235"), (-1234, "#,##0;(#,##0)", "(1,234)"), (-1234.5, "$#,##0.00", "-$1,234.50"),
    (-5, '_("$"* #,##0.00_);_("$"* \\(#,##0.00\\);_("$"* "-"??_);_(@_)', "($5.00)"),
    (-0.0001, "#,##0;(#,##0)", "0"), (0.256, "0.0%", "25.6%"), (1234567.891, "", "1234567.891"),
    (dt.datetime(2023, 12, 31), "", "2023-12-31"), (dt.datetime(2023, 12, 31, 8, 5, 9), "", "2023-12-31 08:05:09"),
    (dt.date(2020, 2, 29), "", "2020-02-29"), (True, "", "TRUE"), ("  two   words ", "", "two words"), (None, "", ""),
])
def test_values_render_as_people_read_them(value, number_format, text):
    assert format_value(value, number_format) == text


def test_format_number_has_no_float_noise():
    assert format_number(8.200000000000001) == "8.2" and format_number(1234567.891) == "1234567.891"
