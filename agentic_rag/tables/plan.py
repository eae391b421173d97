"""Offline, rules map the common shapes of a question about tabular data to one SQL query over a stored table.

Shapes (each a query the table store runs read-only; the result is what the answer states):
- a cell: a row named by its label and a column named by its header or period ("Total revenue" x "2022");
- a change between two periods of one row (difference and percentage change), or between two rows;
- an aggregate of a column (sum, average, count, minimum, maximum), filtered on the values the question names
  ("weather" = 'rain', a year of a date column);
- a superlative: the row with the largest or smallest value of a column (its label and value), or the top N.
A question is matched to a table by where retrieval found passages (the table's page or sheet), and by the
words of its title, note, column headers and row labels. Nothing is guessed: a shape whose row, column or
filter the question does not name is not planned, and the question is then answered by quoting, or refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from advanced_retrieval.tables import TableInfo
from agentic_rag.language.concepts import Concept, forms_of, query_concepts

MIN_ROW_MATCH = 0.6  # share of a row label's words the question must hold for the row to be the one asked
MIN_SCORE = 1.0
TOP_MAX = 10
_OPS = (
    ("change", re.compile(r"\b(?:grow(?:th|n)?|grew|increase[ds]?|decrease[ds]?|chang(?:e|ed|es)|rise|rose|risen|"
                          r"fall|fell|fallen|decline[ds]?|drop(?:ped)?|difference|differ|compared? (?:to|with)|"
                          r"versus|vs\.?|year[- ]over[- ]year|yoy)\b", re.I)),
    ("ratio", re.compile(r"\b(?:ratio|as a (?:percentage|share|proportion) of|share of|proportion of|percent(?:age)? "
                         r"of)\b", re.I)),
    ("count", re.compile(r"\b(?:how many|number of|count)\b", re.I)),
    ("avg", re.compile(r"\b(?:average|mean|avg)\b", re.I)),
    ("max", re.compile(r"\b(?:highest|largest|maximum|max|most|biggest|greatest|peak|top|best|wettest|hottest|"
                       r"warmest|longest|busiest)\b", re.I)),
    ("min", re.compile(r"\b(?:lowest|smallest|minimum|min|least|fewest|worst|driest|coldest|coolest|shortest)\b",
                       re.I)),
    ("sum", re.compile(r"\b(?:total|sum|combined|altogether|in all|overall|aggregate|cumulative)\b", re.I)),
)
_WHICH = re.compile(r"\b(?:which|what|who)\b[^?]{0,60}?\b(?:has|had|have|was|were|is|are|with|saw|recorded|shows?|"
                    r"got|received)\b|\b(?:which|what)\s+\w+(?:\s+\w+)?\s+(?:has|had|was|is|recorded)\b|^which\b",
                    re.I)
_BETWEEN = re.compile(r"\bfrom\b.+\bto\b|\bbetween\b.+\band\b|\bcompar|\bversus\b|\bvs\.?|\bdifference\b|"
                      r"\bgrowth\b|\bchange[ds]?\b|\byear[- ]over[- ]year\b|\byoy\b|\bthan\b", re.I)
_MORE = re.compile(r"\bhow (?:many|much) (?:more|less|fewer)\b", re.I)
_TOP_N = re.compile(r"\btop\s+(\d{1,2}|three|five|ten)\b", re.I)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_DATE = re.compile(r"^(?:19|20)\d\d-\d\d(?:-\d\d)?")
_TOTAL_ROW = re.compile(r"\b(?:total|subtotal|sum|all)\b", re.I)
_WORDS = {"three": 3, "five": 5, "ten": 10}
_GENERIC = frozenset(forms_of("total net other value amount number item label column row table year years fiscal "
                              "month months data € $ £ ¥ euro euros dollar dollars pound pounds usd eur gbp"))


@dataclass(frozen=True)
class TableAsk:
    """What a question asks of a table: the operation, the years it names, its weighted concepts."""

    text: str
    op: str  # lookup | change | ratio | count | avg | max | min | sum
    years: tuple[str, ...]
    concepts: tuple[Concept, ...]
    forms: frozenset[str]
    which: bool  # asks which row (a superlative's label), not only the value
    top: int = 1

    def seen_by(self, table: TableInfo) -> TableAsk:
        """The ask as this table reads it: an operation word that is part of the table's own names ("Average
        tax rates", "Total revenue") names a thing, it asks for no calculation."""
        if self.op == "lookup":
            return self
        names = forms_of(f"{table.title} {table.name} {_stem_words(table.file_name)} "
                         f"{' '.join(c.name for c in table.columns)}")
        # A row label counts when the question names all of it and more than the operation word ("Total
        # revenue"), not a bare "Total" row, which is what a computed total leaves out.
        for label in table.labels:
            words = forms_of(label)
            if words <= self.forms and words - _GENERIC:
                names |= words
        words = {m.group(0) for _, pattern in _OPS for m in pattern.finditer(self.text)}
        if words and all(forms_of(w) & names for w in words):
            return TableAsk(self.text, "lookup", self.years, self.concepts, self.forms, self.which, self.top)
        return self

    @classmethod
    def of(cls, question: str) -> TableAsk:
        ops = [name for name, pattern in _OPS if pattern.search(question)]
        years = tuple(dict.fromkeys(_YEAR.findall(question)))
        if ops[:1] == ["change"] and len(years) < 2 and not _BETWEEN.search(question):
            ops = ops[1:]  # "how much rain fell": a verb of change with nothing to compare is no change asked
        op = ops[0] if ops else "lookup"
        top = _TOP_N.search(question)
        count = (int(top.group(1)) if top.group(1).isdigit() else _WORDS[top.group(1).lower()]) if top else 1
        return cls(question, op, years, query_concepts(question),
                   forms_of(question), bool(_WHICH.search(question)), min(count, TOP_MAX))


