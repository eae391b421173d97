"""What a write costs the keyword index at a given library size: a one-page write and a replace now, against the
whole rebuild and whole save every write cost before segments (issue 28, item 2), side by side in one run.

    .venv/bin/python bench/keyword_writes.py                   # a million generated chunks (~10 min, ~4 GB RAM)
    .venv/bin/python bench/keyword_writes.py --chunks 100000
    .venv/bin/python bench/keyword_writes.py --smoke           # 2,000 chunks, to check that the bench runs

The library is bench/retrieval.py's generated text (~150 words a chunk, 500 chunks a document) added to the index
a block of documents at a time, as a library grows, and saved into a temporary folder as the app saves it
(KeywordIndex: segments and a manifest). Then, in this process:

- a one-page write (a new 4-chunk document): BM25Index.with_chunks, then the save of the new copy beside the old;
- a replace (that document deleted and written again with other text), then its save;
- the previous design's write, for the same library: every segment merged into one (the postings read whole and
  the token-ordered copy rebuilt, as bm25s's score matrix was rebuilt from every posting) and a whole copy saved;
- a load of the saved copy (what an open costs the keyword index), BM25 top-30 p50/p95, the process's RSS and the
  disk the saved copy takes;
- the same load and searches in a fresh process: the memory the loaded index holds there (resident, and the
  anonymous part of it: mapped postings are file pages the kernel can drop), as an app's open would.

Only the keyword index is measured here (no Chroma, no embedding: bench/retrieval.py measures a whole one-page
ingest on its filled library). The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, disk_mb, rss_mb  # bench/ is on sys.path when run as a script
from retrieval import CHUNKS_PER_DOC, documents, percentiles, queries, texts, vocabulary

from advanced_retrieval import BM25Index
from advanced_retrieval.keyword import segments as seg_mod

BLOCK = 50_000  # chunks generated and added at a time (a million chunks' texts at once would take gigabytes)


def seconds(fn):
    start = time.perf_counter()
    result = fn()
    return result, round(time.perf_counter() - start, 3)


def page(seed: int, words) -> list:
    """A one-page document: 4 chunks of generated text."""
    (doc,) = documents(texts(4, seed, words), 900_000 + seed)
    return list(doc.chunks)


# Run by a fresh python: load the saved copy, search, and report the process's memory (what an app's open holds).
_FRESH = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from advanced_retrieval import BM25Index
def memory():
    with open("/proc/self/status") as f:
        got = {k: int(v.split()[0]) / 1024 for k, v in (line.split(":", 1) for line in f) if k in ("VmRSS", "RssAnon")}
    return round(got["VmRSS"]), round(got.get("RssAnon", 0))
before = memory()
start = time.perf_counter()
index = BM25Index.load(Path(sys.argv[1]), manifest=sys.argv[2])
took = time.perf_counter() - start
loaded = memory()
for q in json.loads(sys.stdin.read()):
    index.search(q, 30)
searched = memory()
print(json.dumps({"fresh_load_s": round(took, 3), "fresh_rss_mb": searched[0] - before[0],
                  "fresh_anon_mb": searched[1] - before[1], "fresh_rss_after_load_mb": loaded[0] - before[0]}))
"""


