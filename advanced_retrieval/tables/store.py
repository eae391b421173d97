"""The tables of every document as data, in one DuckDB file of the data directory (tables.duckdb).

Each DataTable becomes one DuckDB table: `_row` (1-based, the row of the source table), then one column per
source column, DOUBLE where most of its cells are numbers (values.number: "1,234", "(56)", "12%", and "3 449,18"
in a column written with decimal commas), else text.
A registry (`table_index`) keeps what a table is and where its cells are (file, title, note, scale, columns,
one Location per row), and `document_index` which documents were read for tables. A document's tables are
written in one transaction, so a kill leaves all of them or none; tables of documents the library no longer
holds are pruned at open (KnowledgeBase).

DuckDB lets one process write a file, or several read it, not both at once; the app and `cli.py` may share a
data directory. So every operation opens the file, works and closes it (a few milliseconds), one at a time per
process, and waits up to `lock_wait` seconds for another process's write. Queries run read-only, with external
access (files, URLs) switched off, one SELECT statement only, interrupted after their time limit and cut to a
row limit: what a model writes is run, never trusted.

Error policy: a query that is not a single SELECT, fails, or runs too long returns a QueryResult with `error`
set (one line, for the Reasoning panel); a store that cannot be opened raises TableStoreError.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from advanced_retrieval.tables.spans import spanned
from advanced_retrieval.tables.values import decimal_comma, iso_dates, number, scale, space_grouped, unit
from document_processor import DataTable, Location

_YEARISH = re.compile(r"(?:19|20)\d\d(?:\.0)?")
NUMERIC_SHARE = 0.6  # a column is numeric when at least this share of its filled cells are numbers
UNIT_SHARE = 0.8  # a column's unit other than a currency is one this share of its figures print
_CURRENCIES = frozenset("$€£¥₽") | {"руб.", "руб", "р."}
LOCK_WAIT_S = 10.0
QUERY_SECONDS = 5.0
MAX_ROWS = 200
MAX_LABELS = 300
_CONFIG = {"enable_external_access": False}
_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()
_WRITES: dict[str, int] = {}  # writes this process made to each tables file (a listing read before one is stale)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS table_index (table_id VARCHAR PRIMARY KEY, doc_id VARCHAR, file_name VARCHAR, "
    "name VARCHAR, title VARCHAR, note VARCHAR, scale DOUBLE, columns VARCHAR, location VARCHAR, "
    "row_locations VARCHAR, column_refs VARCHAR, n_rows INTEGER, physical VARCHAR, labels VARCHAR)",
    "CREATE TABLE IF NOT EXISTS document_index (doc_id VARCHAR PRIMARY KEY, file_name VARCHAR, tables INTEGER)",
    "ALTER TABLE document_index ADD COLUMN IF NOT EXISTS outline VARCHAR",
)


class TableStoreError(Exception):
    """The tables file cannot be opened or written (damaged, locked too long, disk full); the message says why."""


@dataclass(frozen=True)
class Column:
    """One column of a stored table: its name as printed, its SQL name, whether it holds numbers, their unit."""

    name: str
    sql: str
    numeric: bool
    unit: str = ""
    ref: str = ""  # a sheet's column letter
    whole: bool = False  # numeric, and every number in it is a whole one (counts, not measures)


@dataclass(frozen=True)
class TableInfo:
    """What the registry knows of one stored table (not its rows)."""

    table_id: str
    doc_id: str
    file_name: str
    name: str
    title: str
    note: str
    scale: float
    columns: tuple[Column, ...]
    location: Location
    row_locations: tuple[Location, ...]
    n_rows: int
    physical: str  # the DuckDB table holding its rows
    labels: tuple[str, ...] = ()  # the first column's cell of each row (labels[i] is _row i + 1), MAX_LABELS at most

    @property
    def text(self) -> str:
        """What the table is about, in words: title, note, column names, row labels (for matching a question)."""
        return " ".join([self.title, self.note, self.name, *(c.name for c in self.columns), *self.labels])

    def cell_label(self, row: int, column: int) -> str:
        """Where one cell is ('Budget!C7'; 'p. 47 table 1, row 3, column "2022"'); `row` is 1-based (_row),
        `column` 0-based into `columns`."""
        where = self.row_locations[row - 1] if 0 < row <= len(self.row_locations) else self.location
        col = self.columns[column] if 0 <= column < len(self.columns) else None
        if where.sheet is not None and col is not None and col.ref and where.cells:
            digits = re.search(r"\d+", where.cells)
            return f"{where.sheet}!{col.ref}{digits.group(0)}" if digits else where.label()
        head = f', column "{col.name}"' if col is not None else ""
        return f"{self.file_name}, {self.name}, row {row}{head}"

    def range_label(self, rows: Sequence[int], column: int) -> str:
        """A column's cells over `rows` ('Budget!C5:C18'; 'p. 47 table 1, rows 2-9, column "2022"')."""
        if not rows:
            return self.name
        first, last = min(rows), max(rows)
        if first == last:
            return self.cell_label(first, column)
        start, end = self.cell_label(first, column), self.cell_label(last, column)
        if "!" in start and "!" in end:
            return f"{start}:{end.split('!', 1)[1]}"
        col = self.columns[column] if 0 <= column < len(self.columns) else None
        return f"{self.file_name}, {self.name}, rows {first}-{last}" + (f', column "{col.name}"' if col else "")


