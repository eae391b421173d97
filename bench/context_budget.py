"""What a synthesis context budget buys: tokens spent against the evidence that reaches the model.

    .venv/bin/python bench/context_budget.py --smoke             # two generated sets of two short filings each,
                                                                 # hashing embedder, in a temporary folder (seconds)
    .venv/bin/python bench/context_budget.py [--data-dir DIR]    # the index bench/quality.py cached

For every FinanceBench question (dev: the tuning set; subset: held out), the agent's own first round is replayed
offline: the rules decompose the question, each sub-question is retrieved (hybrid, k=8 as the agent does, the
retriever's default settings), and agentic_rag.context.build_context numbers the passages within the budget the
synthesize step would have (context_tokens minus the instructions, the question and PROMPT_OVERHEAD_TOKENS). Per
(context_tokens, region_tokens): the tokens the passages take (mean), the hits left out or cut (mean: a hit whose
text is not whole in the context; region 0 is the offline layout, a page's other found chunks as passages), the share of
questions whose gold page reaches the context, and the share of the gold evidence's figures (FinanceBench's
evidence text, numbers of 3+ digits or with decimals) found in the context: whether the rows and their headers
came along, not only the page. Two more rows per set replay a local model's capped answer prompt
(Budgets.answer_prompt_tokens at ANSWER_PROMPTS: passages cut to their windows) beside the whole passages
LOCAL_BUDGETS gives it (context 3000, region 700). --smoke runs the same replay on generated filings in FinanceBench's layout
(questions.jsonl with evidence, pdfs/) over fewer budgets. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from common import DATA, financebench_questions, open_knowledge_base

from advanced_retrieval import HybridRetriever
from agentic_rag import LOCAL_BUDGETS
from agentic_rag.brains.prompts import ANSWER_HINTS, ANSWER_SYSTEM
from agentic_rag.context import build_context, render_context
from agentic_rag.language.question_rules import analyze_question, decompose
from agentic_rag.language.text import estimate_tokens, numbers
from agentic_rag.steps.synthesize import FRAMING_TOKENS, PROMPT_OVERHEAD_TOKENS, WINDOW_TOKENS
from evaluation import chunk_matches, text_pdf
from vector_db import HashingEmbedder, OnnxEmbedder

BENCH = DATA / "bench"  # as bench/quality.py has it: financebench_dev and financebench_subset
CONTEXT_TOKENS = (3000, 4500, 6000, 9000, 12000)
REGION_TOKENS = (0, 400, 700, 1000)
SMOKE_CONTEXT_TOKENS, SMOKE_REGION_TOKENS = (1200, 3000), (0, 700)  # 1200: the budget binds
K = 8
ANSWER_PROMPTS = (900, 1800)  # a local model's capped answer prompt (Budgets.answer_prompt_tokens): ~4.5 s, ~9 s read
_FIGURE = re.compile(r"^\d{3,}$|\.\d")


def cases(name: str, bench: Path = BENCH) -> list[dict]:
    """Questions with their gold (file, pages) and the figures of their evidence text."""
    questions = financebench_questions(bench / f"financebench_{name}")
    raw = [json.loads(line) for line in (bench / f"financebench_{name}" / "questions.jsonl").read_text().splitlines()
           if line.strip()]
    out = []
    for q, record in zip(questions, raw, strict=True):
        figures = {n for e in record.get("evidence") or [] for n in numbers(e.get("evidence_text", ""))
                   if _FIGURE.search(n)}
        out.append({"question": q, "figures": figures})
    return out


def replay(retriever, case: dict) -> list[tuple[str, tuple]]:
    """The sub-questions of the rules' plan and their hits, as the agent's first retrieve round makes them."""
    analysis = analyze_question(case["question"].question)
    return [(sub, tuple(retriever.retrieve(sub, K, "hybrid"))) for sub in decompose(analysis)]


def measure(replayed: list[tuple[dict, list]], context_tokens: int, region_tokens: int, answer_prompt: int = 0) -> dict:
    """One row; `answer_prompt` > 0 replays a capped answer prompt as synthesize builds it for a local model (passages
    cut to their windows, the whole prompt within answer_prompt tokens)."""
    used, left_out, page, figures = [], [], [], []
    for case, sub_hits in replayed:
        q = case["question"]
        subs = " ".join(s for s, _ in sub_hits)
        overhead = estimate_tokens(ANSWER_SYSTEM + q.question + subs)
        budget, window = context_tokens - overhead - PROMPT_OVERHEAD_TOKENS, 0
        if answer_prompt:
            hint = estimate_tokens(ANSWER_HINTS.get(analyze_question(q.question).question_type, ""))
            budget, window = min(budget, answer_prompt - overhead - hint - FRAMING_TOKENS), WINDOW_TOKENS
        blocks = build_context(sub_hits, budget, region_tokens=region_tokens, window_tokens=window)
        text = render_context(blocks)
        used.append(estimate_tokens(text))
        hits = {h.chunk.id: h.chunk.text for _, found in sub_hits for h in found}
        left_out.append(sum(1 for t in hits.values() if t not in text))  # whole in a passage or a region, else out
        page.append(any(chunk_matches(b.chunk, q.gold) for b in blocks))
        if case["figures"]:
            figures.append(len(case["figures"] & numbers(text)) / len(case["figures"]))
    n = len(replayed)
    return {"context_tokens": context_tokens, "region_tokens": region_tokens, "answer_prompt_tokens": answer_prompt,
            "tokens_mean": round(sum(used) / n), "passages_left_out_mean": round(sum(left_out) / n, 2),
            "gold_page_in_context": round(sum(page) / n, 3),
            "evidence_figures_in_context": round(sum(figures) / max(1, len(figures)), 3)}


# Smoke filings: (company, lines per page); a page's figures are what its question's evidence text quotes.
_SMOKE_FILINGS = {
    "dev": [("NORTHWIND_2023_10K", "revenue", ["Total revenue 17,606 15,785 12,868", "Gross profit 15,441 13,920"]),
            ("CONTOSO_2022_10K", "operating income", ["Operating income 6,098 5,802", "Operating margin 34.6 36.8"])],
    "subset": [("FABRIKAM_2023_10Q", "cash", ["Cash and equivalents 4,236 3,844", "Free cash flow 1,093 982"]),
               ("LITWARE_2022_8K", "dividend", ["Quarterly dividend per share 0.45 0.41", "Shares repurchased 1,824"])],
}
_SMOKE_FILLER = ("The company reviews its segments, suppliers and markets each quarter. Risk factors include "
                 "competition, regulation and currency. Management discusses results with the board.")


def write_smoke_sets(bench: Path) -> list[Path]:
    """Two FinanceBench-shaped sets (questions.jsonl with 0-based evidence pages, pdfs/) of generated filings, each
    four pages with its figures on page 3; the PDFs written."""
    pdfs = []
    for name, filings in _SMOKE_FILINGS.items():
        folder = bench / f"financebench_{name}"
        (folder / "pdfs").mkdir(parents=True)
        records = []
        for n, (doc, topic, figures) in enumerate(filings):
            company = doc.split("_")[0].title()
            pages = [(f"{company} annual report, page {p + 1}", _SMOKE_FILLER, _SMOKE_FILLER) for p in range(4)]
            pages[2] = (f"{company} consolidated statements of {topic} (in millions)", *figures, _SMOKE_FILLER)
            pdfs.append(folder / "pdfs" / f"{doc}.pdf")
            pdfs[-1].write_bytes(text_pdf(tuple(pages)))
            records.append({"financebench_id": f"smoke_{name}_{n}", "doc_name": doc, "question_type": "metrics",
                            "question": f"What was {company}'s {topic} in the last fiscal year?",
                            "evidence": [{"evidence_text": "\n".join(figures), "evidence_page_num": 2,
                                          "doc_name": doc}]})
        (folder / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return pdfs


def run(retriever, bench: Path, context_tokens: tuple[int, ...], region_tokens: tuple[int, ...]) -> dict:
    """Per set, one row per (context_tokens, region_tokens), printed as it goes."""
    out = {}
    for name in ("dev", "subset"):
        replayed = [(case, replay(retriever, case)) for case in cases(name, bench)]
        rows = [measure(replayed, c, r) for c in context_tokens for r in region_tokens]
        rows += [measure(replayed, LOCAL_BUDGETS.context_tokens, LOCAL_BUDGETS.region_tokens, cap)
                 for cap in ANSWER_PROMPTS]
        out[name] = rows
        print(f"\n== {name}: {len(replayed)} questions ==")
        for row in rows:
            cap = f"  answer prompt {row['answer_prompt_tokens']} (windows)" if row["answer_prompt_tokens"] else ""
            print(f"  context {row['context_tokens']:>6}  region {row['region_tokens']:>5}  tokens {row['tokens_mean']:>6}"
                  f"  left out {row['passages_left_out_mean']:>5}  gold page {row['gold_page_in_context']:.3f}"
                  f"  evidence figures {row['evidence_figures_in_context']:.3f}{cap}")
    return out


def smoke() -> dict:
    """The replay over generated filings, indexed with the hashing embedder in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="context-budget-") as tmp:
        bench = Path(tmp) / "bench"
        pdfs = write_smoke_sets(bench)
        embedder = HashingEmbedder()
        kb = open_knowledge_base(Path(tmp) / "kb", embedder, isolate=False)
        failed = [r for r in kb.ingest_many(pdfs) if r.status != "indexed"]
        if failed:
            raise RuntimeError(f"indexing the generated filings failed: {failed}")
        retriever = HybridRetriever(kb.store, kb.keyword_index, embedder)
        return run(retriever, bench, SMOKE_CONTEXT_TOKENS, SMOKE_REGION_TOKENS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-quality")
    parser.add_argument("--smoke", action="store_true",
                        help="generated filings, hashing embedder, 2 x 2 budgets, in a temporary folder (seconds)")
    args = parser.parse_args()
    if args.smoke:
        print(json.dumps({"bench": "context_budget", "size": "smoke", "k": K, "data": "generated", "sets": smoke()}))
        return
    embedder = OnnxEmbedder(args.data_dir / "models", quantized=False)
    kb = open_knowledge_base(args.data_dir / "financebench", embedder)
    retriever = HybridRetriever(kb.store, kb.keyword_index, embedder)
    out = run(retriever, BENCH, CONTEXT_TOKENS, REGION_TOKENS)
    print(json.dumps({"bench": "context_budget", "size": "full", "k": K, "data": str(DATA), "sets": out}))


if __name__ == "__main__":
    main()
