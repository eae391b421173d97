"""The agent on Gemini, against a local stub that answers each call after 700 ms, next to the reference design.

    .venv/bin/python bench/agent.py --smoke    # 1 simple + 1 complex question, stub delay 0.1 s, a stall of 2 s
                                               # against a 1 s client timeout, the local stub 10x faster (seconds)
    .venv/bin/python bench/agent.py --quick    # 2 simple + 2 complex questions, one failure case (~30 s)
    .venv/bin/python bench/agent.py            # 4 + 3 questions, a stalled server at default settings, and
                                               # the offline brain with the real embedder on ../shared papers

Ours: build_agent(make_gemini_brain(...)) - analyze+decompose in one structured call, sub-questions retrieved
concurrently, a streamed answer, one verify call. Reference: the sequential one-call-per-step pipeline of the
reference app (analyze, decompose, synthesize, verify: four calls in a row, sub-questions retrieved one after
another, every hit in the prompt). Both use the real ChatGoogleGenerativeAI over HTTP to testing/gemini_stub.py,
which counts requests and tokens (words and punctuation marks), and the real KnowledgeBase (Chroma + BM25)
over a small generated corpus with a hashing embedder. Per question: LLM calls, input tokens, seconds to the
first answer token and in total. The last line printed is one JSON object with every figure.

Local: the same questions through make_local_brain (the real ChatOpenAI) to testing/openai_stub.py at a laptop
CPU's speed (LOCAL_TOKENS_PER_S written, LOCAL_PROMPT_TOKENS_PER_S read), with LOCAL_BUDGETS; the stub's
replies are the same short ones the Gemini stub gives, so the seconds are a floor for a real small model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from advanced_retrieval import KnowledgeBase  # noqa: E402
from agentic_rag import LOCAL_BUDGETS, Budgets, build_agent, make_gemini_brain, make_local_brain  # noqa: E402
from testing.gemini_stub import GeminiStub, StubReply, answer_from_passages, docagent_responder, plan_for  # noqa: E402
from testing.openai_stub import STUB_MODELS, OpenAIStub  # noqa: E402
from vector_db import (  # noqa: E402
    HashingEmbedder,  # noqa: E402
    VectorStore,
    make_client,
)
from wiring import DEFAULT_GEMINI_MODEL, knowledge_base  # noqa: E402

DELAY = 0.7
SMOKE_DELAY = 0.1  # --smoke: every path, not the figures
LOCAL_TOKENS_PER_S = 20.0  # writing: a 3B model at 4 bits on a 2-core laptop CPU
LOCAL_PROMPT_TOKENS_PER_S = 200.0  # reading the prompt on the same CPU
KEY = "bench-key-not-real"
SIMPLE = ["What was Northwind's revenue in 2023?", "When does the steering committee meet?",
          "How many employees does Contoso have?", "What is the budget of the North region?"]
COMPLEX = ["What was Northwind's revenue in 2023 and when does the steering committee meet?",
           "Compare the revenue of Northwind and Contoso",
           "How many employees does Contoso have and which are the pilot sites?"]
FACTS = {
    "northwind.txt": ["Northwind revenue in 2023 was 12.4 million euros, up 8 percent on the year before."],
    "contoso.txt": ["Contoso revenue in 2023 was 9.1 million euros.", "Contoso has 240 employees in four offices."],
    "governance.txt": ["The steering committee meets every Monday at 9:00 in room 4."],
    "budget.txt": ["The budget of the North region is 410,000 euros for 2024."],
    "pilots.txt": ["The three pilot sites are Aarhus, Bilbao and Cork."],
    "minutes.txt": ["The cafeteria menu changes every Friday."],
}
_FILLER = ("project team review plan quarter market customer product service delivery risk budget schedule "
           "supplier contract quality report meeting action owner milestone audit policy training system data "
           "process cost growth target partner region office support update decision issue resolution")
FILLER = _FILLER.split()

REF_SYSTEM = {
    "analyze": "Reference step: analyze. Reply with JSON {intent, complexity, question_type, key_concepts, language}.",
    "decompose": "Reference step: decompose. Reply with JSON {sub_questions: [...]} for the analysed question.",
    "synthesize": "Reference step: synthesize. Answer from the numbered passages, citing them like [1].",
    "verify": "Reference step: verify. Reply with JSON {claims: [{claim, verdict, evidence}], missing: []}.",
}


def responder(request):
    """docagent_responder for our prompts (a summary: one bullet per section read, as models write them);
    plausible replies for the reference pipeline's four prompts."""
    system = request.system
    if "opening passages of each section of the document" in request.prompt and "You answer questions" in system:
        passages = re.findall(r"^\[(P\d+)\] [^\n]*\n([^\n]+)", request.prompt, re.MULTILINE)
        bullets = [f"- {text.split('. ')[0].strip().rstrip('.')}. [{n}]" for n, text in passages[:SUMMARY_BULLETS]]
        return StubReply(text="\n".join(bullets), chunks=4)
    if system.startswith("Reference step: analyze"):
        return StubReply(text=json.dumps({"intent": "answer", "complexity": "simple", "question_type": "fact",
                                          "key_concepts": [], "language": "en"}))
    if system.startswith("Reference step: decompose"):
        question = request.prompt.split("Question:", 1)[1].split("\n", 1)[0].strip()
        return StubReply(text=json.dumps({"sub_questions": plan_for(question)["sub_questions"]}))
    if system.startswith("Reference step: synthesize"):
        return StubReply(text=answer_from_passages(request.prompt), chunks=4)
    if system.startswith("Reference step: verify"):
        return StubReply(text=json.dumps({"claims": [{"claim": 1, "verdict": "supported", "evidence": 1}],
                                          "missing": []}))
    return docagent_responder(request)


