"""The open-time check of the vector index on a healthy library (issue 27): how often it reports damage that is
not there, and what it and an open cost, the approximate probe it replaced against the exact one, side by side.

    .venv/bin/python bench/probe.py --smoke                          # 2,000 chunks, 5 probes of each kind
    .venv/bin/python bench/probe.py                                  # 150,000 chunks, 25 probes of each kind
                                                                     # (filling took 18 min here, probes 5 min)
    .venv/bin/python bench/probe.py --size 50000 --root /tmp/probe   # keep the library there between runs

The library is filled through VectorStore.add_document with the hashing embedder (vector_db/hashing.py) on
generated text (bench/retrieval.py: vocabulary words, Zipf-distributed, with years and amounts), 500 chunks a
document. "approximate" is the probe before issue 27: 8 sampled chunks, each must be in its own top 10 of an
unrestricted query. "exact" is vector_index.probe. Each runs with seeds 0..K-1 on one client; a probe that
reports anything on this healthy library is a false damage. "unreachable" counts sampled chunks (8 per seed)
that even the exact search cannot reach (a healthy graph's unlinked nodes). Then a fresh process opens the
library as its owner does (VectorStore + recover()) and reports what recover() did and how long it took. The
last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from retrieval import REPO, documents, texts, vocabulary  # noqa: F401  (sets sys.path and the offline environment)

from vector_db import HashingEmbedder, VectorStore, make_client, vector_index

SMOKE_SIZE, SMOKE_PROBES = 2_000, 5
OPEN = """
import json, sys, time
start = time.perf_counter()
from vector_db import HashingEmbedder, VectorStore, make_client
from pathlib import Path
imported = time.perf_counter()
store = VectorStore(make_client(Path(sys.argv[1])), HashingEmbedder())
messages = store.recover()
done = time.perf_counter()
print(json.dumps({"messages": messages, "open_s": round(done - imported, 2), "count": store.count(),
                  "with_imports_s": round(done - start, 2)}))
"""


def fill(data: Path, size: int) -> float:
    """Seconds spent adding chunks until the library at `data` holds `size` (kept between runs)."""
    store = VectorStore(make_client(data), HashingEmbedder())
    have = store.count()
    start = time.perf_counter()
    if have < size:
        for doc in documents(texts(size - have, size + have, vocabulary()), have // 500):
            store.add_document(doc)
    store.close()
    return time.perf_counter() - start


def approximate_probe(chunks_col, seed: int) -> int:
    """The probe before issue 27: sampled chunks missing from their own approximate top 10."""
    ids = chunks_col.get(include=[])["ids"]
    picks = random.Random(seed).sample(ids, min(vector_index.SAMPLE, len(ids)))
    got = chunks_col.get(ids=picks, include=["embeddings"])
    found = chunks_col.query(query_embeddings=np.asarray(got["embeddings"], dtype=np.float32),
                             n_results=min(10, len(ids)), include=[])
    return sum(cid not in hits for cid, hits in zip(got["ids"], found["ids"], strict=True))


def timed(fn) -> tuple[object, float]:
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def compare(data: Path, probes: int) -> dict:
    chunks_col = make_client(data).get_collection("chunks")
    ids = chunks_col.get(include=[])["ids"]
    old = [timed(lambda s=seed: approximate_probe(chunks_col, s)) for seed in range(probes)]
    new = [timed(lambda s=seed: vector_index.probe(chunks_col, seed=s)) for seed in range(probes)]
    unreachable = sum(len(vector_index._missing(chunks_col, random.Random(seed).sample(ids, vector_index.SAMPLE)))
                      for seed in range(probes))
    return {"chunks": len(ids), "probes": probes,
            "approximate_false_damage": sum(missed > 0 for missed, _ in old),
            "approximate_missed_chunks": sum(missed for missed, _ in old),
            "exact_false_damage": sum(bool(problem) for problem, _ in new),
            "exact_reports": sorted({problem for problem, _ in new if problem}),
            "exact_unreachable_chunks": unreachable,
            "approximate_probe_s": round(float(np.median([s for _, s in old])), 3),
            "exact_probe_s": round(float(np.median([s for _, s in new])), 3),
            "exact_probe_max_s": round(max(s for _, s in new), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE_SIZE} chunks, {SMOKE_PROBES} probes each")
    parser.add_argument("--size", type=int, default=150_000, help="chunks in the library (default 150,000)")
    parser.add_argument("--probes", type=int, default=25, help="probes of each kind (default 25)")
    parser.add_argument("--root", type=Path, help="keep the library in this folder (filled up to --size)")
    args = parser.parse_args(argv)
    size, probes = (SMOKE_SIZE, SMOKE_PROBES) if args.smoke else (args.size, args.probes)
    with tempfile.TemporaryDirectory(prefix="probe-") as tmp:
        data = (args.root or Path(tmp)) / "data"
        fill_s = fill(data, size)
        print(f"library filled to {size:,} chunks ({fill_s:.0f} s)", flush=True)
        opened = subprocess.run([sys.executable, "-c", OPEN, str(data)], cwd=REPO, capture_output=True, text=True,
                                timeout=3600, env={"PYTHONPATH": str(REPO), "ANONYMIZED_TELEMETRY": "False",
                                                   "HF_HUB_OFFLINE": "1"})
        if opened.returncode != 0:
            raise RuntimeError(f"opening the library failed: {opened.stderr[-1500:]}")
        figures = {"bench": "probe", "size": "smoke" if args.smoke else size, "fill_s": round(fill_s, 1),
                   "open": json.loads(opened.stdout.strip().splitlines()[-1]), **compare(data, probes)}
    print(f"{figures['chunks']:,} chunks, {probes} probes each: false damage approximate "
          f"{figures['approximate_false_damage']}/{probes} ({figures['approximate_probe_s']} s a probe), exact "
          f"{figures['exact_false_damage']}/{probes} ({figures['exact_probe_s']} s a probe); open + recover "
          f"{figures['open']['open_s']} s, repairs {figures['open']['messages']}", flush=True)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
