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
from dataclasses import dataclass, replace

from advanced_retrieval.tables import TableInfo
from advanced_retrieval.tables.values import number
from agentic_rag.language.concepts import Concept, abbreviated, forms_of, query_concepts
from agentic_rag.tables.fiscal import FISCAL_NAMED
from agentic_rag.tables.position import MIDDLE, Position, position_of, said
from agentic_rag.tables.words import (
    MONTH_NAMES,
    contracted,
    contracts,
    identifier_text,
    joined,
    measure_nouns,
    meets,
    name_forms,
    named_by,
    verb_nouns,
)

_PERCENT_SIGN = re.compile(r"(?<![\w.%])%")  # a sign written as a word, not after a figure ("4.7%")
_FUNCTION_WORDS = frozenset({"of", "and", "the", "a", "an", "in", "on", "for", "to", "at", "by", "from", "with", "as",
                             "per"})
CHANGE_UNRANKED = 2.0  # what a table's plain superlative loses when the question ranks a change it cannot compute
NAMED_ROW = 0.9  # a row the question names by its label (all of it, or a name that is the label)
_FOOTNOTE_MARKS = re.compile(r"(?:\s*(?:\((?:[a-z]|[ivx]{1,3}|\d{1,2})\)|[*†‡]+))+\s*$")
MIN_ROW_MATCH = 0.6  # share of a row label's words the question must hold for the row to be the one asked
MIN_SCORE = 1.0
DEFAULT_MODIFIER_WEIGHT = 0.25  # a row label's "total", "net", "consolidated" the question does not say
COLUMN_WEIGHT = 0.3  # what each word of the question a column's header names adds to a query's score
PART_WEIGHT = 0.5  # what a table under a heading of a part of the company the question does not name loses
SECTION_WEIGHT = 0.2  # what a superlative's heading or title adds, by the share of its words the question says
TOP_MAX = 10
_OPS = (
    ("change", re.compile(r"\b(?:how (?:much|many)(?: (?!times\b)[a-z]+)? (?:more|less|fewer|higher|lower|bigger|larger|greater|smaller|"
                          r"longer|shorter|wider|narrower|heavier|lighter|older|younger|warmer|colder|hotter|cooler|"
                          r"taller|faster|slower|cheaper|deeper|richer|poorer)\b|grow(?:th|n)?|grew|"
                          r"increase[ds]?|decrease[ds]?|chang(?:e|ed|es)|rise|rose|risen|"
                          r"fall|fell|fallen|decline[ds]?|drop(?:ped)?|difference|differ|compared? (?:to|with)|"
                          r"versus|vs\.?|year[- ]over[- ]year|yoy)\b", re.I)),
    ("ratio", re.compile(r"\b(?:ratio|as a (?:percentage|share|proportion) of|share of|proportion of|percent(?:age)? "
                         r"of|how many times|times (?:more|less|bigger|larger|higher|greater|smaller|as))\b", re.I)),
    ("count", re.compile(r"\b(?:how many|number of|count)\b", re.I)),
    ("avg", re.compile(r"\b(?:average|mean|avg|median)\b", re.I)),
    ("max", re.compile(r"\b(?:highest|largest|maximum|max|most|biggest|greatest|peak|top|best|wettest|hottest|"
                       r"warmest|longest|busiest|strongest|fastest|oldest|tallest|heaviest|deepest|widest|richest|"
                       r"costliest|priciest)\b", re.I)),
    ("min", re.compile(r"\b(?:lowest|smallest|minimum|min|least|fewest|worst|driest|coldest|coolest|shortest|"
                       r"weakest|slowest|youngest|cheapest|lightest|narrowest|poorest)\b", re.I)),
    ("sum", re.compile(r"\b(?:total|sum|combined|altogether|in all|overall|aggregate|cumulative|add(?:ed)? up)\b",
                       re.I)),
)
_SUM_WORDS = dict(_OPS)["sum"]
# the operation words headers write short, as spreadsheets and reports do
_OP_SHORT = {"avg": "average", "av": "average", "tot": "total", "ttl": "total", "max": "maximum highest",
             "min": "minimum lowest", "cum": "cumulative"}


def op_words(text: str) -> set[str]:
    """The words of `text` that ask for an operation ("highest", "how many", "total"), each word apart."""
    return {w for _, pattern in _OPS for m in pattern.finditer(text) for w in m.group(0).split()}
# a superlative of a change: the change is what is ranked ("the strongest year-over-year growth", "the biggest net
# sales decline"), not a change mentioned elsewhere in the question
_MOST_CHANGED = re.compile(r"\b(?:highest|largest|biggest|greatest|most|strongest|fastest|best|lowest|smallest|"
                           r"weakest|slowest|worst|least)\s+(?:[\w-]+\s+){0,3}?(?:growth|increase|decrease|decline|"
                           r"drop|rise|gain|fall|change|improvement|jump|loss)\b", re.I)
_FALLING = re.compile(r"\b(?:declin\w*|decreas\w*|drop\w*|fall\w*|fell|los[st]\w*|shr[iu]nk\w*|contract\w*)\b", re.I)
_WHICH = re.compile(r"\b(?:which|what|who)\b[^?]{0,60}?\b(?:has|had|have|was|were|is|are|with|saw|recorded|shows?|"
                    r"got|received|did|does|do)\b|\b(?:which|what)\s+\w+(?:\s+\w+)?\s+(?:has|had|was|is|recorded)\b|"
                    r"(?:^|[,;:]\s*)(?:(?:in|on|at|for|during|from)\s+)?which\b|"
                    r"\bwhich\s+\w+\s*(?:[,?]|$|and\b)",
                    re.I)
_BETWEEN = re.compile(r"\bfrom\b.+\bto\b|\bbetween\b.+\band\b|\bcompar|\bversus\b|\bvs\.?|\bdifference\b|"
                      r"\bgrowth\b|\bchange[ds]?\b|\byear[- ]over[- ]year\b|\byoy\b|\bthan\b", re.I)
_DIFFERENT = frozenset({"different", "distinct", "unique", "separate", "individual"})  # "how many different species"
_DIFFERENT_RUN = re.compile(r"\b(?:different|distinct|unique)\s+(?P<words>(?:[A-Za-z][\w'-]*\s*){1,3})", re.IGNORECASE)
_MORE = re.compile(r"\bhow (?:many|much) (?:more|less|fewer)\b", re.I)
_N = r"\d{1,2}|two|three|four|five|six|seven|eight|nine|ten"
# "the top 5", "the three highest closing prices", "5 largest"
_TOP_N = re.compile(rf"\btop\s+(?P<n>{_N})\b|\b(?P<n2>{_N})\s+(?:highest|largest|biggest|greatest|lowest|smallest|"
                    r"most|least|best|worst)\b", re.I)
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_ANY_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")
_DATE = re.compile(r"^(?:1[6-9]|20)\d\d-\d\d(?:-\d\d)?")
_TOTAL_ROW = re.compile(r"\b(?:total|subtotal|sum|all)\b", re.I)
# a row that totals those above it, as spreadsheets in other languages label it (a German pivot table's
# "Gesamtergebnis", "Summe"; French "Total général"; Dutch "Totaal"; Italian "Totale"; Russian "Итого", "Всего")
_TOTAL_LABEL = re.compile(r"\b(?:total\w*|subtotal|sum|all|gesamt\w*|insgesamt|summe|totaal|totale|somme|"
                          r"итого|всего)\b|合計|总计|合计|小計|小计", re.I)
_SUBTOTAL = re.compile(r"\s*(?:sub)?totals?\b", re.I)  # a row that adds up the rows above it: "Total Domestic revenue"
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_GENERIC = frozenset(forms_of("total net other value amount number item label column row table year years fiscal "
                              "month months data € $ £ ¥ euro euros dollar dollars pound pounds usd eur gbp"))
GENERIC = _GENERIC  # words that name no particular row or column ("total", "year", "amount")
# How an answer is to be written, which names nothing in a table: "(in units of percents and round to one decimal
# place)", "round your answer to two decimal places", "in USD millions".
_FORMATTING = re.compile(
    r"\((?=[^)]*\b(?:round(?:ed)?|decimals?|units?|usd|millions|billions|thousands)\b)[^)]*\)"
    r"|\b(?:and )?round(?:ed)?(?: (?:your|the) (?:answer|result))? to (?:the nearest \w+|(?:one|two|three|four|\d+) "
    r"decimals?(?: places?)?)|\b(?:answer |expressed |given )?in units of \w+(?: \w+)?"
    r"|\b(?:answer |expressed |given )?in (?:usd |us\$ ?|\$ ?)?(?:millions|billions|thousands)(?: of (?:us )?"
    r"(?:dollars|usd))?\b", re.I)
# a name of two or more capitalised words inside a sentence ("Best Buy", "Top Ships", "Total Revenue"): its words
# are not operations (group 1: what stands before it)
_NAME_RUN = re.compile(r"([^.?!:\s]\s+)((?:[A-Z][\w&'’.-]*)(?:\s+(?:&\s+)?[A-Z][\w&'’.-]*)+)")
_DEFAULT_MODIFIERS = frozenset(forms_of("total net consolidated"))  # what a row label adds to the plain figure
_VAGUE = frozenset(forms_of("figure figures amount much many size level count"))  # ask for a figure, name none


# a question asking for a cause or an explanation ("what drove the reduction in SG&A as a percent of net sales?",
# "why did PepsiCo raise its guidance?"): the figures it names are its subject, not what it asks for
_REASON = re.compile(r"\bwhy\b|\bhow come\b|\bexplain\w*\b|\bwhat (?:drove|drives|caused|causes|led to|contributed|"
                     r"explains)\b|\b(?:reasons?|drivers|factors|causes)\s+(?:for|of|behind|why)\b|\bwhat (?:were|are) "
                     r"(?:the )?(?:main |primary |key |major )?(?:reasons|drivers|factors|causes)\b", re.I)


def asks_reason(question: str) -> bool:
    """Whether a question asks why, or what drove or caused something, rather than for a figure."""
    return bool(_REASON.search(question)) and not re.search(r"\bhow many\b|\bnumber of\b", question, re.I)


_PER_UNIT = re.compile(r"\bper\s+[\w-]+", re.IGNORECASE)  # "per share", "per unit": a unit, not a thing named


# Figures defined as a ratio of two others, as filings and analysts use the names: (name, part, whole)
_DEFINED = ((re.compile(r"\boperating\s+(?:profit\s+)?margin\b", re.I), "operating income", "revenues"),
            (re.compile(r"\bgross\s+(?:profit\s+)?margin\b", re.I), "gross profit", "revenues"),
            (re.compile(r"\b(?:net\s+(?:profit\s+)?|(?<!operating\s)(?<!gross\s)profit\s+)margin\b", re.I), "net income",
             "revenues"),
            (re.compile(r"\beffective\s+(?:income\s+)?tax\s+rate\b", re.I), "income tax expense",
             "income before income taxes"),
            (re.compile(r"\bcurrent\s+ratio\b", re.I), "total current assets", "total current liabilities"))


def _defined_rows(text: str, query: TableQuery) -> bool:
    """Whether a defined ratio's query reads the rows its definition names: half the words of its part ("gross
    profit") in the first row's label, of its whole ("revenues") in the second's, in a form of each ("Net
    earnings" is net income, "Provision for income taxes" the income tax expense)."""
    for pattern, part, whole in _DEFINED:
        if pattern.search(text) and len(query.rows) == 2:
            labels = [forms_of(query.table.labels[r - 1]) for r in query.rows if 0 < r <= len(query.table.labels)]
            return len(labels) == 2 and all(_share_named(phrase, label) >= 0.5
                                            for phrase, label in zip((part, whole), labels, strict=True))
    return True


def _share_named(phrase: str, label: frozenset[str]) -> float:
    """The share of a phrase's words (other than words naming nothing in particular) a label holds in some form."""
    words = [forms_of(w) for w in phrase.split() if forms_of(w) - _GENERIC]
    return sum(1 for f in words if f & label) / len(words) if words else 1.0


def _defined_name(text: str) -> str:
    """The name of the defined ratio the question asks ("operating margin"), as it writes it."""
    return next((m.group(0) for m in (pattern.search(text) for pattern, _, _ in _DEFINED) if m), "")


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
    points: tuple[str, ...] = ()  # the dates it names, as ISO prefixes in its order: '2000-01', '2010', '2010-07-04'
    figures: bool = True  # the question asks for a figure: a table's only numeric column may be the one it means
    change: bool = False  # a superlative of a change: "which segment had the biggest sales decline"

    def seen_by(self, table: TableInfo) -> TableAsk:
        """The ask as this table reads it: an operation word that is part of the table's own names ("Average
        tax rates", "Total revenue") names a thing, it asks for no calculation. A ratio named by its definition
        ("operating margin", "effective tax rate") that the table does not print is worked out from the rows its
        definition names."""
        defined = self._defined(table)
        if defined is not None:
            return defined.seen_by(table)
        if self.op == "lookup":
            return self
        # a header's bracketed note and a unit "per ..." name no thing of the table: "(Dollars in millions,
        # except per share data)" makes "what share of net sales" no lookup of a "share"
        headers = " ".join(_BRACKETED.sub(" ", c.name) for c in table.columns)
        # a header writes its operation word short ("Avg salary", "Tot. revenue") beside the figure the question
        # names ("the average salary"; not "temp_max" for "the highest precipitation")
        for c in table.columns:
            words = re.findall(r"[A-Za-z]+", identifier_text(c.name))
            short = [w.lower() for w in words if w.lower() in _OP_SHORT]
            if short and forms_of(" ".join(w for w in words if w.lower() not in _OP_SHORT)) & self.forms:
                headers += " " + " ".join(_OP_SHORT[w] for w in short)
        names = forms_of(_PER_UNIT.sub(" ", f"{table.title} {table.name} {_stem_words(table.file_name)} {headers}"))
        # A row label counts when the question names all of it and more than the operation word ("Total
        # revenue"), not a bare "Total" row, which is what a computed total leaves out.
        for label in table.labels:
            # its words, not the initials of a capitalised name; a bracket after them is a qualifier, the
            # name's own initials or a footnote ("Average daily rate (ADR)"), which a question need not write
            # (a sign written as a word is that word: "Deductions as a % of Gross Income")
            words = forms_of(_PERCENT_SIGN.sub(" percent ", _BRACKETED.sub(" ", label)).lower())
            if words <= self.forms and words - _GENERIC:
                names |= words
        words = {m.group(0) for _, pattern in _OPS for m in pattern.finditer(self.text)}
        # a header of words run together that needs the word ("PTRATIO": pupil-teacher ratio) names it too
        runs = frozenset(f for c in table.columns for f in joined(c.name))
        spelled = meets(self.forms, runs)

        def spells(word: str) -> bool:
            return bool(spelled and spelled - meets(self.forms - forms_of(word), runs))

        if words and all(forms_of(w) & names for w in words):
            return replace(self, op="lookup", change=False)
        said = [w for w in words if spells(w) or forms_of(w) & names]
        if said and any(spells(w) for w in said):
            # "the highest pupil-teacher ratio" (PTRATIO): the highest of the ratio the table prints; "the average
            # expenditure" (AVGEXP) asks no other operation: still the average of the column
            op = TableAsk.of(_blanked(self.text, said)).op
            return replace(self, op=op, change=False) if op != "lookup" else self
        return self

    def without_ratio(self) -> TableAsk | None:
        """The ask read without its words of a share ("the largest percentage of low-income students": the
        largest of a column of percentages), when it asks something besides; None otherwise."""
        if self.op != "ratio":
            return None
        said = [m.group(0) for m in dict(_OPS)["ratio"].finditer(self.text)]
        op = TableAsk.of(_blanked(self.text, said)).op
        return replace(self, op=op) if op not in ("ratio", "lookup") else None

    def _defined(self, table: TableInfo) -> TableAsk | None:
        """The ask rewritten as the ratio a named figure is defined as, when the question names one ("operating
        margin": operating income to revenues), asks no ratio in words of its own, and the table prints no row or
        column of that name (then it is a figure to read)."""
        if _WHOLE_OF.search(self.text) or _AS_PART_OF.search(self.text):
            return None
        for pattern, part, whole in _DEFINED:
            m = pattern.search(self.text)
            if not m:
                continue
            # a ratio asked in words of its own ("the ratio of ... to ..."), not the word of the name ("current ratio")
            if self.op == "ratio" and any(not (m.start() <= r.start() and r.end() <= m.end())
                                          for r in dict(_OPS)["ratio"].finditer(self.text)):
                return None
            name = forms_of(m.group(0)) - _GENERIC
            printed = [forms_of(x) for x in (*table.labels, *(c.name for c in table.columns), table.title)]
            if any(name <= words for words in printed):
                return None
            text = f"{self.text[:m.start()]}ratio of {part} to {whole}{self.text[m.end():]}"
            return replace(TableAsk.of(text), figures=self.figures)
        return None

    @classmethod
    def of(cls, question: str) -> TableAsk:
        question = _decades(_year_before(question))
        unnamed = _NAME_RUN.sub(lambda m: m.group(1) + " " * len(m.group(2)), question)
        ops = [name for name, pattern in _OPS if pattern.search(unnamed)]  # "Best Buy" asks for no maximum
        years = tuple(dict.fromkeys(_YEAR.findall(question)))
        if ops[:1] == ["change"] and len(years) < 2 and not _BETWEEN.search(question):
            ops = ops[1:]  # "how much rain fell": a verb of change with nothing to compare is no change asked
        op = ops[0] if ops else "lookup"
        which = bool(_WHICH.search(question))
        if which and op in ("avg", "sum") and {"max", "min"} & set(ops):
            op = next(o for o in ops if o in ("max", "min"))  # "which month was warmest on average": a superlative
        top = _TOP_N.search(question)
        n = (top.group("n") or top.group("n2")) if top else "1"
        count = int(n) if n.isdigit() else _WORDS[n.lower()]
        superlative = [o for o in ops if o in ("max", "min")]
        change = (which or bool(top)) and bool(superlative) and bool(_MOST_CHANGED.search(question))
        if change:  # "the strongest growth", "the biggest decline": the highest (lowest) change of a row
            op = superlative[0] if not _FALLING.search(question) else {"max": "min", "min": "max"}[superlative[0]]
        named = _FORMATTING.sub(" ", question)  # "round to one decimal place" names no row or column
        return cls(question, op, years, query_concepts(named),
                   forms_of(named), which, min(count, TOP_MAX), date_points(question), change=change)


def _blanked(text: str, words) -> str:
    """`text` with each of `words` (as written) replaced by spaces."""
    for word in words:
        text = re.sub(rf"\b{re.escape(word)}\b", " " * len(word), text)
    return text


# a year named by the one before it: "compared with the year before", "from the prior year", "over the previous
# fiscal year", "than a year earlier", "year-over-year"
_YEAR_BEFORE = re.compile(r"\b(?:the|a)\s+year\s+(?:before|earlier|prior)\b|\ba\s+year\s+ago\b|"
                          r"\b(?:the\s+)?(?:prior|previous|preceding)(?:[- ]|\s+fiscal\s+)year\b|"
                          r"\byear[- ]over[- ]year\b|\byoy\b", re.IGNORECASE)


# "the 1990s", "the 1700s", "the 1750's": a decade, or a century when it ends in "00s" before 2000 ("the 2000s" is
# the decade 2000-2009)
_DECADE = re.compile(r"(?<![\w$])(?P<y>(?:1[5-9]|20)\d0)['’]?s\b")


def _decades(question: str) -> str:
    """The question with a decade or century written as its span of years ("in the 1990s": "in 1990 to 1999"), so
    that its rows are those years', not every row."""
    def span(m: re.Match) -> str:
        first = int(m.group("y"))
        last = first + 99 if first % 100 == 0 and first < 2000 else first + 9
        return f"{first} to {last}"

    return _DECADE.sub(span, question)


def _year_before(question: str) -> str:
    """The question with a year named relative to the one it names written out ("revenue in fiscal 2022 compared
    with the year before": "... compared with fiscal 2021"), when it names one year and no quarter or half."""
    years = set(_YEAR.findall(question))
    if len(years) != 1 or not _YEAR_BEFORE.search(question) or any(not p.isdigit() for p in periods_of(question)
                                                                   if not p.startswith("m")):
        return question
    (year,) = years
    fiscal = "fiscal " if re.search(rf"\b(?:fiscal(?:\s+year)?|FY)\s*{year}\b", question, re.IGNORECASE) else ""
    return _YEAR_BEFORE.sub(f"{fiscal}{int(year) - 1}", question, count=1)


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
    named: str = ""  # the figure the question named by its definition ("operating margin"), worked out here
    positional: bool = False  # its cells are those the question points at by position ("the last row")