@dataclass(frozen=True)
class TableQuery:
    """One planned query: its table, SQL, what the result states, and the cells it reads, for the citation."""

    table: TableInfo
    sql: str
    op: str
    what: str  # how the result reads: 'Total revenue, 2022'
    columns: tuple[int, ...]  # the source columns it reads (0-based into table.columns)
    rows: tuple[int, ...] = ()  # the source rows it reads (1-based), () for "the rows its filter selects"
    filters: str = ""  # the WHERE clause, when the rows are those a filter selects
    score: float = 0.0


def plan(question: str, tables: Sequence[TableInfo], values: Mapping[str, Mapping[int, Sequence[str]]],
         prior: Mapping[str, float] | None = None) -> TableQuery | None:
    """The best query for `question` over `tables`, or None when no table's rows and columns answer it.

    `values[table_id][column]` are a text column's distinct cells (for filters); `prior[table_id]` is how
    strongly retrieval points at the table (its page or sheet among the hits, best first).
    """
    asked = TableAsk.of(question)
    best: TableQuery | None = None
    for table in tables:
        if not _names_held(asked, table, values.get(table.table_id, {})):
            continue  # a name the question gives (a company, a place) is not this table's document's
        ask = asked.seen_by(table)
        bonus = (prior or {}).get(table.table_id, 0.0) + _about(ask, table)
        for query in (_cell_query(ask, table), _aggregate_query(ask, table, values.get(table.table_id, {}))):
            if query is not None and query.score + bonus > (best.score if best else MIN_SCORE):
                best = TableQuery(**{**query.__dict__, "score": query.score + bonus})
    return best


