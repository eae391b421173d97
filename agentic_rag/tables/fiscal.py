"""Which column is "fiscal 2022" when a company's year ends in January: the document's naming, or both readings.

A 52/53-week year that ends in late January or the first days of February (most retailers) is named by the year
it began by some companies ("fiscal 2022 ended January 28, 2023": Ulta, Target, Home Depot) and by the year it
ended by others ("fiscal 2018 ended January 31, 2018": Walmart, Best Buy). A statement prints the day, not the
name, so "net sales for fiscal 2022" read as the column of 2022 is right for one company and a year off for the
other. The document says which where it links a fiscal year to the day it ended ("the fiscal years ended January
31, 2018 ("fiscal 2018")", "February 2, 2018, the last trading day of fiscal 2018"), or where a statement stands
under a heading naming the one fiscal year it reports ("Fourth Quarter Fiscal 2022 Results") and its latest column
ended early in the next calendar year. Where it says nothing, the engine cannot know, and says so: the other
reading is shown beside the answer (compute.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from advanced_retrieval.tables import TableInfo

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                        "dec"), start=1)}
_DAY = (r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|"
        r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(?P<day>\d{1,2}),?\s+(?P<dy>(?:19|20)\d\d)")
_NAMED = r"(?:fiscal|FY)\s*(?:year\s+)?(?P<fy>(?:19|20)\d\d)"
# sentences that tie a fiscal year's name to the day it ended
_STATED = (re.compile(rf"\bended\s+{_DAY}\s*\(\s*[\"“”']?\s*{_NAMED}", re.IGNORECASE),
           re.compile(rf"\b{_NAMED}\s*[,(]?\s*(?:which\s+)?(?:ended|ending|ends)\s+(?:on\s+)?{_DAY}", re.IGNORECASE),
           re.compile(rf"\b{_DAY},?\s+the\s+last\s+(?:\w+\s+)?day\s+of\s+(?:our\s+)?{_NAMED}", re.IGNORECASE),
           re.compile(rf"\b{_NAMED}\s*\(\s*(?:the\s+)?(?:fiscal\s+)?(?:year|\w+[- ]weeks?)\s+ended\s+{_DAY}",
                      re.IGNORECASE))
# a fiscal year as a question names it: "fiscal 2022", "fiscal year 2022", "FY2022", "FY'22"
FISCAL_NAMED = re.compile(r"\b(?:fiscal(?:\s+year)?|FY)\s*['’]?(?P<y>(?:19|20)\d\d|\d\d)\b", re.IGNORECASE)
_FULL_DATE = re.compile(_DAY, re.IGNORECASE)
_HEADING_FISCAL = re.compile(rf"\b{_NAMED}\b", re.IGNORECASE)
EARLY_FEBRUARY = 7  # a 52/53-week year ending on the Saturday nearest January 31 ends by February 7 at the latest


def asked_fiscal_year(question: str) -> int | None:
    """The one fiscal year a question names ("net sales for fiscal 2022": 2022); None for none or several."""
    years = {int(m.group("y")) for m in FISCAL_NAMED.finditer(question) if len(m.group("y")) == 4}
    return years.pop() if len(years) == 1 else None


def year_end_in_january(header: str) -> int | None:
    """The calendar year of a header's day when that day ends a year in January or the first week of February
    (a year named either way), else None: "52 Weeks Ended January 29, 2022" -> 2022."""
    for m in _FULL_DATE.finditer(header):
        month, day = _MONTHS[m.group("mon")[:3].lower()], int(m.group("day"))
        if month == 1 or (month == 2 and day <= EARLY_FEBRUARY):
            return int(m.group("dy"))
    return None


def stated_naming(texts: Iterable[str]) -> int | None:
    """How the document names a fiscal year ending in January: 0 by the year it ends, 1 by the year it began (the
    day's year less the name's), from its sentences that tie the two; None when it ties none, or both ways."""
    found: Counter[int] = Counter()
    for text in texts:
        flat = " ".join(text.split())
        for pattern in _STATED:
            for m in pattern.finditer(flat):
                month, day = _MONTHS[m.group("mon")[:3].lower()], int(m.group("day"))
                if month == 1 or (month == 2 and day <= EARLY_FEBRUARY):
                    offset = int(m.group("dy")) - int(m.group("fy"))
                    if offset in (0, 1):
                        found[offset] += 1
    return next(iter(found)) if len(found) == 1 else None


def heading_naming(table: TableInfo) -> int | None:
    """The naming a statement's heading shows: it names one fiscal year ("Fourth Quarter Fiscal 2022 Results")
    and the statement's latest column ended in January of that year or the next; None otherwise."""
    named = {int(m.group("fy")) for m in _HEADING_FISCAL.finditer(table.title)}
    ends = [y for y in (year_end_in_january(c.name) for c in table.columns[1:]) if y is not None]
    if len(named) != 1 or not ends:
        return None
    offset = max(ends) - named.pop()
    return offset if offset in (0, 1) else None