def plan(question: str, tables: Sequence[TableInfo], values: Mapping[str, Mapping[int, Sequence[str]]],
         prior: Mapping[str, float] | None = None) -> TableQuery | None:
    """The best query for `question` over `tables`, or None when no table's rows and columns answer it.

    `values[table_id][column]` are a text column's distinct cells (for filters); `prior[table_id]` is how
    strongly retrieval points at the table (its page or sheet among the hits, best first).
    """
    found = plans(question, tables, values, prior)
    return found[0] if found else None


@dataclass(frozen=True)
class Layout:
    """A statement's rows that print no figure (section headings: "Las Vegas Strip Resorts" over Casino, Rooms),
    and for each row below one, that heading. A section's own total closes it: under "Current assets:", the rows
    down to "Total current assets"; "Total assets" below it is the statement's, not the section's."""

    empty: frozenset[int] = frozenset()
    sections: Mapping[int, str] | None = None

    @classmethod
    def of(cls, labels: Sequence[str], empty: Sequence[int]) -> Layout:
        sections, heading = {}, ""
        for row, label in enumerate(labels, start=1):
            if row in empty:
                heading = label
            elif heading:
                sections[row] = heading
                if _TOTAL_WORD.match(label) and forms_of(heading) - _GENERIC <= forms_of(label):
                    heading = ""
        return cls(frozenset(empty), sections)


_TOTAL_WORD = re.compile(r"\s*total\b", re.IGNORECASE)


def plans(question: str, tables: Sequence[TableInfo], values: Mapping[str, Mapping[int, Sequence[str]]],
          prior: Mapping[str, float] | None = None, *, figures: bool = True,
          layouts: Mapping[str, Layout] | None = None) -> list[TableQuery]:
    """Every table's best query for `question`, best first (the engine runs the next when one finds nothing).
    `figures`: whether the question asks for a figure; when not ("who supplies the heat pumps?", asked because
    the best passage was a table's), a lookup needs a column the question names. `layouts[table_id]`: a
    statement's heading rows, which hold no figure to look up and name the rows below them."""
    if asks_reason(question):
        return []  # a cause is written in the text around a table, not computed from its cells
    asked = replace(TableAsk.of(question), figures=figures)
    asked_quarters = quarters_of(question)
    where = position_of(question)
    if _HEADERS_ASKED.search(question) and where is None and asked.op in ("lookup", "count"):
        # "what columns does cars.csv have": the header of the file or sheet the question names, read whole
        headed = [q for q in (_header_query(asked, t, question, (prior or {}).get(t.table_id, 0.0)) for t in tables)
                  if q is not None]
        sheets = [q for q in headed if _sheet_named(q.table, question)]
        # one table named (a data file, a sheet); a workbook of several sheets named only by its file is not
        # answered by one of its sheets
        if sheets or len(headed) == 1:
            return sorted(sheets or headed, key=lambda q: -q.score)
    out: list[TableQuery] = []
    whole_year = _whole_year_asked(question)
    for table in tables:
        best: TableQuery | None = None
        if not _names_held(asked, table, values.get(table.table_id, {})):
            continue  # a name the question gives (a company, a place) is not this table's document's
        if _lacks_year(asked, table, values.get(table.table_id, {})):
            continue  # "the Books category's revenue in 2008" from a pivot of 2005 to 2007
        if (_FULL_YEAR_ASKED.search(question) and _part_year_only(table)) or (whole_year and _part_year_columns(table)):
            continue  # "the full year 2022" from a quarterly report's three and six months
        if _PARENT_ONLY.search(f"{table.title} {table.note}") and not _PARENT_ONLY_ASKED.search(question):
            continue  # "PARENT COMPANY – CONDENSED BALANCE SHEETS": the holding company's own, not the company's
        if asked_quarters and other_quarter(asked_quarters, quarters_shown(table)):
            continue  # "from 2Q20 through 1Q21" from a table of the three months ended June 30, 2022 and 2021
        ask = asked.seen_by(table)
        bonus = (prior or {}).get(table.table_id, 0.0) + _about(ask, table) - PART_WEIGHT * _of_a_part(ask, table)
        own = values.get(table.table_id, {})
        layout = (layouts or {}).get(table.table_id, Layout())
        if where is not None and where.points_in:  # the cells the question points at by position, or none: no
            placed = _position_query(asked, table, where, layout)  # reading of its words counts rows for it
            if placed is not None:
                out.append(replace(placed, score=placed.score + bonus))
            continue
        for query in (_cell_query(ask, table, layout), _aggregate_query(ask, table, own, layout),
                      _series_query(ask, table, own),
                      _groups_query(ask, table, own), _columns_query(ask, table, own), _across_query(ask, table, own),
                      _filtered_lookup(ask, table, own), _text_lookup(ask, table, layout)):
            if query is not None and query.score + bonus > (best.score if best else MIN_SCORE):
                best = TableQuery(**{**query.__dict__, "score": query.score + bonus})
        # "the largest percentage of low-income students" in a data file: a column of percentages (a statement's
        # share is worked out from its rows, or not at all)
        other = ask.without_ratio() if best is None and table.location.sheet is not None else None
        if other is not None:
            for query in (_aggregate_query(other, table, own, layout), _series_query(other, table, own),
                          _groups_query(other, table, own), _columns_query(other, table, own)):
                if query is not None and query.score + bonus > (best.score if best else MIN_SCORE):
                    best = TableQuery(**{**query.__dict__, "score": query.score + bonus})
        if best is not None and ask.text != asked.text and best.op == "ratio":
            if not _defined_rows(asked.text, best):
                continue  # "gross margin" of a statement printing no gross profit: not cost of sales over sales
            best = replace(best, named=_defined_name(asked.text))
        if best is not None and best.op == "lookup" and asked.op in ("sum", "avg") and _YEARS_SPANNED.search(question):
            continue  # "the combined revenue over 2005 to 2007": one year's cell is not it
        if best is not None and (best.op != "lookup" or _reads_what_is_asked(asked, best)) \
                and not _named_elsewhere(asked, best, layout):
            out.append(best)
    if any(q.positional and q.op == "lookup" for q in out):
        # "the last row under Header1": the tables with a column of that name, not every table's last row
        out = [q for q in out if not (q.positional and q.op == "cells")]
    if asked.op == "avg" and _MEDIAN.search(question):  # the median is the operation asked, not a word beside it
        out = [m for m in (_median(q) for q in out) if m is not None]
    if _year_alone(question) and any(not _reads_part_year(q) for q in out):
        # "diluted EPS in 2016": a table's whole year, not a quarterly table's "First Quarter 2016" column
        out = [q for q in out if not _reads_part_year(q)]
    return sorted(out, key=lambda q: -q.score)


def _year_alone(question: str) -> bool:
    """Whether the periods a question names are whole years ("in 2016", "for fiscal 2022")."""
    named = periods_of(question)
    return bool(named) and all(_YEAR.fullmatch(p) for p in named)


def _reads_part_year(query: TableQuery) -> bool:
    """Whether every column a query reads is a part of a year: a quarter ("First Quarter 2016", "Q3 FY23") or a
    span shorter than a year ("Three Months Ended June 30, 2023")."""
    names = [query.table.columns[i].name for i in query.columns if 0 < i < len(query.table.columns)]
    return bool(names) and all((quarters_of(n) or _PART_YEAR_SPAN.search(n)) and not _YEAR_SPAN.search(n)
                               for n in names)


_MEDIAN = re.compile(r"\bmedian\b", re.IGNORECASE)
_AVG_CALL = re.compile(r"\bavg\(")


def _median(query: TableQuery) -> TableQuery | None:
    """A query for "the median ...": planned as an average, its aggregate taken as the median instead (DuckDB's
    median: the middle value, or the mean of the two middle ones). An average written as a sum over a count (a row's
    cells), or a query of another kind, cannot be: None."""
    if not _AVG_CALL.search(query.sql):  # a cell headed "Median ..." is read as printed; a mean as a sum over a
        return None if query.op == "avg" else query  # count is no median
    what = re.sub(r"\bavg\b", "median", query.what, count=1)
    return replace(query, sql=_AVG_CALL.sub("median(", query.sql), what=what)


# a question about a table's columns themselves: "what columns does cars.csv have", "how many fields are in the
# stocks data", "list the variables of star98.csv"
_HEADERS_ASKED = re.compile(r"\b(?:(?:what|how\s+many)(?:\s+are\s+the)?|(?:list|name|show)(?:\s+me)?(?:\s+all)?"
                            r"(?:\s+of)?\s+the)\s+(?:columns|fields|headers|variables)\b", re.IGNORECASE)


def _header_query(ask: TableAsk, table: TableInfo, question: str, prior: float) -> TableQuery | None:
    """The header of a table whose file or sheet the question names (its columns, by the cells of its header
    row, and its count of rows): None for a table the question does not name."""
    named = _sheet_named(table, question) or bool(_file_words(ask, table)) or \
        any(_in_file_name(c, _file_tokens(table.file_name)) for c in ask.concepts)
    if not named:
        return None
    # a question about the columns and nothing else ("how many columns hold percentages" asks about figures)
    own = forms_of(f"{_stem_words(table.file_name)} {table.location.sheet or ''} {table.name}") | _ABOUT_COLUMNS
    if any(not c.forms & own and not any(ch.isdigit() for ch in c.text) for c in ask.concepts):
        return None
    sql = f'SELECT count(*) AS "rows" FROM {_q(table.physical)}'
    return TableQuery(table, sql, "header", f"columns of {table.name}", tuple(range(len(table.columns))), (),
                      "", 2.0 + prior)


_ABOUT_COLUMNS = forms_of("columns fields headers variables have has contain contains include includes dataset data "
                          "file table sheet tab spreadsheet workbook csv xlsx many list name names show total number "
                          "there")


def _sheet_named(table: TableInfo, question: str) -> bool:
    """Whether the question names the table's sheet, other than by its file's name (a CSV's one sheet)."""
    sheet = table.location.sheet
    return bool(sheet) and sheet.lower() != table.file_name.rsplit(".", 1)[0].lower() and \
        re.search(rf"(?<!\w){re.escape(sheet)}(?!\w)", question, re.IGNORECASE) is not None


def quarters_shown(table: TableInfo) -> frozenset[str]:
    """The quarters a table's title and headers name ("Three months ended June 30, 2022": 2022q2; "1Q21")."""
    return frozenset().union(*(quarters_of(text) for text in (table.title, *(c.name for c in table.columns))))


SEEN_VALUES = 500  # a text column with this many distinct values may hold more than the planner was given


