"""The compute route: a question about figures is answered from the tables retrieval pointed at, by one
read-only query the engine runs, and the result becomes a passage the answer cites with the cells it read.

    computation = compute(question, hits, tables, write_sql=None)   # offline: the rules of tables.plan

With a model, `write_sql(question, schemas)` returns the SQL the model wrote against the candidate tables'
schemas (their columns and first rows); offline, tables.plan maps the question's shape to a query. Either way
the table store runs it read-only, within a time and a row limit; a query that fails or finds nothing is one line
in the trace (`note`) and the answer is written from the passages alone.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from advanced_retrieval import Hit
from advanced_retrieval.tables import QueryResult, TableInfo
from agentic_rag.language.concepts import Concept, forms_of, query_concepts
from agentic_rag.seams import TableSource
from agentic_rag.tables.fiscal import FISCAL_NAMED, asked_fiscal_year, heading_naming, year_end_in_january
from agentic_rag.tables.meaning import Meant, by_meaning
from agentic_rag.tables.plan import (
    GENERIC,
    Layout,
    TableQuery,
    is_month,
    op_words,
    periods_of,
    plans,
    quarters_of,
    quarters_shown,
)
from agentic_rag.tables.position import counted as position_row
from agentic_rag.tables.position import position_of
from agentic_rag.tables.words import bases, joined, meets, name_forms
from document_processor import Chunk, Location

MAX_DOCUMENTS = 4  # documents whose tables are candidates: those of the best hits
MAX_TABLES = 6  # tables described to a model or given distinct values for the rules
SAMPLE_ROWS = 6  # rows of each table a model sees beside its columns
MAX_DISTINCT = 500  # distinct values of a text column read for filters
MAX_SHOWN_ROWS = 10
MAX_TRIES = 3
HEADER_PRIOR = 0.3  # a sheet whose headers the question names, retrieval having missed it
SHEET_PRIOR = 1.0  # a sheet the question names ("on Tabelle1", "the Pie sheet"): as strong as the best hit
VALUE_PRIOR = 0.5  # how strongly a sheet holding a name the question gives is a candidate (as a second-ranked hit)
SPELLED = 3  # what a header of words run together that the question's words spell counts for (two words at least)
MAX_NAMES = 4  # names of a question looked for in the sheets' cells
MAX_SCANNED = 60  # sheets scanned for them  # the rules' queries tried in turn while they find nothing  # result rows written into the passage
# Another table's query that scores within this of the chosen one reads the question almost as well: within what one
# word of the question a column's header names adds to a query's score (plan.COLUMN_WEIGHT). When it gives another
# figure, the question is ambiguous between the two tables, and the answer says so (confidence.RIVAL_CAP).
RIVAL_MARGIN = 0.3
MAX_RIVALS = 3  # other tables' queries run to look for one
RIVAL = "table rival"  # the strategy of a rival's passage (a computed passage, not the answer's)
COMPUTED = "computed:"
OTHER_READING = "Read otherwise:"  # a rival passage's line saying why it is another reading of the question
READ_AS = "Headers read as:"  # the computed passage's line saying how headers were read (an engine note)
_ISO_DATE = re.compile(r"^(?:1[6-9]|20)\d\d-\d\d")  # the id prefix of a computed passage's chunk


@dataclass(frozen=True)
class Computation:
    """A query the engine ran for the question: its SQL, result, the table and cells read, and the passage."""

    sql: str
    result: QueryResult
    table: TableInfo | None
    cells: str  # where the cells it read are, as a citation names them
    hit: Hit | None  # the passage the answer cites (None: nothing to cite)
    source: str  # "rules" or "model"
    note: str = ""  # why nothing was computed, or what went wrong
    rival: Computation | None = None  # another table's query that reads the question almost as well, another figure

    def to_dict(self) -> dict:
        """The trace's record: the query, its result table, the cells (and a rival's, when there is one)."""
        out = {"sql": self.sql, "source": self.source, "columns": list(self.result.columns),
               "rows": [list(r) for r in self.result.rows[:MAX_SHOWN_ROWS]], "truncated": self.result.truncated,
               "error": self.result.error, "cells": self.cells, "note": self.note,
               "table": f"{self.table.file_name}, {self.table.name}" if self.table else ""}
        return {**out, "rival": self.rival.to_dict()} if self.rival is not None else out


def is_computed(chunk: Chunk) -> bool:
    """Whether a chunk is a computed passage (the engine's result, not a document's text)."""
    return chunk.id.startswith(COMPUTED)


def candidate_tables(tables: TableSource, hits: Sequence[Hit],
                     question: str = "") -> tuple[list[TableInfo], dict[str, float]]:
    """The tables of the best hits' documents, and how strongly retrieval points at each (a hit on its page,
    sheet or slide, best rank first: 1.0, 0.5, 0.33, ...); and the sheets holding a cell that is a name the
    question gives (a row of a long sheet that was never indexed as text: "Avatar" in a 3,000-row CSV)."""
    named = _named_file_tables(tables, question)
    if named:  # "the first table of tbl-cell-access.docx", "the Pie sheet of charts.xlsx": that file's tables only
        hits = [h for h in hits if h.chunk.doc_id == named[0].doc_id]
    where = position_of(question) if question else None
    if where is not None and where.table is not None:  # "the second table of report.docx": that table alone
        counted = _table_at(tables, hits, named, question, where.table)
        if counted is not None:
            return [counted], {counted.table_id: SHEET_PRIOR}
    docs = list(dict.fromkeys(h.chunk.doc_id for h in hits if not is_computed(h.chunk)))[:MAX_DOCUMENTS]
    found = tables.tables(docs) if docs else []
    if named:
        found = found or list(named)
        prior = {t.table_id: p for t in found
                 if (p := max((1.0 / rank for rank, h in enumerate(hits, start=1)
                               if _same_place(t.location, h.chunk.location)), default=0.0))}
        return found, {**prior, **{t.table_id: SHEET_PRIOR for t in _named_sheets(found, question)}}
    prior: dict[str, float] = {}
    for rank, hit in enumerate(hits, start=1):
        for table in found:
            if table.doc_id == hit.chunk.doc_id and _same_place(table.location, hit.chunk.location):
                prior[table.table_id] = max(prior.get(table.table_id, 0.0), 1.0 / rank)
    for table in _holding(tables, _names(question), {t.table_id for t in found}):
        found.append(table)
        prior[table.table_id] = VALUE_PRIOR
    for table in headed(tables.tables() if question else [], question, {t.table_id for t in found}):
        found.append(table)
        prior[table.table_id] = HEADER_PRIOR
    for table in _quartered(tables.tables() if question else [], question, {t.table_id for t in found}):
        found.append(table)
        prior[table.table_id] = HEADER_PRIOR
    for table in _named_sheets(tables.tables() if question else [], question):
        if table.table_id not in {t.table_id for t in found}:
            found.append(table)
        prior[table.table_id] = SHEET_PRIOR
    return found, prior


MAX_QUARTERED = 6  # tables of other documents whose columns are the quarters a question names


def _quartered(tables: Sequence[TableInfo], question: str, known: set[str]) -> list[TableInfo]:
    """The tables (not already candidates) whose columns are each quarter the question names, of a year ("from
    2Q20 through 1Q21": a 10-Q's highlights headed 1Q21, 4Q20, 3Q20, 2Q20, 1Q20), and one of whose rows it names:
    retrieval found the filing of another quarter, whose tables print other quarters."""
    asked = {q for q in quarters_of(question) if q[:1].isdigit()}
    if not asked:
        return []
    concepts = [c for c in query_concepts(question) if not any(ch.isdigit() for ch in c.text)]
    out = []
    for table in tables:
        if table.table_id in known or table.location.sheet is not None:
            continue
        if asked <= quarters_shown(table) and _row_named(concepts, table) > 0:
            out.append(table)
    return sorted(out, key=lambda t: -_row_named(concepts, t))[:MAX_QUARTERED]


_PLACE = re.compile(r"\b(?P<kind>page|slide|p\.)\s*(?P<n>\d{1,4})\b", re.IGNORECASE)


def _table_at(tables: TableSource, hits: Sequence[Hit], named: Sequence[TableInfo], question: str,
              count: int) -> TableInfo | None:
    """The table a question counts to ("the first table", "the last table on slide 3"): among the tables of the
    file it names, else of the best hit's document, in the order the document holds them, on the page or slide
    it names; None when there is no such table."""
    if named:
        pool = list(named)
    else:
        doc = next((h.chunk.doc_id for h in hits if not is_computed(h.chunk)), None)
        pool = tables.tables([doc]) if doc is not None else []
    place = _PLACE.search(question)
    if place:
        n, kind = int(place.group("n")), place.group("kind").lower()
        pool = [t for t in pool if (t.location.slide if kind == "slide" else t.location.page) == n]
    found = position_row(count, len(pool))
    return pool[found - 1] if found is not None else None


def _named_file_tables(tables: TableSource, question: str) -> list[TableInfo]:
    """The tables of the one document whose file name the question writes out, with or without its extension, as
    a word of its own ("... of tbl-cell-access.docx", "the Budget_2023 workbook"); [] when it names none, or
    several."""
    if not question:
        return []
    asked = question.casefold()
    every = tables.tables()
    files = {t.file_name for t in every}
    # a name without its extension counts when it is no plain word ("charts" may be any chart's; "tbl-cell-access",
    # "Budget_2023" are a file's)
    named = {f for f in files for name in (f, f.rsplit(".", 1)[0]) if len(name) >= 3
             and (name == f or re.search(r"[^A-Za-z]", name))
             and re.search(rf"(?<![\w.]){re.escape(name.casefold())}(?![\w])", asked)}
    out = [t for t in every if t.file_name in named]
    return out if len({t.doc_id for t in out}) == 1 else []


def _named_sheets(tables: Sequence[TableInfo], question: str) -> list[TableInfo]:
    """The sheets the question names: by a name that is no plain word ("on Tabelle1", "the Q3_sales tab"), or by
    any name said to be a sheet ("the Pie sheet", "sheet Letters", "worksheet Budget")."""
    out = []
    for table in tables:
        sheet = table.location.sheet
        if not sheet or len(sheet) < 2:
            continue
        name = re.escape(sheet.casefold())
        said = rf"(?<![\w.]){name}(?![\w])"
        if re.search(said, question.casefold()) and (
                re.search(r"[^A-Za-z]", sheet)
                or re.search(rf"{said}\s+(?:work)?(?:sheet|tab)\b|\b(?:work)?(?:sheet|tab)\s+['\"‘“]?{name}(?![\w])",
                             question.casefold())):
            out.append(table)
    return out


def headed(tables: Sequence[TableInfo], question: str, known: set[str]) -> list[TableInfo]:
    """The sheets (not already candidates) whose own headers the question names: two of its words at least, one
    a column's header ("total company sales in December than in January": a sheet of monthly columns in a
    file named Regional_Sales). A sheet's text may never be retrieved: its rows are figures under one header."""
    asked = query_concepts(question)
    periods = set(periods_of(question))
    every = forms_of(question)
    out = []
    for table in [t for t in tables if t.location.sheet is not None and t.table_id not in known][:MAX_SCANNED]:
        heads = [c for c in table.columns if c.numeric]
        named = sum(1 for c in heads if periods & set(periods_of(c.name, header=True))) + \
            sum(1 for c in asked if not c.specific and any(c.met(name_forms(h.name) - GENERIC) for h in heads)) + \
            SPELLED * sum(1 for h in heads if meets(every, joined(h.name)))  # "pupil-teacher ratio": PTRATIO
        about = sum(1 for c in asked if c.met(forms_of(f"{table.name} {re.sub(r'[_.-]+', ' ', table.file_name)}")
                                              - GENERIC))
        if named >= 1 and named + about >= 3:
            out.append(table)
    return out


