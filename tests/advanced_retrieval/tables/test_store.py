"""advanced_retrieval.tables.store: a document's tables written in one transaction, typed, queried read-only
with a time and a row limit, pruned with the documents the library no longer holds."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from advanced_retrieval.tables import TableStore
from document_processor import DataTable, Location


def _sales(rows: int = 5) -> DataTable:
    regions = ["North", "South", "East", "West", "Central"]
    body = tuple((regions[i % 5], f"{1000 + 10 * i:,}", f"({i})" if i % 4 == 3 else str(i), f"{i}%")
                 for i in range(rows))
    return DataTable("Sales", "Sales", ("Region", "Units", "Change", "Share"), body,
                     Location(sheet="Sales", cells=f"A1:D{rows + 1}"),
                     tuple(Location(sheet="Sales", cells=f"A{r + 2}:D{r + 2}") for r in range(rows)),
                     ("A", "B", "C", "D"))


def test_tables_are_typed_and_their_cells_can_be_cited(tmp_path):
    store = TableStore(tmp_path / "tables.duckdb")
    assert store.write("d1", "sales.xlsx", [_sales()]) == 1
    (info,) = store.tables()
    assert [(c.name, c.numeric, c.unit) for c in info.columns] == [
        ("Region", False, ""), ("Units", True, ""), ("Change", True, ""), ("Share", True, "%")]
    result = store.query(f'SELECT sum("Units"), min("Change") FROM "{info.physical}"')
    assert result.ok and result.rows == ((5100.0, -3.0),)  # "1,000" + ... ; "(3)" is -3
    assert info.cell_label(3, 1) == "Sales!B4" and info.range_label([1, 5], 1) == "Sales!B2:B6"
    assert info.labels == ("North", "South", "East", "West", "Central")


def test_a_column_written_with_decimal_commas_adds_up_as_written(tmp_path):
    body = (("Control panel", "2", "10 793,08"), ("Cable", "40", "2 180,00"), ("Total", "", "12 973,08"))
    table = DataTable("Estimate", "Estimate", ("Item", "Quantity", "Amount, EUR"), body, Location(paragraph=3),
                      (Location(paragraph=3),) * 3)
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("d1", "estimate.docx", [table])
    (info,) = store.tables()
    assert [c.numeric for c in info.columns] == [False, True, True]
    result = store.query(f'SELECT sum("Amount, EUR") FROM "{info.physical}" WHERE "Item" <> \'Total\'')
    assert result.ok and result.rows == ((12973.08,),)


def test_a_documents_tables_are_replaced_deleted_and_pruned(tmp_path):
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("d1", "a.xlsx", [_sales(), _sales(3)])
    store.write("d2", "b.xlsx", [_sales()])
    store.write("d1", "a.xlsx", [_sales(2)])  # a new version of the document replaces its tables
    assert sorted((t.doc_id, t.n_rows) for t in store.tables()) == [("d1", 2), ("d2", 5)]
    assert store.documents() == {"d1", "d2"}
    store.delete(["d2"])
    assert store.documents() == {"d1"}
    store.write("d3", "c.csv", [])  # read, and holds no table
    assert store.prune(["d3"]) == ["removed the tables of 1 document(s) no longer indexed"]
    assert store.documents() == {"d3"} and store.tables() == []
    physical = store.query("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 't\\_%' ESCAPE '\\'")
    assert physical.rows == ((0,),)  # the rows went with their registry entries


@pytest.mark.parametrize("sql, why", [
    ("DROP TABLE table_index", "only a SELECT"),
    ("SELECT 1; SELECT 2", "one statement"),
    ("SELECT * FROM read_csv('/etc/passwd')", "PermissionException"),
    ("SELECT nonsense FROM", "not valid SQL"),
    ("", "empty query"),
])
def test_only_one_read_only_select_runs_and_errors_come_back_as_text(tmp_path, sql, why):
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("d1", "a.xlsx", [_sales()])
    result = store.query(sql)
    assert not result.ok and why in result.error


def test_a_query_is_stopped_at_its_time_limit_and_cut_at_its_row_limit(tmp_path):
    store = TableStore(tmp_path / "tables.duckdb")
    store.write("d1", "a.xlsx", [_sales()])
    slow = store.query("SELECT count(*) FROM range(100000000) a, range(100000000) b WHERE a.range < b.range",
                       seconds=0.3)
    assert not slow.ok and "stopped after" in slow.error
    many = store.query("SELECT * FROM range(1000)", max_rows=10)
    assert many.ok and len(many.rows) == 10 and many.truncated


def test_a_store_never_written_answers_empty(tmp_path):
    store = TableStore(tmp_path / "absent" / "tables.duckdb")
    assert store.tables() == [] and store.documents() == set() and not store.query("SELECT 1").ok
    store.delete(["x"])  # nothing to delete is no error
    assert not (tmp_path / "absent").exists()


def test_a_reader_waits_out_another_process_s_write(tmp_path):
    path = tmp_path / "tables.duckdb"
    TableStore(path).write("d1", "a.xlsx", [_sales()])
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, time
        con = duckdb.connect({str(path)!r})
        print("held", flush=True)
        time.sleep(1.0)
        con.close()
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        result = TableStore(path, lock_wait=20).query('SELECT count(*) FROM table_index')
        assert result.ok and result.rows == ((1,),)  # it waited for the other process's connection to close
    finally:
        holder.wait(timeout=30)


def test_a_write_killed_midway_leaves_all_of_a_documents_tables_or_none(tmp_path):
    path = tmp_path / "tables.duckdb"
    TableStore(path).write("d0", "kept.xlsx", [_sales()])
    script = textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {str(__import__("pathlib").Path(__file__).resolve().parents[3])!r})
        from advanced_retrieval.tables import TableStore
        from tests.advanced_retrieval.tables.test_store import _sales
        import advanced_retrieval.tables.store as store
        real = store._typed
        calls = []
        def dying(table):
            calls.append(1)
            if len(calls) == 3:
                os.kill(os.getpid(), 9)  # SIGKILL in the middle of the document's third table
            return real(table)
        store._typed = dying
        TableStore({str(path)!r}).write("d1", "big.xlsx", [_sales(), _sales(4), _sales(3)])
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == -9, run.stderr
    store = TableStore(path)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not store.documents():
        time.sleep(0.1)
    assert store.documents() == {"d0"} and [t.doc_id for t in store.tables()] == ["d0"]  # none of d1's


def test_a_tables_file_whose_creation_was_cut_short_is_finished_not_refused(tmp_path):
    """Killed between DuckDB creating the file and writing its schema: the next open finds no index tables.
    (A SIGKILL during ingestion left exactly this, and the library then refused to open.)"""
    import duckdb

    path = tmp_path / "tables.duckdb"
    duckdb.connect(str(path)).close()  # the file exists, its schema was never written
    store = TableStore(path)
    assert store.documents() == set() and store.tables() == [] and store.prune([]) == []
    store.write("d", "budget.csv", [DataTable("budget", "budget", ("item", "cost"), (("pumps", "21"),),
                                              Location(sheet="budget", cells="A1:B2"))])
    assert store.documents() == {"d"}


def test_a_tables_file_cut_short_before_its_last_column_is_finished_too(tmp_path):
    import duckdb

    path = tmp_path / "tables.duckdb"
    with duckdb.connect(str(path)) as con:  # the two CREATEs ran, the ALTER adding the outline did not
        con.execute("CREATE TABLE table_index (table_id VARCHAR PRIMARY KEY, doc_id VARCHAR, file_name VARCHAR, "
                    "name VARCHAR, title VARCHAR, note VARCHAR, scale DOUBLE, columns VARCHAR, location VARCHAR, "
                    "row_locations VARCHAR, column_refs VARCHAR, n_rows INTEGER, physical VARCHAR, labels VARCHAR)")
        con.execute("CREATE TABLE document_index (doc_id VARCHAR PRIMARY KEY, file_name VARCHAR, tables INTEGER)")
        con.execute("INSERT INTO document_index VALUES ('d', 'a.csv', 0)")
    store = TableStore(path)
    assert store.outline("d") is None and store.documents() == {"d"}  # kept, and the column added


def test_the_listing_is_read_once_until_any_process_writes(tmp_path, monkeypatch):
    path = tmp_path / "tables.duckdb"
    store, other = TableStore(path), TableStore(path)
    store.write("d1", "a.xlsx", [_sales()])
    reads = []
    real = TableStore._connect
    monkeypatch.setattr(TableStore, "_connect", lambda self, **kw: (reads.append(kw), real(self, **kw))[1])
    first = store.tables()
    assert [t.doc_id for t in first] == ["d1"] and store.tables() == first and store.tables(["d1"]) == first
    assert store.tables(["nothing"]) == [] and len(reads) == 1  # one read for four listings
    other.write("d2", "b.xlsx", [_sales(3)])  # another store of this process
    assert [t.doc_id for t in store.tables()] == ["d1", "d2"]
    subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from advanced_retrieval.tables import TableStore
        TableStore({str(path)!r}).delete(["d1"])
    """)], check=True, timeout=120, cwd=str(__import__("pathlib").Path(__file__).parents[3]))
    assert [t.doc_id for t in store.tables()] == ["d2"]  # another process's write
    assert [t.doc_id for t in store.tables(["d2"])] == ["d2"] and store.tables(["d1"]) == []