def _lacks_year(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> bool:
    """Whether the question names years none of which the table shows (title, headers, labels, cells or file name,
    "FY22" and "'22" included) while it shows others, and it has no column of dates or years that could hold one:
    its figures are of other periods. A table that shows no year at all is not of another period: the question's
    year may only say which study or report it is ("Burtin's 1951 data")."""
    if not ask.years or any(len(cells) >= SEEN_VALUES for cells in values.values()):
        return False
    if _time_column(table, values) is not None or any(forms_of(identifier_text(c.name)) & _DATED
                                                       for c in table.columns):
        return False
    text = " ".join([table.title, table.note, table.name, table.file_name, *(c.name for c in table.columns),
                     *table.labels, *(v for cells in values.values() for v in cells)])
    shown = set(_YEAR.findall(text))
    if not shown:
        return False
    return not any(year in shown or re.search(r"(?:\bFY\s?|['’])" + year[2:] + r"\b", text, re.I)
                   for year in ask.years)


_FULL_YEAR_ASKED = re.compile(r"\b(?:full|whole|entire)[- ]year\b|\bannual(?!\s+report)\b", re.IGNORECASE)
# a span shorter than a year printed over a statement's columns
_PART_YEAR = re.compile(r"\b(?:three|3|six|6|nine|9|thirteen|13|twenty[- ]six|26|thirty[- ]nine|39)[- ](?:months?|weeks?)\b|"
                        r"\bquarters?\b", re.IGNORECASE)


def _whole_year_asked(question: str) -> bool:
    """Whether the question names a fiscal year and no part of one ("gross margin for fiscal 2022": not its
    fourth quarter's)."""
    return bool(FISCAL_NAMED.search(question)) and all(_YEAR.fullmatch(p) for p in periods_of(question))


_PART_YEAR_SPAN = re.compile(r"\b(?:three|3|six|6|nine|9|thirteen|13|twenty[- ]six|26|thirty[- ]nine|39)[- ]"
                             r"(?:months?|weeks?)\b", re.IGNORECASE)


def _part_year_columns(table: TableInfo) -> bool:
    """Whether a statement's columns are spans shorter than a year ("13 Weeks Ended January 28, 2023") and none a
    whole year's: a table whose rows are the quarters still adds up to the year."""
    text = " ".join(c.name for c in table.columns)
    return bool(_PART_YEAR_SPAN.search(text)) and not _YEAR_SPAN.search(text)


def _part_year_only(table: TableInfo) -> bool:
    """Whether a table's headers (its label column's and title included) print only spans shorter than a year
    ("Three months ended June 30, Six months ended June 30"): none of its figures is a whole year's."""
    text = " ".join([table.title, table.note, *(c.name for c in table.columns)])
    return bool(_PART_YEAR.search(text)) and not _YEAR_SPAN.search(text)


# what a verb of the question acts on, after its preposition: "record [in restructuring charges]", "spend [on share
# repurchases] in 2022" (not "cost of sales": a noun's "of")
_OBJECT = (r"(?:in|on|for|from|into|towards?)\s+(?:the\s+|its\s+|their\s+)?([A-Za-z&'\-, ]+?)"
           r"(?=[.;:?()]|,?\s+(?:in|on|for|during|at|by|as|over|from|between)\b|$)")


def _reads_what_is_asked(ask: TableAsk, query: TableQuery) -> bool:
    """Whether a single cell's row, column or table names what the question asks for ("what [learning rate
    schedule] does BERT use?"): a row matched only by a name ("BERT (Single)") in a column the question does not
    name holds some figure about that name, not the one asked for. A question without such words is not held back."""
    focus = [c for c in ask.concepts if c.focus and not c.specific and not c.forms <= _GENERIC | _VAGUE]
    table = query.table
    held = forms_of(f"{query.what} {table.title} {table.note} {table.name} {_stem_words(table.file_name)}")
    # "how much did it sell in Europe": a table of sales ("Supplementary Sales Data") reads what it sold; "how
    # many bills in the 104th Congress": the column it reads, BILLS104, spells the bills
    runs = frozenset(f for i in query.columns if 0 <= i < len(table.columns) for f in joined(table.columns[i].name))
    # "how much did Best Buy record in restructuring charges": what a verb's object names in full ("Restructuring
    # charges") is what the question asks for, whatever the verb
    acted = [(c, m) for c in focus for m in re.finditer(rf"\b{re.escape(c.text)}\s+{_OBJECT}", ask.text, re.I)]
    objects = frozenset(f for _, m in acted for f in forms_of(m.group(1))) - _GENERIC
    verbs = frozenset(f for c, _ in acted for f in c.forms)  # "Dividends paid to shareholders": the verb may be said
    labels = [forms_of(_BRACKETED.sub(" ", unmarked(table.labels[r - 1]))) - _GENERIC - _YEARS_OF(table.labels[r - 1])
              for r in query.rows if 0 < r <= len(table.labels)]
    if objects and labels and all(words and words <= objects | verbs and objects <= words | _VAGUE for words in labels):
        return True
    return not focus or any(c.met(held) or verb_nouns(c.text) & held
                            or meets(ask.forms, runs) - meets(ask.forms - c.forms, runs) for c in focus)


def _named_elsewhere(ask: TableAsk, query: TableQuery, layout: Layout) -> bool:
    """Whether a name the question gives, which the table prints in other rows' labels only, is missing from the
    rows the query reads (their labels and headings): "Sam's Club's operating income" is not the row "Operating
    income" of a table with rows of its own for Sam's Club."""
    if not query.rows:
        return False
    table = query.table
    whole = forms_of(f"{_stem_words(table.file_name)} {table.title} {table.note} {table.name} "
                     f"{' '.join(identifier_text(c.name) for c in table.columns)}")
    sections = layout.sections or {}
    read = forms_of(" ".join(f"{table.labels[r - 1]} {sections.get(r, '')}" for r in query.rows
                             if 0 < r <= len(table.labels)))
    others = forms_of(" ".join(label for r, label in enumerate(table.labels, start=1) if r not in query.rows))
    stem = _file_tokens(table.file_name)
    shortened = _abbreviated_in(ask.text, whole | read)
    for c in ask.concepts:
        if not c.specific or any(ch.isdigit() for ch in c.text) or is_month(c.text.split()[0]):
            continue
        if c.met(whole) or _in_file_name(c, stem) or c.met(read) or c.text in shortened:
            continue
        if c.met(others):
            return True
    return False


def _abbreviated_in(text: str, held: frozenset[str]) -> set[str]:
    """The words of the names a question abbreviates itself whose abbreviation `held` holds: "Global Merchant and
    Network Services (GMNS)" is held as "GMNS"."""
    return {w for m in _NAME_ABBREVIATED.finditer(text) if forms_of(m.group(2)) & held for w in m.group(1).split()}


_NAME_ABBREVIATED = re.compile(r"((?:[A-Z][\w&'’.-]*\s+(?:(?:and|&|of|the|for)\s+)?){1,8})\(([A-Z][A-Za-z&]{1,7})\)")


def _names_held(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> bool:
    """Every name the question gives (not a year or a number) is in the table's document: its file name, title,
    headers, labels or the values of its text columns."""
    names = [c for c in ask.concepts if c.specific and not any(ch.isdigit() for ch in c.text)
             and not is_month(c.text.split()[0])]
    if not names:
        return True
    cells = " ".join(v for column in values.values() for v in column)
    held = forms_of(f"{_stem_words(table.file_name)} {table.title} {table.note} {table.name} "
                    f"{' '.join(identifier_text(c.name) for c in table.columns)} {' '.join(table.labels)} {cells}")
    stem = _file_tokens(table.file_name)
    # "Frito-Lay North America" is held as "FLNA": the words of a name whose initials the table prints
    initialled = abbreviated(ask.text, held)
    codes = [v for column in values.values() for v in column if 3 <= len(v) <= 5 and v.isupper()]
    # "the Treasury bill rate" is held as "tbilrate": a header whose words, run together, need the name's
    joins = frozenset(f for column in table.columns for f in joined(column.name)) | \
        frozenset(f for token in _file_tokens(table.file_name) for f in joined(token))  # "El Nino": elnino.csv
    missing = [c for c in names if not (c.met(held) or meets(c.forms, held) or _in_file_name(c, stem)
                                        or set(re.findall(r"[^\W_]+", c.text.casefold())) <= initialled
                                        or any(contracts(w, v) for w in c.text.split() for v in codes)
                                        or meets(ask.forms, joins) - meets(ask.forms - c.forms, joins))]
    shortened = _abbreviated_in(ask.text, held)
    missing = [c for c in missing if c.text not in shortened]
    # "San Francisco" is held as "SF": the initials of the names the question writes one after another
    initials = "".join(c.text[0] for c in missing).lower()
    missing = [c for c in missing if not _counted_by_header(ask.text, c, table)]
    if not missing or (len(missing) >= 2 and initials in held and _adjacent(ask.text, missing)):
        return True
    # A question naming several things the table holds ("PepsiCo's North American divisions (FLNA, QFNA and
    # PBNA)") may describe them in words the table does not print; one naming a single thing may not.
    return len(names) - len(missing) >= 2 * len(missing) and len(names) - len(missing) >= 3


def _counted_by_header(text: str, name: Concept, table: TableInfo) -> bool:
    """Whether a data file's header holds the number the question writes just before the name, run together
    with its words: "the 104th Congress" is the BILLS104 column's, "the 2010 Census" POP2010's. The header is a
    contraction that drops what its number counts; the name says it, and no cell of the file could."""
    if table.location.sheet is None:
        return False  # a document's table prints its context in its title and headers
    numbers = {m.group(1) for m in re.finditer(rf"\b(\d{{1,4}})(?:st|nd|rd|th)?\s+{re.escape(name.text)}\b", text)}
    return any(n in re.findall(r"\d+", c.name) for c in table.columns if joined(c.name) for n in numbers)


def _file_tokens(file_name: str) -> tuple[str, ...]:
    """A file name's words as lower-case letters and digits: 'AMERICANEXPRESS_2022_10K.pdf' ->
    ('americanexpress', '2022', '10k')."""
    return tuple(re.findall(r"[a-z0-9]+", file_name.rsplit(".", 1)[0].lower()))


def _in_file_name(name: Concept, tokens: Sequence[str]) -> bool:
    """Whether a name the question gives begins a word of the file name, which writes names run together
    ("CVS" in CVSHEALTH_2018_10K, "American Water" in AMERICANWATERWORKS_2021_10K): the file is the name's."""
    return any(len(f) >= 3 and f.isalpha() and t.startswith(f) for f in name.forms for t in tokens)


def _adjacent(text: str, names: Sequence[Concept]) -> bool:
    """Whether the names are written one after another ("San Francisco")."""
    return " ".join(c.text for c in names).lower() in " ".join(text.split()).lower()


def _stem_words(file_name: str) -> str:
    """A file name as words: 'ADOBE_2022_10K.pdf' -> 'ADOBE 2022 10K'."""
    return re.sub(r"[_.\-]+", " ", file_name.rsplit(".", 1)[0])


# a heading of a filing's outline over a part of the company ("Segment Results of Operations", "Verizon Consumer
# Group", "International Division")
# a filing's statements of the holding company alone (Schedule I, "Condensed Financial Information of Registrant"),
# beside the consolidated ones a question about the company means
_PARENT_ONLY = re.compile(r"\bparent\s+(?:company|only|corporation)\b|\bof\s+(?:the\s+)?registrant\b", re.I)
_PARENT_ONLY_ASKED = re.compile(r"\bparent\b|\bregistrant\b|\bholding\s+company\b|\bstand-?alone\b", re.I)
_PART_HEADING = re.compile(r"\b(?:segments?|group|divisions?|business units?)\b", re.I)


def _of_a_part(ask: TableAsk, table: TableInfo) -> bool:
    """Whether the table stands under a heading of a part of the company the question does not name: "Verizon
    Consumer Group > Operating Revenues" holds the Consumer group's wireless equipment revenues, not Verizon's
    ("What were Verizon's wireless equipment revenues?": the consolidated statement's row)."""
    parts = [h for h in table.title.split(">") if _PART_HEADING.search(h)]
    if not parts:
        return False
    own = _file_words(ask, table)
    for heading in parts:
        words = forms_of(heading) - own - _GENERIC
        if any(c.met(words) for c in ask.concepts if not c.forms <= own):
            return False  # the question names the part ("Consumer", "segments")
    return True


def _about(ask: TableAsk, table: TableInfo) -> float:
    """How much of the question the table's title, note and headers name (0..1), and its last row when that row
    totals the rows above it: "Total Wireless service revenue" says what every row of the table counts."""
    heads = forms_of(" ".join([table.title, table.note, table.name, *(c.name for c in table.columns),
                               _totalled(table)]))
    total = sum(c.weight for c in ask.concepts) or 1.0
    own = _file_words(ask, table, names=True)  # the document's own name tells none of its tables from another
    # a sheet's name of words run together that the question spells ("credit card holders": ccard.csv)
    runs = frozenset(f for word in re.findall(r"[A-Za-z]+", table.name) for f in joined(word)) \
        if table.location.sheet is not None else frozenset()
    spelled = meets(ask.forms, runs)
    return sum(c.weight for c in ask.concepts if c.met(heads) and not c.forms <= own
               or spelled and spelled - meets(ask.forms - c.forms, runs)) / total


def _totalled(table: TableInfo) -> str:
    """What the table's last row totals ("Total Fios revenue" -> "Fios revenue"), "" when it is no total row."""
    last = table.labels[-1] if table.labels else ""
    m = _SUBTOTAL.match(last)
    return last[m.end():] if m and len(table.labels) > 2 else ""


# -- cells the question points at by position ------------------------------------------------------------------

POSITION_SCORE = 2.5  # a row, column or cell named by position: above any reading of the question's words


def _position_query(ask: TableAsk, table: TableInfo, where: Position, layout: Layout = Layout()) -> TableQuery | None:
    """The cells `where` points at in `table` (position.Position): one cell ("the middle cell", "the last row
    under Header1", "cell B7"), a row's cells, a column's aggregate ("the sum of column C"), a row's aggregate, or
    every figure of the table ("what do all the numbers in the table add up to"). None when the table has no such
    row or column, or the question points at a row and names no column this table has while asking a figure of
    several."""
    source = _q(table.physical)
    row = where.row_in(table)
    column = where.column_in(table)
    if (where.row is not None or where.sheet_row is not None) and row is None:
        return None  # "the middle row" of an even count, "row 12" of a table of ten
    if (where.column is not None or where.letter) and column is None:
        return None
    numeric = [i for i, c in enumerate(table.columns) if c.numeric]
    function = {"sum": "sum", "avg": "avg", "max": "max", "min": "min", "count": "count"}.get(ask.op)
    if where.whole:
        numeric = _figures_of(table, numeric)
        if function is None or not numeric:
            return None
        cells = ", ".join(_q(table.columns[i].sql) for i in numeric)
        sql = (f'SELECT {function}(v) AS value, count(v) AS "cells" FROM (SELECT unnest([{cells}]) AS v '
               f"FROM {source})")
        ordinal = said(where.table, 0, 0, "table").split(" (")[0] if where.table is not None else "the table"
        return TableQuery(table, sql, "whole", f"{function} of all the numbers in {ordinal}", tuple(numeric),
                          tuple(range(1, table.n_rows + 1)), score=POSITION_SCORE, positional=True)
    if column is None and row is not None:
        # a column the question names by its header: most of the header's words ("Header1", "Unit price"), not
        # one of many ("Purchased Under the Program" for "under Header1")
        shares = {i: _header_share(ask, table, i) for i in range(len(table.columns))}
        best = max(shares.values(), default=0.0)
        named = [i for i, share in shares.items() if share == best and share >= MIN_ROW_MATCH]
        column = named[0] if len(named) == 1 else None
    if row is None and column is not None and ask.op in ("lookup", "count"):
        # "the value in the second column for Rent": the row its label names
        rows = _matching_rows(ask, table, layout)
        row = rows[0][0] if rows and rows[0][1] >= NAMED_ROW else None
        if row is None:
            return None
    where_row = f' WHERE "_row" = {row}' if row is not None else ""
    label = ""
    if row is not None:
        label = f"row {row} of the sheet" if where.sheet_row is not None and table.location.sheet is not None \
            else said(where.row, row, table.n_rows, "row")
        if table.labels and not table.columns[0].numeric and 0 < row <= len(table.labels) and table.labels[row - 1]:
            label += f", {table.labels[row - 1]}"
    header = table.columns[column].name if column is not None else ""
    if column is not None and (where.column is not None or where.letter):
        header = (f"column {where.letter}" if where.letter else said(where.column, column + 1,
                                                                          len(table.columns), "column")) + \
            (f' "{header}"' if not re.fullmatch(r"column (?:\d+|[A-Z]{1,2})", header) else "")
    if row is not None and column is not None:
        sql = f'SELECT "_row", {_q(table.columns[column].sql)} AS value FROM {source}{where_row}'
        what = f"{label}, {header}"
        if where.row == MIDDLE and where.column == MIDDLE:
            what = f"the middle cell: {what}"
        return TableQuery(table, sql, "lookup", what, (column,), (row,), score=POSITION_SCORE, positional=True)
    if column is not None:  # a column: its aggregate
        if function is None or function != "count" and not table.columns[column].numeric:
            return None
        col = _q(table.columns[column].sql)
        exclude = _total_rows(table) if function in ("sum", "avg") else ""
        clause = f" WHERE {exclude}" if exclude else ""
        sql = f'SELECT {function}({col}) AS value, count({col}) AS "rows" FROM {source}{clause}'
        return TableQuery(table, sql, function, f"{function} of {header}", (column,), (), clause,
                          score=POSITION_SCORE, positional=True)
    if function is not None and function != "count":  # a row's figures: their aggregate
        figures = _figures_of(table, numeric)
        if not figures:
            return None
        cells = ", ".join(_q(table.columns[i].sql) for i in figures)
        sql = (f'SELECT {function}(v) AS value, count(v) AS "cells" FROM (SELECT unnest([{cells}]) AS v '
               f"FROM {source}{where_row})")
        return TableQuery(table, sql, "whole", f"{function} of {label}", tuple(figures), (row,),
                          score=POSITION_SCORE, positional=True)
    columns = ", ".join(_q(c.sql) for c in table.columns)
    sql = f'SELECT "_row", {columns} FROM {source}{where_row}'
    return TableQuery(table, sql, "cells", label, tuple(range(len(table.columns))), (row,),
                      score=POSITION_SCORE, positional=True)


def _header_share(ask: TableAsk, table: TableInfo, column: int) -> float:
    """The share of a column header's own words (not generic ones, not its years) the question holds."""
    forms = name_forms(table.columns[column].name) - _GENERIC - frozenset(_YEAR.findall(table.columns[column].name))
    words = [w for w in re.findall(r"[A-Za-z0-9]+", identifier_text(table.columns[column].name))
             if w.lower() not in _FUNCTION_WORDS and not _YEAR.fullmatch(w) and (forms_of(w.lower()) & forms
                                                                                or w.lower() in forms)]
    if not words:
        return 0.0
    asked = ask.forms - _file_words(ask, table)
    return sum(1 for w in words if (forms_of(w.lower()) or frozenset({w.lower()})) & asked) / len(words)


def _figures_of(table: TableInfo, numeric: Sequence[int]) -> list[int]:
    """The numeric columns that hold figures, not the years or dates rows are of ("Year" in a yearly series)."""
    return [i for i in numeric if not forms_of(identifier_text(table.columns[i].name)) & _DATED]


# -- a cell, or a change between two cells -------------------------------------------------------------------

def _cell_query(ask: TableAsk, table: TableInfo, layout: Layout = Layout()) -> TableQuery | None:
    """A row x column lookup (or a change between two periods of a row) in a table whose first column labels
    its rows."""
    counted = ask.op == "count" and not _MORE.search(ask.text)  # "how many light vans": a row's count, if named
    pairs = _pairs(table) and ask.op in ("lookup", "count")
    if ask.op == "avg" or ask.op == "count" and not counted or not table.labels \
            or not (pairs or any(c.numeric for c in table.columns[1:])) \
            or table.columns[0].numeric:  # a first column of figures (cycles, measurements) labels no rows
        return None
    if ask.op in ("max", "min") and ask.which:
        return None  # "which division had the highest ...": a ranking of rows, not one row's cell
    rows = _matching_rows(ask, table, layout)
    if not rows:
        return None
    row, match = rows[0]
    if ask.op == "count":
        # "how many light vans are in the fleet": the count the named row states, where the rows are things
        # each named once (a row label repeated is a value to count rows by, "how many films by Spielberg")
        if match < NAMED_ROW or table.labels.count(table.labels[row - 1]) > 1 or len(table.labels) < table.n_rows:
            return None
        # what is counted is the row ("light vans"), or the column or table says it ("Employees" for "how many
        # employees in Mexico"); a row named by a place alone holds counts of something else
        counted = next((c for c in ask.concepts if c.focus and not c.specific), None)
        said = forms_of(f"{table.labels[row - 1]} {table.title} {table.note} {table.name} "
                        f"{' '.join(identifier_text(c.name) for c in table.columns[1:])}")
        # or a header of words run together spells it with the question's other words ("how many bills ... in
        # the 104th Congress": BILLS104)
        runs = frozenset(f for c in table.columns[1:] for f in joined(c.name))
        if counted is None or not (counted.met(said) or meets(counted.forms, said)
                                   or meets(ask.forms, runs) - meets(ask.forms - counted.forms, runs)):
            return None
        ask = replace(ask, op="lookup")
        column = _named_column(ask, table)
        whole = [i for i, c in enumerate(table.columns) if i and c.whole]
        column = column if column is not None else whole[0] if len(whole) == 1 else None
        period = _period_columns(ask, table)
        column = period[0] if period and len(period) == 1 else column
        column = 1 if column is None and pairs else column
        if column is None:
            return None
        return _lookup(ask, table, row, column, match)
    span = _period_span(ask, table)
    if span and ask.op in ("sum", "avg", "lookup"):
        return _row_span(ask, table, row, span, match)
    period = _period_columns(ask, table)
    if ask.op == "change" and not period:
        blocks = _blocks_change(ask, table, layout)
        if blocks is not None:
            return blocks
    if period is None:
        return None  # a period the table does not have, or has twice (a two-level header read as one)
    if ask.op == "ratio":
        return _ratio(ask, table, rows, period, match)
    if ask.op == "change" and len(rows) >= 2 and len(period) == 1:
        return _compare_rows(table, [r for r, _ in rows[:2]], period[0], match)
    if ask.op == "change" and len(rows) >= 2 and not period and _MORE_THAN.search(ask.text):
        # "how much higher was Florida's violent crime rate than New York's": one column, two rows, subtracted
        column = _named_column(ask, table)
        if column is not None and rows[1][1] >= NAMED_ROW:
            return _rows_change(ask, table, [r for r, _ in rows[:2]], column, match)
    # the rows it names, not one that is the document's own company ("PepsiCo's four divisions")
    stem = _file_tokens(table.file_name)
    named = [r for r, score in rows if score >= NAMED_ROW
             and "".join(re.findall(r"[a-z0-9]+", table.labels[r - 1].lower())) not in stem]
    named = _parts(named, table, layout) if ask.op in ("sum", "avg") else named
    if ask.op == "lookup" and len(period) <= 1:
        across = _under_each(ask, table, rows, layout)
        if across:  # "appliances, counting both Domestic and International": the row under each, added up
            ask, named = replace(ask, op="sum"), across
    if ask.op in ("sum", "avg") and len(named) >= 2 and len(period) <= 1:
        column = period[0] if period else _named_column(ask, table)
        return _rows_total(ask, table, sorted(named), column, match, layout) if column is not None else None
    if ask.op == "change":
        if len(period) < 2:
            period = _two_periods(ask, table) or period
        if len(period) >= 2:
            return _change(table, row, period[:2], match, _THAN.search(ask.text) is not None)
    column = period[0] if period else _named_column(ask, table)
    column = 1 if column is None and pairs and not period and match >= NAMED_ROW else column
    if column is None:
        return None
    return _lookup(ask, table, row, column, match)


def _pairs(table: TableInfo) -> bool:
    """A table of name | value pairs (a slide's or a form's "Status Code | 200", "Referer | http://..."): two
    columns, neither numeric as a whole, each row naming one thing once. The value of the row a question names
    is its answer, a number or not."""
    return len(table.columns) == 2 and not table.columns[0].numeric and not table.columns[1].numeric \
        and len(table.labels) == table.n_rows and len(set(table.labels)) == len(table.labels)


# a question asking for each figure apart, not one figure across parts
_APART = re.compile(r"\b(?:each|respectively|separately|apart|vs\.?|versus|compare[ds]?|comparison|between|"
                    r"difference|differ|ratio|share|were|are)\b", re.IGNORECASE)


def _under_each(ask: TableAsk, table: TableInfo, rows: list[tuple[int, float]], layout: Layout) -> list[int]:
    """The rows of the label the question names best, when that label stands under two or more headings and the
    question names every one of them ("revenue from appliances in fiscal 2023, counting both Domestic and
    International": Appliances under "Domestic:" and under "International:"). One figure asked across the parts
    a statement prints apart is their sum; a question naming one heading reads its row, one asking for each figure
    ("were", "respectively", "compare") none. [] otherwise."""
    sections = layout.sections or {}
    if not rows or not sections or _APART.search(ask.text):
        return []
    best = rows[0][1]
    label = " ".join(table.labels[rows[0][0] - 1].lower().split())
    same = [r for r, score in rows if score >= best - 1e-9 and " ".join(table.labels[r - 1].lower().split()) == label]
    headings = [sections.get(r, "") for r in same]
    if len(same) < 2 or not all(headings) or len(set(headings)) < len(headings):
        return []
    for heading in headings:
        words = [f for f in (forms_of(w.lower()) for w in re.findall(r"[A-Za-z0-9]+", heading)) if f - _GENERIC]
        if not words or not all(f & ask.forms for f in words):
            return []
    return sorted(same)


def _blocks_change(ask: TableAsk, table: TableInfo, layout: Layout) -> TableQuery | None:
    """A change between two years a statement prints as blocks, each under a heading naming its year ("Fiscal
    Year Ended January 31, 2018" over Net sales, Operating income (loss), ...; then 2017's), its parts as columns
    (Walmart U.S. | Sam's Club | Consolidated): the row the question names under each year's heading, in the
    column it names ("Sam's Club's operating income in fiscal 2018 compared with fiscal 2017")."""
    asked = list(dict.fromkeys(p for p in periods_of(ask.text) if p.isdigit()))
    if len(asked) != 2 or not layout.sections:
        return None
    year_of: dict[str, str] = {}
    for row in layout.empty:
        heading = table.labels[row - 1] if row <= len(table.labels) else ""
        years = [p for p in periods_of(heading, header=True) if p.isdigit()]
        if len(years) == 1:
            year_of[heading] = years[0]
    column = _named_column(ask, table)
    if set(asked) - set(year_of.values()) or column is None:
        return None
    rows: dict[str, tuple[int, float]] = {}
    for row, score in _matching_rows(ask, table, layout):
        year = year_of.get((layout.sections or {}).get(row, ""))
        if year in asked and year not in rows:
            rows[year] = (row, score)
    if len(rows) != 2:
        return None
    (old, old_match), (new, new_match) = (rows[y] for y in sorted(rows, key=int))
    if table.labels[old - 1] != table.labels[new - 1]:
        return None  # the same row under each year's heading, or no change of one figure
    col, label, source = _q(table.columns[column].sql), _q(table.columns[0].sql), _q(table.physical)
    sql = (f'SELECT a.{label} AS label, b.{col} AS "from", a.{col} AS "to", a.{col} - b.{col} AS difference, '
           f'round((a.{col} - b.{col}) / abs(b.{col}) * 100, 2) AS percent_change FROM {source} a, {source} b '
           f'WHERE a."_row" = {new} AND b."_row" = {old}')
    what = (f"{table.labels[new - 1]}, {table.columns[column].name}: {layout.sections[old]} to "
            f"{layout.sections[new]}")
    return TableQuery(table, sql, "change", what, (column,), (old, new),
                      score=1.2 + min(old_match, new_match) + COLUMN_WEIGHT)


def _text_lookup(ask: TableAsk, table: TableInfo, layout: Layout = Layout()) -> TableQuery | None:
    """A named row's cell that holds words, not a figure: the value of a two-column table of keys and values
    ("Status Code | 200", "Contract sum | 39 921 700,00 руб."), or the cell of a word column the question names
    ("the Fuel of the heavy truck"). The row is named (most of its label) and its label is the table's only."""
    if ask.op != "lookup" or not table.labels or len(table.columns) < 2 or table.columns[0].numeric \
            or len(table.labels) < table.n_rows:
        return None
    rows = _matching_rows(ask, table, layout)
    if not rows or rows[0][1] < NAMED_ROW:
        return None
    row, match = rows[0]
    if table.labels.count(table.labels[row - 1]) > 1:
        return None
    words = [i for i, c in enumerate(table.columns) if i and not c.numeric]
    named = [i for i in words if _column_match(ask, table, i)]
    column = named[0] if len(named) == 1 else words[0] if len(table.columns) == 2 and words else None
    if column is None:
        return None
    found = _lookup(ask, table, row, column, match)
    return replace(found, score=0.5 + match + COLUMN_WEIGHT * len(named)) if found is not None else None


# a question about a position at a day ("inventory at the end of fiscal 2022", "cash as of December 31"), and a
# header that is a span of time ("52 Weeks Ended January 28, 2023", "Year Ended"): a flow, not a position
_AT_A_DAY = re.compile(r"\b(?:at the end of|as of|as at|at year[- ]end|at (?:fiscal )?year end|balance)\b", re.I)
_DURATION = re.compile(r"\b(?:ended|ending|weeks|months|year ended|quarter ended|period)\b", re.I)
_POSITION_ROW = re.compile(r"\b(?:end|beginning|balance|as of|outstanding)\b", re.I)


def _lookup(ask: TableAsk, table: TableInfo, row: int, column: int, match: float) -> TableQuery | None:
    """One cell: the row's label and its value in the column. None for a position asked at a day ("inventory
    at the end of fiscal 2022") in a column of a span ("52 Weeks Ended ...") whose row is not itself a position
    ("Cash at end of year"): a cash flow statement's "Merchandise inventories" is the year's change."""
    label = table.labels[row - 1]
    if _AT_A_DAY.search(ask.text) and _DURATION.search(table.columns[column].name) \
            and not _POSITION_ROW.search(label):
        return None
    sql = (f'SELECT "_row", {_q(table.columns[0].sql)} AS label, {_q(table.columns[column].sql)} AS value '
           f'FROM {_q(table.physical)} WHERE "_row" = {row}')
    return TableQuery(table, sql, "lookup", f"{label}, {table.columns[column].name}", (column,), (row,),
                      score=1.0 + match + COLUMN_WEIGHT * _column_match(ask, table, column))


# the whole a share is of: the row named right after it is the denominator
_WHOLE_OF = re.compile(r"\b(?:share|proportion|percent(?:age)?|fraction|part)\s+of\b", re.IGNORECASE)
_TO = re.compile(r"\bto\b", re.IGNORECASE)
_AS_PART_OF = re.compile(r"\bas\s+(?:an?\s+)?(?:share|proportion|percent(?:age)?|fraction|part|%)\s+of\b", re.IGNORECASE)


_RATIO_OF_TO = re.compile(r"\bratio\s+of\s+(.+?)\s+to\s+(.+)", re.IGNORECASE)


def _said_by(label: str, said: frozenset[str]) -> float:
    """The share of a label's words (other than words naming nothing in particular) among `said`."""
    words = forms_of(label) - _GENERIC
    return len(words & said) / len(words) if words else 0.0


def _ratio(ask: TableAsk, table: TableInfo, rows: list[tuple[int, float]], period: list[int],
           match: float) -> TableQuery | None:
    """One figure divided by another, in the order the question names them: two rows in one column ("Consumer
    to Business in 2022"), or one row in two periods ("in 2017 than in 2001")."""
    if len(rows) >= 2:
        column = period[0] if len(period) == 1 else _named_column(ask, table) if not period else None
        if column is None:
            return None
        first, second = _in_order(ask.text, table, [r for r, _ in rows[:2]])
        whole = _WHOLE_OF.search(ask.text)
        at = (_mentioned_at(ask.text, table.labels[first - 1]), _mentioned_at(ask.text, table.labels[second - 1]))
        part = _AS_PART_OF.search(ask.text)
        of_to = _RATIO_OF_TO.search(ask.text)
        if part or of_to:
            # "income tax expense as a share of income before tax", "the ratio of income tax expense to income
            # before income taxes": the row the words before "as a share of" (after "ratio of") name best over the
            # row the words after it name best (labels sharing words, "Total income taxes" and "Earnings before
            # income taxes", are told apart so; where each is first mentioned is not enough)
            before, after = (forms_of(ask.text[:part.start()]), forms_of(ask.text[part.end():])) if part else \
                (forms_of(of_to.group(1)), forms_of(of_to.group(2)))
            if _said_by(table.labels[second - 1], before) + _said_by(table.labels[first - 1], after) > \
                    _said_by(table.labels[first - 1], before) + _said_by(table.labels[second - 1], after):
                first, second = second, first
        elif whole and (_SUBTOTAL.match(table.labels[first - 1]) is None) != (_SUBTOTAL.match(table.labels[second - 1])
                                                                          is None):
            # "what share of net revenue came from the PBNA division": the division over the table's total of the
            # divisions ("Total division"), whichever the question's words name first
            if _SUBTOTAL.match(table.labels[first - 1]):
                first, second = second, first
        elif whole and at[0] >= whole.end() and at[1] > whole.end() and not _TO.search(ask.text[at[0]:at[1]]):
            # "what share of net sales was gross profit": the part over the whole ("percentage of debt to
            # equity" keeps its order)
            first, second = second, first
        cells = [(first, column), (second, column)]
    elif len(period) == 2:
        cells = [(rows[0][0], period[0]), (rows[0][0], period[1])]
    else:
        return None
    (r1, c1), (r2, c2) = cells
    a, b = _q(table.columns[c1].sql), _q(table.columns[c2].sql)
    source = _q(table.physical)
    sql = (f'SELECT x.v AS "from", y.v AS "to", round(x.v / y.v, 4) AS ratio FROM (SELECT {a} AS v FROM {source} '
           f'WHERE "_row" = {r1}) x, (SELECT {b} AS v FROM {source} WHERE "_row" = {r2}) y')
    what = (f"{table.labels[r1 - 1]}, {table.columns[c1].name} to {table.labels[r2 - 1]}, {table.columns[c2].name}")
    return TableQuery(table, sql, "ratio", what, tuple(dict.fromkeys((c1, c2))), tuple(dict.fromkeys((r1, r2))),
                      score=1.2 + match)


_SPAN = re.compile(r"\b(?P<a>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                   r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s*(?:-|–|—|to|through|thru|until)\s*"
                   r"(?P<b>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                   r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b", re.IGNORECASE)


def _period_span(ask: TableAsk, table: TableInfo) -> list[int]:
    """The month columns of a span the question writes ("Q1 (Jan-Mar)", "from April through June"), when the
    table has each month of it once; [] otherwise."""
    m = _SPAN.search(ask.text)
    if not m:
        return _quarter_span(ask, table)
    first, last = _MONTHS[m.group("a")[:3].lower()], _MONTHS[m.group("b")[:3].lower()]
    if first >= last:
        return []
    out = []
    for month in range(first, last + 1):
        columns = [i for i, c in enumerate(table.columns) if i and c.numeric and f"m{month:02d}" in periods_of(c.name,
                                                                                                          header=True)]
        if len(columns) != 1:
            return []
        out.append(columns[0])
    return out


_QUARTER_SPAN = re.compile(r"\bfrom\s+(?P<a>\S+(?:\s+(?:19|20)\d\d)?)\s+(?:to|through|thru|until)\s+"
                           r"(?P<b>\S+(?:\s+(?:19|20)\d\d)?)", re.IGNORECASE)


def _quarter_span(ask: TableAsk, table: TableInfo) -> list[int]:
    """The quarter columns of a span the question writes ("from 2Q20 through 1Q21", "from Q3 2021 to Q2 2022"),
    each quarter of it once in the table, in time order; [] otherwise."""
    m = _QUARTER_SPAN.search(ask.text)
    ends = [next((p for p in periods_of(m.group(g)) if re.fullmatch(r"\d{4}q[1-4]", p)), None) for g in "ab"] \
        if m else [None]
    if None in ends:
        return []
    (y1, q1), (y2, q2) = ((int(p[:4]), int(p[-1])) for p in ends)
    first, last = y1 * 4 + q1 - 1, y2 * 4 + q2 - 1
    if not 0 < last - first < 12:
        return []
    out = []
    for n in range(first, last + 1):
        quarter = f"{n // 4}q{n % 4 + 1}"
        columns = [i for i, c in enumerate(table.columns) if i and c.numeric
                   and quarter in periods_of(c.name, header=True)]
        if len(columns) != 1:
            return []
        out.append(columns[0])
    return out


def _row_span(ask: TableAsk, table: TableInfo, row: int, columns: list[int], match: float) -> TableQuery:
    """One row's figures over a span of month (quarter) columns, added up (averaged when the question says average)."""
    cells = " + ".join(_q(table.columns[i].sql) for i in columns)
    function = "avg" if ask.op == "avg" else "sum"
    value = f"({cells}) / {len(columns)}" if function == "avg" else f"({cells})"
    sql = (f'SELECT "_row", {_q(table.columns[0].sql)} AS label, {value} AS value FROM {_q(table.physical)} '
           f'WHERE "_row" = {row}')
    what = (f"{table.labels[row - 1]}, {function} of {table.columns[columns[0]].name} to "
            f"{table.columns[columns[-1]].name}")
    return TableQuery(table, sql, "span", what, (columns[0], columns[-1]), (row,), score=1.2 + match)


def _parts(rows: list[int], table: TableInfo, layout: Layout) -> list[int]:
    """The rows to add up without a subtotal of others among them: a "Total ..." row below another of the rows,
    under the same heading, already holds it ("appliances, Domestic and International": Appliances under each
    heading, not also "Total Domestic revenue")."""
    sections = layout.sections or {}
    return [r for r in rows if not (_SUBTOTAL.match(table.labels[r - 1]) and any(
        o < r and not _SUBTOTAL.match(table.labels[o - 1]) and sections.get(o) == sections.get(r) for o in rows))]


def _rows_total(ask: TableAsk, table: TableInfo, rows: list[int], column: int, match: float,
                layout: Layout = Layout()) -> TableQuery:
    """The sum (average) of the rows the question names, in one column: "combined 2022 net revenue of FLNA, QFNA
    and PBNA". Rows of the same label are told apart by their headings: "Appliances (Domestic)"."""
    function = "avg" if ask.op == "avg" else "sum"
    col = _q(table.columns[column].sql)
    sql = (f'SELECT {function}({col}) AS value, count({col}) AS "rows" FROM {_q(table.physical)} '
           f'WHERE "_row" IN ({", ".join(map(str, rows))})')
    named = [table.labels[r - 1] for r in rows]
    sections = layout.sections or {}
    labels = ", ".join(f"{n} ({sections[r].rstrip(': ')})" if named.count(n) > 1 and sections.get(r) else n
                       for n, r in zip(named, rows, strict=True))
    return TableQuery(table, sql, function, f"{function} of {table.columns[column].name} over {labels}", (column,),
                      tuple(rows), score=1.2 + match + COLUMN_WEIGHT * _column_match(ask, table, column))


def _mentioned_at(text: str, label: str) -> int:
    """Where the question first names a word of `label` (its length when it names none)."""
    lowered = text.lower()
    spots = [lowered.find(w.lower()) for w in re.findall(r"[A-Za-z]{3,}", label)]
    return min((s for s in spots if s >= 0), default=len(text))


def _in_order(text: str, table: TableInfo, rows: list[int]) -> list[int]:
    """Two rows in the order the question names them, each placed by the words of its label the other's lacks
    ("operating income to operating revenues": "income" before "revenues"), else by its first word named."""
    a, b = (table.labels[r - 1] for r in rows[:2])
    words = [set(re.findall(r"[a-z]{3,}", x.lower())) for x in (a, b)]
    spots = [_mentioned_at(text, " ".join(own - other)) if own - other else len(text)
             for own, other in ((words[0], words[1]), (words[1], words[0]))]
    if spots[0] == spots[1]:
        spots = [_mentioned_at(text, a), _mentioned_at(text, b)]
    return list(rows[:2]) if spots[0] <= spots[1] else [rows[1], rows[0]]


_THAN = re.compile(r"\bthan\b", re.IGNORECASE)


def _change(table: TableInfo, row: int, columns: list[int], match: float, than: bool = False) -> TableQuery:
    """From one period to another of a row: the earlier year to the later; without years, "more in Q3 than in
    Q2" runs from the second named to the first, "from January to December" from the first to the second."""
    when = [_when(table.columns[i].name) for i in columns]
    if all(w[0] for w in when) and when[0] != when[1]:  # dated columns: from the earlier to the later
        new, old = sorted(columns, key=lambda i: _when(table.columns[i].name), reverse=True)
    else:
        new, old = (columns[0], columns[1]) if than else (columns[1], columns[0])
    a, b = _q(table.columns[new].sql), _q(table.columns[old].sql)
    sql = (f'SELECT {_q(table.columns[0].sql)} AS label, {b} AS "from", {a} AS "to", {a} - {b} AS difference, '
           f'round(({a} - {b}) / abs({b}) * 100, 2) AS percent_change FROM {_q(table.physical)} WHERE "_row" = {row}')
    what = f"{table.labels[row - 1]}, {table.columns[old].name} to {table.columns[new].name}"
    return TableQuery(table, sql, "change", what, (old, new), (row,), score=1.2 + match)


def _matching_rows(ask: TableAsk, table: TableInfo, layout: Layout = Layout()) -> list[tuple[int, float]]:
    """(1-based row, how well the question names its label) for every row it names, best first; a label is
    named when the question holds most of its words, or a name of the question is the label ("US" for "United
    States"). Rows whose labels are the same words count once (the first). A heading row that prints no figure
    is not a row to read; the heading it stands under adds to a row the question names with it ("Rooms revenue
    at the Las Vegas Strip Resorts": Rooms under Las Vegas Strip Resorts)."""
    found: dict[frozenset, tuple[int, float]] = {}
    # "CVS Health's total revenues": a name the file is named after (the company) names no row; a data file's
    # name is its content ("sales.xlsx"), and its words still name rows
    own = _file_words(ask, table, names=True)
    # "long-term debt, excluding the current portion": the words left out name no row to read; a row of them
    # alone ("Current portion of long-term debt") is the part left out, one saying it leaves them out ("Total
    # long-term debt, less current portion") is the figure asked
    left_out = left_out_of(ask.text)
    asked = ask.forms - own - left_out
    written = f" {' '.join(re.findall(r'[a-z0-9]+', ask.text.lower()))} "
    for i, label in enumerate(table.labels, start=1):
        if i in layout.empty:
            continue
        leaves = _LEAVES_OUT.search(label) if left_out else None
        if leaves and forms_of(label[leaves.end():]) & left_out:
            label = label[:leaves.start()]  # read as the figure it leaves them out of, which the question asks
        elif left_out and left_out <= forms_of(label):
            continue
        words = forms_of(label) - _YEARS_OF(label)
        specific = words - _GENERIC
        if not specific:
            continue
        # the share of the label's words the question holds, word by word (a form of each, not its initials); the
        # document's own company ("Net income attributable to 3M" in 3M's filing) is the question's, not a word to hold
        named_part = _SIGN_ALTERNATE.sub("", _ATTRIBUTED.sub("", _QUALIFIER.sub("", unmarked(label))))
        tokens = [forms_of(w.lower()) or frozenset({w.lower()}) for w in re.findall(r"[A-Za-z0-9]+", named_part)
                  if not _YEAR.fullmatch(w) and w.lower() not in _FUNCTION_WORDS]  # "All other income": 3 words
        tokens = [f for f in tokens if not (f <= own and f & own)]
        # "Total net sales" is the sales a question asks for unless it names another kind: "total", "net" and
        # "consolidated" weigh a quarter of a word when the question does not say them ("Other revenue" does not
        # answer "revenue": "other" weighs in full)
        weights = [1.0 if f & asked or not f <= _DEFAULT_MODIFIERS else DEFAULT_MODIFIER_WEIGHT for f in tokens]
        held = sum(w for f, w in zip(tokens, weights, strict=True) if f & asked) / sum(weights) if tokens else 0.0
        if _other_kind(words, asked):
            continue
        if _RESIDUAL.match(unmarked(label)) and not _RESIDUAL_ASKED.search(ask.text):
            continue  # "Other long-term debt" is what is left of the long-term debt, never the long-term debt asked
        plain = " ".join(re.findall(r"[a-z0-9]+", unmarked(label).lower()))
        if plain.count(" ") >= 1 and words & own and specific - own and f" {plain} " in written:
            # the question writes out a label that shares a word with the file's name and says more than it
            # ("Las Vegas Strip Resorts" in MGMRESORTS_...): the row, not the document's company
            held = 1.0
        # A name of the question is the label ("US" for "United States"), not one word of a longer label.
        named = any(c.specific and c.met(words) and not any(ch.isdigit() for ch in c.text)
                    and len(specific) <= 2 and not c.forms <= own for c in ask.concepts)
        score = max(held if held >= MIN_ROW_MATCH and specific & asked else 0.0, 0.9 if named else 0.0)
        score += 0.01 * sum(1 for f in tokens if f & asked) if score else 0.0  # "Total Assets" over "ASSETS"
        heading = (layout.sections or {}).get(i, "")
        if score and _CHANGES_UNDER.match(heading) and not _FLOWS_ASKED.search(ask.text):
            continue  # a cash flow statement's "Merchandise inventories" under "Changes in operating assets": a
            # change in the year, not the inventories a question asks for (nor their change, read from two years)
        if score and heading:
            under = [f for f in (forms_of(w.lower()) for w in re.findall(r"[A-Za-z0-9]+", heading)) if f - _GENERIC]
            named = sum(1 for f in under if f & asked)
            if f" {' '.join(re.findall(r'[a-z0-9]+', heading.lower()))} " in written:
                named = len(under)  # written out in full ("MGM China's casino revenue"), its company's name too
            # a heading the question names in part, whose other words it does not say, is a variant it did not
            # ask for ("Table Games Hold Adjusted Las Vegas Strip Resorts Same-Store" for "Las Vegas Strip
            # Resorts net revenues"): its unnamed words count against the row as much as its named ones for it
            score += 0.05 * (named - (len(under) - named if named else 0))
            words = words | forms_of(heading)  # the same label under two headings is two rows
        if score and leaves:
            score += 0.05  # it says it leaves out what the question leaves out: a row of its own beside the whole
            words = words | {"(less)"}
        if score and (words not in found or found[words][1] < score):
            found.setdefault(words, (i, score))
    if not found and ask.op in ("lookup", "change", "ratio") and _TOTAL_ROW.search(ask.text):
        # "how much higher were total company sales in December than in January": the table's own total row
        totals = [i for i, label in enumerate(table.labels, start=1)
                  if _TOTAL_LABEL.fullmatch(label.strip().rstrip(":"))]
        return [(totals[0], 0.7)] if len(totals) == 1 else []
    return sorted(found.values(), key=lambda x: -x[1])


# kinds of figure a statement's rows are, which a row's other words do not make the same, each family apart:
# "Cost of wireless equipment" is no wireless equipment revenue, "Cost of revenue" no revenue; a cash flow
# statement's three sections: "net cash provided by investing activities" is not the operating one ("Net operating
# revenues" is revenue all the same)
_KINDS = ((frozenset(forms_of("revenue revenues sales")), frozenset(forms_of("cost costs expense expenses"))),
          (frozenset(forms_of("operating")), frozenset(forms_of("investing")), frozenset(forms_of("financing"))))


# a phrase a question asks to leave out of a figure: "excluding the current portion", "net of tax", "other than
# the United States", ending where the phrase does (a comma, a preposition, the end)
_LEAVING_OUT = re.compile(r"\b(?:excluding|exclusive\s+of|net\s+of|other\s+than|except(?:\s+for)?|without|"
                          r"not\s+including)\s+(?:the\s+|its\s+|any\s+)?((?:[A-Za-z&'-]+\s*){1,4}?)"
                          r"(?=[,.;:?)]|\s+(?:in|on|for|at|as|of|from|and|to|by|during|over|between)\b|$)", re.I)
_LEAVES_OUT = re.compile(r"[\s,(]+(?:less|excluding|exclusive\s+of|net\s+of|without)\b:?", re.I)


def left_out_of(question: str) -> frozenset[str]:
    """The forms of the words a question asks to leave out of the figure it asks for ("current portion")."""
    return frozenset(f for m in _LEAVING_OUT.finditer(question) for f in forms_of(m.group(1)) - _GENERIC)


# a heading of rows that are each a change in the year of what they name ("Changes in operating assets and
# liabilities:", "(Increase) decrease in:"), and a question asking for the statement of such changes
_CHANGES_UNDER = re.compile(r"\s*(?:net\s+)?(?:changes?|\(?(?:increase|decrease)\)?(?:\s*/?\s*\(?(?:increase|decrease)"
                            r"\)?)?)\s+in\b", re.IGNORECASE)
_FLOWS_ASKED = re.compile(r"\bcash\s+flows?\b|\boperating\s+(?:activities|assets)\b|\bworking\s+capital\b", re.I)
_RESIDUAL = re.compile(r"\s*(?:all\s+)?other\b", re.IGNORECASE)  # a row of the rest: "Other long-term debt"
_RESIDUAL_ASKED = re.compile(r"\bother\b(?!\s+than)", re.IGNORECASE)  # not "other than X"


def _other_kind(label: frozenset[str], asked: frozenset[str]) -> bool:
    """Whether a row's label names a kind of figure the question does not, and the question names another."""
    return any(any(k & asked for k in kinds) and any(k & label and not k & asked for k in kinds) for kinds in _KINDS)


# the other sign of a figure, printed in brackets after its name ("Operating income (loss)", "Tax expense
# (benefit)"): the row is the one named without it
_SIGN_ALTERNATE = re.compile(r"\s*\((?:loss|losses|deficit|benefit|expense|expenses|income|gain|gains|decrease|"
                             r"increase|charge|credit|charges|credits|used\s+in|used\s+for)\)", re.I)
# a note in brackets on what a row holds ("Long-term debt (includes debt issued by consolidated variable interest
# entities: 2022, $12,662; 2021, $13,803)"): the row is named without it
_QUALIFIER = re.compile(r"\s*\((?:includes?|including|excludes?|excluding|net\s+of|less|see|refer)\b[^()]*\)", re.I)
# whose figure a statement's row is, when it is the company's owners' ("Earnings per share attributable to 3M common
# shareholders — diluted", "Net income attributable to shareowners of The Coca-Cola Company"): the figure a
# question names without saying so; not a noncontrolling interest's
_ATTRIBUTED = re.compile(r"\s+attributable\s+to\s+(?:the\s+)?(?:[\w.&-]+\s+){0,3}?(?:common\s+)?(?:share(?:holders|"
                         r"owners)|stockholders|owners)(?:\s+of\s+(?:the\s+)?(?:[\w.&-]+\s*){1,4})?", re.I)
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


def unmarked(label: str) -> str:
    """A row label without the footnote marks printed after it: "PBNA (b)" -> "PBNA", "Europe (b)(c)" ->
    "Europe", "Net sales(1)" -> "Net sales", "Revenue*" -> "Revenue"."""
    return _FOOTNOTE_MARKS.sub("", label)


def _period_columns(ask: TableAsk, table: TableInfo) -> list[int] | None:
    """The numeric columns of the periods the question names, in its order: years, months ("March" is the
    column "Mar"), quarters ("Q3"); none named: []. None when a named period has no column, or two (the
    table's header is ambiguous)."""
    asked = periods_of(ask.text)
    if not asked or _undated(table):
        return []  # (a table that shows no period anywhere: the question's year says which data, "the 2009 data")
    dated = _dated_columns(ask, table)
    if dated:  # "fiscal 2022 (January 28, 2023)": the column of the day it names, whatever year it says first
        return dated
    out = []
    # the month of a whole date ("fiscal 2023 (year ended January 28, 2023)") is that date's, not a month asked
    # for: in a table of years it names no column of its own
    in_dates = set(asked) - set(periods_of(_FULL_DATE.sub(" ", ask.text)))
    for period in asked:
        columns = [i for i, c in enumerate(table.columns) if i and c.numeric and period in periods_of(c.name, header=True)]
        if not columns and period in in_dates and period.startswith("m") and len(asked) > 1:
            continue
        if not columns and re.fullmatch(r"\d{4}q[1-4]", period):
            columns = _quarter_by_year(table, period) or _spanned_quarter(table, period)
        columns = [i for i in columns if not _compares_years(table.columns[i].name)]  # not "2018 vs. 2017"
        if len(columns) > 1:  # "Net Revenue 2022" and "Operating Profit 2022": the one whose words it names
            met = [(_header_met(ask, table.columns[i].name), i) for i in columns]
            best = max(m for m, _ in met)
            columns = [i for m, i in met if m == best] if best[0] else columns
        if len(columns) > 1 and _YEAR.fullmatch(period) and not any("q" in p for p in asked):
            # a year named alone, where the table prints its fourth quarter beside it ("Three months ended
            # December 31, 2022" and "Twelve months ended December 31, 2022"): the year's own column
            whole = [i for i in columns if _YEAR_SPAN.search(table.columns[i].name)
                     or periods_of(table.columns[i].name, header=True) == (period,)]
            quarters = [i for i in columns if any("q" in p for p in periods_of(table.columns[i].name, header=True))]
            if len(whole) == 1 and len(whole) + len(quarters) == len(columns):
                columns = whole
        if len(columns) != 1:
            return None
        out.append(columns[0])
    return list(dict.fromkeys(out))  # "December 31, 2022" names its year and its month: one column


def _undated(table: TableInfo) -> bool:
    """A table of things each named once whose title, headers and labels show no period, with no column of dates
    or years ("statecrime": a state per row, its rates): a year the question gives cannot pick a column or a row
    of it, and only says which data it is."""
    if len(set(table.labels)) != len(table.labels) or len(table.labels) < table.n_rows:
        return False
    if any(forms_of(identifier_text(c.name)) & _DATED for c in table.columns):
        return False
    text = " ".join([table.title, table.note, table.name, *(c.name for c in table.columns), *table.labels])
    return not _YEAR.search(text) and not any(periods_of(c.name, header=True) for c in table.columns[1:])


# a header spanning a whole year: "Twelve months ended December 31, 2022", "Year Ended", "Fiscal Year 2022"
_YEAR_SPAN = re.compile(r"\b(?:twelve|12)[- ]months?\b|\b(?:fifty[- ]two|fifty[- ]three|52|53)[- ]weeks?\b|"
                        r"\b(?:fiscal\s+|full[- ])?years?\s+ended\b|\bfiscal\s+year\b|\bfull[- ]year\b", re.IGNORECASE)
_FULL_DATE = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2}),?\s+((?:19|20)\d\d)\b",
                        re.IGNORECASE)