def _names(question: str) -> list[str]:
    """The names a question gives (capitalised words and runs, not numbers or months): cell values to look for."""
    return [c.text for c in query_concepts(question) if (c.specific or c.text[:1].isupper())
            and not any(ch.isdigit() for ch in c.text) and not is_month(c.text.split()[0]) and len(c.text) > 1][:MAX_NAMES]


def _holding(tables: TableSource, names: Sequence[str], known: set[str]) -> list[TableInfo]:
    """The sheets (at most MAX_SCANNED, not already candidates) one of whose text cells is one of `names`, or the
    word a name derives from ("Europe" for "European")."""
    if not names:
        return []
    wanted = ", ".join("'" + n.replace("'", "''") + "'" for n in dict.fromkeys(v for n in names for v in bases(n.lower())))
    out = []
    sheets = [t for t in tables.tables() if t.location.sheet is not None and t.table_id not in known]
    for table in sheets[:MAX_SCANNED]:
        text = [c for c in table.columns if not c.numeric]
        if not text:
            continue
        where = " OR ".join(f'lower(trim(CAST("{c.sql}" AS VARCHAR))) IN ({wanted})' for c in text)
        result = tables.query(f'SELECT 1 FROM "{table.physical}" WHERE {where} LIMIT 1', max_rows=1)
        if result.ok and result.rows:
            out.append(table)
    return out