def fresh_open(root: Path, manifest: str, qs: list[str]) -> dict:
    """A fresh process loads the saved copy and runs the queries: its load seconds and the memory the index holds
    (RSS and its anonymous part, over the interpreter's own), after the load and after the searches."""
    run = subprocess.run([sys.executable, "-c", _FRESH, str(root), manifest], input=json.dumps(qs), text=True,
                         capture_output=True, cwd=REPO, check=False, timeout=1800)
    if run.returncode != 0:
        raise SystemExit(f"loading the saved index in a fresh process failed: {run.stderr[-2000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def run(size: int, query_count: int) -> dict:
    words = vocabulary()
    fig: dict = {"chunks": size}
    index = BM25Index()
    start = time.perf_counter()
    for first in range(0, size, BLOCK):
        block = texts(min(BLOCK, size - first), 1000 + first // BLOCK, words)
        for doc in documents(block, first // CHUNKS_PER_DOC):
            index = index.with_chunks(doc.chunks, generation=index.generation + 1)
        del block
        gc.collect()
    fig["fill_s"] = round(time.perf_counter() - start, 1)
    fig["segments"] = index.segment_count
    fig["vocabulary"] = index.vocabulary_size
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _, fig["first_save_s"] = seconds(lambda: index.save(root, "g0.json"))
        fig["disk_mb"] = round(disk_mb(root))
        one = page(1, words)
        added, fig["write_add_s"] = seconds(lambda: index.with_chunks(one, generation=index.generation + 1))
        _, fig["write_save_s"] = seconds(lambda: added.save(root, "g1.json"))
        other = page(2, words)  # the document's new version: new bytes, so a new document id
        replaced, fig["replace_s"] = seconds(
            lambda: added.without_documents([one[0].doc_id], generation=added.generation + 1)
            .with_chunks(other, generation=added.generation + 2))
        _, fig["replace_save_s"] = seconds(lambda: replaced.save(root, "g2.json"))
        fig["write_total_s"] = round(fig["write_add_s"] + fig["write_save_s"], 3)
        fig["replace_total_s"] = round(fig["replace_s"] + fig["replace_save_s"], 3)
        loaded, fig["load_s"] = seconds(lambda: BM25Index.load(root, manifest="g2.json"))
        assert loaded.count == replaced.count == size + 4
        qs = queries(query_count, words)
        p50, p95 = percentiles(lambda q: loaded.search(q, 30), qs)
        fig["search_p50_ms"], fig["search_p95_ms"] = round(p50, 2), round(p95, 2)
        loaded = None  # memory back before the rebuild below
        fig.update(fresh_open(root, "g2.json", qs))
        gc.collect()
        # the previous design: every write rebuilt the index from all its postings and saved a whole copy
        live = replaced._segments, replaced._dead
        whole, fig["previous_rebuild_s"] = seconds(lambda: seg_mod.merged(*live))
        with tempfile.TemporaryDirectory() as other_tmp:
            _, fig["previous_save_s"] = seconds(lambda: seg_mod.save(whole, Path(other_tmp)))
        fig["previous_write_s"] = round(fig["previous_rebuild_s"] + fig["previous_save_s"], 3)
    fig["write_ratio"] = round(fig["previous_write_s"] / max(fig["write_total_s"], 1e-3), 1)
    fig["rss_mb"] = round(rss_mb())
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--smoke", action="store_true", help="2,000 chunks and 8 queries")
    args = parser.parse_args()
    size, n_queries = (2_000, 8) if args.smoke else (args.chunks, args.queries)
    fig = run(size, n_queries)
    print(f"{fig['chunks']:,} chunks in {fig['segments']} segments (filled in {fig['fill_s']} s, "
          f"{fig['vocabulary']:,} tokens, {fig['disk_mb']} MB saved)", file=sys.stderr)
    print(f"one-page write: {fig['write_add_s']} s + save {fig['write_save_s']} s; replace {fig['replace_s']} s + "
          f"save {fig['replace_save_s']} s; the previous design's write: rebuild {fig['previous_rebuild_s']} s + "
          f"whole save {fig['previous_save_s']} s -> {fig['write_ratio']}x; load {fig['load_s']} s; "
          f"search p50/p95 {fig['search_p50_ms']}/{fig['search_p95_ms']} ms; RSS {fig['rss_mb']} MB",
          file=sys.stderr)
    print(f"a fresh process: load {fig['fresh_load_s']} s, then the searches; the index "
          f"holds {fig['fresh_rss_after_load_mb']} MB resident after the load, {fig['fresh_rss_mb']} MB after the "
          f"searches ({fig['fresh_anon_mb']} MB of it anonymous, the rest mapped file pages)", file=sys.stderr)
    print(json.dumps({"bench": "keyword_writes", "size": "smoke" if args.smoke else size, **fig}))


if __name__ == "__main__":
    main()