def _full_dates(text: str) -> list[tuple[str, int, str]]:
    return [(m.group(1).lower(), int(m.group(2)), m.group(3)) for m in _FULL_DATE.finditer(text)]


def _dated_columns(ask: TableAsk, table: TableInfo) -> list[int]:
    """The numeric columns whose headers print the very days the question names ("January 28, 2023"), in its
    order; [] unless each day it names is one column's."""
    out = []
    for day in _full_dates(ask.text):
        columns = [i for i, c in enumerate(table.columns) if i and c.numeric and day in _full_dates(c.name)
                   and not _compares_years(c.name)]
        if len(columns) != 1:
            return []
        out.append(columns[0])
    return list(dict.fromkeys(out))


_VERSUS = re.compile(r"\b(?:vs\.?|versus|compared|change|over)\b|%", re.IGNORECASE)


def _compares_years(name: str) -> bool:
    """Whether a header is a comparison of two years ("2018 vs. 2017 $%", "Change 2017 vs. 2016"), a column
    neither year's figure is in."""
    return len(set(_YEAR.findall(name))) >= 2 and bool(_VERSUS.search(name))


_MONTH_WORD = re.compile(r"\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                         r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?", re.IGNORECASE)
_QUARTER = re.compile(r"\b(?:q([1-4])|([1-4])q|(first|second|third|fourth|1\s?st|2\s?nd|3\s?rd|4\s?th) quarter)\b",
                      re.IGNORECASE)
