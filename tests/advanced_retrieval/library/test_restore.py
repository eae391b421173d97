"""A Chroma database that lost its data or cannot be read: reported in one line, nothing removed, rebuilt from the kept
originals (issue 16, items 2, 8, 9). Every step runs in a fresh process, as a user's next start would (embedded
Chroma caches an opened database per process), through testing/damage.py, which bench/damage.py also runs to measure
these cases against an older checkout for docs/reliability.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testing import damage  # the cases and the fresh-process steps, shared with bench/damage.py
from tests.helpers.damaged_library import assert_whole, damaged

NAMES = [f"file{i}.txt" for i in range(4)]


def saved_bm25_count(data: Path) -> int:
    current = (data / "bm25" / "CURRENT").read_text().strip()
    return json.loads((data / "bm25" / current).read_text())["count"]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["sqlite deleted", "sqlite emptied"])
def test_a_chroma_database_that_lost_its_data_is_an_error_and_every_original_is_kept(base, tmp_path, case):
    data = damaged(base, tmp_path, case)
    chunks = saved_bm25_count(data)
    for argv in (("docs",), ("search", "topic1 w5"), ("ingest", str(data / "originals"))):
        run = damage.cli_outcome(data, *argv)
        assert run["exit"] == 1 and not run["traceback"], run
        assert run["stderr"].startswith("error: the library at") and "cli.py rebuild" in run["stderr"], run
    assert damage.child_audit(data)["originals"] == 4 and saved_bm25_count(data) == chunks  # nothing removed

    rebuilt = damage.cli_outcome(data, "rebuild")
    assert rebuilt["exit"] == 0 and not rebuilt["traceback"], rebuilt
    assert_whole(data)
    listed = damage.child("cli", str(data), "docs", "--json")
    assert sorted(d["file_name"] for d in json.loads(listed.stdout)) == NAMES  # under their own names again


@pytest.mark.slow
@pytest.mark.parametrize("case", ["sqlite truncated", "sqlite header garbled"])
def test_an_unreadable_chroma_file_is_a_one_line_error_and_rebuild_sets_it_aside(base, tmp_path, case):
    data = damaged(base, tmp_path, case)
    for argv in (("docs",), ("search", "topic1 w5")):
        run = damage.cli_outcome(data, *argv)
        assert run["exit"] == 1 and not run["traceback"], run
        assert "cannot be opened" in run["stderr"] and "cli.py rebuild" in run["stderr"], run
    rebuilt = damage.cli_outcome(data, "rebuild")
    assert rebuilt["exit"] == 0 and not rebuilt["traceback"], rebuilt
    assert_whole(data)
    assert [p.name.startswith("chroma.damaged-") for p in data.iterdir() if p.name.startswith("chroma.")] == [True]
