"""Confidence on model-written answers: realistic Gemini replies replayed through the real client, right and wrong.

    .venv/bin/python -m testing.replay --data-dir /tmp/papers papers [--data-dir /tmp/heldout heldout]

It lives with the stub servers it drives (the tests run it too); it reads the bundled sets through `evaluation`
and opens the libraries an eval built (`cli.py --data-dir DIR eval SET`) through `wiring`.

No model can be called here, so the measurement replays the kinds of answer a real model gives, through the real
ChatGoogleGenerativeAI client and a local Gemini stub (testing/gemini_stub.py) on 127.0.0.1, over an index the
eval already built (run the offline eval first: papers with cli.py eval, held-out with eval/heldout.py). For each
question, from the passages the engine really retrieved and sent:
- right: the sentence that states the gold answer, cited to its passage;
- wrong number: the same sentence with its key number changed;
- wrong passage: the same sentence cited to a passage that does not state it;
- invented: a fluent claim with a made-up figure, cited to the first passage;
- false refusal: "[[NOT FOUND]]" although a passage states the answer;
and for questions the documents cannot answer: a correct refusal, and a confident quote of the first passage.
The stub's verifier is credulous (every claim "supported"), the worst a real verifier does: what separates right
from wrong then is the engine's own checks (citations, numbers, fit to the question, cosine) and the confidence
model. Prints the reliability table and AUROC per kind of reply and overall, and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from agentic_rag import build_agent, make_gemini_brain
from evaluation.metrics import alternative_in, auroc
from testing.gemini_stub import GeminiStub, StubReply, plan_for

KINDS_ANSWERABLE = ("right", "wrong number", "wrong passage", "invented", "false refusal")
KINDS_UNANSWERABLE = ("right refusal", "quote as answer")
RIGHT = {"right", "right refusal"}
_PASSAGE = re.compile(r"^\[P(\d+)\] [^\n]*\n(.*?)(?=\n\n\[P\d+\] |\n</passages>)", re.MULTILINE | re.DOTALL)


def passages(prompt: str) -> list[tuple[int, str]]:
    """(ID, text) of the passages an answer prompt carries."""
    return [(int(n), text) for n, text in _PASSAGE.findall(prompt)]


def sentence_with(text: str, alternatives) -> str | None:
    """The sentence (or table row) of `text` that states one of `alternatives`."""
    for piece in re.split(r"(?<=[.!?])\s+|\n", text):
        if any(alternative_in(a, piece) for a in alternatives):
            return " ".join(piece.split())
    return None


def _altered(sentence: str, key) -> str | None:
    """The sentence with the figure that answers the question (else its first) changed by about +13%."""
    figures = list(re.finditer(r"\d[\d,]*(?:\.\d+)?", sentence))
    answering = [m for m in figures if any(alternative_in(a, m.group(0)) for a in key)]
    m = (answering or figures or [None])[0]
    if m is None:
        return None
    raw = m.group(0)
    value = float(raw.replace(",", "")) * 1.13 + 1
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    new = f"{value:,.{decimals}f}" if "," in raw else f"{value:.{decimals}f}"
    return sentence[:m.start()] + new + sentence[m.end():]


def reply_for(kind: str, groups, prompt: str) -> str | None:
    """The answer text a model would write for this kind of reply, or None when the passages do not allow it."""
    found = passages(prompt)
    if not found:
        return "[[NOT FOUND]] I could not find this in the documents." if kind == "right refusal" else None
    if kind == "right refusal":
        return "[[NOT FOUND]] I could not find this in the documents. The passages discuss other topics."
    if kind == "quote as answer":
        first = re.split(r"(?<=[.!?])\s+", found[0][1].strip())[0]
        return f"{' '.join(first.split())} [P{found[0][0]}]."
    key = groups[0] if groups else ()
    stating = [(n, sentence_with(text, key)) for n, text in found]
    stating = [(n, s) for n, s in stating if s]
    if not stating:
        return None
    n, sentence = stating[0]
    if kind == "right":
        return f"{sentence.rstrip('.')} [P{n}]."
    if kind == "wrong number":
        altered = _altered(sentence, key)
        return f"{altered.rstrip('.')} [P{n}]." if altered else None
    if kind == "wrong passage":
        other = next((m for m, text in found if not any(alternative_in(a, text) for a in key)), None)
        return f"{sentence.rstrip('.')} [P{other}]." if other else None
    if kind == "invented":
        return f"The documents report a total of 4,321 units for this, up 17% on the year before [P{found[0][0]}]."
    if kind == "false refusal":
        return "[[NOT FOUND]] I could not find this in the documents."
    raise ValueError(kind)


def run(kb, embedder, questions, stub: GeminiStub) -> list[dict]:
    """Every kind of reply for every question: its confidence and whether it was right by construction."""
    brain = make_gemini_brain("replay-key", model="gemini-replay", base_url=stub.base_url, timeout=10.0)
    agent = build_agent(brain, kb.retriever, embedder=embedder)
    out = []
    for q in questions:
        kinds = KINDS_ANSWERABLE if q.answer else KINDS_UNANSWERABLE
        for kind in kinds:
            written: list[str | None] = []

            def responder(request, kind=kind, q=q, written=written):
                if "You plan how to answer" in request.system:
                    return StubReply(text=json.dumps(plan_for(q.question)))
                if "You answer questions using ONLY" in request.system:
                    text = reply_for(kind, q.answer, request.prompt)
                    written.append(text)
                    return StubReply(text=text or "[[NOT FOUND]] I could not find this.", chunks=3)
                claims = re.findall(r"^(\d+)\. .*?\(cites (?:\[P(\d+)\])?", request.prompt, re.MULTILINE)
                return StubReply(text=json.dumps({"claims": [{"claim": int(i), "verdict": "supported",
                                                              "evidence": int(n or 0)} for i, n in claims],
                                                  "missing": []}))

            stub.responder = responder
            result = agent.ask(q.question, strategy="hybrid", k=10)
            if not written or written[0] is None:
                continue  # the passages did not allow this kind of reply for this question
            out.append({"id": q.id, "kind": kind, "right": kind in RIGHT, "confidence": result.confidence,
                        "mode": result.mode, "features": result.confidence_features})
    return out


def report(rows: list[dict]) -> dict:
    pairs = [(r["confidence"], r["right"]) for r in rows]
    print(f"{len(rows)} replies, {sum(r['right'] for r in rows)} right")
    for kind in (*KINDS_ANSWERABLE, *KINDS_UNANSWERABLE):
        mine = [r["confidence"] for r in rows if r["kind"] == kind]
        if mine:
            print(f"  {kind:15s} {len(mine):3d}  mean confidence {sum(mine) / len(mine):.2f}  "
                  f"shown >= 0.8: {sum(c >= 0.8 for c in mine)}  below 0.5: {sum(c < 0.5 for c in mine)}")
    for lo, hi in ((0, .2), (.2, .5), (.5, .8), (.8, 1.01)):
        band = [r for c, r in pairs if lo <= c < hi]
        print(f"  [{lo:.1f}, {min(hi, 1):.1f})  {len(band):3d}  accuracy "
              + (f"{sum(band) / len(band):.3f}" if band else "—"))
    high = [r for c, r in pairs if c >= 0.8]
    wrong = [c for c, r in pairs if not r]
    summary = {"replies": len(rows), "auroc": auroc(pairs),
               "right_at_80": sum(high) / len(high) if high else None, "shown_at_80": len(high),
               "wrong_below_50": sum(c < 0.5 for c in wrong) / len(wrong) if wrong else None}
    print(f"  AUROC {summary['auroc']:.3f}; right when >= 0.8: {summary['right_at_80']}; "
          f"wrong below 0.5: {summary['wrong_below_50']:.3f}")
    return summary


def replay(runs: Sequence[tuple]) -> dict:
    """Every kind of reply for every question of each (library, embedder, questions) run, through one stub;
    prints the report and returns its summary (and the count of replies per kind)."""
    rows = []
    with GeminiStub() as stub:
        for kb, embedder, questions in runs:
            rows += run(kb, embedder, questions, stub)
    summary = report(rows)
    return {"replay": summary, "kinds": {k: sum(r["kind"] == k for r in rows)
                                         for k in (*KINDS_ANSWERABLE, *KINDS_UNANSWERABLE)}}


def main(argv: list[str] | None = None) -> int:
    """Open each library an eval built, replay every kind of reply over its set, print the report and a JSON line."""
    import wiring
    from evaluation import SETS, SetUnavailable, load_dataset
    from evaluation.sets import scratch_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", action="append", type=Path, required=True, dest="data_dirs",
                        help="a library the eval built (repeatable, one per dataset)")
    parser.add_argument("datasets", nargs="+", help="the JSONL file or bundled set of each --data-dir, in order")
    args = parser.parse_args(argv)
    if len(args.data_dirs) != len(args.datasets):
        parser.error("give one dataset per --data-dir")
    runs = []
    with scratch_dir("replay") as scratch:
        for data_dir, dataset in zip(args.data_dirs, args.datasets, strict=True):
            try:
                path = (SETS[dataset].prepare(Path(scratch) / dataset).dataset
                        if dataset in SETS and not Path(dataset).is_file() else Path(dataset))
            except SetUnavailable as e:
                print(f"{e}: skipped", file=sys.stderr)
                continue
            if not (data_dir / "chroma").exists():
                print(f"{data_dir} has no library: run the eval first (cli.py --data-dir {data_dir} eval {dataset});"
                      " skipped", file=sys.stderr)
                continue
            config = wiring.Config.from_env(data_dir=data_dir)
            embedder = wiring.make_embedder(config)
            runs.append((wiring.open_library(config, embedder=embedder), embedder, load_dataset(path)))
        print(json.dumps(replay(runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
