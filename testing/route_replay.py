"""What a question set costs and covers through the model route: the real Gemini client against the local stub.

    .venv/bin/python -m testing.route_replay --data-dir /tmp/wholedoc wholedoc [--json]

Over a library an eval built (`cli.py --data-dir DIR eval SET`), every question goes through the whole engine
with the real ChatGoogleGenerativeAI client pointed at testing/gemini_stub.py on 127.0.0.1, whose model plans
the question as itself, answers with the first sentence of the first passage it is given (one answer per part,
then one call merging them), calls no tools, and checks credulously. The answers' words therefore say nothing;
what is measured is the route each question takes:
- model calls, input tokens and seconds per question (the stub answers at once);
- for questions with gold sections: the share of them the engine read (the Reasoning's sections read) or the
  answer names, as `cli.py eval` scores section coverage.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def measure(agent, stub, questions) -> list[dict]:
    """One row per question: its calls, tokens, seconds and section coverage (None without gold sections)."""
    from evaluation.metrics import missing_groups

    rows = []
    for question in questions:
        calls, tokens = len(stub.requests), stub.input_tokens
        started = time.perf_counter()
        answer = agent.ask(question.question)
        seconds = time.perf_counter() - started
        text = "\n".join(line for line in answer.answer.splitlines() if not line.strip().startswith("*("))
        read = " ".join(s.get("title", "") for t in answer.trace if t.get("step") == "retrieve"
                        for s in ((t.get("details") or {}).get("reading") or {}).get("read", ()))

        def share(groups, where):
            return round(1 - len(missing_groups(where, groups)) / len(groups), 4) if groups else None

        rows.append({"id": question.id, "calls": len(stub.requests) - calls, "input_tokens": stub.input_tokens - tokens,
                     "seconds": round(seconds, 3),
                     "sections": share(getattr(question, "sections", ()), text + "\n" + read)})
    return rows


def summary(rows: list[dict]) -> dict:
    def mean(key):
        values = [r[key] for r in rows if r[key] is not None]
        return round(statistics.mean(values), 3) if values else None

    return {"questions": len(rows), "calls_mean": mean("calls"), "calls_max": max((r["calls"] for r in rows), default=0),
            "input_tokens_mean": mean("input_tokens"),
            "input_tokens_max": max((r["input_tokens"] for r in rows), default=0),
            "seconds_p50": round(statistics.median(r["seconds"] for r in rows), 3) if rows else None,
            "section_coverage": mean("sections")}


def main(argv: list[str] | None = None) -> int:
    import wiring
    from agentic_rag import build_agent, make_gemini_brain
    from evaluation import SETS, load_dataset
    from evaluation.sets import scratch_dir
    from testing.gemini_stub import GeminiStub, docagent_responder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the library the eval built")
    parser.add_argument("dataset", help="a JSONL file or a bundled set")
    parser.add_argument("--json", action="store_true", help="print every question's row too")
    args = parser.parse_args(argv)
    if not (args.data_dir / "chroma").exists():
        print(f"{args.data_dir} has no library: run cli.py --data-dir {args.data_dir} eval {args.dataset} first",
              file=sys.stderr)
        return 2
    with scratch_dir("route-replay") as scratch:
        path = (SETS[args.dataset].prepare(Path(scratch) / args.dataset).dataset
                if args.dataset in SETS and not Path(args.dataset).is_file() else Path(args.dataset))
        questions = load_dataset(path)
    config = wiring.Config.from_env(data_dir=args.data_dir)
    embedder = wiring.make_embedder(config)
    kb = wiring.open_library(config, embedder=embedder)
    with GeminiStub(responder=docagent_responder, delay=0.0) as stub:
        brain = make_gemini_brain("replay-key", model="gemini-replay", base_url=stub.base_url, timeout=20.0)
        agent = build_agent(brain, kb.retriever, embedder=embedder, tables=kb.tables, outlines=kb)
        rows = measure(agent, stub, questions)
    out = {"route_replay": summary(rows)}
    if args.json:
        out["questions"] = rows
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