SUMMARY_BULLETS = 10
PAPER_SECTIONS = ("Abstract", "1 Introduction", "2 Related Work", "3 Method", "3.1 Model", "3.2 Training",
                  "4 Experiments", "4.1 Datasets", "4.2 Results", "5 Discussion", "6 Conclusion", "References")
PAPER_WORDS = 7500  # about fifteen pages of a two-column paper


def write_paper(kb: KnowledgeBase) -> str:
    """A generated paper of about fifteen pages (PAPER_WORDS words under PAPER_SECTIONS), indexed; its name."""
    rng = random.Random(11)
    per = PAPER_WORDS // len(PAPER_SECTIONS)
    parts = ["# Turbine Wear Under Salt Spray"]
    for title in PAPER_SECTIONS:
        depth = "###" if "." in title.split()[0] else "##"
        words = [rng.choice(FILLER) for _ in range(per)]
        sentences = [" ".join(words[i:i + 15]).capitalize() + "." for i in range(0, per, 15)]
        paragraphs = [" ".join(sentences[i:i + 6]) for i in range(0, len(sentences), 6)]
        parts.append(f"{depth} {title}\n\n" + "\n\n".join(paragraphs))
    kb.ingest_bytes("\n\n".join(parts).encode(), "turbine_paper.md")
    return "turbine_paper.md"


def build_corpus(root: Path, embedder) -> KnowledgeBase:
    """Six text files of ~900 words each (filler around planted facts), in the real KnowledgeBase."""
    rng = random.Random(7)
    store = VectorStore(make_client(root / "data"), embedder)
    kb = knowledge_base(store, root, embedder, isolate=False)
    for name, facts in FACTS.items():
        paragraphs = []
        for p in range(6):
            words = [rng.choice(FILLER) for _ in range(150)]
            sentences = [" ".join(words[i:i + 15]).capitalize() + "." for i in range(0, 150, 15)]
            if p < len(facts):
                sentences.insert(rng.randrange(len(sentences)), facts[p])
            paragraphs.append(" ".join(sentences))
        kb.ingest_bytes("\n\n".join(paragraphs).encode(), name)
    return kb


def measure(stub: GeminiStub, run) -> dict:
    """Calls, tokens (as the stub counted them) and timings of one question answered by `run(on_token)`."""
    before = (len(stub.requests), stub.input_tokens, stub.output_tokens)
    first: list[float] = []
    started = time.monotonic()
    extra = run(lambda piece: first.append(time.monotonic()) if not first else None)
    total = time.monotonic() - started
    return {"llm_calls": len(stub.requests) - before[0], "input_tokens": stub.input_tokens - before[1],
            "output_tokens": stub.output_tokens - before[2],
            "first_token_s": round(first[0] - started, 3) if first else None, "total_s": round(total, 3), **extra}


def ask_ours(agent, question: str):
    def run(on_token):
        result = agent.ask(question, on_token=on_token)
        loops = sum(1 for t in result.trace if t["step"] == "retrieve") - 1
        return {"mode": result.mode, "loops": loops, "sub_questions": len(result.sub_questions),
                "warnings": list(result.warnings), "confidence": result.confidence}
    return run