@dataclass(frozen=True)
class QueryResult:
    """A query's answer: column names, rows (at most the row limit), whether more were cut, or the error."""

    sql: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    truncated: bool = False
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass
class TableStore:
    """The tables file at `path` (created on the first write)."""

    path: Path
    lock_wait: float = LOCK_WAIT_S
    _lock: threading.RLock = field(init=False, repr=False)
    _held: object = field(default=None, init=False, repr=False)  # the read connection reading() holds
    _whole: int | None = field(default=None, init=False, repr=False)  # inode of the file last seen with its schema
    # The last listing of every table, and the file's state when it was read (see _state): a question lists the
    # library's tables several times (candidates, named files and sheets, headed tables), and a listing reads
    # every table's columns and row locations (~90 ms for 700 tables of six filings).
    _listed: tuple[tuple, list[TableInfo]] | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self.path = Path(self.path)
        self._key = str(self.path.resolve())
        with _LOCKS_GUARD:
            self._lock = _LOCKS.setdefault(self._key, threading.RLock())

    # -- writes ----------------------------------------------------------------------------------------------
    def write(self, doc_id: str, file_name: str, tables: Sequence[DataTable], outline: dict | None = None) -> int:
        """Store a document's tables (and its outline, library.outline.Outline.to_dict()) in place of any it had,
        in one transaction; returns how many tables were stored."""
        import pyarrow as pa

        with self._connect(write=True) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                self._drop(con, [doc_id])
                for table in tables:
                    table_id = uuid.uuid4().hex[:16]
                    columns, arrays = _typed(table)
                    physical = f"t_{table_id}"
                    con.register("incoming", pa.table(arrays))
                    con.execute(f'CREATE TABLE "{physical}" AS SELECT * FROM incoming')
                    con.unregister("incoming")
                    con.execute("INSERT INTO table_index VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                        table_id, doc_id, file_name, table.name, table.title, table.note,
                        scale(table.note, table.title, table.columns[0] if table.columns else ""),
                        json.dumps([c.__dict__ for c in columns]), json.dumps(table.location.to_dict()),
                        json.dumps([loc.to_dict() for loc in table.row_locations]),
                        json.dumps(list(table.column_refs)), len(table.rows), physical,
                        json.dumps(_labels(table))])
                con.execute("INSERT INTO document_index (doc_id, file_name, tables, outline) VALUES (?, ?, ?, ?)",
                            [doc_id, file_name, len(tables), json.dumps(outline) if outline is not None else None])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
        return len(tables)

    def delete(self, doc_ids: Iterable[str]) -> None:
        """Remove these documents' tables (nothing when they have none)."""
        doc_ids = list(doc_ids)
        if not doc_ids or not self.path.exists():
            return
        with self._connect(write=True) as con:
            con.execute("BEGIN TRANSACTION")
            self._drop(con, doc_ids)
            con.execute("COMMIT")

    def clear(self) -> None:
        """Remove every table."""
        self.delete(self.documents())

    def prune(self, keep: Iterable[str]) -> list[str]:
        """Remove the tables of documents not in `keep` (the library's ready documents); what was removed."""
        gone = sorted(self.documents() - set(keep))
        if gone:
            self.delete(gone)
        return [f"removed the tables of {len(gone)} document(s) no longer indexed"] if gone else []

    def _drop(self, con, doc_ids: list[str]) -> None:
        marks = ", ".join("?" for _ in doc_ids)
        for (physical,) in con.execute(f"SELECT physical FROM table_index WHERE doc_id IN ({marks})",
                                       doc_ids).fetchall():
            con.execute(f'DROP TABLE IF EXISTS "{physical}"')
        con.execute(f"DELETE FROM table_index WHERE doc_id IN ({marks})", doc_ids)
        con.execute(f"DELETE FROM document_index WHERE doc_id IN ({marks})", doc_ids)

    # -- reads -----------------------------------------------------------------------------------------------
    def documents(self) -> set[str]:
        """The documents that were read for tables (with or without any)."""
        if not self.path.exists():
            return set()
        with self._connect() as con:
            return {doc_id for (doc_id,) in con.execute("SELECT doc_id FROM document_index").fetchall()}

    def outline(self, doc_id: str) -> dict | None:
        """The outline stored with a document (None: the document was read before outlines were kept)."""
        if not self.path.exists():
            return None
        with self._connect() as con:
            row = con.execute("SELECT outline FROM document_index WHERE doc_id = ?", [doc_id]).fetchone()
        return json.loads(row[0]) if row and row[0] else None

    def set_outline(self, doc_id: str, outline: dict) -> None:
        """Keep the outline of a document already read for tables (one built from its stored chunks)."""
        with self._connect(write=True) as con:
            con.execute("UPDATE document_index SET outline = ? WHERE doc_id = ?", [json.dumps(outline), doc_id])

    def tables(self, doc_ids: Iterable[str] | None = None) -> list[TableInfo]:
        """The stored tables (of `doc_ids` when given), in the order they were written per document. The listing
        is read again only when the file changed since the last one (a write of this process or another's)."""
        if not self.path.exists():
            return []
        state = self._state()
        listed = self._listed
        if listed is None or listed[0] != state:
            with self._connect() as con:
                rows = con.execute("SELECT * FROM table_index ORDER BY doc_id, rowid").fetchall()
            # the state was taken before the read: a write after it changes the state, and the next call reads again
            listed = self._listed = (state, [_info(r) for r in rows])
        if doc_ids is None:
            return list(listed[1])
        wanted = set(doc_ids)
        return [t for t in listed[1] if t.doc_id in wanted]

    def _state(self) -> tuple:
        """What any write changes: this process's count of writes to the file, and the file's and its write-ahead
        log's identity, size and time of last change (another process's write; a file put back by a restore)."""
        seen = []
        for path in (self.path, self.path.with_name(self.path.name + ".wal")):
            try:
                st = path.stat()
                seen.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except FileNotFoundError:
                seen.append(None)
        return (_WRITES.get(self._key, 0), *seen)

    def rows(self, table: TableInfo, first: int = 1, count: int = MAX_ROWS) -> list[tuple]:
        """Rows `first`..first+count-1 of a table as stored (_row first)."""
        with self._connect() as con:
            return con.execute(f'SELECT * FROM "{table.physical}" WHERE _row >= ? ORDER BY _row LIMIT ?',
                               [first, count]).fetchall()

    def query(self, sql: str, *, seconds: float = QUERY_SECONDS, max_rows: int = MAX_ROWS) -> QueryResult:
        """Run one read-only SELECT with a time and a row limit; errors come back in the result, never raised."""
        started = time.monotonic()
        sql = sql.strip().rstrip(";").strip()
        if not self.path.exists():
            return QueryResult(sql, error="no tables have been stored yet")
        try:
            with self._connect() as con:
                problem = _not_a_select(con, sql)
                if problem:
                    return QueryResult(sql, error=problem)
                timer = threading.Timer(seconds, con.interrupt)
                timer.start()
                try:
                    cursor = con.execute(f"SELECT * FROM ({sql}) AS answer LIMIT {int(max_rows) + 1}")
                    rows = cursor.fetchall()
                    names = tuple(d[0] for d in cursor.description)
                finally:
                    timer.cancel()
        except TableStoreError as exc:
            return QueryResult(sql, error=str(exc), seconds=time.monotonic() - started)
        except Exception as exc:  # a model's SQL fails in every way DuckDB has; the reason goes to the user
            took = time.monotonic() - started
            reason = (f"stopped after {seconds:.0f} s" if "interrupt" in type(exc).__name__.lower()
                      else " ".join(str(exc).split())[:300])
            return QueryResult(sql, error=f"{type(exc).__name__}: {reason}", seconds=took)
        return QueryResult(sql, names, tuple(rows[:max_rows]), len(rows) > max_rows, "",
                           time.monotonic() - started)

    # -- connection ------------------------------------------------------------------------------------------
    @contextmanager
    def reading(self):
        """One read connection for the reads inside the block (the tables of one question: its listings, layouts,
        distinct values and queries, ~30 reads), where each read would otherwise open the file again (~30 ms with
        700 tables: DuckDB reads the catalog on every open). The block holds the file for this thread: another
        thread's reads and writes, and another process's writes, wait for its end, so keep it short. Nested
        blocks share the outer one's connection; a write inside one is refused."""
        with self._lock:
            if self._held is not None or not self.path.exists():
                yield
                return
            with self._connect() as con:
                self._held = con
                try:
                    yield
                finally:
                    self._held = None

    @contextmanager
    def _connect(self, *, write: bool = False):
        """One connection for one operation, the only one of this process; waits out another process's write.

        A file without its index tables (created, then the process was killed before its schema was written)
        is finished on first use, as a write: nothing in it is lost, since nothing was ever stored."""
        with self._lock:
            if self._held is not None:
                if write:
                    raise TableStoreError(f"the tables file {self.path} is being read (TableStore.reading): "
                                          "no write inside it")
                yield self._held
                return
            con = self._open(write)
            try:
                inode = self.path.stat().st_ino
                if not write and inode != self._whole and not _has_schema(con):
                    con.close()
                    con = self._open(True)
                    write = True
                if write:
                    for statement in _SCHEMA:
                        con.execute(statement)
                self._whole = inode  # checked once per file, not on every read of the query path
                yield con
            finally:
                con.close()
                if write:
                    _WRITES[self._key] = _WRITES.get(self._key, 0) + 1

    def _open(self, write: bool):
        import duckdb

        deadline = time.monotonic() + self.lock_wait
        while True:
            try:
                if write:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                return duckdb.connect(str(self.path), read_only=not write, config=dict(_CONFIG))
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise TableStoreError(f"the tables file {self.path} cannot be opened: {exc}") from exc
                time.sleep(0.05)
            except duckdb.Error as exc:
                raise TableStoreError(f"the tables file {self.path} cannot be opened: {exc}") from exc


