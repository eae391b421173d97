"""Page-level retrieval quality, query latency and ingest throughput: this tree's retriever against today's main.

    .venv/bin/python bench/quality.py [--data-dir DIR] [--baseline-tree /work/wt-baseline] [--ingest 2]
    .venv/bin/python bench/quality.py --smoke    # the sample corpus (evaluation.sample) in a temporary folder

One library holds both FinanceBench sets (financebench_dev: 21 full filings, 42 questions, the set we tune on;
financebench_subset: 11 filings, 29 questions, held out), as a user's library would; the papers (20 questions) sit
in a library of their own. For each retriever configuration (CONFIGS: "main" is today's behaviour, "new" is every
piece on, the others turn one piece on at a time: the ablation; "sections" needs two others, so its part is
"new" against "new-sections") and strategy: page hit@1, hit@5, hit@10 and
MRR@10 (evaluation.metrics: a hit is a chunk of the gold file on a gold page), and "new" minus "main" (and each
piece minus "main") as a paired bootstrap 95% interval over questions with the count of questions that got better
or worse. Pieces that change what is indexed (the tables branch) cannot be a configuration: the baseline tree
is then run on its own index (--baseline-tree with --baseline-data-dir).

Honesty of the configurations: with --baseline-tree, that tree's own HybridRetriever (its defaults) runs in a
subprocess over the same index, and the bench prints which of this tree's configurations give the same ranks: a
baseline tree of this very commit must match "new" (every piece on, the shipped default); a tree from before the
pieces existed matches "main".
Latency: hybrid retrieve per question, "main" and "new" interleaved in one process, real query embedding.
Ingest: --ingest N indexes N dev filings into fresh folders with this tree and the baseline tree, alternately,
each in a subprocess (pages/s, chunks/s). Indexes are cached under --data-dir; only a chunking change needs a
new one (~25 min here for the dev set). --smoke measures the same figures on the five generated documents of
evaluation.sample and their questions (evaluation/sets/sample.jsonl) in a temporary folder, to check that the
bench runs at all; it needs nothing from ../shared/data. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, REPO, build_index, financebench_questions, paired, scores, seconds

from advanced_retrieval import HybridRetriever
from document_processor import Chunk, Location
from evaluation import SAMPLE_DATASET, first_hit_rank, load_dataset, make_sample_corpus
from vector_db import OnnxEmbedder

STRATEGIES = ("vector", "bm25", "hybrid", "auto")
DEPTH = 10
BENCH = DATA / "bench"
PIECES = ("expand", "one_per_page", "route", "sections")
# "sections" works on the named documents with the vocabulary's phrases (route and expand), so alone it is "main";
# its part is measured as "new" against "new" without it.
CONFIGS = {"main": dict.fromkeys(PIECES, False),
           **{f"+{piece}": {p: p == piece for p in PIECES} for piece in PIECES if piece != "sections"},
           "new-sections": {p: p != "sections" for p in PIECES},
           "new": dict.fromkeys(PIECES, True)}
INGEST_SAMPLE = ("AMD_2015_10K", "JPMORGAN_2022Q2_10Q", "NIKE_2023_10K")
# Run by --baseline-tree's own python in that tree: its retriever over the same index, top-DEPTH chunk ids.
_BASELINE_RANKS = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from advanced_retrieval import BM25Index, HybridRetriever
from vector_db import OnnxEmbedder, VectorStore, make_client
root, models, depth = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
questions = json.loads(sys.stdin.read())
embedder = OnnxEmbedder(models, quantized=False)
store = VectorStore(make_client(root / "data"), embedder)
index = BM25Index.build(store.iter_chunks(), generation=store.generation())
class Current:
    def current(self, store):
        return index
retriever = HybridRetriever(store, Current(), embedder)
out, took = {}, []
for s in ("vector", "bm25", "hybrid", "auto"):
    out[s] = []
    for q in questions:
        start = time.perf_counter()
        out[s].append([[h.chunk.file_name, h.chunk.location.page] for h in retriever.retrieve(q, depth, s)])
        if s == "hybrid":
            took.append(time.perf_counter() - start)
print(json.dumps({"ranks": out, "hybrid_seconds": took}))
"""
# Run by each tree's python: index the given PDFs into a fresh folder; seconds, pages and chunks.
_INGEST = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, ".")
from wiring import knowledge_base
from vector_db import OnnxEmbedder, VectorStore, make_client
if __name__ == "__main__":
    root, models, pdfs = Path(sys.argv[1]), Path(sys.argv[2]), [Path(p) for p in sys.argv[3:]]
    embedder = OnnxEmbedder(models, quantized=False)
    kb = knowledge_base(VectorStore(make_client(root / "data"), embedder), root, embedder)
    start = time.perf_counter()
    results = kb.ingest_many(pdfs)
    took = time.perf_counter() - start
    print(json.dumps({"seconds": took, "chunks": sum(r.chunks for r in results),
                      "pages": sum(r.units for r in results), "failed": [r.file_name for r in results
                                                                         if r.status == "failed"]}))