def compute(question: str, hits: Sequence[Hit], tables: TableSource,
            write_sql: Callable[[str, str], str | None] | None = None, *, figures: bool = True,
            embedder=None, naming: Callable[[str], int | None] | None = None) -> Computation | None:
    """Answer `question` from a table by one query (the model's, when `write_sql` is given and returns one,
    else the rules'); None when no table is a candidate. `figures`: the question asks for a figure (else a
    lookup needs a column the question names). `embedder`: reads a header the question names in other words
    when the rules find no reading by the words (tables.meaning). `naming(doc_id)`: how a document says it names
    a fiscal year ending in January (tables.fiscal.stated_naming over its text), asked only when that matters."""
    with tables.reading():  # one connection for the listings (not across a model's call)
        found, prior = candidate_tables(tables, hits, question)
    if not found:
        return None
    # "grow", "highest": what is done with the rows, naming none of them; "by what percentage" it grew, how the
    # result is said
    operations = op_words(question) | ({"percentage", "percent"} if op_words(question) else set())
    asked = [c for c in query_concepts(question) if not any(ch.isdigit() for ch in c.text)
             and c.text.lower() not in operations]
    ranked = sorted(found, key=lambda t: (-prior.get(t.table_id, 0.0), -_row_named(asked, t)))[:MAX_TABLES * 3]
    if write_sql is not None:
        written = _model(question, ranked[:MAX_TABLES], tables, write_sql)
        if written is not None:
            return written
    with tables.reading():  # the rules read layouts, values and results: ~30 reads, one connection
        return _rules(question, ranked, prior, tables, figures, embedder, naming)


def _rules(question: str, ranked: list[TableInfo], prior: dict[str, float], tables: TableSource,
           figures: bool, embedder=None, naming: Callable[[str], int | None] | None = None) -> Computation:
    names = _names(question)
    layouts = {t.table_id: _layout(tables, t) for t in ranked[:MAX_TABLES * 3]}
    values = {t.table_id: _distinct(tables, t, names, layouts[t.table_id]) for t in ranked[:MAX_TABLES]}
    every = plans(question, ranked, values, prior, figures=figures, layouts=layouts)
    meant: Meant | None = None
    if not every:  # no header named in the question's words: one it names in other words ("fuel economy": MPG)
        for meant in by_meaning(question, ranked[:MAX_TABLES], embedder, figures=figures):
            every = plans(meant.text, [meant.table], values, prior, figures=figures, layouts=layouts)
            if every and meant.column in every[0].columns:
                break
            every, meant = [], None
    if not every:
        return Computation("", QueryResult(""), None, "", None, "rules",
                           "no table's rows and columns match what the question asks")
    for query in every[:MAX_TRIES]:  # the best query that finds a value; a table that holds no such row gives way
        done = _run(tables, query.sql, query.table, "rules", query, question, meant)
        if done.hit is not None:
            fiscal = _fiscal_year(done, query, question, tables, values, prior, layouts, figures, naming)
            if fiscal is not None:  # the document names its fiscal years otherwise, or may: said beside the answer
                return fiscal
            named = {t.table_id for t in _named_sheets(ranked, question)} | \
                {t.table_id for t in _named_file_tables(tables, question)}
            return _with_rival(done, query, every, tables, prior, named, question)
    return done