def _covered(agent, question: str) -> str:
    """The line the answer ends with: what the summary read (not timed)."""
    lines = [ln for ln in agent.ask(question).answer.splitlines() if ln.startswith("*(")]
    return lines[-1].strip("*()") if lines else "no coverage line"


def ask_reference(llm, retriever, question: str, k: int = 8):
    """The reference design: four calls in sequence, sequential retrieval, every hit in the prompt."""
    as_json = llm.bind(response_mime_type="application/json")

    def run(on_token):
        analysis = as_json.invoke([("system", REF_SYSTEM["analyze"]), ("human", f"Question: {question}")])
        plan = as_json.invoke([("system", REF_SYSTEM["decompose"]),
                               ("human", f"Question: {question}\nAnalysis: {analysis.content}")])
        subs = json.loads(plan.content)["sub_questions"] or [question]
        hits, seen = [], set()
        for sub in subs:
            for hit in retriever.retrieve(sub, k=k):
                if hit.chunk.id not in seen:
                    seen.add(hit.chunk.id)
                    hits.append(hit)
        passages = "\n\n".join(f"[{i}] {h.chunk.file_name}, {h.chunk.location.label()}\n{h.chunk.text}"
                               for i, h in enumerate(hits, 1))
        messages = [("system", REF_SYSTEM["synthesize"]), ("human", f"Passages:\n{passages}\n\nQuestion: {question}")]
        answer = "".join(chunk.content for chunk in llm.stream(messages) if not on_token(chunk.content))
        as_json.invoke([("system", REF_SYSTEM["verify"]),
                        ("human", f"Passages:\n{passages}\n\nAnswer: {answer}\n\nQuestion: {question}")])
        return {"sub_questions": len(subs)}
    return run


def failure_case(stub: GeminiStub, kb, reply: StubReply, *, timeout: float, label: str, times: int = 8) -> dict:
    """Seconds until an answer (offline when every try fails) when Gemini's next `times` calls fail in one way
    (default budgets and retries, real backoff waits)."""
    for _ in range(times):
        stub.push(reply)
    brain = make_gemini_brain(KEY, model=DEFAULT_GEMINI_MODEL, base_url=stub.base_url, timeout=timeout)
    agent = build_agent(brain, kb.retriever, budgets=Budgets())
    started = time.monotonic()
    result = agent.ask(SIMPLE[0])
    stub._script.clear()
    return {"case": label, "seconds": round(time.monotonic() - started, 2), "mode": result.mode,
            "warning": result.warnings[0] if result.warnings else ""}


SHORT_PROMPT = replace(LOCAL_BUDGETS, answer_prompt_tokens=900)  # the option: ~4.5 s of reading, less evidence


def local_rows(kb, questions: list[tuple[str, str]], speed: tuple[float, float], budgets: Budgets = LOCAL_BUDGETS,
               label: str = "local") -> list[dict]:
    """Calls, tokens and seconds per question through a local model writing and reading at `speed` tokens/s."""
    with OpenAIStub(tokens_per_second=speed[0], prompt_tokens_per_second=speed[1]) as stub:
        agent = build_agent(make_local_brain(stub.base_url, STUB_MODELS[0]), kb.retriever, budgets=budgets)
        rows = []
        for question, kind in questions:
            local = measure(stub, ask_ours(agent, question))
            rows.append({"question": question, "kind": kind, "local": local})
            print(f"{kind:7} {label} {local['llm_calls']} calls {local['input_tokens']:5} tok in "
                  f"{local['output_tokens']:4} out first {local['first_token_s']:.2f}s total {local['total_s']:.2f}s "
                  f"({local['mode']}) | {question}", flush=True)
    return rows


def summarise(rows: list[dict], who: str) -> dict:
    simple = [r[who] for r in rows if r["kind"] == "simple"]
    complex_ = [r[who] for r in rows if r["kind"] == "complex"]
    every = simple + complex_
    return {
        "calls_simple_max": max(r["llm_calls"] for r in simple),
        "calls_complex_max": max(r["llm_calls"] for r in complex_),
        "input_tokens_simple_max": max(r["input_tokens"] for r in simple),
        "input_tokens_simple_mean": round(statistics.mean(r["input_tokens"] for r in simple)),
        "input_tokens_complex_mean": round(statistics.mean(r["input_tokens"] for r in complex_)),
        "first_token_s_mean": round(statistics.mean(r["first_token_s"] for r in every), 3),
        "total_s_mean": round(statistics.mean(r["total_s"] for r in every), 3),
        "total_s_simple_mean": round(statistics.mean(r["total_s"] for r in simple), 3),
        "total_s_complex_mean": round(statistics.mean(r["total_s"] for r in complex_), 3),
    }


