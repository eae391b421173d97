"""The spans of time a filing prints over groups of its columns, given back to the columns.

A quarterly statement prints "Three months ended June 30" over one group of year columns and "Six months ended
June 30" over the next ("2022 | 2021 | Change | 2022 | 2021 | Change"). The table pass reads the spanning cells
into the label column's header and numbers the repeated year headers ("2022 (2)"), so "2022 (2)" would not say that
it is the six months' figure, and a question about "the first half of 2022" would read the quarter's. When the
label header prints as many spans as there are such groups, in order, each column is named with its group's span:
"Three months ended June 30, 2022", "Six months ended June 30, 2022", "Change, Six months ended June 30".
Anything else (fewer or more spans than groups, groups out of order or of other headers) is left as it was read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TypeVar

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
          r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_YEAR = r"(?:19|20)\d\d"
SPAN = re.compile(
    r"\b(?:(?:three|six|nine|twelve|thirteen|twenty[- ]six|thirty[- ]nine|fifty[- ]two|\d{1,2})[- ](?:months?|weeks?)"
    r"|(?:fiscal\s+)?years?|quarters?)\s+ended"
    rf"(?:\s+{_MONTH}\s+\d{{1,2}}(?:,?\s+{_YEAR})?|\s+\d{{1,2}}/\d{{1,2}}/{_YEAR})?", re.IGNORECASE)
_REPEAT = re.compile(r"^(?P<base>.*\S) \((?P<k>\d+)\)$")  # "2022 (2)": the second header printed "2022"
_HAS_YEAR = re.compile(rf"(?<!\d){_YEAR}(?!\d)")

C = TypeVar("C")


def spans(header: str) -> list[str]:
    """The spans of time a label column's header prints, in order ("Three months ended June 30", ...)."""
    return [" ".join(m.group(0).split()) for m in SPAN.finditer(header)]


def spanned(columns: Iterable[C]) -> tuple[C, ...]:
    """`columns` (with a `name`; the first is the label column) with each later column named by its group's span,
    when the label header prints one span per group of repeated headers, in order; else as they are."""
    columns = tuple(columns)
    if len(columns) < 3:
        return columns
    printed = spans(columns[0].name)  # type: ignore[attr-defined]
    if len(printed) < 2:
        return columns
    groups: list[tuple[str, int]] = []
    for column in columns[1:]:
        m = _REPEAT.match(column.name)  # type: ignore[attr-defined]
        groups.append((m.group("base"), int(m.group("k"))) if m else (column.name, 1))  # type: ignore[attr-defined]
    ks = [k for _, k in groups]
    if ks != sorted(ks) or sorted(set(ks)) != list(range(1, len(printed) + 1)):
        return columns  # as many groups as spans, each after the one before
    first = [base for base, k in groups if k == 1]
    if not any(_HAS_YEAR.search(b) for b in first) and not any(_HAS_YEAR.search(s) for s in printed):
        return columns  # neither the spans nor the columns say which year: no period to give back
    if any(base not in first for base, k in groups if k > 1):
        return columns  # a later group repeats headers of the first only
    out = [columns[0]]
    for column, (base, k) in zip(columns[1:], groups, strict=True):
        span = printed[k - 1]
        if _HAS_YEAR.search(span) or not _HAS_YEAR.search(base):
            name = f"{base}, {span}"  # "Average balance, Three months ended March 31, 2021"; "Change, Six months ..."
        elif re.search(r"\d$", span):
            name = f"{span}, {base}"  # "Six months ended June 30, 2022"
        else:
            name = f"{span} {base}"  # "Six months ended 2022"
        out.append(replace(column, name=name))  # type: ignore[type-var]
    if len({c.name for c in out}) != len(out):  # type: ignore[attr-defined]
        return columns  # two groups under the same span: names that would not tell them apart
    return tuple(out)