def _has_schema(con) -> bool:
    """Whether the file holds both index tables and the latest of their columns (document_index.outline)."""
    tables = con.execute("SELECT count(*) FROM information_schema.tables "
                         "WHERE table_name IN ('table_index', 'document_index')").fetchone()
    outline = con.execute("SELECT count(*) FROM information_schema.columns "
                          "WHERE table_name = 'document_index' AND column_name = 'outline'").fetchone()
    return bool(tables and tables[0] == 2 and outline and outline[0] == 1)


def _not_a_select(con, sql: str) -> str:
    """'' for exactly one SELECT statement; otherwise why it is refused."""
    import duckdb

    if not sql:
        return "empty query"
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        return f"not valid SQL: {' '.join(str(exc).split())[:200]}"
    if len(statements) != 1:
        return f"one statement is allowed, got {len(statements)}"
    if statements[0].type != duckdb.StatementType.SELECT:
        return f"only a SELECT may run, got {statements[0].type.name}"
    return ""


def _typed(table: DataTable) -> tuple[list[Column], dict]:
    """The table's columns as Arrow arrays: `_row`, then numbers where a column holds mostly numbers."""
    arrays: dict = {"_row": list(range(1, len(table.rows) + 1))}
    columns: list[Column] = []
    taken = {"_row"}
    for i, name in enumerate(table.columns):
        cells = [row[i] if i < len(row) else "" for row in table.rows]
        # "4068816,55", "3 449,18", "39 921 700": the column's convention, not each cell's
        comma = decimal_comma(cells)
        spaced = not comma and space_grouped(cells)
        values = [number(c, comma, spaced) for c in cells]
        filled = [c for c in cells if c.strip()]
        counted = sum(v is not None for v in values)
        # The first column labels a statement's rows; it is a column of figures only when every cell is a number
        # and not a year (a data table's first measure, not "2021", "2022" labelling rows).
        numeric = bool(filled) and (counted >= NUMERIC_SHARE * len(filled) if i > 0 else
                                    counted == len(filled) and not all(_YEARISH.fullmatch(c.strip()) for c in filled))
        sql = _unique(name, taken)
        # the unit of the column's figures: a currency sign printed on some rows (a statement prints "$" on its
        # first and total rows), or a unit nearly all of them print ("%" in a column of shares), not that of
        # one row ("Deductions as a % of Gross Income" under "2006 €")
        shown = [unit(c) for c, v in zip(cells, values, strict=True) if v is not None]
        printed = set(shown) - {""}
        common = printed.pop() if len(printed) == 1 else ""
        if common and common not in _CURRENCIES and shown.count(common) < UNIT_SHARE * len(shown):
            common = ""
        ref = table.column_refs[i] if i < len(table.column_refs) else ""
        whole = numeric and all(v is None or float(v).is_integer() for v in values)
        columns.append(Column(name, sql, numeric, common, ref, whole))
        arrays[sql] = values if numeric else (iso_dates(cells) or cells)
    return columns, arrays


def _labels(table: DataTable) -> list[str]:
    """The first column's cell of each row (labels[i] is row i + 1), for at most MAX_LABELS rows: a statement's
    row labels; a long data table's first column is not read as labels."""
    return [row[0] if row else "" for row in table.rows[:MAX_LABELS]]


def _unique(name: str, taken: set[str]) -> str:
    base = " ".join(name.split())[:60] or "column"
    sql, n = base, 2
    while sql.lower() in {t.lower() for t in taken}:
        sql, n = f"{base} ({n})", n + 1
    taken.add(sql)
    return sql


def _info(row: tuple) -> TableInfo:
    (table_id, doc_id, file_name, name, title, note, scale_, columns, location, row_locations, _refs, n_rows,
     physical, labels) = row
    return TableInfo(table_id, doc_id, file_name, name, title, note, scale_,
                     spanned(Column(**c) for c in json.loads(columns)), Location.from_dict(json.loads(location)),
                     tuple(Location.from_dict(x) for x in json.loads(row_locations)), n_rows, physical,
                     tuple(json.loads(labels)))
