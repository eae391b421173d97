"""Retrieval quality per embedder (fp32 against bf16 and int8) and a hybrid fusion grid, on the FinanceBench subset.

    .venv/bin/python bench/embedders.py --smoke   # the sample set's 5 generated documents, sweep (a smoke run)
    .venv/bin/python bench/embedders.py --quick   # FinanceBench's short filings only (~400 chunks), no sweep
    .venv/bin/python bench/embedders.py           # all 11 FinanceBench PDFs in one index + the papers set, sweep

Page-level hit@1, hit@5, hit@10 and MRR@10 (evaluation.metrics: a hit is a chunk of the gold file on a gold
page) for vector, bm25, hybrid and auto, on an index of the same chunks per embedder: fp32 (onnxruntime), bf16 (the same
model run by OpenVINO with bfloat16 products, where the CPU has them: the app's default there) and int8 (quantised
weights); in full mode, a grid of hybrid fusion settings (see GRID).
Noise: with 29 questions one question moves hit@k by 0.034, so differences come with a paired bootstrap 95%
interval over questions and the count of questions that got better or worse. The int8/fp32 verdict: int8 only
if, on every dataset, neither vector nor hybrid loses more MRR@10 or hit@5 than the bootstrap's noise (the
interval of int8 − fp32 reaches 0 or above). Indexes are cached under --data-dir (default a fixed folder in
the temp directory), so reruns skip the embedding (~7 min for both indexes here). --smoke needs nothing from
../shared: the questions with gold of evaluation/sets/sample.jsonl over the five documents evaluation.sample
writes (PDF, DOCX, PPTX, XLSX, Markdown) into a temporary folder, indexed there afresh. The last line printed is
one JSON object.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import logging
import sys
import tempfile
from pathlib import Path

from common import (
    DATA,
    FINANCEBENCH,
    build_index,
    financebench_questions,
    paired,
    scores,
)

from advanced_retrieval import HybridRetriever
from evaluation import SAMPLE_DATASET, GoldSource, first_hit_rank, hit_at_k, load_dataset, make_sample_corpus
from evaluation.sets import SETS_DIR
from vector_db import OnnxEmbedder
from vector_db.embedder import bf16_unavailable

STRATEGIES = ("vector", "bm25", "hybrid", "auto")
DEPTH = 10
QUICK_DOCS = ("AMCOR_2023Q4_EARNINGS", "JOHNSON_JOHNSON_2022Q4_EARNINGS", "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30",
              "MGMRESORTS_2022Q4_EARNINGS", "PEPSICO_2023Q1_EARNINGS", "ULTABEAUTY_2023Q4_EARNINGS")
# The fusion grid of the full run: BM25 candidates and vector candidates per retriever, the RRF constant, BM25's
# weight for questions with exact terms (the retriever's keyword_weight) and for plain questions (fixed at 1 in
# the retriever; a bench-only knob, to see whether BM25 should count less everywhere).
GRID = {"candidates": (30, 60, 100), "rrf_k": (10, 30, 60, 100), "exact_weight": (0.5, 1.0, 2.0, 3.0),
        "plain_weight": (0.5, 1.0)}
DEFAULT = {"candidates": 30, "rrf_k": 60, "exact_weight": 2.0, "plain_weight": 1.0}
# fp32 arithmetic, the same model in bfloat16 (where the CPU has it), int8 weights
EMBEDDERS = {"fp32": {"runtime": "onnxruntime"}, "bf16": {"runtime": "openvino-bf16"}, "int8": {"quantized": True}}
if bf16_unavailable() is not None:
    del EMBEDDERS["bf16"]


class MemoQueries:
    """The embedder with query vectors remembered: the sweep asks the same questions many times."""

    def __init__(self, embedder):
        self.inner, self.name, self.dim, self._memo = embedder, embedder.name, embedder.dim, {}

    def embed(self, texts, progress=None):
        return self.inner.embed(texts, progress=progress)

    def embed_query(self, text):
        if text not in self._memo:
            self._memo[text] = self.inner.embed_query(text)
        return self._memo[text]


def ranks_for(retriever, questions, strategy: str) -> list[int | None]:
    """First gold rank (1-based, None past DEPTH) per question."""
    return [first_hit_rank([h.chunk for h in retriever.retrieve(q.question, DEPTH, strategy)], q.gold)
            for q in questions]


def evaluate(kb, embedder, questions) -> tuple[dict[str, list[int | None]], dict[str, float]]:
    """Page ranks per strategy with the default retriever settings, and document hit@1 per strategy (the top
    chunk comes from the right file: whether a retriever finds the filing before it finds the page)."""
    retriever = HybridRetriever(kb.store, kb.keyword_index, embedder)
    whole_files = [dataclasses.replace(q, gold=tuple(GoldSource(g.file) for g in q.gold)) for q in questions]
    return ({s: ranks_for(retriever, questions, s) for s in STRATEGIES},
            {s: round(hit_at_k(ranks_for(retriever, whole_files, s), 1), 3) for s in STRATEGIES})


def sweep(kb, embedder, questions, default_ranks: list[int | None]) -> dict:
    """Hybrid figures over GRID, fused here from each retriever's top 100 exactly as HybridRetriever fuses
    them (no quoted phrases in these questions); the grid's default must give the retriever's own ranks."""
    from advanced_retrieval import plan_query, reciprocal_rank_fusion

    chunks = {c.id: c for c in kb.store.iter_chunks()}
    index = kb.keyword_index.current(kb.store)
    deep = max(GRID["candidates"])
    vector = [[c.id for c, _ in kb.store.query(embedder.embed_query(q.question), deep)] for q in questions]
    bm25 = [[cid for cid, _ in index.search(q.question, deep)] for q in questions]
    exact = [plan_query(q.question).keyword_weight > 1 for q in questions]

    def ranks(setting: dict) -> list[int | None]:
        c = setting["candidates"]
        return [first_hit_rank([chunks[cid] for cid, _ in reciprocal_rank_fusion(
            [v[:c], b[:c]], k=setting["rrf_k"], weights=[1.0, setting["exact_weight" if e else "plain_weight"]])[:DEPTH]],
            q.gold) for v, b, e, q in zip(vector, bm25, exact, questions, strict=True)]

    names = list(GRID)
    table = [dict(zip(names, values, strict=True)) for values in itertools.product(*(GRID[n] for n in names))]
    results = [(setting, scores(ranks(setting))) for setting in table]
    one_at_a_time = {f"{n}={v}": s for setting, s in results for n, v in setting.items()
                     if v != DEFAULT[n] and all(setting[m] == DEFAULT[m] for m in names if m != n)}
    top = sorted(results, key=lambda item: (-item[1]["mrr10"], -item[1]["hit5"]))[:5]
    return {"default": scores(ranks(DEFAULT)), "matches_retriever": ranks(DEFAULT) == default_ranks,
            "exact_term_questions": sum(exact), "one_at_a_time": one_at_a_time,
            "best_by_mrr": [{**setting, **s} for setting, s in top]}


def datasets(size: str, folder: Path) -> dict[str, tuple[list, list[Path]]]:
    """{name: (questions, files)}: FinanceBench (its short filings in quick mode) and, in full mode, papers; in
    smoke mode the sample set's questions that have gold, over its documents written into `folder`."""
    if size == "smoke":
        questions = [q for q in load_dataset(SAMPLE_DATASET) if q.gold]
        return {"sample-smoke": (questions, make_sample_corpus(folder / "sample-docs"))}
    quick = size == "quick"
    questions = financebench_questions()
    pdfs = sorted((FINANCEBENCH / "pdfs").glob("*.pdf"))
    if quick:
        questions = [q for q in questions if q.gold[0].file[:-4] in QUICK_DOCS]
        pdfs = [p for p in pdfs if p.stem in QUICK_DOCS]
    out = {"financebench-quick" if quick else "financebench": (questions, pdfs)}
    if not quick:
        out["papers"] = (load_dataset(SETS_DIR / "papers.jsonl"), sorted((DATA / "papers").glob("*.pdf")))
    return out