PAPERS = REPO.parent / "shared" / "data" / "papers"
PAPER_QUESTIONS = [  # (question, strings the answer's passage holds)
    ("How many attention heads does the Transformer use?", ["8"]),
    ("What BLEU score does the big Transformer reach on English-to-German translation?", ["28.4"]),
    ("What are the default values of beta1 and beta2 in Adam?", ["0.9", "0.999"]),
    ("What top-5 error did the ResNet ensemble achieve on the ImageNet test set?", ["3.57"]),
    ("How many layers does BERT large have?", ["24"]),
    ("What is the masking rate used in the masked language model of BERT?", ["15"]),
    ("What dropout rate was used for the base Transformer model?", ["0.1"]),
    ("How deep were the residual nets evaluated on ImageNet?", ["152"]),
]
OFF_TOPIC = ["What is the boiling point of mercury?", "Who won the 1998 football world cup?",
             "What was Adobe's revenue in 2022?", "What is the capital of Australia?",
             "How many employees does Siemens have?", "What is the recommended dose of ibuprofen for adults?",
             "When was the Eiffel Tower built?", "What interest rate did the European Central Bank set in 2023?"]


def offline_papers(root: Path) -> dict:
    """The offline brain with the real MiniLM embedder on the four public papers: answered vs refused."""
    from agentic_rag import NOT_FOUND, OfflineBrain
    from vector_db import OnnxEmbedder

    embedder = OnnxEmbedder(root / "models")
    kb = knowledge_base(VectorStore(make_client(root / "papers"), embedder), root / "papers-library", embedder,
                        isolate=False)
    kb.ingest_many(sorted(PAPERS.glob("*.pdf")))
    agent = build_agent(OfflineBrain(), kb.retriever, embedder=embedder)
    answered = quoted = passage = 0
    for question, needles in PAPER_QUESTIONS:
        result = agent.ask(question)
        answered += bool(result.citations)
        quoted += all(n in result.answer for n in needles)
        passage += any(all(n in c.text for n in needles) for c in result.citations)
    refused = sum(NOT_FOUND in (r := agent.ask(q)).answer and not r.citations for q in OFF_TOPIC)
    return {"answerable": len(PAPER_QUESTIONS), "answered": answered, "cited_passage_holds_answer": passage,
            "quote_holds_answer": quoted, "off_topic": len(OFF_TOPIC), "off_topic_refused": refused}


