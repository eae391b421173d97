"""One library operation in a fresh process, timed inside it: bench/retrieval.py runs these on its filled libraries.

    .venv/bin/python testing/library_ops.py open DATA_DIR              # open the library as the app does
    .venv/bin/python testing/library_ops.py ingest DATA_DIR FILE       # open, then index FILE with the real embedder
    .venv/bin/python testing/library_ops.py die-writing DATA_DIR FILE  # open, start indexing FILE, say so (the caller
                                                                       # then SIGKILLs this process)

DATA_DIR is a data directory as the app lays it out (Chroma in DATA_DIR/chroma, the keyword index in DATA_DIR/bm25).
The last line printed is one JSON object: seconds to open (wiring.open_knowledge_base, every repair included),
seconds to index, the process's peak RSS, and the repairs the open made.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import wiring  # noqa: E402

WRITING = "WRITING"  # printed by die-writing once the store is being written


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM: getrusage's maxrss would count the parent's before exec)."""
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def main() -> None:
    op, data_dir = sys.argv[1], Path(sys.argv[2])
    config = wiring.Config.from_env(data_dir=data_dir)
    embedder = wiring.make_embedder(config)
    start = time.perf_counter()
    kb = wiring.open_knowledge_base(data_dir, embedder=embedder, environ={})
    out = {"op": op, "open_s": round(time.perf_counter() - start, 3), "repairs": kb.recovery_messages}
    if op in ("ingest", "die-writing"):
        said = []

        def progress(_name: str, stage: str, done: int, _total: int) -> None:
            if op == "die-writing" and not said and stage == "embedding" and done > 0:
                said.append(stage)
                print(WRITING, stage, flush=True)

        start = time.perf_counter()
        result = kb.ingest_file(Path(sys.argv[3]), progress=progress)
        out.update(ingest_s=round(time.perf_counter() - start, 3), status=result.status, reason=result.reason,
                   chunks=result.chunks)
    out["peak_rss_mb"] = round(peak_rss_mb())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