def run_dataset(name: str, questions, pdfs, root: Path, models: Path, do_sweep: bool) -> dict:
    """Every figure for one dataset: each embedder, every strategy, paired differences, the sweep."""
    fig: dict = {"questions": len(questions), "files": len(pdfs)}
    ranks: dict[str, dict] = {}
    for label, options in EMBEDDERS.items():
        embedder = MemoQueries(OnnxEmbedder(models, **options))
        kb = build_index(root / f"{name}-{label}", embedder, pdfs)
        fig["chunks"] = kb.store.count()
        ranks[label], doc_hit1 = evaluate(kb, embedder, questions)
        fig[label] = {s: scores(r) | {"doc_hit1": doc_hit1[s]} for s, r in ranks[label].items()}
        if do_sweep and label == "fp32":
            fig["hybrid_sweep_fp32"] = sweep(kb, embedder, questions, ranks[label]["hybrid"])
    fp32 = ranks["fp32"]
    fig["ranks"] = {label: ranks[label] for label in ranks}
    for label in ranks.keys() - {"fp32"}:
        fig[f"{label}_minus_fp32"] = {s: paired(fp32[s], ranks[label][s]) for s in ("vector", "hybrid")}
    fig["hybrid_minus"] = {s: paired(fp32[s], fp32["hybrid"]) for s in ("vector", "bm25")}
    return fig