def failure_cases(stub: GeminiStub, kb, size: str) -> tuple[list[dict], list[dict]]:
    """(answered offline, answered by Gemini after retries): each failure case of this size."""
    failures = [failure_case(stub, kb, StubReply(status=503), timeout=20.0, label="503 on every call")]
    recovered = [failure_case(stub, kb, StubReply(status=429, headers=(("Retry-After", "2"),)), timeout=20.0,
                              label="429 with Retry-After: 2", times=1)]
    if size != "smoke":
        recovered.insert(0, failure_case(stub, kb, StubReply(status=503, message="The model is overloaded."),
                                         timeout=20.0, label="503 overloaded twice, then answers", times=2))
    if size == "full":
        failures.append(failure_case(stub, kb, StubReply(sleep=30.0), timeout=20.0,
                                     label="server stalls (client timeout 20 s)"))
    if size == "smoke":
        failures.append(failure_case(stub, kb, StubReply(sleep=2.0), timeout=1.0,
                                     label="server stalls (client timeout 1 s)"))
    return failures, recovered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="1 simple + 1 complex question, short delays and stall, fast local stub (seconds)")
    parser.add_argument("--quick", action="store_true", help="2 simple + 2 complex questions, fast failure case")
    args = parser.parse_args()
    size = "smoke" if args.smoke else "quick" if args.quick else "full"
    n_simple, n_complex = {"smoke": (1, 1), "quick": (2, 2), "full": (4, 3)}[size]
    questions = [(q, "simple") for q in SIMPLE[:n_simple]] + [(q, "complex") for q in COMPLEX[:n_complex]]
    delay = SMOKE_DELAY if args.smoke else DELAY
    speed = (LOCAL_TOKENS_PER_S, LOCAL_PROMPT_TOKENS_PER_S)
    if args.smoke:
        speed = (10 * speed[0], 10 * speed[1])
    with tempfile.TemporaryDirectory() as tmp, GeminiStub(responder=responder, delay=delay) as stub:
        kb = build_corpus(Path(tmp), HashingEmbedder())
        paper = write_paper(kb)
        brain = make_gemini_brain(KEY, model=DEFAULT_GEMINI_MODEL, base_url=stub.base_url, timeout=20.0)
        agent = build_agent(brain, kb.retriever, outlines=kb)
        stub.delay = 0.0
        agent.ask(SIMPLE[0])  # warm-up (BM25 load, first HTTP connection), not measured
        stub.delay = delay
        rows = []
        for question, kind in questions:
            ours = measure(stub, ask_ours(agent, question))
            reference = measure(stub, ask_reference(brain.llm, kb.retriever, question))
            rows.append({"question": question, "kind": kind, "ours": ours, "reference": reference})
            print(f"{kind:7} ours {ours['llm_calls']} calls {ours['input_tokens']:5} tok first "
                  f"{ours['first_token_s']:.2f}s total {ours['total_s']:.2f}s | reference {reference['llm_calls']} "
                  f"calls {reference['input_tokens']:5} tok first {reference['first_token_s']:.2f}s total "
                  f"{reference['total_s']:.2f}s | {question}", flush=True)
        summary = measure(stub, ask_ours(agent, "Summarize the turbine wear paper"))
        summary["covered"] = _covered(agent, "Summarize the turbine wear paper")
        print(f"summary of a {PAPER_WORDS}-word paper ({paper}): {summary['llm_calls']} calls "
              f"{summary['input_tokens']} input tokens, {summary['total_s']:.2f}s; {summary['covered']}", flush=True)
        stub.delay = 0.0
        failures, recovered = failure_cases(stub, kb, size)
        for f in failures:
            print(f"failure: {f['case']}: offline answer after {f['seconds']} s ({f['warning']})", flush=True)
        for f in recovered:
            print(f"recovered: {f['case']}: {f['mode']} answer after {f['seconds']} s", flush=True)
        local = local_rows(kb, questions, speed)
        short = local_rows(kb, [q for q in questions if q[1] == "simple"], speed, SHORT_PROMPT, "local, 900-token prompt")
        papers = offline_papers(Path(tmp)) if size == "full" and PAPERS.is_dir() else None
        if papers:
            print(f"offline on the papers: {papers}", flush=True)
    ours, reference = summarise(rows, "ours"), summarise(rows, "reference")
    local_model = {**summarise(local, "local"), "tokens_per_s": speed[0], "prompt_tokens_per_s": speed[1],
                   "output_tokens_mean": round(statistics.mean(r["local"]["output_tokens"] for r in local)),
                   "first_token_s_simple_mean": round(statistics.mean(
                       r["local"]["first_token_s"] for r in local if r["kind"] == "simple"), 3),
                   "short_prompt_first_token_s_simple_mean": round(statistics.mean(
                       r["local"]["first_token_s"] for r in short), 3)}
    checks = {"simple_calls_le_3": ours["calls_simple_max"] <= 3, "complex_calls_le_5": ours["calls_complex_max"] <= 5,
              "simple_input_tokens_le_6000": ours["input_tokens_simple_max"] <= 6000,
              "failures_answered_offline_within_20s": all(f["mode"] == "offline" and f["seconds"] <= 20
                                                          for f in failures),
              "transient_failures_still_answered_by_gemini": all(f["mode"] == "gemini" for f in recovered),
              "local_answers_by_the_model": all(r["local"]["mode"] == "local" for r in local),
              "local_calls_like_gemini": local_model["calls_complex_max"] <= 5,
              "summary_calls_le_4": summary["llm_calls"] <= 4,
              "summary_input_tokens_le_12000": summary["input_tokens"] <= 12000}
    print(json.dumps({"bench": "agent", "size": size, "quick": args.quick, "stub_delay_s": delay, "questions": len(rows),
                      "ours": ours, "reference": reference, "local_model": local_model, "summary": summary,
                      "checks": checks, "failures": failures,
                      "recovered": recovered,
                      "offline_papers": papers, "rows": rows, "local_rows": local}))


if __name__ == "__main__":
    main()
