"""advanced_retrieval.library.locking: the write lock."""

from __future__ import annotations

import pytest

from advanced_retrieval import LockTimeout, WriteLock


def test_write_lock_excludes_other_holders_of_the_file(tmp_path):
    path = tmp_path / "write.lock"
    first, second = WriteLock(path), WriteLock(path, timeout=0.2, poll=0.02)  # as two processes would
    with first.hold():
        with second.attempt() as got:
            assert got is False
        with pytest.raises(LockTimeout, match="locked"), second.hold():
            pass
    with second.attempt() as got:
        assert got is True
    with pytest.raises(ValueError):
        WriteLock(path, timeout=0)