def _fiscal_year(done: Computation, query: TableQuery, question: str, tables: TableSource, values, prior,
                 layouts, figures: bool, naming: Callable[[str], int | None] | None) -> Computation | None:
    """The answer read with the fiscal year as the document names it, when the question names one fiscal year
    and the query read a column of a year that ended in January (tables.fiscal): the other year's column when the
    document names a year by the year it began; when it does not say, `done` with that column's figure beside it
    as another reading. None when the naming does not matter or the query already reads as the document names."""
    year = asked_fiscal_year(question)
    table = query.table
    ends = {year_end_in_january(table.columns[i].name) for i in query.columns if 0 < i < len(table.columns)}
    if year is None or len(ends) != 1 or (end := ends.pop()) not in (year, year + 1):
        return None
    said = heading_naming(table)
    if said is None and naming is not None:
        said = naming(table.doc_id)
    if said is not None and end == year + said:
        return None
    other = year + 1 if end == year else year  # the column's year the other naming reads
    shifted = FISCAL_NAMED.sub(lambda m: m.group(0).replace(str(year), str(other)), question)
    found = [q for q in plans(shifted, [table], values, prior, figures=figures, layouts=layouts)
             if {year_end_in_january(table.columns[i].name) for i in q.columns if 0 < i < len(table.columns)}
             == {other}]
    if not found:
        return None
    ended = table.columns[found[0].columns[-1]].name
    basis = "the year it began" if other == year + 1 else "the year it ended"
    why = (f'"fiscal {year}" (the document names a year ending in January by {basis})' if said is not None else
           f'"fiscal {year}" may name the year that ended in January {other}: a company whose year ends in January '
           f"names it by the year it began or by the year it ended, and this document does not say which")
    # read as the document names it, the result says the year asked beside the day the column prints
    chosen = replace(found[0], what=f"{found[0].what} (fiscal {year})") if said is not None else found[0]
    ran = _run(tables, chosen.sql, table, "rules", chosen, question, reading=f'{ended}: {why}' if said is not None
               else "")
    if ran.hit is None:
        return None
    if said is not None:
        return ran
    text = f"{ran.hit.chunk.text}\n{OTHER_READING} {why}"
    chunk = replace(ran.hit.chunk, text=text, id=COMPUTED + hashlib.sha256(text.encode()).hexdigest()[:24])
    return replace(done, rival=replace(ran, hit=replace(ran.hit, chunk=chunk, strategy=RIVAL)))


def _with_rival(done: Computation, chosen: TableQuery, every: Sequence[TableQuery], tables: TableSource,
                prior: dict[str, float], named: set[str], question: str = "") -> Computation:
    """`done`, with the first other table's query that reads the question within RIVAL_MARGIN of `chosen` and finds
    another figure ("revenue in 2021" in a segment table and in the income statement of the same filing): the
    answer cannot tell which one the question means. How well a query reads the question is its score without
    retrieval's rank of its table's page (`prior`), which orders near-identical tables by a few words of their
    surrounding text; a sheet or file the question names (`named`) keeps it."""

    def reading(query: TableQuery) -> float:
        own = query.table.table_id
        if query.positional:  # "the last row": of the table retrieval and the question place, not any table's
            return query.score
        return query.score - (0.0 if own in named else prior.get(own, 0.0))

    bar = reading(chosen) - RIVAL_MARGIN
    others = [q for q in every if q.table.table_id != chosen.table.table_id and reading(q) >= bar
              and not _column_says_more(q, question)]
    for other in sorted(others, key=reading, reverse=True)[:MAX_RIVALS]:
        ran = _run(tables, other.sql, other.table, "rules", other, question)
        if ran.hit is not None and not _same_figures(ran.result, other.table, done.result, chosen.table):
            return replace(done, rival=replace(ran, hit=replace(ran.hit, strategy=RIVAL)))
    return done


# the words of a column header that say when or in what units, not what it holds
_WHEN_WORDS = frozenset(forms_of("year years ended ending months month quarter quarters weeks week fiscal as of at "
                                 "in millions thousands billions dollars except per share data amounts total"))
_HEADER_NOISE = re.compile(r"\([^()]*\)|\b(?:19|20)\d\d\b|\d+")


def _column_says_more(query: TableQuery, question: str) -> bool:
    """Whether a column a query reads names something besides its period that the question does not ("Europe,
    Middle East & Africa 2016", "2021 Level 2", "Total Assets 2022" for a question about revenue): another
    table's reading of such a column is one of its parts or another measure, no rival of the answer."""
    table, asked = query.table, forms_of(question)
    for i in query.columns:
        if not 0 < i < len(table.columns):
            continue
        if "%" in table.columns[i].name and not re.search(r"%|\bpercent|\bshare\b|\bproportion", question, re.I):
            return True  # "2022 % of Total" for a sum of net sales
        words = forms_of(_HEADER_NOISE.sub(" ", table.columns[i].name)) - GENERIC - _WHEN_WORDS
        if any(is_month(w) for w in re.findall(r"[A-Za-z]+", table.columns[i].name)):
            words -= forms_of(" ".join(w for w in re.findall(r"[A-Za-z]+", table.columns[i].name) if is_month(w)))
        if words - asked:
            return True
    return False


# a result's columns that say which rows it read and how many, not what they hold ("Growth" is a figure's column)
_POSITION = re.compile(r"_row|rows|rows?_(?:from|to)")