_ORDINAL_Q = {"first": "1", "second": "2", "third": "3", "fourth": "4", "1st": "1", "2nd": "2", "3rd": "3", "4th": "4"}


def periods_of(text: str, *, header: bool = False) -> tuple[str, ...]:
    """The periods a question or a header names, in order: years ('2022'), months ('m03' for March or Mar),
    quarters ('q3' for Q3, 3Q, third quarter). "may" is a month only before a number ("May 2023", "May 5")."""
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in _YEAR.finditer(text)]
    for m in _MONTH_WORD.finditer(text):
        word = m.group(1).lower()
        if word == "may" and not re.match(r"\s*\d", text[m.end():]):
            continue
        found.append((m.start(), f"m{_MONTHS[word[:3]]:02d}"))
    quarters = [(m.start(), m.end(), m.group("q") or m.group("q2") or m.group("q3"), m.group("y"))
                for m in _QUARTER_YEAR.finditer(text)]
    spans = [(m.start(), m.end(), _span_of(m)) for m in [*_PART_YEAR_OF.finditer(text), *_PART_YEAR_ENDED.finditer(text)]]
    taken = [(start, end) for start, end, _, _ in quarters] + [(start, end) for start, end, _ in spans]
    found = [(at, p) for at, p in found if not any(a <= at < b for a, b in taken)]  # the year of a quarter
    for start, _, quarter, year in quarters:  # "Q1 2021", "1Q21", "first quarter of 2021": one period
        q = _ORDINAL_Q.get(quarter.lower(), quarter)
        found.append((start, f"{_full_year(year)}q{q}"))
        if header:  # a column "Q3 2023" is also the Q3 and the 2023 a question may name alone
            found += [(start, f"q{q}"), (start, _full_year(year))]
    for m in _NUMERIC_DATE.finditer(text):  # "3/25/2023": March 2023
        if 1 <= int(m.group("m")) <= 12:
            found.append((m.start(), f"m{int(m.group('m')):02d}"))
    for start, _, (year, span) in spans:  # "the first half of 2022", "Six months ended June 30, 2022": '2022h1'
        found.append((start, f"{year}{span}"))
        if header:
            found += [(start, span), (start, year)]
    for m in _QUARTER_ENDED.finditer(text):  # "Three months ended March 31, 2021", "12 Weeks Ended 3/25/2023"
        month = _MONTHS.get((m.group("m") or "")[:3].lower()) or int(m.group("mm") or 0)
        quarter, back = _closed_quarter(month, int(m.group("d") or m.group("dd")))
        if quarter:
            found.append((m.start(), f"{int(m.group('y')) - back}q{quarter}"))
            if header:
                found.append((m.start(), f"q{quarter}"))
    for m in _QUARTER.finditer(text):
        if not any(a <= m.start() < b for a, b in taken):
            found.append((m.start(), "q" + (m.group(1) or m.group(2) or _ORDINAL_Q[re.sub(r"\s", "", m.group(3).lower())])))
    return tuple(dict.fromkeys(p for _, p in sorted(found)))


def _closed_quarter(month: int, day: int) -> tuple[int, int]:
    """The quarter (1-4, 0 for none) a span ending on this month and day closes, and 1 when it is the previous
    year's: a 52/53-week quarter ending "July 2" is June's, one ending "January 1" December's."""
    if not month:
        return 0, 0
    back = 0
    if day <= 7:
        month, back = (month - 1, 0) if month > 1 else (12, 1)
    return (month // 3 if month % 3 == 0 else 0), back


def quarters_of(text: str) -> frozenset[str]:
    """The quarters a text names, with their year when it gives one: '2023q2' ("Q2 2023", "second quarter of
    fiscal 2023", "three months ended June 30, 2023"), 'q2' ("the second quarter")."""
    return frozenset(p for p in periods_of(text) if "q" in p)


def other_quarter(asked: frozenset[str], named: frozenset[str]) -> bool:
    """Whether a text naming the quarters `named` is about other quarters than the `asked` ones: both name some,
    and none is the same quarter (of the same year, where both give one)."""
    def same(a: str, n: str) -> bool:
        (ya, qa), (yn, qn) = a.split("q"), n.split("q")
        return qa == qn and (not ya or not yn or ya == yn)

    return bool(asked) and bool(named) and not any(same(a, n) for a in asked for n in named)


_QUARTER_YEAR = re.compile(
    r"\b(?:q(?P<q>[1-4])\s*(?:fy\s*)?['’]?|(?P<q2>[1-4])q\s*(?:fy)?['’]?|(?P<q3>first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+"
    r"(?:of\s+)?(?:fiscal\s+|fy\s*)?)(?P<y>(?:19|20)\d\d|\d\d)\b", re.IGNORECASE)


# a quarter's span ending in a month: "three months ended March 31, 2021", "12 Weeks Ended 3/25/2023" (a fiscal
# quarter of twelve or thirteen weeks); the quarter is the calendar one that month ends
_QUARTER_ENDED = re.compile(r"\b(?:(?:three|3)[- ]months?|(?:twelve|12|thirteen|13)[- ]weeks?)\s+ended\s+(?:(?P<m>[A-Za-z]{3,9})\.?"
                            r"\s+(?P<d>\d{1,2}),?\s+|(?P<mm>\d{1,2})/(?P<dd>\d{1,2})/)(?P<y>(?:19|20)\d\d)\b", re.IGNORECASE)
_NUMERIC_DATE = re.compile(r"(?<![\d/])(?P<m>\d{1,2})/\d{1,2}/(?:19|20)\d\d\b")


# the spans of a year's first half and first nine months a question or a header names: '2022h1' ("the first half
# of 2022", "H1 2022", "1H22", "the first six months of 2022", "six months ended June 30, 2022"), '2022h2' ("the
# second half of 2022", "six months ended December 31, 2022"), '2022n9' ("the first nine months of 2022", "nine
# months ended September 30, 2022"). A span ended on another month (a fiscal year's) is its first half or nine.
_PART_YEAR_OF = re.compile(
    r"\b(?:(?P<o>first|second)\s+half\s+(?:of\s+)?(?:fiscal\s+|fy\s*)?|h(?P<h>[12])\s*(?:fy\s*)?['’]?|"
    r"(?P<h2>[12])h\s*(?:fy)?['’]?|first\s+(?P<n>six|6|nine|9)\s+months\s+(?:of\s+)?(?:fiscal\s+|fy\s*)?)"
    r"(?P<y>(?:19|20)\d\d|\d\d)\b", re.IGNORECASE)
_PART_YEAR_ENDED = re.compile(r"\b(?P<n>six|6|nine|9)[- ]months?\s+ended\s+(?:(?P<m>[A-Za-z]{3,9})\.?\s+(?P<d>\d{1,2}),?\s+)?"
                              r"(?P<y>(?:19|20)\d\d)\b", re.IGNORECASE)
_HALF = {"first": "h1", "second": "h2", "1": "h1", "2": "h2"}


def _span_of(m: re.Match) -> tuple[str, str]:
    """The year and the span ('h1', 'h2', 'n9') one match of `_PART_YEAR_OF` or `_PART_YEAR_ENDED` names."""
    year = _full_year(m.group("y"))
    groups = m.groupdict()
    if groups.get("o") or groups.get("h") or groups.get("h2"):
        return year, _HALF[(groups.get("o") or groups.get("h") or groups.get("h2")).lower()]
    if m.group("n").lower() in ("nine", "9"):
        return year, "n9"
    month = _MONTHS.get((groups.get("m") or "")[:3].lower(), 0)
    if month == 12 or (month == 1 and int(groups.get("d") or 31) <= 7):
        return (str(int(year) - 1) if month == 1 else year), "h2"
    return year, "h1"


def _full_year(year: str) -> str:
    return year if len(year) == 4 else f"20{year}"


def _compare_rows(table: TableInfo, rows: list[int], column: int, match: float) -> TableQuery:
    """Two rows side by side in one column ("the US rate in 2005 against Australia's")."""
    col = _q(table.columns[column].sql)
    first, second = rows
    sql = (f'SELECT "_row", {_q(table.columns[0].sql)} AS label, {col} AS value FROM {_q(table.physical)} '
           f'WHERE "_row" IN ({first}, {second}) ORDER BY "_row"')
    what = f"{table.columns[column].name}: {table.labels[first - 1]} and {table.labels[second - 1]}"
    return TableQuery(table, sql, "rows", what, (column,), (first, second), score=1.2 + match)


# a difference asked between two things: "how much higher/more/less ... than", "how much bigger"
_MORE_THAN = re.compile(r"\bhow\s+(?:much|many)\s+(?:more|less|fewer|higher|lower|bigger|smaller|larger|greater|"
                        r"longer|shorter|heavier|lighter|older|younger)\b.*\bthan\b", re.IGNORECASE)


def _rows_change(ask: TableAsk, table: TableInfo, rows: list[int], column: int, match: float) -> TableQuery:
    """The difference between two rows' cells of one column, in the order the question names them: "A's ... than
    B's" is A less B ("from A to B" runs from A)."""
    first, second = _in_order(ask.text, table, rows)
    new, old = (second, first) if _FROM_TO.search(ask.text) else (first, second)
    col, source = _q(table.columns[column].sql), _q(table.physical)
    sql = (f'SELECT a.v AS "from", b.v AS "to", b.v - a.v AS difference, round((b.v - a.v) / abs(a.v) * 100, 2) '
           f'AS percent_change FROM (SELECT {col} AS v FROM {source} WHERE "_row" = {old}) a, '
           f'(SELECT {col} AS v FROM {source} WHERE "_row" = {new}) b')
    what = f"{table.columns[column].name}, {table.labels[old - 1]} to {table.labels[new - 1]}"
    return TableQuery(table, sql, "change", what, (column,), (old, new), score=1.2 + match)


def _two_periods(ask: TableAsk, table: TableInfo) -> list[int]:
    """The two most recent period columns, when the question asks for a change without naming its years."""
    years = [i for i, c in enumerate(table.columns) if i and c.numeric and _year_of(c.name)]
    latest = sorted(years, key=lambda i: _year_of(table.columns[i].name), reverse=True)[:2]
    distinct = len({_year_of(table.columns[i].name) for i in latest}) == 2
    return latest if not ask.years and distinct else []


_ROWS = forms_of("rows records entries lines observations cases times values numbers cells readings points samples "
                 "instances")
_PERIODS = forms_of("days weeks months years hours")
_TABLE_ROWS = forms_of("rows records entries observations")  # a table's rows, of any table: "how many rows"
_DATED = forms_of("date day time month year week hour timestamp datetime")


def _rows_are(counted: Concept, table: TableInfo) -> bool:
    """Whether what a question counts is what a data table's rows are: rows or records, or days (months...) of
    a table with a date column; "how many turbines did the survey inspect" does not count a production log's
    rows, even where its Site column holds the name the question gives."""
    return counted.met(_ROWS) or counted.met(_PERIODS) and any(forms_of(c.name) & _DATED for c in table.columns)


def _named_column(ask: TableAsk, table: TableInfo) -> int | None:
    """The numeric column whose header the question names (or, for a question asking a figure, the table's
    only numeric column)."""
    numeric = [i for i, c in enumerate(table.columns) if i and c.numeric]
    named = [i for i in numeric if meets(ask.forms, name_forms(table.columns[i].name) - _GENERIC)]
    if len(named) == 1:
        return named[0]
    return numeric[0] if len(numeric) == 1 and ask.figures else None


# -- an aggregate, a count or a superlative over a data table -------------------------------------------------

def _aggregate_query(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]],
                     layout: Layout = Layout()) -> TableQuery | None:
    """SUM/AVG/COUNT/MIN/MAX of a column, or the row with the largest value, over the rows the question's
    values select."""
    if ask.op in ("lookup", "change", "ratio"):
        return None
    ranked = _ranked_change(ask, table) if ask.change and ask.op in ("max", "min") else None
    if ranked is not None:
        return ranked
    if ask.change and ask.op in ("max", "min"):  # no change this table can rank: its plain superlative, after
        plain = _aggregate_query(replace(ask, change=False), table, values, layout)  # any table that can rank one
        return replace(plain, score=plain.score - CHANGE_UNRANKED) if plain is not None else None
    filters, used = _filters(ask, table, values)
    compared = _comparisons(ask, table)
    # "the average weight of cars with horsepower above 200": the bound is the horsepower's, the average the weight's
    bound = _bound_column(ask, table, used) if compared else None
    # (a count of bounded rows aggregates no other column: "how many households have income above 1000")
    column = None if ask.op == "count" and bound is not None else \
        _target_column(ask, table, used | ({bound} if bound is not None else set()), compared=bool(compared))
    column = bound if column is None else column
    implied = column is None and bool(compared)
    if implied:  # "older than 40": the comparison names its column
        column = _implied_column(ask, table, used)
    if compared and column is None:
        return None  # "below 3000": of which column the question does not say
    # (a sheet laid out like one: a row per name, a column per quarter or month)
    laid_out = table.location.sheet is None or (len(set(table.labels)) == len(table.labels) == table.n_rows
                                                and not table.columns[0].numeric)
    if laid_out and not filters and not compared and ask.op != "count" and (
            ask.op in ("sum", "avg") or ask.which or ask.top > 1):
        named_row = _named_row(ask, table, layout)
        if named_row is None and table.location.sheet is not None and column is None:
            # a sheet's row of a name ("the South region" of a row per region, a column per quarter): the row
            # across its periods when it has two at least and the question names no column (the largest
            # "staff" is the STAFF column's), else the usual reading
            rows = [(r, score) for r, score in _matching_rows(ask, table, layout) if score >= NAMED_ROW]
            across = _row_across(ask, table, rows[0][0]) if len(rows) == 1 else None
            if across is not None:
                return across
        elif named_row is not None:
            # "which segment had the lowest net revenue": a statement's row is the figure asked for, so its rows
            # are figures of different kinds (revenue, expenses, profit), not things to rank or add up; the row
            # across its periods is ("in which quarter was net income lowest", "the average quarterly revenues")
            return _row_across(ask, table, named_row)
    if compared:
        on = bound if bound is not None else column
        filters += [f"{_q(table.columns[on].sql)} {op} {n}" for op, n in compared]
    where = f" WHERE {' AND '.join(filters)}" if filters else ""
    source = _q(table.physical)
    if ask.op == "count" and not compared and _SUM_WORDS.search(ask.text):
        # "how many stores did it open in total", "the total vehicle count": a column of counts added up, when
        # a whole-number column is named by what is counted; else the rows are what is counted
        summed = _aggregate_query(replace(ask, op="sum"), table, values, layout)
        if summed is not None and summed.columns and table.columns[summed.columns[0]].whole \
                and _header_met(ask, table.columns[summed.columns[0]].name)[0]:
            return summed
    if ask.op == "count":
        nouns = [c for c in ask.concepts if not c.specific and c.text.lower() not in _DIFFERENT]
        counted = next((c for c in nouns if c.focus), None) or \
            next(iter(nouns), None)  # "how many of the values ...": the first noun
        unit = next((c for c in ask.concepts if c.focus), None) or counted  # "MWh" is written like a name
        measures = [i for i, c in enumerate(table.columns) if c.numeric and unit is not None
                    and meets(unit.forms, name_forms(c.name) - _GENERIC)]
        if len(measures) == 1 and not compared and not _MORE.search(ask.text):
            # "how many MWh did Halden produce in March": the figure of a column the question names by its unit or
            # measure, added up over the rows its values select, not a count of those rows
            function = "sum"
            col = _q(table.columns[measures[0]].sql)
            exclude = _total_rows(table)
            clause = " AND ".join(x for x in (where.removeprefix(" WHERE "), exclude) if x)
            sql = f'SELECT sum({col}) AS value, count({col}) AS "rows" FROM {source}' + \
                (f" WHERE {clause}" if clause else "")
            return TableQuery(table, sql, function, f"{function} of {table.columns[measures[0]].name}" + _said(filters),
                              (measures[0],), (), f" WHERE {clause}" if clause else "",
                              1.0 + 0.3 * len(filters) + COLUMN_WEIGHT)
        # what the table is named for; a period in its title ("activity during the year ended") is no thing it
        # lists (years are counted by a date column: _rows_are)
        names = forms_of(f"{table.name} {table.title} {_stem_words(table.file_name)}") - _PERIODS - _DATED
        # a data file's rows, or a document's table of things (not a statement by period), selected by name
        data_rows = bool(filters or compared) and (table.location.sheet is not None or not _has_periods(table))
        # A bound on a column ("victims older than 40", "films that made over $300 million") says the rows are
        # the things counted: each has an age, a gross. Not when what is counted is itself a column's figure.
        # A column of names of what is counted ("Sales Rep" for "how many reps") says the same.
        bounded = data_rows and bool(compared) and column is not None and \
            (implied or _header_met(ask, table.columns[column].name)[0] > 0) \
            and not any(c.numeric and meets(counted.forms, name_forms(c.name) - _GENERIC) for c in table.columns) \
            if counted is not None else False
        rows_named = counted is not None and (counted.met(names) or counted.met(_TABLE_ROWS) or any(
            not c.numeric and meets(counted.forms, name_forms(c.name) - _GENERIC) for c in table.columns))
        # "how many species", "how many different reps": a data file's column of their names counts each name
        # once, however many rows (flowers, sales) it has; a table named for what is counted counts its rows. (A
        # document's table names each row once in its first column: "U.S. RETAIL STORES" heads the kinds of store.)
        # (not a column of dates: "how many deaths" counts the rows of a "death_date" column, not its days)
        named_by = [i for i, c in enumerate(table.columns) if not c.numeric and counted is not None
                    and meets(counted.forms, name_forms(c.name) - _GENERIC)
                    and not forms_of(identifier_text(c.name)) & _DATED
                    and not any(_DATE.match(v) for v in values.get(i, ())[:20])]
        # "how many different barley varieties": the words after "different" name the column ("variety"), though
        # the first of them names the file
        different = _DIFFERENT_RUN.search(ask.text)
        if different and table.location.sheet is not None and not _MORE.search(ask.text):
            after = forms_of(different.group("words"))
            told = [i for i, c in enumerate(table.columns) if not c.numeric
                    and meets(after, name_forms(c.name) - _GENERIC)
                    and not forms_of(identifier_text(c.name)) & _DATED]
            if len(told) == 1:
                named_by, counted_apart = told, True
            else:
                counted_apart = False
        else:
            counted_apart = False
        if len(named_by) == 1 and (counted_apart or not counted.met(names) and not _rows_are(counted, table)
                                   and not _MORE.search(ask.text)) and table.location.sheet is not None:
            col = _q(table.columns[named_by[0]].sql)
            sql = f'SELECT count(DISTINCT {col}) AS "count" FROM {source}{where}'
            return TableQuery(table, sql, "count", f"different {table.columns[named_by[0]].name}" +
                              _said(filters), (named_by[0],), (), where, 0.8 + 0.4 * len(filters) + 0.5)
        # "how many setosa": the value that selects the rows is what they are
        of_value = counted is not None and data_rows and any(
            counted.met(forms_of(v)) for cells in values.values() for v in cells if _names_value(ask, v))
        if counted is None or not (counted.met(names) or counted.met(_TABLE_ROWS) or bounded or of_value
                                   or data_rows and (_rows_are(counted, table) or rows_named)) \
                or _MORE.search(ask.text):
            return None  # what is counted is not what the table's rows are ("how many more ...": a value)
        sql = f'SELECT count(*) AS "count" FROM {source}{where}'
        return TableQuery(table, sql, "count", f"rows of {table.name}" + _said(filters), (0,), (), where, 0.8 +
                          0.4 * len(filters) + (0.5 if rows_named else 0.0))
    if column is None:
        return None
    col = _q(table.columns[column].sql)
    name = table.columns[column].name
    named = COLUMN_WEIGHT * _column_match(ask, table, column)
    if ask.op in ("max", "min") and (ask.which or ask.top > 1):
        section = None
        if table.location.sheet is None and not filters and not named:
            # a statement's column named by its period only ("2022"): the rows ranked must be what the question
            # ranks ("the largest expense category"): a section heading naming it ranks the rows under it, a
            # title naming it ranks the table; otherwise the table holds other figures (risk-weighted assets)
            ranked = _ranked_section(ask, table, layout)
            if ranked is None:
                return None
            section, fit = ranked
            named = SECTION_WEIGHT * fit
        top = _top(ask, table, values, column, filters, section)
        return TableQuery(**{**top.__dict__, "score": top.score + named})
    function = {"sum": "sum", "avg": "avg", "max": "max", "min": "min"}[ask.op]
    if function in ("sum", "avg") and table.location.sheet is None and used and used <= {0}:
        return None  # a statement's rows picked by their labels: figures of different kinds, not to add up
    if function in ("sum", "avg") and not filters and _has_periods(table) and table.location.sheet is None:
        # a statement prints its totals: "total assets" is a row to read, not a column to add up (a data file's
        # column of a month, "JAN" of a yearly series, is added up; its own total rows are left out)
        return None
    exclude = _total_rows(table) if ask.op in ("sum", "avg") else ""
    clause = " AND ".join(x for x in (where.removeprefix(" WHERE "), exclude) if x)
    where = f" WHERE {clause}" if clause else ""
    sql = f'SELECT {function}({col}) AS value, count({col}) AS "rows" FROM {source}{where}'
    return TableQuery(table, sql, function, f"{function} of {name}" + _said(filters), (column,), (), where,
                      1.0 + 0.3 * len(filters) + named)