def test_the_reads_of_one_question_share_one_connection_and_writes_wait_for_it(tmp_path, monkeypatch):
    import threading

    from advanced_retrieval.tables.store import TableStoreError

    path = tmp_path / "tables.duckdb"
    store = TableStore(path)
    store.write("d1", "a.xlsx", [_sales()])
    opened = []
    real = TableStore._open
    monkeypatch.setattr(TableStore, "_open", lambda self, write: (opened.append(write), real(self, write))[1])
    written = threading.Event()
    with store.reading():
        table = store.tables()[0]
        assert store.rows(table, 1, 2)[0][1] == "North"
        assert store.query(f'SELECT count(*) FROM "{table.physical}"').rows == ((5,),)
        with store.reading():  # nested: the same connection
            assert store.query("SELECT 1").rows == ((1,),)
        with pytest.raises(TableStoreError, match="no write inside"):
            store.write("d2", "b.xlsx", [_sales(2)])
        writer = threading.Thread(target=lambda: (TableStore(path).write("d3", "c.xlsx", [_sales(3)]), written.set()))
        writer.start()
        assert not written.wait(0.5)  # another thread's write waits for the block to end
        assert opened == [False]  # one connection for every read of the block
    writer.join(timeout=30)
    assert written.is_set() and sorted(t.doc_id for t in store.tables()) == ["d1", "d3"]