def verdict(figures: dict, label: str) -> tuple[bool, str]:
    """(kept, why) for `label` ("int8" or "bf16") against fp32: kept only when no dataset shows a loss beyond the
    bootstrap noise."""
    key = f"{label}_minus_fp32"
    losses = [f"{d} {s} {m} {v[m]['diff']:+.3f} (95% CI {v[m]['ci95']})"
              for d, fig in figures.items() for s, v in fig[key].items()
              for m in ("mrr10", "hit5") if v[m]["ci95"][1] < 0]
    if losses:
        return False, f"{label} loses beyond noise: " + "; ".join(losses)
    worst = min(v[m]["diff"] for fig in figures.values() for v in fig[key].values() for m in ("mrr10", "hit5"))
    changed = sum(v[m]["better"] + v[m]["worse"] for fig in figures.values() for v in fig[key].values()
                  for m in ("mrr10",))
    return True, (f"no loss beyond noise (every 95% interval of {label} - fp32 reaches 0; worst mean {worst:+.3f}; "
                  f"questions whose MRR changed, vector and hybrid together: {changed})")


def report(name: str, fig: dict) -> None:
    print(f"\n== {name}: {fig['questions']} questions, {fig['files']} files, {fig['chunks']} chunks ==")
    for label in EMBEDDERS:
        for strategy, s in fig[label].items():
            print(f"  {label} {strategy:<7} hit@1 {s['hit1']:.3f}  hit@5 {s['hit5']:.3f}  hit@10 {s['hit10']:.3f}"
                  f"  MRR@10 {s['mrr10']:.3f}  (file hit@1 {s['doc_hit1']:.3f})")
    diffs = [(f"{label} - fp32 ", fig[f"{label}_minus_fp32"]) for label in EMBEDDERS if label != "fp32"]
    for title, table in (*diffs, ("hybrid - ", fig["hybrid_minus"])):
        for strategy, d in table.items():
            print(f"  {title}{strategy}: " + ", ".join(
                f"{m} {v['diff']:+.3f} CI {v['ci95']} (+{v['better']}/-{v['worse']})" for m, v in d.items()))
    grid = fig.get("hybrid_sweep_fp32")
    if grid:
        print(f"  fusion grid (fp32; {grid['exact_term_questions']} questions with exact terms; default reproduces "
              f"the retriever: {grid['matches_retriever']}):")
        rows = {"default": grid["default"], **grid["one_at_a_time"]}
        rows.update({" ".join(f"{k}={v}" for k, v in b.items() if k in GRID): b for b in grid["best_by_mrr"]})
        for label, s in rows.items():
            print(f"    {label:<62} hit@1 {s['hit1']:.3f}  hit@5 {s['hit5']:.3f}  MRR@10 {s['mrr10']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="FinanceBench's six short filings, no sweep")
    parser.add_argument("--smoke", action="store_true",
                        help="a smoke run: the sample set's generated documents in a temporary folder, sweep included")
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-quality",
                        help="where the indexes are kept between runs")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-models",
                        help="ONNX model cache (exported once)")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    logging.getLogger("advanced_retrieval.library.knowledge_base").setLevel(logging.ERROR)  # "repaired": the rebuild above
    if size != "smoke" and not FINANCEBENCH.is_dir():
        sys.exit(f"{FINANCEBENCH} is absent: nothing to measure")
    with tempfile.TemporaryDirectory(prefix="bench-embedders-") as tmp:
        root = Path(tmp) if size == "smoke" else args.data_dir  # a smoke run keeps no index between runs
        figures = {name: run_dataset(name, questions, pdfs, root, args.cache, do_sweep=size != "quick")
                   for name, (questions, pdfs) in datasets(size, Path(tmp)).items()}
    for name, fig in figures.items():
        report(name, fig)
    verdicts = {label: verdict(figures, label) for label in EMBEDDERS if label != "fp32"}
    for label, (kept, why) in verdicts.items():
        print(f"\n{label}: {'fit to replace fp32' if kept else 'not fit to replace fp32'} - {why}")
    print(json.dumps({"bench": "embedders", "size": size, "quick": args.quick, "depth": DEPTH, "datasets": figures,
                      "bf16_unavailable": bf16_unavailable(),
                      "verdicts": {label: {"fit": kept, "why": why} for label, (kept, why) in verdicts.items()}}))


if __name__ == "__main__":
    main()