_CHANGE_HEADER = re.compile(r"\b(?:change|growth|yoy|y/y|vs\.?|variance|increase|decrease)\b|%\s*chg", re.I)


def _ranked_change(ask: TableAsk, table: TableInfo) -> TableQuery | None:
    """The rows ranked by a change ("which product line had the strongest year-over-year growth", "which segment
    had the biggest net sales decline in 2019"): the table's own change column when it has one (of the period
    asked, if any), else the percentage change from the year before the one asked (the latest, if none) to it,
    between two columns of the same figure. A statement's total rows are left out."""
    if not table.labels or table.columns[0].numeric:
        return None
    asked = [p for p in periods_of(ask.text) if p.isdigit()]
    printed = [i for i, c in enumerate(table.columns) if i and c.numeric and _CHANGE_HEADER.search(c.name)
               and (not asked or not periods_of(c.name) or asked[0] in periods_of(c.name, header=True))]
    source, label = _q(table.physical), _q(table.columns[0].sql)
    exclude = _total_rows(table) or "TRUE"
    order = "DESC" if ask.op == "max" else "ASC"
    if len(printed) == 1:
        col = _q(table.columns[printed[0]].sql)
        sql = (f'SELECT "_row", {label} AS label, {col} AS value FROM {source} WHERE {col} IS NOT NULL AND {exclude} '
               f"ORDER BY {col} {order} LIMIT {ask.top}")
        what = f"{'highest' if ask.op == 'max' else 'lowest'} {table.columns[printed[0]].name}"
        return TableQuery(table, sql, f"top {ask.op}", what, (0, printed[0]), (), "", 1.3)
    pair = _year_pair(ask, table, asked)
    if pair is None:
        return None
    old, new = pair
    a, b = _q(table.columns[old].sql), _q(table.columns[new].sql)
    value = f"round(({b} - {a}) / abs({a}) * 100, 2)"
    sql = (f'SELECT "_row", {label} AS label, {value} AS value FROM {source} WHERE {a} IS NOT NULL AND {b} IS NOT '
           f"NULL AND {a} <> 0 AND {exclude} ORDER BY value {order} LIMIT {ask.top}")
    what = (f"{'highest' if ask.op == 'max' else 'lowest'} percentage change from {table.columns[old].name} to "
            f"{table.columns[new].name}")
    return TableQuery(table, sql, f"top {ask.op}", what, (old, new), (), "", 1.2)


def _year_pair(ask: TableAsk, table: TableInfo, asked: list[str]) -> tuple[int, int] | None:
    """(the column of the year before, the column of the year) of one figure: the year asked, else the latest;
    the two headers the same words but for the year."""
    dated = {}
    for i, c in enumerate(table.columns):
        years = _YEAR.findall(c.name)
        if i and c.numeric and len(years) == 1 and not _CHANGE_HEADER.search(c.name):
            # the header's words but for its date and footnote marks: "December 28, 2019 (in millions)" and
            # "December 29, 2018 (in millions)" are one figure's two years
            words = " ".join(re.sub(r"[^a-z]+", " ", re.sub(r"\(\w{1,2}\)", " ", c.name.lower())).split())
            dated.setdefault((words, int(years[0])), []).append(i)
    keys = [k for k, v in dated.items() if len(v) == 1]
    if asked:
        keys = [k for k in keys if k[1] == int(asked[0])]
    else:
        latest = max((k[1] for k in keys), default=0)
        keys = [k for k in keys if k[1] == latest]
    keys = [k for k in keys if (k[0], k[1] - 1) in dated and len(dated[(k[0], k[1] - 1)]) == 1]
    if len(keys) > 1:  # "Net Revenue 2022" and "Operating Profit 2022": the figure whose words the question names
        met = [(_header_met(ask, k[0] or "x"), k) for k in keys]
        best = max(m for m, _ in met)
        keys = [k for m, k in met if m == best]
    if len(keys) != 1:
        return None
    words, year = keys[0]
    return dated[(words, year - 1)][0], dated[(words, year)][0]


_WHICH_NOUN = re.compile(r"\b(?:which|what|top\s+(?:\d{1,2}|three|five|ten)|rank(?:ing)?(?:\s+the)?)\s+"
                         r"(?P<noun>[a-z][a-z_]+)", re.IGNORECASE)
_AVERAGE = re.compile(r"\b(?:average|avg|mean|on average|typical)\b", re.IGNORECASE)
_DATE_PARTS = {"year": (1, 4), "month": (6, 2), "day": (1, 10), "date": (1, 10)}


def _named_row(ask: TableAsk, table: TableInfo, layout: Layout) -> int | None:
    """The statement row the question names by its label's words ("consolidated net income"), not by a name; a
    heading row (no figure printed) is none."""
    for row, score in _matching_rows(ask, table, layout):
        if row in layout.empty:
            continue
        label = forms_of(table.labels[row - 1]) if row <= len(table.labels) else frozenset()
        if score >= NAMED_ROW and not any(c.specific and c.met(label) for c in ask.concepts):
            return row
    return None


def _row_across(ask: TableAsk, table: TableInfo, row: int) -> TableQuery | None:
    """A ranking or an aggregate of one statement row across its period columns ("in which quarter of fiscal 2018
    was consolidated net income lowest", "the average quarterly revenues"): the columns of the periods the
    question names (or that name no year), not a total or a change column; at least two."""
    asked = [p for p in periods_of(ask.text) if p.isdigit()]
    spread = []
    for i, c in enumerate(table.columns):
        named = periods_of(c.name, header=True)
        years = [p for p in named if p.isdigit()]
        if (i and c.numeric and named and not _CHANGE_HEADER.search(c.name) and not _TOTAL_ROW.search(c.name)
                and (not asked or not years or set(asked) & set(years))):
            spread.append(i)
    if ask.op in ("sum", "avg"):  # adding up a figure is over the parts of a year (quarters, months), not years
        spread = [i for i in spread if any("q" in p for p in periods_of(table.columns[i].name, header=True))
                  or not _YEAR.search(table.columns[i].name)]
    names = {i: table.columns[i].name for i in spread}
    if len(spread) < 2 and ask.op in ("max", "min") and not _PERIOD_WHICH.search(ask.text):
        names = _parts_across(ask, table)
        spread = list(names)
    if len(spread) < 2 or ask.op == "count":
        return None
    keep = ", ".join(f"{_q(table.columns[i].sql)} AS {_q(names[i])}" for i in spread)
    source = (f'WITH u AS (UNPIVOT (SELECT {keep} FROM {_q(table.physical)} WHERE "_row" = {row}) '
              f"ON COLUMNS(*) INTO NAME label VALUE value)")
    label = table.labels[row - 1]
    if ask.op in ("max", "min"):
        order = "DESC" if ask.op == "max" else "ASC"
        sql = f"{source} SELECT label, value FROM u ORDER BY value {order} LIMIT {ask.top}"
        what = f"{'highest' if ask.op == 'max' else 'lowest'} {label} across the columns"
        return TableQuery(table, sql, f"top {ask.op}", what, (spread[0], spread[-1]), (row,), "", 1.3)
    function = {"sum": "sum", "avg": "avg"}[ask.op]
    sql = f'{source} SELECT {function}(value) AS value, count(value) AS "cells" FROM u'
    what = f"{function} of {label} across {table.columns[spread[0]].name} to {table.columns[spread[-1]].name}"
    return TableQuery(table, sql, function, what, (spread[0], spread[-1]), (row,), "", 1.3)


def _measure(ask: TableAsk) -> list[Concept]:
    """What a superlative ranks by ("the largest [expense] category", "the highest [operating income]"): the
    question's words that are no name, no period, no operation and no word naming nothing in particular."""
    operations = forms_of(" ".join(m.group(0) for _, pattern in _OPS for m in pattern.finditer(ask.text)))
    noun = _WHICH_NOUN.search(ask.text)
    which = forms_of(noun.group("noun")) if noun else frozenset()
    return [c for c in ask.concepts if not c.specific and not c.forms <= _GENERIC | _VAGUE | _PERIOD_HEADER
            and not c.forms & operations and not c.forms & which]


def _ranked_section(ask: TableAsk, table: TableInfo, layout: Layout) -> tuple[tuple[int, ...], float] | None:
    """The rows a superlative over a statement ranks: () for all of them when its title names what is ranked,
    the rows under the heading that names it, or None when neither does; with how closely that heading or title
    names it (the share of its words the question says: "Expenses" over "Interest expense", "EXPENSES SUMMARY"
    over "TOTAL REVENUES NET OF INTEREST EXPENSE SUMMARY" for "the largest expense category")."""
    sections = layout.sections or {}
    # a heading the question writes out whole ("at MGM China", "at the Las Vegas Strip Resorts"), among several:
    # the rows under it are ranked
    written = [h for h in dict.fromkeys(sections.values()) if len(words := re.findall(r"[A-Za-z]{4,}", h)) >= 2
               and all(forms_of(w) & ask.forms for w in words)]
    if len(written) == 1 and len(set(sections.values())) > 1:
        return tuple(row for row, under in sections.items() if under == written[0]), 1.0
    measure = _measure(ask)
    if not measure:
        return None
    headings = [h for h in dict.fromkeys(sections.values())
                if any(c.met(forms_of(h)) for c in measure)]
    if headings:
        heading = max(headings, key=lambda h: _named_share(ask, h))  # the first of the closest
        return tuple(row for row, under in (layout.sections or {}).items() if under == heading), \
            _named_share(ask, heading)
    held = forms_of(f"{table.title} {table.note} {table.name}")
    if not any(c.met(held) for c in measure):
        return None
    own = table.title.rsplit(">", 1)[-1]  # the table's own heading, not the document's outline above it
    return (), _named_share(ask, own) if any(c.met(forms_of(own)) for c in measure) else 0.0


def _named_share(ask: TableAsk, text: str) -> float:
    """The share of `text`'s words (other than numbers and words naming nothing in particular) the question says."""
    words = [f for f in (forms_of(w.lower()) for w in re.findall(r"[A-Za-z]+", text)) if f - _GENERIC]
    return sum(1 for f in words if f & ask.forms) / len(words) if words else 0.0


def _top(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]], column: int,
         filters: list[str], section: tuple[int, ...] | None = None) -> TableQuery:
    """The rows with the largest (smallest) value, named by the column the question asks "which" of ("which
    source", "which month": a date's part); rows that share a name are one group, summed (averaged when the
    question says average). A statement's own total rows are left out."""
    order = "DESC" if ask.op == "max" else "ASC"
    col, source = _q(table.columns[column].sql), _q(table.physical)
    key, key_name, label_index, grouped = _which(ask, table, values, column)
    exclude = _total_rows(table)
    rows = [f'"_row" IN ({", ".join(map(str, section))})'] if section else []
    # the answer is a row's name: a row printed without one (a section's sum line under its items) is none
    unnamed = [i for i, label in enumerate(table.labels, start=1) if not label.strip()] \
        if label_index == 0 and len(table.labels) >= table.n_rows else []
    rows += [f'"_row" NOT IN ({", ".join(map(str, unnamed))})'] if unnamed else []
    where = " AND ".join([*filters, *rows, f"{col} IS NOT NULL", *([exclude] if exclude else [])])
    said = f"{'highest' if ask.op == 'max' else 'lowest'} {table.columns[column].name}" + _said(filters)
    if grouped:
        # a length, an age, a rate is not added up over a group's rows: "the penguin with the longest flippers"
        # is the row with the most, and its species the group with the largest single value
        function = "avg" if _AVERAGE.search(ask.text) else ask.op if _intensive(ask, table, column) else "sum"
        sql = (f'SELECT min("_row") AS "_row", {key} AS label, {function}({col}) AS value, count({col}) AS "rows" '
               f"FROM {source} WHERE {where} GROUP BY label ORDER BY value {order} LIMIT {ask.top}")
        said = f"{said}, {function} by {key_name}"
    else:
        sql = (f'SELECT "_row", {key} AS label, {col} AS value FROM {source} WHERE {where} '
               f"ORDER BY {col} {order} LIMIT {ask.top}")
    return TableQuery(table, sql, f"top {ask.op}", said, (label_index, column), (), f" WHERE {where}",
                      1.1 + 0.3 * len(filters) + (0.2 if grouped else 0.0))


_INTENSIVE = re.compile(r"\b(?:longest|shortest|tallest|heaviest|lightest|oldest|youngest|fastest|slowest|widest|"
                        r"narrowest|deepest|shallowest|hottest|coldest|warmest|coolest|wettest|driest|richest|"
                        r"poorest|cheapest|dearest|strongest|weakest|loudest|brightest|thickest|thinnest)\b",
                        re.IGNORECASE)
_RATE_HEADER = re.compile(r"\b(?:rate|ratio|per|percent(?:age)?|pct|share|average|avg|mean|median|margin|price|"
                          r"index|score|age|expectancy)\b|%|percap", re.IGNORECASE)


def _intensive(ask: TableAsk, table: TableInfo, column: int) -> bool:
    """Whether the ranked figure is a property of each row (a length, a rate, a price), which a group's rows do
    not add up to: the question ranks by a measure adjective ("longest"), or the column is a rate or a share."""
    c = table.columns[column]
    return bool(_INTENSIVE.search(ask.text) or c.unit == "%" or _RATE_HEADER.search(identifier_text(c.name)))