def _names_held(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> bool:
    """Every name the question gives (not a year or a number) is in the table's document: its file name, title,
    headers, labels or the values of its text columns."""
    names = [c for c in ask.concepts if c.specific and not any(ch.isdigit() for ch in c.text)]
    if not names:
        return True
    cells = " ".join(v for column in values.values() for v in column)
    held = forms_of(f"{_stem_words(table.file_name)} {table.title} {table.note} {table.name} "
                    f"{' '.join(c.name for c in table.columns)} {' '.join(table.labels)} {cells}")
    return all(c.met(held) for c in names)


def _stem_words(file_name: str) -> str:
    """A file name as words: 'ADOBE_2022_10K.pdf' -> 'ADOBE 2022 10K'."""
    return re.sub(r"[_.\-]+", " ", file_name.rsplit(".", 1)[0])


def _about(ask: TableAsk, table: TableInfo) -> float:
    """How much of the question the table's title, note and headers name (0..1)."""
    heads = forms_of(" ".join([table.title, table.note, table.name, *(c.name for c in table.columns)]))
    total = sum(c.weight for c in ask.concepts) or 1.0
    return sum(c.weight for c in ask.concepts if c.met(heads)) / total


# -- a cell, or a change between two cells -------------------------------------------------------------------

def _cell_query(ask: TableAsk, table: TableInfo) -> TableQuery | None:
    """A row x column lookup (or a change between two periods of a row) in a table whose first column labels
    its rows."""
    if ask.op in ("count", "avg") or not table.labels or not any(c.numeric for c in table.columns[1:]):
        return None
    rows = _matching_rows(ask, table)
    if not rows:
        return None
    row, match = rows[0]
    period = _period_columns(ask, table)
    if period is None:
        return None  # a period the table does not have, or has twice (a two-level header read as one)
    if ask.op == "change" and len(rows) >= 2 and len(period) == 1:
        return _compare_rows(table, [r for r, _ in rows[:2]], period[0], match)
    if ask.op == "change":
        if len(period) < 2:
            period = _two_periods(ask, table) or period
        if len(period) >= 2:
            return _change(table, row, period[:2], match)
    column = period[0] if period else _named_column(ask, table)
    if column is None:
        return None
    label = table.labels[row - 1]
    sql = (f'SELECT "_row", {_q(table.columns[0].sql)} AS label, {_q(table.columns[column].sql)} AS value '
           f'FROM {_q(table.physical)} WHERE "_row" = {row}')
    return TableQuery(table, sql, "lookup", f"{label}, {table.columns[column].name}", (column,), (row,),
                      score=1.0 + match)


def _change(table: TableInfo, row: int, columns: list[int], match: float) -> TableQuery:
    new, old = sorted(columns, key=lambda i: _year_of(table.columns[i].name), reverse=True)
    a, b = _q(table.columns[new].sql), _q(table.columns[old].sql)
    sql = (f'SELECT {_q(table.columns[0].sql)} AS label, {b} AS "from", {a} AS "to", {a} - {b} AS difference, '
           f'round(({a} - {b}) / abs({b}) * 100, 2) AS percent_change FROM {_q(table.physical)} WHERE "_row" = {row}')
    what = f"{table.labels[row - 1]}, {table.columns[old].name} to {table.columns[new].name}"
    return TableQuery(table, sql, "change", what, (old, new), (row,), score=1.2 + match)


def _matching_rows(ask: TableAsk, table: TableInfo) -> list[tuple[int, float]]:
    """(1-based row, how well the question names its label) for every row it names, best first; a label is
    named when the question holds most of its words, or a name of the question is the label ("US" for "United
    States"). Rows whose labels are the same words count once (the first)."""
    found: dict[frozenset, tuple[int, float]] = {}
    for i, label in enumerate(table.labels, start=1):
        words = forms_of(label) - _YEARS_OF(label)
        specific = words - _GENERIC
        if not specific:
            continue
        held = len(words & ask.forms) / len(words)
        named = any(c.specific and c.met(words) and not any(ch.isdigit() for ch in c.text) for c in ask.concepts)
        score = max(held if held >= MIN_ROW_MATCH and specific & ask.forms else 0.0, 0.9 if named else 0.0)
        if score and (words not in found or found[words][1] < score):
            found.setdefault(words, (i, score))
    return sorted(found.values(), key=lambda x: -x[1])


def _period_columns(ask: TableAsk, table: TableInfo) -> list[int] | None:
    """The numeric columns of the years the question names (none named: []); None when a named year has no
    column, or two columns of the same year (the table's header is ambiguous)."""
    if not ask.years:
        return []
    out = []
    for year in ask.years:
        columns = [i for i, c in enumerate(table.columns) if i and c.numeric and year in _YEAR.findall(c.name)]
        if len(columns) != 1:
            return None
        out.append(columns[0])
    return out


def _compare_rows(table: TableInfo, rows: list[int], column: int, match: float) -> TableQuery:
    """Two rows side by side in one column ("the US rate in 2005 against Australia's")."""
    col = _q(table.columns[column].sql)
    first, second = rows
    sql = (f'SELECT "_row", {_q(table.columns[0].sql)} AS label, {col} AS value FROM {_q(table.physical)} '
           f'WHERE "_row" IN ({first}, {second}) ORDER BY "_row"')
    what = f"{table.columns[column].name}: {table.labels[first - 1]} and {table.labels[second - 1]}"
    return TableQuery(table, sql, "rows", what, (column,), (first, second), score=1.2 + match)


def _two_periods(ask: TableAsk, table: TableInfo) -> list[int]:
    """The two most recent period columns, when the question asks for a change without naming its years."""
    years = [i for i, c in enumerate(table.columns) if i and c.numeric and _year_of(c.name)]
    latest = sorted(years, key=lambda i: _year_of(table.columns[i].name), reverse=True)[:2]
    distinct = len({_year_of(table.columns[i].name) for i in latest}) == 2
    return latest if not ask.years and distinct else []


def _named_column(ask: TableAsk, table: TableInfo) -> int | None:
    """The numeric column whose header the question names (or the table's only numeric column)."""
    numeric = [i for i, c in enumerate(table.columns) if i and c.numeric]
    named = [i for i in numeric if (forms_of(table.columns[i].name) - _GENERIC) & ask.forms]
    if len(named) == 1:
        return named[0]
    return numeric[0] if len(numeric) == 1 else None


# -- an aggregate, a count or a superlative over a data table -------------------------------------------------

def _aggregate_query(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> TableQuery | None:
    """SUM/AVG/COUNT/MIN/MAX of a column, or the row with the largest value, over the rows the question's
    values select."""
    if ask.op in ("lookup", "change", "ratio"):
        return None
    filters, used = _filters(ask, table, values)
    column = _target_column(ask, table, used)
    where = f" WHERE {' AND '.join(filters)}" if filters else ""
    source = _q(table.physical)
    if ask.op == "count":
        counted = next((c for c in ask.concepts if c.focus and not c.specific), None)
        names = forms_of(f"{table.name} {table.title} {_stem_words(table.file_name)}")
        if counted is None or not counted.met(names) or _MORE.search(ask.text):
            return None  # what is counted is not what the table's rows are ("how many more ...": a value)
        sql = f'SELECT count(*) AS "count" FROM {source}{where}'
        return TableQuery(table, sql, "count", f"rows of {table.name}" + _said(filters), (0,), (), where, 0.8 +
                          0.4 * len(filters))
    if column is None:
        return None
    col = _q(table.columns[column].sql)
    name = table.columns[column].name
    if ask.op in ("max", "min") and (ask.which or ask.top > 1):
        order = "DESC" if ask.op == "max" else "ASC"
        label = _label_column(table, column)
        sql = (f'SELECT "_row", {_q(table.columns[label].sql)} AS label, {col} AS value FROM {source}'
               f'{where + " AND " if where else " WHERE "}{col} IS NOT NULL ORDER BY {col} {order} LIMIT {ask.top}')
        return TableQuery(table, sql, f"top {ask.op}", f"{'highest' if ask.op == 'max' else 'lowest'} {name}"
                          + _said(filters), (label, column), (), where, 1.1 + 0.3 * len(filters))
    function = {"sum": "sum", "avg": "avg", "max": "max", "min": "min"}[ask.op]
    exclude = _total_rows(table) if ask.op in ("sum", "avg") else ""
    clause = " AND ".join(x for x in (where.removeprefix(" WHERE "), exclude) if x)
    where = f" WHERE {clause}" if clause else ""
    sql = f'SELECT {function}({col}) AS value, count({col}) AS "rows" FROM {source}{where}'
    return TableQuery(table, sql, function, f"{function} of {name}" + _said(filters), (column,), (), where,
                      1.0 + 0.3 * len(filters))


def _filters(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> tuple[list[str], set[int]]:
    """WHERE conditions for the values the question names in text columns, and for a year of a date column."""
    conditions, used = [], set()
    for i, cells in values.items():
        named = [v for v in cells if _names_value(ask, v)]
        if named:
            best = max(named, key=len)
            conditions.append(f"{_q(table.columns[i].sql)} = {_literal(best)}")
            used.add(i)
    for year in ask.years:
        dated = [i for i, cells in values.items() if i not in used and cells and all(_DATE.match(c) for c in cells[:20])]
        if dated:
            conditions.append(f"{_q(table.columns[dated[0]].sql)} LIKE '{year}%'")
            used.add(dated[0])
            continue
        period = [i for i, c in enumerate(table.columns) if c.numeric and forms_of(c.name) & forms_of("year")]
        if period:
            conditions.append(f"{_q(table.columns[period[0]].sql)} = {year}")
            used.add(period[0])
    return conditions, used


def _names_value(ask: TableAsk, value: str) -> bool:
    """Whether the question names a cell value (every one of its words, at least one of them specific)."""
    words = forms_of(value)
    return bool(words) and len(value) > 1 and words <= ask.forms and bool(words - _GENERIC) and \
        not _YEAR.fullmatch(value.strip())


def _target_column(ask: TableAsk, table: TableInfo, used: set[int]) -> int | None:
    """The numeric column the question names, not one of its filters."""
    numeric = [i for i, c in enumerate(table.columns) if c.numeric and i not in used]
    scored = [(len((forms_of(table.columns[i].name) - _GENERIC) & ask.forms), i) for i in numeric]
    scored = [(s, i) for s, i in scored if s]
    if not scored:
        return None
    top = max(s for s, _ in scored)
    best = [i for s, i in scored if s == top]
    return best[0] if len(best) == 1 else None


def _label_column(table: TableInfo, value_column: int) -> int:
    """The column that names a row: the first text column (else the first column)."""
    return next((i for i, c in enumerate(table.columns) if not c.numeric and i != value_column), 0)


def _total_rows(table: TableInfo) -> str:
    """A condition leaving out a statement's own total rows, so a computed total does not count them twice."""
    totals = [i for i, label in enumerate(table.labels, start=1) if _TOTAL_ROW.search(label)]
    if not totals or len(table.labels) < table.n_rows:
        return ""
    return f'"_row" NOT IN ({", ".join(map(str, totals))})'


def _said(filters: list[str]) -> str:
    return f" where {' and '.join(filters)}" if filters else ""


def _year_of(name: str) -> int:
    found = _YEAR.findall(name)
    return int(found[-1]) if found else 0


def _YEARS_OF(text: str) -> frozenset[str]:
    return frozenset(_YEAR.findall(text))


def _q(identifier: str) -> str:
    """A quoted SQL identifier."""
    return '"' + identifier.replace('"', '""') + '"'


def _literal(value: str) -> str:
    """A quoted SQL string literal."""
    return "'" + value.replace("'", "''") + "'"