"""


def question_sets() -> dict[str, tuple[dict[str, list], list[Path]]]:
    """{library: ({set name: questions}, files)}: both FinanceBench sets in one library, the papers in another."""
    finance = {name: financebench_questions(BENCH / f"financebench_{name}") for name in ("dev", "subset")}
    pdfs = sorted((BENCH / "financebench_dev" / "pdfs").glob("*.pdf"))
    pdfs += sorted((BENCH / "financebench_subset" / "pdfs").glob("*.pdf"))
    papers = {"papers": load_dataset(REPO / "evaluation" / "sets" / "papers.jsonl")}
    return {"financebench": (finance, pdfs), "papers": (papers, sorted((DATA / "papers").glob("*.pdf")))}


def smoke_sets(folder: Path) -> dict[str, tuple[dict[str, list], list[Path]]]:
    """--smoke: the sample corpus written into `folder`, its questions in two sets of one library as FinanceBench's
    are (those answered in the PDF, the others: DOCX, PPTX, XLSX, Markdown, cross-document, unanswerable)."""
    paths = make_sample_corpus(folder)
    questions = load_dataset(SAMPLE_DATASET)
    pdf = [q for q in questions if q.gold and all(g.file.endswith(".pdf") for g in q.gold)]
    return {"sample": ({"pdf": pdf, "other": [q for q in questions if q not in pdf]}, paths)}


def evaluate(kb, embedder, sets: dict[str, list]) -> dict[str, dict[str, dict[str, list]]]:
    """{config: {set: {strategy: first-hit ranks}}} over one library."""
    out: dict = {}
    for name, options in CONFIGS.items():
        retriever = HybridRetriever(kb.store, kb.keyword_index, embedder, **options)
        out[name] = {s: {strategy: [first_hit_rank([h.chunk for h in retriever.retrieve(q.question, DEPTH,
                                                                                         strategy)], q.gold)
                                    for q in questions] for strategy in STRATEGIES}
                     for s, questions in sets.items()}
    return out


def latency(kb, embedder, questions: list) -> dict[str, dict[str, float]]:
    """Hybrid retrieve milliseconds per question (median, p90), "main", "new" and "new, read ahead" interleaved
    question by question, by fresh retrievers (a document's first question reads its stored vectors, unless read
    ahead as the app does at open: "read_ahead" has what that read and its seconds), then the same questions again
    ("... again": what a document's later questions cost, its vectors kept)."""
    retrievers = {n: HybridRetriever(kb.store, kb.keyword_index, embedder, **CONFIGS[n]) for n in ("main", "new")}
    # the app reads each document's vectors and headings ahead at open (HybridRetriever.warm, on a background
    # thread while the page loads): its first questions are these
    retrievers["new, read ahead"] = HybridRetriever(kb.store, kb.keyword_index, embedder, **CONFIGS["new"])
    warm = retrievers["new, read ahead"].warm()
    took: dict[str, list[float]] = {n: [] for n in (*retrievers, *(f"{n} again" for n in retrievers))}
    for label in ("", " again"):
        for q in questions:
            for name, retriever in retrievers.items():
                took[name + label].append(seconds(lambda r=retriever, q=q: r.retrieve(q.question, DEPTH, "hybrid"))[1])
    return {n: summary_ms(t) for n, t in took.items()} | {"read_ahead": warm}


def summary_ms(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"median_ms": round(1000 * statistics.median(ordered), 1),
            "p90_ms": round(1000 * ordered[int(0.9 * (len(ordered) - 1))], 1)}


def baseline(tree: Path, root: Path, models: Path, sets: dict[str, list]) -> dict:
    """The baseline tree's ranks over `root` (its own retriever, run by its own python) and hybrid latency."""
    questions = [q for qs in sets.values() for q in qs]
    run = subprocess.run([str(tree / ".venv" / "bin" / "python"), "-c", _BASELINE_RANKS, str(root), str(models),
                          str(DEPTH)], input=json.dumps([q.question for q in questions]), cwd=tree,
                         capture_output=True, text=True, check=False, timeout=3600)
    if run.returncode != 0:
        raise SystemExit(f"baseline tree {tree} failed: {run.stderr[-2000:]}")
    got = json.loads(run.stdout.strip().splitlines()[-1])
    ranks: dict = {name: {} for name in sets}
    for strategy, lists in got["ranks"].items():
        pos = 0
        for name, qs in sets.items():
            ranks[name][strategy] = [first_hit_rank([_place(f, p) for f, p in places], q.gold)
                                     for places, q in zip(lists[pos:pos + len(qs)], qs, strict=True)]
            pos += len(qs)
    return {"ranks": ranks, "latency": summary_ms(got["hybrid_seconds"])}


def _place(file_name: str, page: int | None) -> Chunk:
    """A stand-in chunk at (file, page): all that page-level matching reads of the baseline tree's hits."""
    return Chunk(id="", doc_id="", file_name=file_name, file_type="pdf", text="", location=Location(page=page))


def ingest_compare(tree: Path, models: Path, files: list[Path]) -> dict:
    """Index `files` with this tree and the baseline tree, alternately, each in a fresh folder."""
    pdfs = [str(path) for path in files]
    out: dict = {}
    for label, where in (("baseline", tree), ("this", REPO)):
        with tempfile.TemporaryDirectory(prefix=f"quality-ingest-{label}-") as scratch:
            run = subprocess.run([str(where / ".venv" / "bin" / "python"), "-c", _INGEST, scratch, str(models),
                                  *pdfs], cwd=where, capture_output=True, text=True, check=False, timeout=7200)
        if run.returncode != 0:
            raise SystemExit(f"ingest with {where} failed: {run.stderr[-2000:]}")
        got = json.loads(run.stdout.strip().splitlines()[-1])
        out[label] = {**got, "pages_per_s": round(got["pages"] / got["seconds"], 2),
                      "chunks_per_s": round(got["chunks"] / got["seconds"], 2), "seconds": round(got["seconds"], 1)}
    out["this_over_baseline_seconds"] = round(out["this"]["seconds"] / out["baseline"]["seconds"], 2)
    return out


def named_documents(kb, sets: dict[str, list]) -> dict[str, dict[str, float]]:
    """Per set: the share of questions that name documents (advanced_retrieval.query.naming) and the share whose gold
    file is among the named ones, with this tree's names."""
    from advanced_retrieval.query.naming import NamedDocuments

    named = NamedDocuments(kb.store)
    index = kb.keyword_index.current(kb.store)
    files = {d.doc_id: d.file_name for d in kb.store.documents()}
    out = {}
    for set_name, questions in sets.items():
        questions = [q for q in questions if q.gold]  # refusals have no gold file
        found = [named.within(q.question, None, index) for q in questions]
        gold = [w is not None and bool({g.file for g in q.gold} & {files[d] for d in w.doc_ids})
                for w, q in zip(found, questions, strict=True)]
        out[set_name] = {"questions": len(questions), "name_some": sum(w is not None for w in found),
                         "gold_among_named": sum(gold)}
    return out


def report(library: str, fig: dict) -> None:
    print(f"\n== {library}: {fig['chunks']} chunks ==")
    for name, per_set in fig["scores"].items():
        for set_name, per_strategy in per_set.items():
            for strategy, s in per_strategy.items():
                print(f"  {set_name:<7} {name:<13} {strategy:<7} hit@1 {s['hit1']:.3f}  hit@5 {s['hit5']:.3f}  "
                      f"hit@10 {s['hit10']:.3f}  MRR@10 {s['mrr10']:.3f}")
    for label, per_set in fig["paired"].items():
        for set_name, per_strategy in per_set.items():
            for strategy, d in per_strategy.items():
                print(f"  {set_name:<7} {label:<26} {strategy:<7} " + ", ".join(
                    f"{m} {v['diff']:+.3f} CI {v['ci95']} (+{v['better']}/-{v['worse']})" for m, v in d.items()))
    if "baseline_matches" in fig:
        print("  baseline tree's ranks equal this tree's configuration: "
              + ", ".join(f"{c} {same}" for c, same in fig["baseline_matches"].items()))
    print(f"  hybrid latency: {fig['latency']}")
    print(f"  named documents (questions / naming some / gold file among them): {fig['named']}")


def run_library(library: str, sets: dict, pdfs: list[Path], args, embedder) -> dict:
    root = args.data_dir / library
    kb = build_index(root, embedder, pdfs)
    ranks = evaluate(kb, embedder, sets)
    fig = {"chunks": kb.store.count(), "questions": {s: len(q) for s, q in sets.items()}, "ranks": ranks,
           "scores": {c: {s: {st: scores(r) for st, r in per.items()} for s, per in by_set.items()}
                      for c, by_set in ranks.items()}}
    fig["paired"] = {f"{c} - main": {s: {st: paired(ranks["main"][s][st], ranks[c][s][st]) for st in STRATEGIES}
                                     for s in sets} for c in CONFIGS if c != "main"}
    fig["paired"]["new - new-sections"] = {s: {st: paired(ranks["new-sections"][s][st], ranks["new"][s][st])
                                               for st in STRATEGIES} for s in sets}
    fig["latency"] = latency(kb, embedder, [q for qs in sets.values() for q in qs])
    fig["named"] = named_documents(kb, sets)
    if args.baseline_tree:
        base_root = args.baseline_data_dir / library if args.baseline_data_dir else root
        base = baseline(args.baseline_tree, base_root, args.data_dir / "models", sets)
        fig["latency"]["baseline_tree"] = base["latency"]
        fig["paired"]["new - baseline tree"] = {s: {st: paired(base["ranks"][s][st], ranks["new"][s][st])
                                                    for st in STRATEGIES} for s in sets}
        if base_root == root:
            fig["baseline_matches"] = {c: base["ranks"] == ranks[c] for c in ("main", "new")}
        fig["scores"]["baseline_tree"] = {s: {st: scores(r) for st, r in per.items()}
                                          for s, per in base["ranks"].items()}
    return fig


def measure(args, libraries: dict, ingest_files: list[Path]) -> dict:
    """Every figure over `libraries` ({library: ({set: questions}, files)}), as the JSON object printed last."""
    embedder = OnnxEmbedder(args.data_dir / "models", quantized=False)
    figures = {library: run_library(library, sets, pdfs, args, embedder)
               for library, (sets, pdfs) in libraries.items() if args.only in (None, library)}
    for library, fig in figures.items():
        report(library, fig)
    out = {"bench": "quality", "depth": DEPTH, "configs": CONFIGS, "libraries": figures}
    if args.ingest and args.baseline_tree:
        started = time.perf_counter()
        out["ingest"] = ingest_compare(args.baseline_tree, args.data_dir / "models", ingest_files[:args.ingest])
        print(f"\ningest ({time.perf_counter() - started:.0f} s): {json.dumps(out['ingest'])}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-quality",
                        help="where the indexes (and the exported model) are kept between runs")
    parser.add_argument("--baseline-tree", type=Path, help="a worktree of today's main with its .venv")
    parser.add_argument("--baseline-data-dir", type=Path,
                        help="the baseline tree's own indexes, when this tree indexes differently")
    parser.add_argument("--ingest", type=int, default=0, help="compare ingest on this many sample filings (0-3)")
    parser.add_argument("--only", choices=("financebench", "papers"), help="one library only")
    parser.add_argument("--smoke", action="store_true",
                        help="the five sample documents and their questions, indexed in a temporary folder "
                             "(--data-dir and --only are not used); checks that the bench runs")
    args = parser.parse_args()
    logging.getLogger("advanced_retrieval.library.knowledge_base").setLevel(logging.ERROR)  # "repaired": the rebuild above
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="bench-quality-") as tmp:
            args.data_dir, args.only = Path(tmp) / "indexes", None
            libraries = smoke_sets(Path(tmp) / "documents")
            out = measure(args, libraries, libraries["sample"][1])
    else:
        if not (BENCH / "financebench_dev").is_dir():
            sys.exit(f"{BENCH / 'financebench_dev'} is absent: nothing to measure")
        out = measure(args, question_sets(),
                      [BENCH / "financebench_dev" / "pdfs" / f"{name}.pdf" for name in INGEST_SAMPLE])
    out["size"] = "smoke" if args.smoke else "full"
    print(json.dumps(out))


if __name__ == "__main__":
    main()