def _which(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]],
           value_column: int) -> tuple[str, str, int, bool]:
    """(SQL expression, its name, the column it reads, whether rows must be grouped) for what names each row of
    a superlative's answer: the text column or the part of a date the question asks "which" of, else the
    first text column."""
    noun = _WHICH_NOUN.search(ask.text)
    # "which barley variety": the first of the words after "which" that names a column or a part of a date
    following = re.findall(r"[a-z][a-z_]+", ask.text[noun.end():noun.end() + 40].lower())[:2] if noun else []
    for word in ([noun.group("noun"), *following] if noun else []):
        word = word.lower().rstrip("s")
        time = _time_column(table, values)
        if word in _DATE_PARTS and time is not None and time[1] == "date":
            start, length = _DATE_PARTS[word]
            if word == "month" and _monthly(values.get(time[0], ())) and not _AVERAGE.search(ask.text):
                start, length = 1, 7  # a series dated by month: its months are points in time ("2009-11")
            return (f"substr({_q(table.columns[time[0]].sql)}, {start}, {length})", word, time[0], True)
        forms = forms_of(word)
        named = [i for i, c in enumerate(table.columns) if not c.numeric and meets(forms, name_forms(c.name))]
        if len(named) == 1:
            distinct = values.get(named[0], ())
            return _q(table.columns[named[0]].sql), table.columns[named[0]].name, named[0], \
                bool(distinct) and len(distinct) < table.n_rows
        if len(named) > 1 or forms & forms_of(f"{table.name} {_stem_words(table.file_name)}") == set():
            break  # a word naming no column and not the file ("which company"): what the rows are, not a column
    label = _label_column(table, value_column)
    return _q(table.columns[label].sql), table.columns[label].name, label, False


def _filters(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]], *,
             dates: bool = True) -> tuple[list[str], set[int]]:
    """WHERE conditions for the values the question names in text columns, the numbers it ties to a column by
    name ("4 cylinders"), and (`dates`) the one date it names in a date or year column ("in July 2010")."""
    conditions, used = [], set()
    chosen: dict[str, tuple[int, int]] = {}  # a value named once: the column that names rows most finely
    for i, cells in values.items():
        named = [v for v in cells if _names_value(ask, v)]
        if named:
            best = max(named, key=len)
            key = best.casefold()
            if key not in chosen or len(cells) > chosen[key][1]:
                chosen[key] = (i, len(cells))
    for key, (i, _) in sorted(chosen.items(), key=lambda kv: kv[1][0]):
        best = max((v for v in values[i] if v.casefold() == key), key=len)
        # "setting General Motors aside", "other than Europe": the rows of every other value
        conditions.append(f"{_q(table.columns[i].sql)} {'<>' if _excluded(ask.text, best) else '='} {_literal(best)}")
        used.add(i)
    for column, condition in _number_filters(ask, table, used):
        conditions.append(condition)
        used.add(column)
    span = _YEARS_SPANNED.search(ask.text) if dates and ask.op not in ("change", "ratio") else None
    time = _time_column(table, values) if dates and (len(ask.points) == 1 or span) else None
    # (a table whose columns are periods has its period in a header, unless its rows are years and its columns
    # months, and the question names a month of a year: "March 1952")
    if time is not None and time[0] not in used and (not _has_periods(table) or not span and _month_columns(table)
                                                     and len(ask.points[0]) == 7):
        condition = _between(table, time, span.group("a"), span.group("b")) if span else \
            _at(table, time, ask.points[0])
        if condition is not None:
            conditions.append(condition)
            used.add(time[0])
    return conditions, used


_EXCLUDING = re.compile(r"\b(?:excluding|exclude|except(?:\s+for)?|other\s+than|apart\s+from|aside\s+from|besides|"
                        r"not\s+counting|leaving\s+out|leaving|setting|putting|ignoring|without)\s+(?:the\s+)?$",
                        re.IGNORECASE)
_ASIDE = re.compile(r"^(?:'s)?\s+(?:aside|apart|out)\b", re.IGNORECASE)


def _excluded(text: str, value: str) -> bool:
    """Whether the question names `value` to leave its rows out: "excluding X", "other than X", "X aside"."""
    at = text.lower().find(value.lower())
    if at < 0:
        return False
    return bool(_EXCLUDING.search(text[max(0, at - 30):at]) or _ASIDE.match(text[at + len(value):]))


def _between(table: TableInfo, time: tuple[int, str], first: str, last: str) -> str | None:
    """The condition selecting the rows of the years first to last, both included."""
    column, kind = time
    name = _q(table.columns[column].sql)
    if int(first) > int(last):
        return None
    if kind == "year":
        return f"{name} BETWEEN {first} AND {last}"
    if kind == "year text":
        return f"{name} BETWEEN {_literal(first)} AND {_literal(last)}"  # four digits: text orders as numbers
    if kind == "date":
        return f"{name} >= {_literal(first)} AND {name} < {_literal(str(int(last) + 1))}"
    return None


def _has_periods(table: TableInfo) -> bool:
    """Whether the table's figures are in period columns ("2022", "Net Revenue 2021", "Mar", "Q3"): a statement
    or a report by period, whose rows are line items, not a data table whose rows are dated."""
    return any(c.numeric and periods_of(c.name) for c in table.columns[1:])


def _names_value(ask: TableAsk, value: str) -> bool:
    """Whether the question names a cell value (every one of its words, at least one of them specific), or
    writes the name a code in the cell contracts ("Microsoft" for "MSFT")."""
    words = forms_of(value)
    if not (words - _GENERIC) or len(value) <= 1 or _YEAR.fullmatch(value.strip()) or number(value) is not None:
        return False
    if _DATE.match(value.strip()):
        # a date is named by a date the question writes, never by its numbers one by one ("2009-07-07" holds
        # nothing but the "2009" and "07" of "2009-07-31")
        return any(_same_day(value.strip(), p) for p in ask.points)
    return named_by(ask.forms, value) and not _tail_of_name(ask.text, value) or contracted(ask.text, value)


def _same_day(value: str, point: str) -> bool:
    """Whether a date cell ("2010-07-28", "2010-07-28 16:00") is the day a question's full date names."""
    return len(point) == 10 and (value == point or value.startswith((point + " ", point + "T")))


_CAPITALISED = re.compile(r"[A-Z][\w&.-]*(?:['’]s)?")


def _tail_of_name(text: str, value: str) -> bool:
    """Whether the question writes `value` only as the end of a longer name ("Water" in "American Water's"): a
    cell holding the last word is some other thing. The question's first word is capitalised as a sentence's."""
    wanted = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", value)]
    if not wanted:
        return False
    words = [(m.start(), m.group(0)) for m in re.finditer(r"[\w&.'’-]+", text)]
    found = False
    for i in range(len(words)):
        if [re.sub(r"['’]s$", "", w).lower() for _, w in words[i:i + len(wanted)]] != wanted:
            continue
        found = True
        before = words[i - 1] if i else None
        if before is None or before[0] == 0 or not _CAPITALISED.fullmatch(before[1]) or \
                re.search(r"['’]s$", before[1]) or text[:before[0]].rstrip().endswith((".", "?", "!", ":")):
            return False  # written on its own at least once
    return found  # not written at all: named by a derived word ("japanese" for Japan), not a tail


def _target_column(ask: TableAsk, table: TableInfo, used: set[int], *, compared: bool = False) -> int | None:
    """The numeric column the question names, not one of its filters (the table's only measure when it names
    none, except for a plain count, which needs no column)."""
    numeric = [i for i, c in enumerate(table.columns) if c.numeric and i not in used]
    asked = periods_of(ask.text)
    if asked:  # "operating profit in 2022": the columns of that period, when the table has them
        dated = [i for i in numeric if set(asked) & set(periods_of(table.columns[i].name, header=True))]
        numeric = dated or numeric
    scored = [(_header_met(ask, table.columns[i].name), i) for i in numeric
              if not _named_by_period_only(ask, table.columns[i].name)]
    scored = [(s, i) for s, i in scored if s[0]]
    if not scored and _TOTAL_ROW.search(ask.text):
        # "which region sold the most in total": the table's own total column ("FY Total"), when it has one
        totals = [i for i in numeric if re.search(r"\btotal\b", table.columns[i].name, re.I)]
        if len(totals) == 1:
            return totals[0]
    if not scored:
        # No header named: the table's one measure, when the question names the table itself ("the cars data")
        only = [i for i in numeric if not _YEAR.fullmatch(table.columns[i].name.strip())]
        own = _stem_words(table.file_name) if not table.file_name.lower().endswith(".pdf") else ""
        named = meets(ask.forms, forms_of(f"{own} {table.name} {table.title}") - _GENERIC)
        if not (named or used) or ask.op == "count" and not compared:
            return None
        if len(only) == 1:
            return only[0]
        # A series (a column of the years or dates its rows are of beside one measure: "YEAR", "SUNACTIVITY"):
        # its measure, when the question names no other thing the table does not hold ("the highest temperature
        # in sunspots.csv" is not the highest sunspot activity)
        only = _figures_of(table, only)
        if len(only) != 1:
            return None
        held = forms_of(f"{own} {table.name} {table.title} {table.note} "
                        f"{' '.join(identifier_text(c.name) for c in table.columns)}") | _GENERIC | _VAGUE
        runs = frozenset(f for c in table.columns for f in joined(c.name))
        skip = {w.lower() for w in op_words(ask.text)}
        unheld = [c for c in ask.concepts if not c.specific and not c.forms & held and c.text.lower() not in skip
                  and not meets(c.forms, runs) and not (meets(ask.forms, runs) - meets(ask.forms - c.forms, runs))]
        return only[0] if not unheld else None
    top = max(s for s, _ in scored)
    best = [i for s, i in scored if s == top]
    return best[0] if len(best) == 1 else None


# the words a statement's column header says its period with ("Three Months Ended June 30, 2023 (Unaudited)",
# "Fiscal 2022 As Reported", "(in millions, except per share data)"): they name no figure
_PERIOD_HEADER = frozenset(forms_of("year years ended ending months month weeks week quarter quarters three six nine "
                                    "twelve thirteen fifty two fiscal fy ytd as of at reported restated unaudited audited "
                                    "millions thousands billions except per share data in dollars"))


# the forms of the months' names and abbreviations ("septemb", "sept", "mar"), not of words that begin like one
# ("sepal", "market", "decline")
_MONTH_FORMS = forms_of("january february march april may june july august september october november december "
                        "jan feb mar apr jun jul aug sep sept oct nov dec")


def _named_by_period_only(ask: TableAsk, name: str) -> bool:
    """A header the question meets only by its period while the header names a figure too, which the question
    does not ("Commercial Banking 2021" for "the lowest net revenue in 2021"): it is that figure's column, not the
    one asked for. A header that is only a period ("2022", "Year Ended December 31, 2022") is named by it."""
    forms = name_forms(name) - _GENERIC
    periods = frozenset(_YEAR.findall(name)) | {f for f in forms if f.isdigit() or f in _MONTH_FORMS}
    met = meets(ask.forms, forms)
    described = [w for w in re.findall(r"[A-Za-z]{2,}", identifier_text(name))  # its words, not their initials
                 if not is_month(w) and forms_of(w) and not forms_of(w) & (_GENERIC | _PERIOD_HEADER)]
    return bool(met) and met <= periods and bool(described)


_LETTER = re.compile(r"[B-HJ-Z]")  # not "A" or "I", which are words


def _header_met(ask: TableAsk, name: str) -> tuple[int, float]:
    """How many of a header's words the question names, and what share of the header that is ("budget" names
    "FY24 Budget" more fully than "Variance (Budget - Actual)")."""
    if _LETTER.fullmatch(name.strip()):  # a variable named by one capital ("X", "Y"): written as it stands
        return (1, 1.0) if re.search(rf"(?<![\w'’-]){name.strip()}(?![\w'’-])", ask.text) else (0, 0.0)
    asked = ask.forms | measure_nouns(ask.text)  # "the widest sepals" names "sepalWidth"
    met = len(meets(asked, name_forms(name) - _GENERIC))
    words = [w for w in re.findall(r"[A-Za-z0-9]+", identifier_text(name)) if forms_of(w) - _GENERIC]
    named = sum(1 for w in words if meets(asked, (forms_of(w) | joined(w)) - _GENERIC))
    return met, named / len(words) if words else 0.0


_IMPLIED = {"older than": "age", "younger than": "age", "cheaper than": "price", "more expensive than": "price",
            "longer than": "length", "shorter than": "length", "heavier than": "weight", "lighter than": "weight"}


def _bound_column(ask: TableAsk, table: TableInfo, used: set[int]) -> int | None:
    """The numeric column the words right before every comparison name ("with horsepower above 200", "income
    above 1000"), when they name one and the same: the rows are bounded on it, whatever the question then
    aggregates. None when they name none (the bound is then the aggregated column's: "cars heavier than 4000")."""
    found = set()
    for m in _COMPARE.finditer(ask.text):
        before = " ".join(re.findall(r"[\w'-]+", ask.text[:m.start()])[-3:])
        words = forms_of(before) | measure_nouns(before)
        named = [i for i, c in enumerate(table.columns) if c.numeric and i not in used
                 and meets(words, name_forms(c.name) - _GENERIC)]
        if len(named) != 1:
            return None
        found.add(named[0])
    return found.pop() if len(found) == 1 else None


def _implied_column(ask: TableAsk, table: TableInfo, used: set[int]) -> int | None:
    """The numeric column a comparison word implies ("older than" an age column)."""
    for m in _COMPARE.finditer(ask.text):
        word = _IMPLIED.get(m.group("op").lower())
        if word:
            named = [i for i, c in enumerate(table.columns) if c.numeric and i not in used
                     and meets(forms_of(word), name_forms(c.name))]
            if len(named) == 1:
                return named[0]
    return None


def _column_match(ask: TableAsk, table: TableInfo, column: int) -> int:
    """How many words of the question the column's header names (its years aside). A header of words run together
    may be spelled by a word the file name holds too ("sunspot activity": SUNACTIVITY of sunspots.csv)."""
    forms = name_forms(table.columns[column].name) - _GENERIC - frozenset(_YEAR.findall(table.columns[column].name))
    runs = joined(table.columns[column].name)
    return len(meets(ask.forms - _file_words(ask, table), forms - runs) | meets(ask.forms, runs))


def _file_words(ask: TableAsk, table: TableInfo, *, names: bool = False) -> frozenset[str]:
    """The forms of the question's words that name the document itself ("Kraft Heinz" in KRAFTHEINZ_2019_10K):
    they name no column; `names`: only its names (capitalised), for a data file's name is its content too."""
    stem = table.file_name.lower()
    return frozenset(f for c in ask.concepts if len(c.text) > 2 and c.text.lower() in stem
                     and (c.specific or not names) for f in c.forms)


def _label_column(table: TableInfo, value_column: int) -> int:
    """The column that names a row: the first text column (else the first column)."""
    return next((i for i, c in enumerate(table.columns) if not c.numeric and i != value_column), 0)


def _total_rows(table: TableInfo) -> str:
    """A condition leaving out a statement's own total rows, so a computed total does not count them twice."""
    totals = [i for i, label in enumerate(table.labels, start=1) if _TOTAL_LABEL.search(label)]
    if not totals or len(table.labels) < table.n_rows:
        return ""
    return f'"_row" NOT IN ({", ".join(map(str, totals))})'


def _said(filters: list[str]) -> str:
    return f" where {' and '.join(filters)}" if filters else ""


def _quarter_by_year(table: TableInfo, period: str) -> list[int]:
    """The column of a quarter whose header prints only its year, when another column names the same quarter of
    another year ("2022 Amount" beside "FOURTH QUARTER 2021 Amount": the label was printed over both years)."""
    year, quarter = period[:4], period[4:]
    heads = [periods_of(c.name, header=True) if i and c.numeric else () for i, c in enumerate(table.columns)]
    if not any(quarter in h and year not in h for h in heads):
        return []
    return [i for i, h in enumerate(heads) if year in h and not any(p.startswith("q") or p.startswith("m") or
                                                                     len(p) == 6 for p in h)]


# a quarter's span without its year, printed once over the year columns: "Three Months Ended December 31,"
_SPAN_NO_YEAR = re.compile(r"\b(?:(?:three|3)[- ]months?|(?:twelve|12|thirteen|13)[- ]weeks?)\s+ended\s+(?P<m>[A-Za-z]{3,9})\.?"
                           r"\s+(?P<d>\d{1,2})\b(?!,?\s*(?:19|20)\d\d)", re.IGNORECASE)


def _spanned_quarter(table: TableInfo, period: str) -> list[int]:
    """The column of a quarter ('2022q4') in a table whose label column, title or note prints the quarter's span
    without a year ("Three Months Ended December 31," over the columns "2022" and "2021"): the column whose header
    is that year alone. [] when the span is another quarter's, or no such header is printed."""
    year, quarter = period[:4], period[4:]
    spans = [m for text in (table.columns[0].name if table.columns else "", table.title, table.note)
             for m in _SPAN_NO_YEAR.finditer(text)]
    quarters = {_closed_quarter(_MONTHS.get(m.group("m")[:3].lower(), 0), int(m.group("d")))[0] for m in spans}
    if {f"q{q}" for q in quarters if q} != {quarter}:
        return []
    return [i for i, c in enumerate(table.columns)
            if i and c.numeric and periods_of(c.name, header=True) == (year,)]


def _when(name: str) -> tuple[int, int]:
    """A period header as a date to sort by: (year, month), a quarter as its last month ("Q3 2023" -> (2023, 9))."""
    found = periods_of(name)
    year = next((int(p[:4]) for p in found if len(p) == 6 and p[4] == "q"), 0) or _year_of(name)
    quarter = next((int(p[-1]) * 3 for p in found if "q" in p), 0)
    month = next((int(p[1:]) for p in found if p.startswith("m")), 0)
    return year, quarter or month


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


# -- dates the question names ---------------------------------------------------------------------------------

_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
                                       "dec"), start=1)}
