"""A process that only reads an embedded library while another process owns it and writes (issue 16, item 6):
before, once the owner wrote enough for Chroma to write its vector index to disk, every hybrid query of the
reader failed with "Error finding id" (589 of 672 in 40 s); it must see the old state or the new, never an error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.library import kb_on
from tests.helpers.paths import REPO
from vector_db import HashingEmbedder, make_client

_READER = """
import json, sys
sys.path[:0] = [{repo!r}, {tests!r}]
from pathlib import Path
import pytest
from vector_db import HashingEmbedder
from wiring import open_knowledge_base

kb = open_knowledge_base(Path({data!r}), embedder=HashingEmbedder(), isolate=False)

def round_of_queries():
    errors = []
    for i in range(20):
        for strategy in ("hybrid", "vector", "bm25"):
            try:
                kb.retriever.retrieve(f"glacier topic{{i % 6}} paragraph {{i}}", k=8, strategy=strategy)
            except Exception as e:  # counted: the property under test
                errors.append(f"{{type(e).__name__}}: {{e}}"[:200])
    return errors

before = round_of_queries()
print(json.dumps({{"ready": True, "read_only": bool(kb.read_only_reason), "errors": before}}), flush=True)
sys.stdin.readline()  # the owner writes meanwhile
after = round_of_queries()
newest = kb.retriever.retrieve("glacier topic5 paragraph 17", k=5, strategy="vector")
print(json.dumps({{"errors": after, "docs": [d.file_name for d in kb.documents()],
                  "newest_found": [h.chunk.file_name for h in newest]}}), flush=True)
"""


def body(i: int, paragraphs: int) -> bytes:
    return "\n\n".join(f"glacier topic{i} paragraph {p} " + " ".join(f"w{(i * 7 + p * 3 + k) % 97}" for k in range(50))
                       for p in range(paragraphs)).encode()


@pytest.mark.slow
def test_a_read_only_process_sees_the_owners_writes_without_errors(tmp_path):
    data = tmp_path / "data"
    owner = kb_on(make_client(data), data, HashingEmbedder())  # this process owns the directory
    assert owner.ingest_bytes(body(0, 300), "f0.txt").status == "indexed"
    code = _READER.format(repo=str(REPO), tests=str(REPO / "tests"), data=str(data))
    reader = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        first = json.loads(reader.stdout.readline())
        assert first["read_only"] and first["errors"] == [], first
        for i in range(1, 6):  # ~1,900 chunks: Chroma writes the owner's vector index to disk meanwhile
            assert owner.ingest_bytes(body(i, 400), f"f{i}.txt").status == "indexed"
        out, err = reader.communicate("go\n", timeout=300)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait(timeout=30)
    assert reader.returncode == 0, err[-2000:]
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen["errors"] == [], seen["errors"][:3]
    assert seen["docs"] == [f"f{i}.txt" for i in range(6)]
    assert "f5.txt" in seen["newest_found"], seen