def _figures(result: QueryResult, table: TableInfo) -> tuple:
    """What a result states, to compare two tables' results: its figures at the tables' scale ("in millions"),
    else its text; the positions of the rows it read are left out."""
    kept = [i for i, name in enumerate(result.columns) if not _POSITION.fullmatch(name)]
    cells = [row[i] for row in result.rows for i in kept]
    numbers = [round(v * table.scale, 6) for v in cells if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return tuple(sorted(numbers)) if numbers else tuple(sorted(str(v) for v in cells if v is not None))


def _same_figures(one: QueryResult, table: TableInfo, other: QueryResult, other_table: TableInfo) -> bool:
    """Whether two tables' results state the same figures: at their scales, or as printed when one table states
    no scale (a summary reprinting the statement's "in millions" figures under a title that does not say so)."""
    if _figures(one, table) == _figures(other, other_table):
        return True
    unstated = 1.0 in (table.scale, other_table.scale) and table.scale != other_table.scale
    return unstated and _figures(one, replace(table, scale=1.0)) == _figures(other, replace(other_table, scale=1.0))


def is_rival(hit: Hit) -> bool:
    """Whether a passage is a rival's computed result (shown beside the answer's, never its answer)."""
    return hit.strategy == RIVAL


def _row_named(asked: Sequence[Concept], table: TableInfo) -> float:
    """How much of what the question asks (its words and names other than numbers, and other than the names in
    the table's file name) one row's label of `table` names at best, and its headers and title name (0..2):
    among the tables of the best hits' documents that retrieval did not point at, those the question names are
    tried first ("net card fees": the income statement of a 10-K with a hundred tables, whose page was not among
    the hits; "net revenue" of the divisions: a table whose rows are the divisions' codes under the header "Net
    Revenue 2022"; "Sam's Club's operating income": a table with a column "Sam's Club")."""
    stem = re.sub(r"[^a-z0-9]+", "", table.file_name.lower())
    asked = [c for c in asked if not (c.specific and re.sub(r"[^a-z0-9]+", "", c.text.lower()) in stem)]
    total = sum(c.weight for c in asked)
    if not total:
        return 0.0
    heads, labels = _table_forms(table.title.rsplit(">", 1)[-1], tuple(c.name for c in table.columns), table.labels)
    wanted = frozenset().union(*(c.forms for c in asked))
    phrased = any(c.phrases for c in asked)
    row = max((sum(c.weight for c in asked if c.met(label)) for label in labels if phrased or label & wanted),
              default=0.0)
    return (row + sum(c.weight for c in asked if c.met(heads))) / total


@functools.lru_cache(maxsize=4096)
def _table_forms(heading: str, headers: tuple[str, ...],
                 labels: tuple[str, ...]) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
    """The forms of a table's own heading with its headers, and of each of its distinct row labels (kept: a
    library's tables are ordered again for every question)."""
    return forms_of(" ".join([heading, *headers])), tuple(forms_of(label) for label in dict.fromkeys(labels))


def schemas(tables: TableSource, candidates: Sequence[TableInfo]) -> str:
    """The candidate tables as a model reads them: name, where from, columns with types, first rows."""
    parts = []
    for t in candidates:
        columns = ", ".join(f'"{c.sql}" {"DOUBLE" if c.numeric else "TEXT"}' for c in t.columns)
        rows = tables.rows(t, 1, SAMPLE_ROWS)
        sample = "\n".join("  " + " | ".join(shown(v) for v in r) for r in rows)
        scale = f"; figures in {_scale_name(t.scale)}" if t.scale != 1.0 else ""
        parts.append(f'Table "{t.physical}": {t.file_name}, {t.name} — {t.title or "untitled"}{scale} '
                     f'({t.n_rows} rows)\nColumns: "_row" INTEGER (row number), {columns}\n'
                     f"First rows (_row first):\n{sample}")
    return "\n\n".join(parts)


def _model(question: str, candidates: list[TableInfo], tables: TableSource,
           write_sql: Callable[[str, str], str | None]) -> Computation | None:
    """The model's query over the candidates' schemas; None when no model wrote one (it failed: the rules plan)."""
    with tables.reading():  # the candidates' first rows, one connection; released before the model's call
        described = schemas(tables, candidates)
    written = write_sql(question, described)
    if written is None:
        return None
    sql = re.sub(r"^```(?:sql)?\s*|\s*```$", "", written.strip(), flags=re.IGNORECASE).strip()
    if not sql or sql.upper() in ("NONE", "NULL"):
        return Computation("", QueryResult(""), None, "", None, "model", "the model wrote no query: the tables "
                                                                           "do not answer the question")
    used = next((t for t in candidates if t.physical in sql), None)
    return _run(tables, sql, used, "model")


def readings(question: str, table: TableInfo, columns: Sequence[int]) -> list[str]:
    """How the rules read the headers of words run together that the query reads, in the question's words
    ('PTRATIO: "pupil-teacher ratio"'), for the user to check the reading: the words whose absence would leave the
    header unspelled."""
    if not question:
        return []
    every = forms_of(question)
    concepts = query_concepts(question)
    out = []
    for i in dict.fromkeys(columns):
        if not 0 <= i < len(table.columns):
            continue
        runs = joined(table.columns[i].name)
        if not runs or not meets(every, runs):
            continue
        used = [c.text for c in concepts if not meets(every - c.forms, runs)]
        if used:
            out.append(f'{table.columns[i].name}: "{" ".join(used)}"')
    return out


def _run(tables: TableSource, sql: str, table: TableInfo | None, source: str,
         query: TableQuery | None = None, question: str = "", meant: Meant | None = None,
         reading: str = "") -> Computation:
    result = tables.query(sql)
    if not result.ok:
        return Computation(sql, result, table, "", None, source, f"the query failed: {result.error}")
    if not result.rows or all(v is None for row in result.rows for v in row) or _no_value(result):
        return Computation(sql, result, table, "", None, source, "the query found no rows, or no value in them")
    cells = _cells(tables, table, query, result)
    read = readings(question, table, query.columns) if table is not None and query is not None else []
    if meant is not None and table is not None and meant.table.table_id == table.table_id:
        read.append(meant.reading())
    if reading:
        read.append(reading)
    hit = _passage(table, query, result, cells, sql, read) if table is not None else None
    return Computation(sql, result, table, cells, hit, source)


def _no_value(result: QueryResult) -> bool:
    """A result whose value columns are all empty (a lookup of a blank cell)."""
    wanted = [i for i, name in enumerate(result.columns) if name in ("value", "to", "from")]
    return bool(wanted) and all(row[i] is None for row in result.rows for i in wanted)


def _cells(tables: TableSource, table: TableInfo | None, query: TableQuery | None, result: QueryResult) -> str:
    """Where the cells the query read are: one cell, a column's cells over the rows it selected, or the table."""
    if table is None:
        return ""
    if query is None:
        rows = [r[0] for r in result.rows if result.columns[:1] == ("_row",) and isinstance(r[0], int)]
        return table.range_label(rows, len(table.columns) - 1) if rows else f"{table.file_name}, {table.name}"
    if query.op == "header":  # the header row: a sheet's cells above the first row of data
        cells = table.location.cells or ""
        m = re.fullmatch(r"([A-Z]+)(\d+):([A-Z]+)\d+", cells)
        if table.location.sheet is not None and m:
            return f"{table.location.sheet}!{m.group(1)}{m.group(2)}:{m.group(3)}{m.group(2)}"
        return f"{table.file_name}, {table.name}, header row"
    rows = list(query.rows)
    if not rows and "_row" in result.columns:
        rows = [r[result.columns.index("_row")] for r in result.rows]
    if not rows and "row_from" in result.columns and result.rows:
        row = dict(zip(result.columns, result.rows[0], strict=True))
        if row["rows_from"] == 1 and row["rows_to"] == 1:
            return "; ".join(table.cell_label(r, query.columns[-1]) for r in (row["row_from"], row["row_to"]))
    if not rows:
        bounds = tables.query(f'SELECT min("_row"), max("_row") FROM "{table.physical}"{query.filters}')
        if bounds.ok and bounds.rows and bounds.rows[0][0] is not None:
            rows = [bounds.rows[0][0], bounds.rows[0][1]]
    if query.op in ("whole", "cells") and len(query.columns) > 2 and rows:  # a block of cells: its corners
        start, end = table.cell_label(min(rows), query.columns[0]), table.cell_label(max(rows), query.columns[-1])
        if "!" in start and "!" in end:
            return f"{start}:{end.split('!', 1)[1]}"
        return f"{table.file_name}, {table.name}, " + (f"rows {min(rows)}-{max(rows)}" if len(set(rows)) > 1
                                                       else f"row {rows[0]}")
    labels = [table.range_label(rows, c) for c in query.columns[-2:]] if rows else [table.name]
    return "; ".join(dict.fromkeys(labels))


def _passage(table: TableInfo, query: TableQuery | None, result: QueryResult, cells: str, sql: str,
             read: Sequence[str] = ()) -> Hit:
    """The computed result as a passage: what was computed, the result, how headers of words run together were
    read, the cells and the query."""
    scale = f", figures in {_scale_name(table.scale)}" if table.scale != 1.0 else ""
    head = f"Computed by the engine from {table.file_name}, {table.name}" + \
        (f' ("{table.title.split(" > ")[-1]}"{scale})' if table.title else (f" ({scale[2:]})" if scale else ""))
    lines = [head + ":", *(_result_lines(query, result)), *([f"{READ_AS} {'; '.join(read)}"] if read else []),
             f"Cells: {cells}", f"Query: {' '.join(sql.split())}"]
    text = "\n".join(lines)
    where = _location(table, query)
    chunk = Chunk(id=COMPUTED + hashlib.sha256(text.encode()).hexdigest()[:24], doc_id=table.doc_id,
                  file_name=table.file_name, file_type=table.file_name.rsplit(".", 1)[-1].lower(), text=text,
                  location=where, heading_path=(table.title.split(" > ")[-1],) if table.title else ())
    return Hit(chunk=chunk, score=1.0, rank=0, strategy="table")


def _result_lines(query: TableQuery | None, result: QueryResult) -> list[str]:
    """The result in words: 'Total revenue, 2022: 17,606'; a change with its difference and percentage; a
    top-N list; else the result table. Figures of a column with a unit keep it as the cells print it
    ('Share: 37.7%', '$1,250'); a difference of two percentages is in percentage points."""
    rows, names = result.rows, result.columns
    figure, points = _with_unit(query)
    if query is not None and query.op == "lookup" and rows:
        value = rows[0][names.index('value')]
        if figure is shown and _percent_row(query) and isinstance(value, (int, float)) and not isinstance(value, bool):
            return [f"{query.what}: {shown(value)}%"]  # "Deductions as a % of Gross Income" in a column of euros
        return [f"{query.what}: {figure(value)}{_at_scale(value, query)}"]
    if query is not None and query.op == "change" and rows:
        row = dict(zip(names, rows[0], strict=True))
        return [f"{query.what}: from {figure(row['from'])} to {figure(row['to'])}, a difference of "
                f"{points(row['difference'])} ({shown(row['percent_change'])}%)"]
    if query is not None and query.op == "cell" and rows:
        if len(rows) > 1:
            return ["Result:", f"{query.what}: more than one row holds these values; the first two:",
                    *(figure(r[names.index("value")]) for r in rows)]
        return [f"{query.what}: {figure(rows[0][names.index('value')])}"]
    if query is not None and query.op == "ratio" and rows:
        row = dict(zip(names, rows[0], strict=True))
        first, second = query.what.split(" to ", 1)
        # a part of a whole also as the percentage people ask it in ("effective tax rate": 0.204, 20.4%)
        share = f" ({shown(round(row['ratio'] * 100, 2))}%)" if isinstance(row["ratio"], (int, float)) \
            and 0 < abs(row["ratio"]) < 1 and "ratio" not in query.named.lower() else ""  # a current ratio: 0.68
        named = f"{query.named}: " if query.named else ""  # "operating margin: Operating income, 2021: ..."
        return [f"{named}{first}: {figure(row['from'])}; {second}: {figure(row['to'])}; ratio {shown(row['from'])} / "
                f"{shown(row['to'])} = {shown(row['ratio'])}{share}"]
    if query is not None and query.op == "series" and rows:
        row = dict(zip(names, rows[0], strict=True))
        span = query.what.rsplit(", ", 1)
        start, end = span[-1].split(" to ")
        function = query.what.split(" of ", 1)[0] if query.what.split(" of ", 1)[0] in _OF_ROWS else "avg"
        many = (f" ({_OF_ROWS[function]} over {shown(row['rows_from'])} and {shown(row['rows_to'])} rows)"
                if (row["rows_from"] or 0) > 1 or (row["rows_to"] or 0) > 1 else "")
        return [f"{span[0]}: {start}: {figure(row['from'])}; {end}: {figure(row['to'])}; a difference of "
                f"{points(row['difference'])} ({shown(row['percent_change'])}%); {shown(row['to'])} / "
                f"{shown(row['from'])} = {shown(row['ratio'])} times{many}"]
    if query is not None and query.op == "rows" and rows:
        return [f"{query.what.split(':')[0]}:", *(f"{shown(r[names.index('label')])}: {figure(r[names.index('value')])}"
                                                  for r in rows)]
    if query is not None and query.op.startswith("top") and rows:
        # One line, so that the answer's claim names both what was ranked and the row that came first.
        month = query.what.endswith("by month")
        ranked = [f"{_month(r[names.index('label')]) if month else _label(r[names.index('label')])} "
                  f"({figure(r[names.index('value')])})" for r in rows[:MAX_SHOWN_ROWS]]
        return [f"{query.what}: {'; '.join(ranked)}"]
    if query is not None and query.op == "header" and rows:  # the table's columns, as its header row names them
        names = [c.name for c in query.table.columns]
        count = rows[0][0]
        return [f"{query.table.name}: {len(names)} column{'s' if len(names) != 1 else ''} ({', '.join(names)}) and "
                f"{shown(count)} row{'s' if count != 1 else ''}"]
    if query is not None and query.op == "cells" and rows:  # a row the question points at: each of its cells
        row = dict(zip(names, rows[0], strict=True))
        cells = [f"{c.name}: {shown(row[c.sql])}" for c in query.table.columns if row.get(c.sql) not in (None, "")]
        return [f"{query.what}: {'; '.join(cells)}"]
    if query is not None and rows and "value" in names:
        counted = f" (over {shown(rows[0][names.index('rows')])} rows)" if "rows" in names else \
            f" (over {shown(rows[0][names.index('cells')])} cells)" if "cells" in names else ""
        return [f"{query.what}: {figure(rows[0][names.index('value')])}{counted}"]
    if query is not None and query.op == "count" and rows:
        return [f"number of {query.what}: {shown(rows[0][0])}"]
    table = [" | ".join(names), *(" | ".join(shown(v) for v in r) for r in rows[:MAX_SHOWN_ROWS])]
    return ["Result:", *table] + ([f"(first {MAX_SHOWN_ROWS} rows shown)"] if len(rows) > MAX_SHOWN_ROWS else [])


_OF_ROWS = {"sum": "sums", "avg": "averages", "max": "maxima", "min": "minima"}  # a series' or groups' figure
_PREFIXED = ("$", "€", "£")  # Column.unit values written before the number; the others ("%", "x") after it


def _with_unit(query: TableQuery | None) -> tuple[Callable[[object], str], Callable[[object], str]]:
    """(figure, difference) formatters for the value column `query` reads: its unit as the cells write it
    ("37.7%", "$1,250", "2.5x"); a difference of percentages in percentage points. Plain shown() for a query
    reading no column with a unit, or a count."""
    column = query.table.columns[query.columns[-1]] if query is not None and query.columns else None
    unit = column.unit if column is not None and query.op != "count" else ""
    if not unit:
        return shown, shown

    def figure(value) -> str:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return shown(value)
        text = shown(value)
        if unit in _PREFIXED:
            return f"-{unit}{text[1:]}" if text.startswith("-") else f"{unit}{text}"
        return f"{text}{unit}"

    def difference(value) -> str:
        return f"{shown(value)} percentage points" if unit == "%" and isinstance(value, (int, float)) else figure(value)

    return figure, difference


# a row of per-share figures, which "(In millions, except per share data)" leaves unscaled
_PER_SHARE = re.compile(r"\bper\s+(?:common\s+|diluted\s+|basic\s+)?share\b|\bEPS\b|^\s*(?:basic|diluted)\b",
                        re.IGNORECASE)


def _at_scale(value, query: TableQuery) -> str:
    """A figure of a table stated "in thousands" (or millions) as a reader says it: " ($737.9 million)" beside
    737,877 in thousands; '' for a table without a scale, a percentage, a per-share figure or one under a
    million."""
    column = query.table.columns[query.columns[-1]] if query.columns else None
    unit = column.unit if column is not None else ""
    labels = query.table.labels
    label = labels[query.rows[0] - 1] if len(query.rows) == 1 and 0 < query.rows[0] <= len(labels) else ""
    if query.table.scale == 1.0 or unit in ("%", "x") or _percent_row(query) or _PER_SHARE.search(label) \
            or not isinstance(value, (int, float)) or isinstance(value, bool):
        return ""
    amount = value * query.table.scale
    if abs(amount) >= 1e9:
        words = f"{abs(amount) / 1e9:,.2f} billion"
    elif abs(amount) >= 1e6:
        words = f"{abs(amount) / 1e6:,.1f} million"
    else:
        return ""
    return f" ({'-' if amount < 0 else ''}{unit if unit in _PREFIXED else ''}{words})"


_PERCENT_LABEL = re.compile(r"(?<![\w.])%|\bper\s?cent(?:age)?\b", re.IGNORECASE)


def _percent_row(query: TableQuery) -> bool:
    """Whether the one row a lookup reads says its figures are percentages ("Deductions as a % of Gross Income",
    "Percent change"), whatever the column's unit."""
    labels = query.table.labels
    return len(query.rows) == 1 and 0 < query.rows[0] <= len(labels) \
        and bool(_PERCENT_LABEL.search(labels[query.rows[0] - 1]))


def _label(value) -> str:
    """A row's name as the table has it: a year or an id stays without thousands separators (1810, not 1,810)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return shown(value)


def _month(value) -> str:
    """'07' -> 'July' (a month a query grouped by)."""
    text = str(value)
    return _MONTHS[int(text) - 1] if text.isdigit() and 1 <= int(text) <= 12 else text


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def _location(table: TableInfo, query: TableQuery | None) -> Location:
    """Where the passage points: the cells of a sheet it read, else the table's page, slide or paragraph."""
    where = table.location
    if where.sheet is not None and query is not None and query.rows:
        row = table.row_locations[query.rows[0] - 1] if query.rows[0] <= len(table.row_locations) else where
        return row
    return where


def _distinct(tables: TableSource, table: TableInfo, names: Sequence[str] = (),
              layout: Layout | None = None) -> dict[int, list[str]]:
    """The distinct values of each text column (none for a statement's label column: its rows are the labels).
    A column with more than MAX_DISTINCT values gives its first ones and, besides, any that is one of `names`
    (the names the question gives, looked up: a title in a 3,000-row list). `layout`: a statement's headings."""
    out: dict[int, list[str]] = {}
    wanted = ", ".join("'" + n.replace("'", "''") + "'" for n in dict.fromkeys(v for n in names for v in bases(n.lower())))
    # a statement names each row once under its heading ("Basic" and "Diluted" under earnings per share and again
    # under average shares outstanding); a label repeated under one heading is a value rows share
    layout = layout or Layout()
    keys = [((layout.sections or {}).get(row, ""), label) for row, label in enumerate(table.labels, start=1)
            if row not in layout.empty]
    for i, column in enumerate(table.columns):
        # A statement's first column names its rows (each once); dated or repeated values are data to filter on
        statement_labels = i == 0 and table.n_rows <= len(table.labels) and any(c.numeric for c in table.columns) \
            and not (table.labels and _ISO_DATE.match(table.labels[0])) and len(set(keys)) == len(keys)
        if column.numeric or statement_labels:
            continue
        name = f'"{column.sql}"'
        result = tables.query(f'SELECT DISTINCT {name} FROM "{table.physical}" WHERE {name} IS NOT NULL AND {name} '
                              f"<> '' LIMIT {MAX_DISTINCT + 1}", max_rows=MAX_DISTINCT + 1)
        if not result.ok:
            continue
        cells = [str(r[0]) for r in result.rows[:MAX_DISTINCT]]
        if len(result.rows) > MAX_DISTINCT and wanted:
            found = tables.query(f'SELECT DISTINCT {name} FROM "{table.physical}" WHERE lower(trim(CAST({name} AS '
                                 f"VARCHAR))) IN ({wanted}) LIMIT 10", max_rows=10)
            cells += [str(r[0]) for r in found.rows if str(r[0]) not in cells] if found.ok else []
        out[i] = cells
    return out


def _layout(tables: TableSource, table: TableInfo) -> Layout:
    """A statement's heading rows (a label and no figure) and the heading each row below one stands under."""
    numeric = [c for c in table.columns[1:] if c.numeric]
    if not table.labels or not numeric or len(table.labels) < table.n_rows:
        return Layout()
    empty = " AND ".join(f'"{c.sql}" IS NULL' for c in numeric)
    result = tables.query(f'SELECT "_row" FROM "{table.physical}" WHERE {empty}', max_rows=table.n_rows)
    return Layout.of(table.labels, [r[0] for r in result.rows]) if result.ok else Layout()


def _same_place(table: Location, chunk: Location) -> bool:
    if table.sheet is not None:
        return chunk.sheet == table.sheet
    return any(getattr(table, f) is not None and getattr(table, f) == getattr(chunk, f)
               for f in ("page", "slide", "paragraph"))


def shown(value) -> str:
    """A result value as a document would print it: 17,606; 11.53; text as is."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return re.sub(r"\s+", " ", str(value))


def _scale_name(factor: float) -> str:
    return {1e3: "thousands", 1e6: "millions", 1e9: "billions", 1e12: "trillions"}.get(factor, f"units of {factor:g}")