_MONTH_NAME = re.compile(r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                         r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?", re.IGNORECASE)


def is_month(word: str) -> bool:
    """Whether a word is a month's name or its abbreviation ("March", "Sept."), not a name that begins like one
    ("Mary", "Junior", "Augustus")."""
    return bool(_MONTH_NAME.fullmatch(word.strip()))


_MONTH = r"(?P<month>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
         r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_POINT = re.compile(
    r"(?P<iso>(?:19|20)\d\d-\d\d(?:-\d\d)?)"
    rf"|\b{_MONTH}\s+(?:(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+)?(?P<year>(?:1[6-9]|20)\d\d)\b"
    rf"|\b(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH.replace('month', 'month2')}\s+"
    rf"(?P<year2>(?:1[6-9]|20)\d\d)\b"
    r"|(?<![\d-])(?P<bare>(?:19|20)\d\d)(?![\d-])"
    # an earlier year, where the words say it is one ("sunspots in 1750", "the Nile's flow during 1880")
    r"|\b(?:in|during|year|since|until|from|between)\s+(?P<old>1[5-8]\d\d)(?![\d-])", re.IGNORECASE)


def date_points(question: str) -> tuple[str, ...]:
    """The dates a question names, as ISO prefixes in its order: 'Jan 2000' -> '2000-01', 'July 4th, 2010' ->
    '2010-07-04', '2017' -> '2017'."""
    out = []
    for m in _POINT.finditer(question):
        if m.group("iso"):
            out.append(m.group("iso"))
        elif m.group("year") or m.group("year2"):
            month = _MONTHS[(m.group("month") or m.group("month2"))[:3].lower()]
            day = m.group("day") or m.group("day2")
            out.append(f"{m.group('year') or m.group('year2')}-{month:02d}" + (f"-{int(day):02d}" if day else ""))
        else:
            out.append(m.group("bare") or m.group("old"))
    return tuple(dict.fromkeys(out))


def _monthly(dates: Sequence[str]) -> bool:
    """Whether a date column's values are one per month over more than one year (every date the month's first,
    "2009-11-01"): a monthly series, whose months are points in time, not months of the year."""
    return bool(dates) and all(re.match(r"\d{4}-\d\d(?:-01)?(?:$|[ T]00:00)", d) for d in dates) \
        and len({d[:4] for d in dates}) > 1


def _time_column(table: TableInfo, values: Mapping[int, Sequence[str]]) -> tuple[int, str] | None:
    """The column that dates a data table's rows: (index, "date") for ISO dates, (index, "year") for a numeric
    year column; None without one."""
    for i, cells in values.items():
        if cells and all(_DATE.match(c) for c in cells[:20]):
            return i, "date"
    for i, c in enumerate(table.columns):  # a column named as the year ("year", "Fiscal Year"), not "Life (years)"
        words = forms_of(identifier_text(c.name))
        if c.numeric and words & forms_of("year") and words <= forms_of("year years fiscal calendar fy yr"):
            return i, "year"
    for i, cells in values.items():  # years written as text ("1955", "1960"): the first column of a data table
        if cells and all(_YEAR.fullmatch(c.strip()) for c in cells[:20]):
            return i, "year text"
    if table.location.sheet is not None and table.labels and not table.columns[0].numeric \
            and all(_ANY_YEAR.fullmatch(label.strip()) for label in table.labels[:20]):
        return 0, "year text"  # a data file whose rows are years, one each ("YEAR", then a column a month)
    return None


def _at(table: TableInfo, time: tuple[int, str], point: str) -> str | None:
    """The condition selecting the rows of one date (None: a year column cannot select a month)."""
    column, kind = time
    name = _q(table.columns[column].sql)
    if kind == "number":
        return f"{name} = {point}"
    if kind == "date":
        return f"{name} LIKE {_literal(point + '%')}"
    if len(point) == 7 and _month_columns(table):  # "March 1952" in a table of years by month: 1952's row
        point = point[:4]
    if kind == "year text":
        return f"{name} = {_literal(point)}" if len(point) == 4 else None
    return f"{name} = {point}" if len(point) == 4 else None


def _month_columns(table: TableInfo) -> bool:
    """Whether a table has a column for each month ("JAN" ... "DEC", "January" ...): a month is a column."""
    return sum(1 for c in table.columns if c.name.strip().lower().rstrip(".")[:3] in MONTH_NAMES
               and len(c.name.strip()) <= 9 and c.name.strip().isalpha()) >= 6


# -- figures named by number: "4 cylinders", "cycle 20", "below 3000" ----------------------------------------

_NUMBER_WORD = r"(?P<n>\d[\d,]*(?:\.\d+)?)"
_BEFORE = re.compile(_NUMBER_WORD + r"[- ](?P<word>[A-Za-z][A-Za-z_]{2,})")
_AFTER = re.compile(r"(?P<word>[A-Za-z][A-Za-z_]{2,})\s*(?:=|of|no\.?|number|#)?\s*" + _NUMBER_WORD + r"\b")
_COMPARE = re.compile(r"\b(?P<op>below|under|less than|lower than|fewer than|smaller than|younger than|above|over|"
                      r"more than|greater than|higher than|older than|exceeding|exceeded|exceeds|exceed|beat|beats|topped|at least|"
                      r"at most|no more than|no less than|"
                      r"(?:longer|taller|heavier|larger|bigger|wider|deeper|faster|warmer|hotter|later|"
                      r"shorter|lighter|narrower|shallower|slower|colder|cooler|cheaper|earlier) than)\s+\$?"
                      r"(?P<n>-?\d[\d,]*(?:\.\d+)?|zero\b)(?:\s*(?P<scale>thousand|million|billion|trillion|bn|mn)\b)?",
                      re.IGNORECASE)
# "how many of the numbers are negative": a sign is a bound at zero
_SIGN = re.compile(r"\b(?:are|is|were|was|be|being|with|of)\s+(?:a\s+)?(?P<sign>negative|positive)\b", re.IGNORECASE)
_SCALE_WORDS = {"thousand": 1e3, "million": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
_SQL_COMPARE = {"below": "<", "under": "<", "less than": "<", "lower than": "<", "fewer than": "<",
                "smaller than": "<", "above": ">", "over": ">", "more than": ">", "greater than": ">",
                "higher than": ">", "exceeding": ">", "at least": ">=", "no less than": ">=", "at most": "<=",
                "younger than": "<", "older than": ">", "exceeded": ">", "exceeds": ">", "exceed": ">", "beat": ">", "beats": ">", "topped": ">",
                "no more than": "<=",
                **{f"{w} than": ">" for w in ("longer", "taller", "heavier", "larger", "bigger", "wider", "deeper",
                                               "faster", "warmer", "hotter", "later")},
                **{f"{w} than": "<" for w in ("shorter", "lighter", "narrower", "shallower", "slower", "colder",
                                               "cooler", "cheaper", "earlier")}}


def _number_filters(ask: TableAsk, table: TableInfo, used: set[int]) -> list[tuple[int, str]]:
    """(column, condition) for each number the question ties to a numeric column by its name ("4 cylinders",
    "at cycle 20"); years, and the N of "top N", are not such numbers."""
    out = []
    compared = {m.start("n") for m in _COMPARE.finditer(ask.text)}
    steps = _STEPS.search(ask.text)
    stepped = {steps.start("a"), steps.start("b")} if steps else set()
    tied: set[int] = set()  # a number names one column's value: "the mpg of 8 cylinder cars" is 8 cylinders
    for pattern in (_BEFORE, _AFTER):
        for m in pattern.finditer(ask.text):
            value = m.group("n").replace(",", "")
            if _YEAR.fullmatch(value) or m.start("n") in compared | stepped | tied:
                continue
            word = forms_of(m.group("word"))
            columns = [i for i, c in enumerate(table.columns) if c.numeric and i not in used
                       and meets(word, name_forms(c.name) - _GENERIC)]
            if len(columns) == 1 and columns[0] not in {c for c, _ in out}:
                out.append((columns[0], f"{_q(table.columns[columns[0]].sql)} = {value}"))
                tied.add(m.start("n"))
    return out


def _comparisons(ask: TableAsk, table: TableInfo | None = None) -> list[tuple[str, str]]:
    """(SQL operator, number) for "below 3000", "more than 20"; a number with a scale word ("over $300 million")
    in the table's own units (its figures may be printed in millions)."""
    out = [("<" if m.group("sign").lower() == "negative" else ">", "0") for m in _SIGN.finditer(ask.text)]
    spans = [y.start("a") for y in _YEARS_SPANNED.finditer(ask.text)]
    for m in _COMPARE.finditer(ask.text):
        if m.start("n") in spans:
            continue  # "over 2005 to 2007": a span of years, not a bound
        n = "0" if m.group("n").lower() == "zero" else m.group("n").replace(",", "")
        if m.group("scale"):
            value = float(n) * _SCALE_WORDS[m.group("scale").lower()] / (table.scale if table else 1.0)
            n = format(value, "f").rstrip("0").rstrip(".")
        out.append((_SQL_COMPARE[m.group("op").lower()], n))
    return out


# -- a change or a ratio between two dates of a data table ----------------------------------------------------

_STEPS = re.compile(r"\b(?:between|from)\s+(?P<word>[A-Za-z_]{3,})\s+(?P<a>\d+(?:\.\d+)?)\s+(?:and|to)\s+"
                    r"(?:(?P=word)\s+)?(?P<b>\d+(?:\.\d+)?)\b", re.IGNORECASE)


def _point_order(point: str):
    """Dates sort as text (ISO), numbers as numbers."""
    try:
        return (0, float(point), "")
    except ValueError:
        return (1, 0.0, point)


def _series_query(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> TableQuery | None:
    """A value at two dates of a data table whose rows are dated (a price in Jan 2000 and in Mar 2010, renewable
    generation in 2001 and 2017), within the rows the question's other values select: the change, the
    percentage change and the ratio."""
    if ask.op not in ("change", "ratio") or _has_periods(table):
        return None
    time, points = _time_column(table, values), list(ask.points)
    steps = _STEPS.search(ask.text)
    if steps:  # "between cycle 1 and cycle 38": two values of a numeric column the question names
        named = [i for i, c in enumerate(table.columns) if c.numeric and meets(forms_of(steps.group("word")),
                                                                              name_forms(c.name))]
        if len(named) == 1:
            time, points = (named[0], "number"), [steps.group("a"), steps.group("b")]
    if time is None or len(points) != 2:
        return None
    filters, used = _filters(ask, table, {i: v for i, v in values.items() if i != time[0]}, dates=False)
    used.add(time[0])
    column = _target_column(ask, table, used)
    if column is None:
        return None
    # A change runs from the earlier date to the later; "X times more in 2017 than in 2001" divides the first
    # named by the second, so the second is where it runs from.
    points = sorted(points, key=_point_order) if ask.op == "change" else list(reversed(points))
    conditions = [_at(table, time, p) for p in points]
    if None in conditions:
        return None
    source, col = _q(table.physical), _q(table.columns[column].sql)
    # a date's value is its row's, or the mean of its rows; "the total yield in 1932 than in 1931 (summed over
    # all varieties)" adds each date's rows up (a sum word that is the column's own name asks for no sum)
    function = "sum" if _asks_sum(ask, table.columns[column].name) else "avg"
    sides = []
    for name, condition in zip(("a", "b"), conditions, strict=True):
        where = " AND ".join([*filters, condition, f"{col} IS NOT NULL"])
        sides.append(f'{name} AS (SELECT {function}({col}) AS v, count({col}) AS n, min("_row") AS r FROM {source} '
                     f"WHERE {where})")
    sql = (f"WITH {', '.join(sides)} SELECT a.r AS row_from, b.r AS row_to, a.v AS \"from\", b.v AS \"to\", "
           f"b.v - a.v AS difference, round((b.v - a.v) / abs(a.v) * 100, 2) AS percent_change, "
           f"round(b.v / a.v, 4) AS ratio, a.n AS rows_from, b.n AS rows_to FROM a, b")
    what = f"{'sum of ' if function == 'sum' else ''}{table.columns[column].name}{_said(filters)}, " \
           f"{points[0]} to {points[1]}"
    return TableQuery(table, sql, "series", what, (column,), (), "", 1.1 + 0.3 * len(filters))


def _asks_sum(ask: TableAsk, column: str) -> bool:
    """Whether the question asks for a sum of rows in words that are not the column's own name ("Total")."""
    own = name_forms(column)
    return any(not forms_of(m.group(0)) <= own for m in _SUM_WORDS.finditer(ask.text))


# -- two groups of rows compared: "the IT department's total budget against HR's" --------------------------------

_FROM_TO = re.compile(r"\bfrom\b.+\bto\b", re.IGNORECASE)
# "over 2005 to 2007", "from 2019 through 2021", "2005-2007", "between 2010 and 2012": the years of a span
_YEARS_SPANNED = re.compile(r"(?<!\d)(?P<a>(?:1[6-9]|20)\d\d)\s*(?:-|–|—|to|through|thru|until|and)\s*"
                            r"(?P<b>(?:1[6-9]|20)\d\d)(?!\d)",
                            re.IGNORECASE)
_AGGREGATE_WORD = (("max", re.compile(r"\b(?:max(?:imum)?|highest|largest|biggest|peak)\b", re.I)),
                   ("min", re.compile(r"\b(?:min(?:imum)?|lowest|smallest)\b", re.I)),
                   ("avg", re.compile(r"\b(?:average|mean|avg)\b", re.I)))


def _groups_query(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> TableQuery | None:
    """A figure of two groups of a data table's rows, the groups named by two values of one text column ("the
    IT department's total budget than HR's", "the maximum Y of series III and series I"): each group's sum (its
    maximum, minimum or average when the question says so), their difference, percentage change and ratio."""
    if ask.op not in ("change", "ratio") or _has_periods(table):
        return None
    pairs = []
    for i, cells in values.items():
        named = list(dict.fromkeys(v for v in cells if _names_value(ask, v)))
        if len(named) >= 2:
            pairs.append((i, sorted(named, key=lambda v: _mentioned_at(ask.text, v))[:2]))
    if len(pairs) != 1:
        return None  # no column, or two columns, whose values the question compares
    group, (first, second) = pairs[0]
    filters, used = _filters(ask, table, {i: v for i, v in values.items() if i != group}, dates=False)
    used.add(group)
    column = _target_column(ask, table, used)
    if column is None:
        return None
    function = next((name for name, pattern in _AGGREGATE_WORD if pattern.search(ask.text)), "sum")
    # "from A to B" runs from the first named; "A than B", "between A and B" compare the first with the second
    start, end = (first, second) if ask.op == "change" and _FROM_TO.search(ask.text) else (second, first)
    source, col, key = _q(table.physical), _q(table.columns[column].sql), _q(table.columns[group].sql)
    sides = []
    for name, value in (("a", start), ("b", end)):
        where = " AND ".join([*filters, f"{key} = {_literal(value)}", f"{col} IS NOT NULL"])
        sides.append(f'{name} AS (SELECT {function}({col}) AS v, count({col}) AS n, min("_row") AS r FROM {source} '
                     f"WHERE {where})")
    sql = (f"WITH {', '.join(sides)} SELECT a.r AS row_from, b.r AS row_to, a.v AS \"from\", b.v AS \"to\", "
           f"b.v - a.v AS difference, round((b.v - a.v) / abs(a.v) * 100, 2) AS percent_change, "
           f"round(b.v / a.v, 4) AS ratio, a.n AS rows_from, b.n AS rows_to FROM a, b")
    what = f"{function} of {table.columns[column].name}{_said(filters)} by {table.columns[group].name}, " \
           f"{start} to {end}"
    return TableQuery(table, sql, "series", what, (column,), (), "", 1.2 + 0.3 * len(filters))


def _columns_query(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> TableQuery | None:
    """Two columns of a data table compared over its rows (those the question's values select): "how many times
    more soldiers died of disease than of wounds": each column's sum (maximum, minimum, average when said), their
    difference and ratio, in the order the question names them."""
    if ask.op not in ("change", "ratio") or _has_periods(table):
        return None
    filters, used = _filters(ask, table, values)
    named = [i for i, c in enumerate(table.columns) if c.numeric and i not in used and _header_met(ask, c.name)[1] == 1.0
             and not _YEAR.fullmatch(c.name.strip())]
    if len(named) != 2:
        return None
    first, second = sorted(named, key=lambda i: _mentioned_at(ask.text, table.columns[i].name))
    function = next((name for name, pattern in _AGGREGATE_WORD if pattern.search(ask.text)), "sum")
    start, end = (first, second) if ask.op == "change" and _FROM_TO.search(ask.text) else (second, first)
    where = f" WHERE {' AND '.join(filters)}" if filters else ""
    a, b = _q(table.columns[start].sql), _q(table.columns[end].sql)
    sql = (f'SELECT min("_row") AS row_from, min("_row") AS row_to, {function}({a}) AS "from", {function}({b}) AS "to", '
           f'{function}({b}) - {function}({a}) AS difference, '
           f'round(({function}({b}) - {function}({a})) / abs({function}({a})) * 100, 2) AS percent_change, '
           f'round({function}({b}) / {function}({a}), 4) AS ratio, count({a}) AS rows_from, count({b}) AS rows_to '
           f"FROM {_q(table.physical)}{where}")

    def plain(i: int) -> str:
        return table.columns[i].name.replace(", ", " ").replace(" to ", " ")
    what = f"{function} of the columns{_said(filters)}, {plain(start)} to {plain(end)}"
    return TableQuery(table, sql, "series", what, (start, end), (), where, 1.1 + 0.3 * len(filters))


# -- one row of a wide table, across its columns; a cell found by the values of its row ------------------------

MIN_WIDE = 6  # numeric columns a table needs for "across all its columns" to be a question of its own
_ACROSS = re.compile(r"\b(?:across|all\s+(?:\d+\s+)?the\s+\w+|all\s+\d+\s+\w+|every\s+\w+|which\s+\w+|any\s+\w+|"
                     r"how many\s+\w+)\b",
                     re.IGNORECASE)


_PERIOD_WHICH = re.compile(r"\b(?:which|what)\s+(?:\w+\s+)?(?:year|quarter|month|period|week|day)s?\b", re.I)
# columns of a segment table that are no segment: the company's own figure and what reconciles the parts to it
_NOT_PART = re.compile(r"\b(?:total|consolidated|eliminations?|corporate|reconcil\w*|unallocated|intersegment|"
                       r"adjustments?|other)\b", re.I)
MIN_PARTS = 3


def _parts_across(ask: TableAsk, table: TableInfo) -> dict[int, str]:
    """The columns of a statement whose headers name its parts, not periods ("which of Coca-Cola's operating
    segments had the highest operating income in 2017": a segment table's row "Operating income (loss)" across
    Europe, Middle East & Africa | Latin America | ... | Corporate | Eliminations | Consolidated), each with its
    name without the year printed in it; none unless at least MIN_PARTS, and the table is of the asked year."""
    asked = {p for p in periods_of(ask.text) if p.isdigit()}
    printed = {p for p in periods_of(" ".join([table.title, *(c.name for c in table.columns)]), header=True)
               if p.isdigit()}
    if asked and printed and printed != asked or not asked and len(printed) > 1:
        return {}  # another year's table, or several years' columns side by side (a table naming no year: its own)
    out = {}
    for i, column in enumerate(table.columns):
        if not i or not column.numeric or _NOT_PART.search(column.name) or _CHANGE_HEADER.search(column.name):
            continue
        name = _YEAR.sub("", column.name).strip(" ,")
        if not name or periods_of(name, header=True) or not re.search(r"[A-Za-z]{3}", name):
            return {}  # a period's column ("Q4"), or one named by nothing: not a table of parts
        out[i] = name
    return out if len(out) >= MIN_PARTS else {}


def _across_query(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> TableQuery | None:
    """An aggregate or a ranking over the cells of the row the question selects, across a wide table's numeric
    columns ("the mean across all 96 wells at cycle 1", "which well reads lowest at cycle 38", "how many wells
    read below 3000 at cycle 38"), when no single column is what it asks for."""
    if ask.op not in ("avg", "sum", "count", "max", "min") or not _ACROSS.search(ask.text):
        return None
    filters, used = _filters(ask, table, values)
    if not filters:
        return None
    spread = [i for i, c in enumerate(table.columns) if c.numeric and i not in used]
    if len(spread) < MIN_WIDE or any(_column_match(ask, table, i) for i in spread):
        return None
    compared = _comparisons(ask)
    if ask.op == "count" and not compared:
        return None
    keep = ", ".join(_q(table.columns[i].sql) for i in spread)
    source = (f'WITH u AS (UNPIVOT (SELECT {keep} FROM {_q(table.physical)} WHERE {" AND ".join(filters)}) '
              f"ON COLUMNS(*) INTO NAME label VALUE value)")
    where = (" WHERE " + " AND ".join(f"value {op} {n}" for op, n in compared)) if compared else ""
    said = _said(filters).removeprefix(" where ")
    if ask.op == "count":
        sql = f'{source} SELECT count(*) AS "count" FROM u{where}'
        what = f"columns {table.columns[spread[0]].name} to {table.columns[spread[-1]].name} where {said}" + \
            "".join(f" and value {op} {n}" for op, n in compared)
        return TableQuery(table, sql, "count", what, (spread[0], spread[-1]), (), f" WHERE {' AND '.join(filters)}",
                          1.0 + 0.4 * len(filters))
    if ask.op in ("max", "min") and (ask.which or ask.top > 1):
        order = "DESC" if ask.op == "max" else "ASC"
        sql = f"{source} SELECT label, value FROM u{where} ORDER BY value {order} LIMIT {ask.top}"
        what = f"{'highest' if ask.op == 'max' else 'lowest'} across the columns, where {said}"
        return TableQuery(table, sql, f"top {ask.op}", what, (spread[0], spread[-1]), (),
                          f" WHERE {' AND '.join(filters)}", 1.1 + 0.4 * len(filters))
    function = {"sum": "sum", "avg": "avg", "max": "max", "min": "min"}[ask.op]
    sql = f'{source} SELECT {function}(value) AS value, count(value) AS "rows" FROM u{where}'
    what = f"{function} across columns {table.columns[spread[0]].name} to {table.columns[spread[-1]].name}, where {said}"
    return TableQuery(table, sql, function, what, (spread[0], spread[-1]), (), f" WHERE {' AND '.join(filters)}",
                      1.0 + 0.4 * len(filters))


def _filtered_lookup(ask: TableAsk, table: TableInfo, values: Mapping[int, Sequence[str]]) -> TableQuery | None:
    """One cell of a data table: the column the question names, in the one row its values select ("well D7 at
    cycle 20", "gas price in 1980")."""
    if ask.op != "lookup":
        return None
    filters, used = _filters(ask, table, values)
    if not filters:
        return None
    named = [i for i, c in enumerate(table.columns) if c.numeric and i not in used and _column_match(ask, table, i)]
    if not named:
        return None
    best = max(named, key=lambda i: _column_match(ask, table, i))
    if sum(_column_match(ask, table, i) == _column_match(ask, table, best) for i in named) > 1:
        return None  # two headers named as well: which one is not said
    col = _q(table.columns[best].sql)
    sql = (f'SELECT "_row", {col} AS value FROM {_q(table.physical)} WHERE {" AND ".join(filters)} '
           f'AND {col} IS NOT NULL ORDER BY "_row" LIMIT 2')
    return TableQuery(table, sql, "cell", f"{table.columns[best].name}{_said(filters)}", (best,), (),
                      f" WHERE {' AND '.join(filters)}", 0.9 + 0.3 * len(filters) + COLUMN_WEIGHT *
                      _column_match(ask, table, best))
