"""vector_db.owner: one writing process per embedded directory; another reads and its writes fail with the way out."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from testing import crash  # the kill-and-restart steps, shared with bench/crash.py
from tests.helpers.library import open_kb, text_doc
from tests.helpers.paths import REPO
from tests.helpers.vector_docs import words_doc
from vector_db import VectorStore, make_client


def test_an_embedded_directory_has_one_writing_process(tmp_path, fake_embedder):
    """Stores of this process share the claim; another process opens read-only until every store here closed."""
    first = VectorStore(make_client(tmp_path), fake_embedder)
    second = VectorStore(make_client(tmp_path), fake_embedder)
    assert first.read_only_reason == second.read_only_reason == ""
    first.add_document(words_doc("a.pdf", 3, "alpha"))
    probe = ("import sys, json; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']\n"
             "from vector_db import HashingEmbedder\n"
             "from tests.helpers.vector_docs import words_doc\n"
             "from vector_db import StoreError, VectorStore, make_client\n"
             "store = VectorStore(make_client(sys.argv[2]), HashingEmbedder())\n"
             "try:\n    store.add_document(words_doc('b.pdf', 3, 'beta')); refused = ''\n"
             "except StoreError as e:\n    refused = str(e)\n"
             "print(json.dumps({'reason': store.read_only_reason, 'refused': refused, 'recover': store.recover(),\n"
             "                  'docs': [d.file_name for d in store.documents()]}))\n")

    def other_process() -> dict:
        run = subprocess.run([sys.executable, "-c", probe, str(REPO), str(tmp_path)], capture_output=True, text=True,
                             timeout=120, cwd=REPO)
        assert run.returncode == 0, run.stderr[-1500:]
        return json.loads(run.stdout.strip().splitlines()[-1])

    seen = other_process()
    assert f"pid {os.getpid()}" in seen["reason"] and seen["refused"] == seen["reason"]
    assert seen["docs"] == ["a.pdf"] and seen["recover"] == []  # it reads; it repairs nothing
    first.close()
    assert other_process()["reason"]  # `second` still holds the claim for this process
    second.close()
    second.close()  # idempotent
    seen = other_process()
    assert seen["reason"] == seen["refused"] == "" and sorted(seen["docs"]) == ["a.pdf", "b.pdf"]


def test_a_second_process_on_an_embedded_dir_reads_but_cannot_write_so_nothing_is_lost(tmp_path, fake_embedder):
    """Two processes writing to one embedded Chroma corrupt its vector index (vector_db/owner.py has the figures),
    so the first to open the directory owns it; another reads, and its uploads fail with the way out."""
    data, batches = tmp_path / "data", {}
    for topic in ("harbour", "glacier"):
        folder = tmp_path / topic
        folder.mkdir()
        for i in range(5):
            name, body = text_doc(i, topic)
            (folder / name).write_bytes(body)
        batches[topic] = folder
    kb = open_kb(data, fake_embedder)  # this process owns the directory
    assert kb.read_only_reason == ""
    assert [r.status for r in kb.ingest_many(sorted(batches["harbour"].iterdir()))] == ["indexed"] * 5

    def worker(topic: str) -> list[dict]:
        run = subprocess.run(crash.worker_command(data, batches[topic], "fake", isolate=False), capture_output=True,
                             text=True, timeout=180)
        assert run.returncode == 0, run.stderr[-1500:]
        return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]

    refused = worker("glacier")
    files = [line for line in refused if "file" in line]
    assert [f["status"] for f in files] == ["failed"] * 5
    reason = files[0]["reason"]
    assert f"pid {os.getpid()}" in reason and "one writing program at a time" in reason and "CHROMA_HOST" in reason
    audit = next(line["after_rerun"] for line in refused if "after_rerun" in line)  # it could still read everything
    assert audit["consistent"] and audit["indexed"] == sorted(p.name for p in batches["harbour"].iterdir())

    kb.close()  # now the next process owns the directory and writes
    written = worker("glacier")
    assert [f["status"] for f in written if "file" in f] == ["indexed"] * 5
    union = tmp_path / "all"
    union.mkdir()
    for folder in batches.values():
        for f in folder.iterdir():
            (union / f.name).write_bytes(f.read_bytes())
    # a fresh process audits (this one's Chroma still holds its own, older view of the vector index)
    seen = crash.rerun(crash.worker_command(data, union, "fake", rerun=True, isolate=False), timeout=180)
    restart = seen["after_restart"]
    assert restart["consistent"] and restart["indexed"] == sorted(f.name for f in union.iterdir()), restart
    assert restart["unreachable"] == {} and restart["half_indexed"] == [] and restart["ids_unique"]
    assert seen["repairs"] == []
