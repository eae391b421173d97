"""A copy of the base library (conftest `base`) with one kind of damage, and the audit of a whole library, both through
testing/damage.py's fresh processes."""

from __future__ import annotations

from pathlib import Path

from testing import damage  # the cases and the fresh-process steps, shared with bench/damage.py


def damaged(base: Path, tmp_path: Path, case: str) -> Path:
    data = tmp_path / "data"
    import shutil

    shutil.copytree(base, data)
    damage.CASES[case](data)
    return data


def assert_whole(data: Path) -> dict:
    audit = damage.child_audit(data)
    assert audit["opened"] and audit["docs"] == 4 and audit["consistent"] and audit["unreachable"] == 0, audit
    assert audit["originals"] == 4
    return audit
