"""advanced_retrieval.tables.spans: the spans a statement prints over groups of columns, given back to them."""

from __future__ import annotations

from advanced_retrieval.tables.spans import spanned
from advanced_retrieval.tables.store import Column


def _columns(*names):
    return [Column(name, f"c{i}", i > 0) for i, name in enumerate(names)]


def test_dated_spans_name_each_group_s_columns():
    out = spanned(_columns("(in millions) Three months ended March 31, 2021 Three months ended March 31, 2020",
                           "Average balance", "Interest", "Average balance (2)", "Interest (2)"))
    assert [c.name for c in out[1:]] == [
        "Average balance, Three months ended March 31, 2021", "Interest, Three months ended March 31, 2021",
        "Average balance, Three months ended March 31, 2020", "Interest, Three months ended March 31, 2020"]
    assert [c.sql for c in out] == ["c0", "c1", "c2", "c3", "c4"]  # the stored columns are the same


def test_a_layout_the_spans_do_not_account_for_is_left_as_read():
    three = ("Three months ended June 30, Six months ended June 30, Nine months ended September 30", "2022", "2021",
             "2022 (2)", "2021 (2)")  # three spans, two groups
    assert [c.name for c in spanned(_columns(*three))] == list(three)
    one = ("Three months ended June 30", "2022", "2021")  # one span: the header already says it all
    assert [c.name for c in spanned(_columns(*one))] == list(one)
    odd = ("Three months ended June 30, Six months ended June 30", "2022", "Total (2)")  # not a repeat of the first
    assert [c.name for c in spanned(_columns(*odd))] == list(odd)
