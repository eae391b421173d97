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
from testing import figure_replies
from testing.gemini_stub import GeminiStub, StubReply, plan_for

KINDS_ANSWERABLE = ("right", "wrong number", "wrong passage", "invented", "false refusal")
KINDS_UNANSWERABLE = ("right refusal", "quote as answer")
KINDS = (*KINDS_ANSWERABLE, *KINDS_UNANSWERABLE, *figure_replies.KINDS)
RIGHT = {"right", "right refusal", *figure_replies.RIGHT_KINDS}
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
    """Every kind of reply for every question: its confidence, whether it was right by construction, and
    whether every claim was shown as supported. A question whose answer is a figure also gets the figure kinds
    (testing.figure_replies). The stub's model writes no query over the tables: the figures are its own."""
    brain = make_gemini_brain("replay-key", model="gemini-replay", base_url=stub.base_url, timeout=10.0)
    agent = build_agent(brain, kb.retriever, embedder=embedder, tables=kb.tables)
    out = []
    for q in questions:
        kinds = KINDS_ANSWERABLE if q.answer else KINDS_UNANSWERABLE
        kinds += figure_replies.KINDS if figure_replies.numeric(q.answer) else ()
        for kind in kinds:
            written: list[str | None] = []

            def responder(request, kind=kind, q=q, written=written):
                if "You plan how to answer" in request.system:
                    return StubReply(text=json.dumps(plan_for(q.question)))
                if "You write one read-only SQL query" in request.system:
                    return StubReply(text=json.dumps({"sql": "", "reason": "answered from the passages"}))
                if "You answer questions using ONLY" in request.system:
                    text = (figure_replies.figure_reply(kind, q.answer, request.prompt, q.question)
                            if kind in figure_replies.KINDS else reply_for(kind, q.answer, request.prompt))
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
                        "mode": result.mode, "features": result.confidence_features,
                        "supported": bool(result.claims) and all(c.verdict == "supported" for c in result.claims),
                        "reply": written[0], "claims": [(c.verdict, c.reason) for c in result.claims]})
    return out


def report(rows: list[dict]) -> dict:
    pairs = [(r["confidence"], r["right"]) for r in rows]
    print(f"{len(rows)} replies, {sum(r['right'] for r in rows)} right")
    for kind in KINDS:
        mine = [r for r in rows if r["kind"] == kind]
        if mine:
            shown = [r["confidence"] for r in mine]
            print(f"  {kind:24s} {len(mine):3d}  mean confidence {sum(shown) / len(shown):.2f}  "
                  f"shown supported {sum(r['supported'] for r in mine) / len(mine):.0%}  "
                  f"shown >= 0.8: {sum(c >= 0.8 for c in shown)}  below 0.5: {sum(c < 0.5 for c in shown)}")
    for lo, hi in ((0, .2), (.2, .5), (.5, .8), (.8, 1.01)):
        band = [r for c, r in pairs if lo <= c < hi]
        print(f"  [{lo:.1f}, {min(hi, 1):.1f})  {len(band):3d}  accuracy "
              + (f"{sum(band) / len(band):.3f}" if band else "—"))
    high = [r for c, r in pairs if c >= 0.8]
    wrong = [c for c, r in pairs if not r]
    summary = {"replies": len(rows), "auroc": auroc(pairs),
               "right_at_80": sum(high) / len(high) if high else None, "shown_at_80": len(high),
               "wrong_below_50": sum(c < 0.5 for c in wrong) / len(wrong) if wrong else None}
    figure_rows = [r for r in rows if r["kind"] in figure_replies.KINDS]
    summary["figures"] = {
        "replies": len(figure_rows), "auroc": auroc([(r["confidence"], r["right"]) for r in figure_rows]),
        "wrong_shown_supported": sum(r["supported"] for r in figure_rows if not r["right"]),
        "wrong": sum(not r["right"] for r in figure_rows),
        "right_shown_supported": sum(r["supported"] for r in figure_rows if r["right"]),
        "right": sum(r["right"] for r in figure_rows)}
    print(f"  AUROC {summary['auroc']:.3f}; right when >= 0.8: {summary['right_at_80']}; "
          f"wrong below 0.5: {summary['wrong_below_50']:.3f}")
    f = summary["figures"]
    print(f"  figures: {f['replies']} replies, AUROC {f['auroc'] if f['auroc'] is None else round(f['auroc'], 3)}; "
          f"wrong shown supported {f['wrong_shown_supported']}/{f['wrong']}; "
          f"right shown supported {f['right_shown_supported']}/{f['right']}")
    return summary


def replay(runs: Sequence[tuple], rows_out: Path | None = None) -> dict:
    """Every kind of reply for every question of each (library, embedder, questions) run, through one stub;
    prints the report and returns its summary (and the count of replies per kind). `rows_out` keeps every
    reply with its verdicts and confidence (JSON lines), to read what a kind got wrong."""
    rows = []
    with GeminiStub() as stub:
        for kb, embedder, questions in runs:
            rows += run(kb, embedder, questions, stub)
    if rows_out is not None:
        rows_out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    summary = report(rows)
    return {"replay": summary, "kinds": {k: sum(r["kind"] == k for r in rows) for k in KINDS}}


def main(argv: list[str] | None = None) -> int:
    """Open each library an eval built, replay every kind of reply over its set, print the report and a JSON line."""
    import wiring
    from evaluation import SETS, SetUnavailable, load_dataset
    from evaluation.sets import scratch_dir

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", action="append", type=Path, required=True, dest="data_dirs",
                        help="a library the eval built (repeatable, one per dataset)")
    parser.add_argument("datasets", nargs="+", help="the JSONL file or bundled set of each --data-dir, in order")
    parser.add_argument("--rows", type=Path, help="write every reply, its verdicts and confidence here (JSON lines)")
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
        print(json.dumps(replay(runs, args.rows)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
