"""What a synthesis context budget buys: tokens spent against the evidence that reaches the model.

    .venv/bin/python bench/context_budget.py [--data-dir DIR]    # the index bench/quality.py cached

For every FinanceBench question (dev: the tuning set; subset: held out), the agent's own first round is replayed
offline: the rules decompose the question, each sub-question is retrieved (hybrid, k=8 as the agent does, the
retriever's default settings), and agentic_rag.context.build_context numbers the passages within the budget the
synthesize step would have (context_tokens minus the instructions, the question and PROMPT_OVERHEAD_TOKENS). Per
(context_tokens, region_tokens): the tokens the passages take (mean), the hits left out or cut (mean: a hit whose
text is not whole in the context; region 0 is the offline layout, a page's other found chunks as passages), the share of
questions whose gold page reaches the context, and the share of the gold evidence's figures (FinanceBench's
evidence text, numbers of 3+ digits or with decimals) found in the context: whether the rows and their headers
came along, not only the page. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from common import DATA, financebench_questions, open_knowledge_base
from quality import BENCH

from advanced_retrieval import HybridRetriever
from agentic_rag.brains.prompts import ANSWER_SYSTEM
from agentic_rag.context import build_context, render_context
from agentic_rag.language.question_rules import analyze_question, decompose
from agentic_rag.language.text import estimate_tokens, numbers
from agentic_rag.steps.synthesize import PROMPT_OVERHEAD_TOKENS
from evaluation import chunk_matches
from vector_db import OnnxEmbedder

CONTEXT_TOKENS = (3000, 4500, 6000, 9000, 12000)
REGION_TOKENS = (0, 400, 700, 1000)
K = 8
_FIGURE = re.compile(r"^\d{3,}$|\.\d")


def cases(name: str) -> list[dict]:
    """Questions with their gold (file, pages) and the figures of their evidence text."""
    questions = financebench_questions(BENCH / f"financebench_{name}")
    raw = [json.loads(line) for line in (BENCH / f"financebench_{name}" / "questions.jsonl").read_text().splitlines()
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


def measure(replayed: list[tuple[dict, list]], context_tokens: int, region_tokens: int) -> dict:
    used, left_out, page, figures = [], [], [], []
    for case, sub_hits in replayed:
        q = case["question"]
        subs = " ".join(s for s, _ in sub_hits)
        budget = context_tokens - estimate_tokens(ANSWER_SYSTEM + q.question + subs) - PROMPT_OVERHEAD_TOKENS
        blocks = build_context(sub_hits, budget, region_tokens=region_tokens)
        text = render_context(blocks)
        used.append(estimate_tokens(text))
        hits = {h.chunk.id: h.chunk.text for _, found in sub_hits for h in found}
        left_out.append(sum(1 for t in hits.values() if t not in text))  # whole in a passage or a region, else out
        page.append(any(chunk_matches(b.chunk, q.gold) for b in blocks))
        if case["figures"]:
            figures.append(len(case["figures"] & numbers(text)) / len(case["figures"]))
    n = len(replayed)
    return {"context_tokens": context_tokens, "region_tokens": region_tokens,
            "tokens_mean": round(sum(used) / n), "passages_left_out_mean": round(sum(left_out) / n, 2),
            "gold_page_in_context": round(sum(page) / n, 3),
            "evidence_figures_in_context": round(sum(figures) / max(1, len(figures)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "docagent-bench-quality")
    args = parser.parse_args()
    embedder = OnnxEmbedder(args.data_dir / "models", quantized=False)
    kb = open_knowledge_base(args.data_dir / "financebench", embedder)
    retriever = HybridRetriever(kb.store, kb.keyword_index, embedder)
    out = {}
    for name in ("dev", "subset"):
        replayed = [(case, replay(retriever, case)) for case in cases(name)]
        rows = [measure(replayed, c, r) for c in CONTEXT_TOKENS for r in REGION_TOKENS]
        out[name] = rows
        print(f"\n== {name}: {len(replayed)} questions ==")
        for row in rows:
            print(f"  context {row['context_tokens']:>6}  region {row['region_tokens']:>5}  tokens {row['tokens_mean']:>6}"
                  f"  left out {row['passages_left_out_mean']:>5}  gold page {row['gold_page_in_context']:.3f}"
                  f"  evidence figures {row['evidence_figures_in_context']:.3f}")
    print(json.dumps({"bench": "context_budget", "k": K, "data": str(DATA), "sets": out}))


if __name__ == "__main__":
    main()
