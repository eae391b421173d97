"""document_processor.isolation: parsing in a child of one warm fork server, time and memory limits, a child that dies,
a page that hangs in OCR."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import types
from pathlib import Path

import pytest

from document_processor import DocumentError, Limits, isolation, parse_bytes, parse_file
from document_processor.isolation import _death
from tests.helpers.documents import technical_text


def test_main_script_imports_are_preloaded_for_forkserver_children(tmp_path, monkeypatch):
    script = tmp_path / "launcher.py"
    script.write_text("import json\nfrom os import path\nimport not_a_module_here\nif True:\n    import csv\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__, fake_main.__spec__ = str(script), None
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    isolation._main_script_imports.cache_clear()
    try:
        assert isolation._main_script_imports() == ("json", "os")  # top level only, and importable here
    finally:
        isolation._main_script_imports.cache_clear()


def _forkserver_children() -> list[int]:
    """Live (non-zombie) processes whose parent is the fork server started by this test process."""
    def stat(pid):
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    servers = [p for p in pids if (s := stat(p)) and int(s[1]) == os.getpid()
               and b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes()]
    return [p for p in pids if (s := stat(p)) and int(s[1]) in servers and s[0] != "Z"]


def test_isolated_parse_matches_in_process(deck_pptx):
    calls = []
    isolated = parse_file(deck_pptx, progress=lambda *c: calls.append(c))
    assert isolated == dataclasses.replace(parse_file(deck_pptx, isolate=False), seconds=isolated.seconds)
    assert any(c[0] == "chunking" for c in calls)
    with pytest.raises(DocumentError) as err:
        parse_bytes(b"%PDF-1.4 nothing", "bad.pdf")
    assert err.value.kind == "corrupt"  # errors come back from the child with their kind


def test_every_file_is_read_by_a_child_of_one_warm_fork_server():
    """No file pays for an interpreter start: the readers are imported once, in the fork server, and every file
    is parsed in a fork of it (what that saves is measured in bench/, never asserted here)."""
    import multiprocessing.forkserver as fs

    from document_processor import isolation

    parse_bytes(b"warm the fork server", "warm.txt")
    server = fs._forkserver._forkserver_pid
    for _ in range(3):
        assert parse_bytes(b"tiny text", "tiny.txt").chunks
    assert server is not None and fs._forkserver._forkserver_pid == server
    assert "document_processor.worker" in isolation.PRELOAD


def test_slow_file_times_out_and_the_child_is_gone():
    parse_bytes(b"warm the fork server", "warm.txt")
    slow = technical_text(2500).encode()  # a few seconds of chunking, far beyond the limit
    with pytest.raises(DocumentError) as err:
        parse_bytes(slow, "slow.md", limits=Limits(timeout_s=0.3))
    assert err.value.kind == "timeout" and err.value.reason == "took longer than 0.3 s"
    deadline = time.monotonic() + 5
    while _forkserver_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _forkserver_children() == []


def test_memory_cap_gives_a_clear_reason(tmp_path):
    path = tmp_path / "huge.txt"
    path.write_bytes(b"memory hungry line\n" * 3_500_000)  # 66 MB: reading, decoding and splitting need far more
    with pytest.raises(DocumentError) as err:
        parse_file(path, limits=Limits(max_memory_mb=256))
    assert err.value.kind == "too_large" and "MB of memory" in err.value.reason
    path.unlink()


class _DeadChild:
    def __init__(self, exitcode):
        self.exitcode = exitcode

    def join(self, timeout=None):
        return None


@pytest.mark.parametrize(("code", "kind", "words"), [(-9, "too_large", "out of memory"), (-11, "corrupt", "SIGSEGV"),
                                                     (1, "corrupt", "exit code 1")])
def test_a_child_that_dies_is_explained(code, kind, words):
    error = _death(_DeadChild(code), "x.pdf", Limits())
    assert error.kind == kind and words in error.reason


class _ScriptedPipe:
    """The parent's end of the parsing pipe, replaying messages; then silence, as when a page hangs."""

    def __init__(self, messages):
        self.messages = list(messages)

    def poll(self, timeout):
        return bool(self.messages)

    def recv(self):
        return self.messages.pop(0)


def test_a_page_that_hangs_in_ocr_is_named_in_the_timeout():
    from document_processor.isolation import _collect

    seen = []
    pipe = _ScriptedPipe([("started",), ("progress", "ocr", 1, 3), ("progress", "reading", 1, 3),
                          ("progress", "ocr", 2, 3)])
    with pytest.raises(DocumentError) as err:
        _collect(pipe, None, "long-scan.pdf", Limits(timeout_s=60), lambda *p: seen.append(p))
    assert err.value.kind == "timeout" and err.value.reason == "OCR of page 2 took longer than 60 s"
    assert seen == [("ocr", 1, 3), ("reading", 1, 3), ("ocr", 2, 3)]
