"""advanced_retrieval.ingest.disk: which failures are the disk's doing (the queue pauses) and which the file's."""

from __future__ import annotations

import shutil

from advanced_retrieval import IngestResult
from advanced_retrieval.ingest.disk import LOW_DISK_BYTES, disk_cause


def failed(reason: str, kind: str = "store") -> IngestResult:
    return IngestResult("a.txt", "failed", reason=reason, kind=kind)


def test_a_refused_write_is_the_disks_doing_and_a_bad_file_is_its_own(tmp_path):
    full = "Chroma at x failed: database or disk is full"
    assert disk_cause(failed(full), tmp_path, 10) == full
    assert disk_cause(failed("could not save the keyword index: [Errno 28] No space left on device"), tmp_path, 10)
    assert disk_cause(failed("the file is encrypted", kind="encrypted"), tmp_path, 10) == ""  # the file's own
    assert disk_cause(IngestResult("a.txt", "indexed"), tmp_path, 10) == ""
    if shutil.disk_usage(tmp_path).free > LOW_DISK_BYTES:  # a store failure with room on the disk is no disk's
        assert disk_cause(failed("Chroma at x failed: Error in compaction"), tmp_path, 10) == ""


def test_a_store_failure_with_almost_nothing_free_is_taken_for_a_full_disk(tmp_path):
    huge = shutil.disk_usage(tmp_path).free  # a file twice the free space: the disk cannot hold what it needs
    cause = disk_cause(failed("Chroma at x failed: Error in compaction"), tmp_path, huge)
    assert cause.startswith("only ") and "MB free on the disk (Chroma at x failed: Error in compaction)" in cause
