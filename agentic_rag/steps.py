"""The five steps. Each takes the state and the run context and returns only the keys it changes.

Every step appends one trace entry (what it received, what it decided, seconds, LLM calls and tokens) and
announces itself through on_event when it starts and ends. A Gemini failure or an exhausted budget switches
the rest of the question to the offline brain, with a warning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentic_rag.model_brain import ModelBrain
from agentic_rag.retrieval import retrieve_round
from agentic_rag.rules import MAX_SUB_QUESTIONS, decompose
from agentic_rag.state import AgentState, Run
from agentic_rag.types import MODEL_MODES, OFFLINE_LABEL, BrainError, BrainReply

MIN_CALL_SECONDS = 2.0  # below this much time left, no new LLM call is started


@dataclass(frozen=True)
class StepOut:
    updates: dict
    summary: str
    details: dict = field(default_factory=dict)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    warnings: tuple[str, ...] = ()
    mode: str = ""


@dataclass(frozen=True)
class Thought:
    """A brain's reply for one step, which brain gave it, and what it cost (failed attempts included)."""

    reply: BrainReply
    mode: str
    warnings: tuple[str, ...] = ()
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


def traced(step: str, run: Run, received: dict, body: Callable[[], StepOut]) -> dict:
    """Run a step body, time it, announce it, and turn its StepOut into state updates plus a trace entry."""
    run.emit(step, {"step": step, "status": "started", "received": received})
    started = time.monotonic()
    out = body()
    entry = {"step": step, "summary": out.summary, "seconds": round(time.monotonic() - started, 3),
             "llm_calls": out.calls, "input_tokens": out.input_tokens, "output_tokens": out.output_tokens,
             "mode": out.mode or "local", "details": {"received": received, **out.details}}
    run.emit(step, {**entry, "status": "done"})
    return {**out.updates, "trace": [entry], "warnings": list(out.warnings)}


def think(step: str, state: AgentState, run: Run, call: Callable[[object, float], BrainReply], *,
          keep_on_failure: bool = False) -> Thought | None:
    """Ask Gemini when the question is still in Gemini mode and budgets allow, else (or on failure) offline.

    keep_on_failure: a revision round; when Gemini fails or no budget is left, return None so that the caller
    keeps the answer already checked, rather than have a quote-only answer replace it. A plan that came back
    malformed falls back to the rules for this step only: the model still writes the answer.
    """
    warnings: list[str] = []
    spent = (0, 0, 0)
    mode = OFFLINE_LABEL
    if state.get("mode") in MODEL_MODES:
        blocked = _budget_block(state, run)
        if blocked and keep_on_failure:
            return None
        if blocked:
            warnings.append(f"{blocked}: {step} done {OFFLINE_LABEL}, answering with what was found so far.")
        else:
            try:
                reply = call(_limited(run, state), min(run.deadline, time.monotonic() + run.budgets.retry_seconds))
                return Thought(reply, state["mode"], (), reply.calls, reply.input_tokens, reply.output_tokens)
            except BrainError as exc:
                if keep_on_failure:
                    run.emit(step, {"step": step, "status": "kept", "reason": exc.reason})
                    return Thought(BrainReply(None), "failed", (f"{exc.reason}; kept the checked answer.",),
                                   exc.calls, exc.input_tokens, exc.output_tokens)
                if exc.malformed and step == "analyze":
                    warnings.append(f"{exc.reason}; planned this question with the rules instead.")
                    mode = "rules"
                else:
                    warnings.append(f"{exc.reason}; finished this question {OFFLINE_LABEL}.")
                    run.emit(step, {"step": step, "status": "fallback", "reason": exc.reason})
                spent = (exc.calls, exc.input_tokens, exc.output_tokens)
    reply = call(run.offline, run.deadline)
    return Thought(reply, mode, tuple(warnings), *spent)


def _budget_block(state: AgentState, run: Run) -> str:
    used = sum(t["llm_calls"] for t in state.get("trace", []))
    if used >= run.budgets.llm_calls:
        return f"LLM call budget ({run.budgets.llm_calls}) used up"
    if run.seconds_left() < MIN_CALL_SECONDS:
        return f"time budget ({run.budgets.seconds:.0f} s) used up"
    return ""


def _limited(run: Run, state: AgentState):
    """The Gemini brain with no more retries than the call budget has room for."""
    left = run.budgets.llm_calls - sum(t["llm_calls"] for t in state.get("trace", []))
    if not isinstance(run.brain, ModelBrain):
        return run.brain
    return replace(run.brain, max_retries=max(0, min(run.brain.max_retries, left - 1)))


def _mode_update(state: AgentState, thought: Thought) -> dict:
    """A step Gemini could not do sends the rest of the question offline (a rules plan does not)."""
    offline = thought.mode not in (*MODEL_MODES, "rules", "failed")
    return {"mode": "offline"} if offline and state.get("mode") in MODEL_MODES else {}


def analyze(state: AgentState, run: Run) -> dict:
    """Step 1: intent, type, complexity, concepts, language; a follow-up rewritten as a standalone question."""
    question, history = state["question"], state.get("history", ())
    received = {"question": question, "history_turns": len(history)}

    def body() -> StepOut:
        t = think("analyze", state, run, lambda brain, dl: brain.plan(question, history, deadline=dl))
        plan = t.reply.value
        a = plan.analysis
        summary = (f"{a.question_type} question, {a.complexity}; concepts: {', '.join(a.key_concepts) or '-'}; "
                   f"language: {a.language}" + (f"; follow-up read as: {a.standalone}" if a.follow_up else ""))
        if t.mode in MODEL_MODES:
            summary += " (one call shared with decompose)"
        elif t.mode == "rules":
            summary += " (rules: the model's plan was unusable)"
        if plan.search_queries:
            summary += f"; in the documents' words: {'; '.join(plan.search_queries)}"
        return StepOut({"analysis": a, "proposed": plan.sub_questions, "doc_queries": plan.search_queries,
                        **_mode_update(state, t)}, summary,
                       {"analysis": a.to_dict(), "doc_queries": list(plan.search_queries)}, t.calls,
                       t.input_tokens, t.output_tokens, t.warnings, t.mode)

    return traced("analyze", run, received, body)


def decompose_step(state: AgentState, run: Run) -> dict:
    """Step 2: 1-4 focused sub-questions (proposed by the analyze call, or by the rules)."""
    analysis, proposed = state["analysis"], state.get("proposed", ())
    received = {"question_type": analysis.question_type, "complexity": analysis.complexity,
                "proposed": list(proposed)}

    def body() -> StepOut:
        if analysis.checks_every_document:
            subs, source = decompose(analysis), "one concept, checked in every document"
        elif proposed:
            subs, source = tuple(dict.fromkeys(proposed))[:MAX_SUB_QUESTIONS], f"from the {analysis.source} analysis"
        else:
            subs, source = decompose(analysis), "rules"
        summary = f"{len(subs)} sub-question{'s' if len(subs) != 1 else ''} ({source})"
        return StepOut({"sub_questions": subs}, summary, {"sub_questions": list(subs), "source": source})

    return traced("decompose", run, received, body)


def first_queries(state: AgentState) -> tuple[str, ...]:
    """The first round's queries: the sub-questions, then the plan's queries in the documents' words (a negation
    or exhaustive question searches its one concept only: its coverage check reads every document anyway)."""
    subs = tuple(state["sub_questions"])
    if state["analysis"].checks_every_document:
        return subs
    asked = {s.casefold() for s in subs}
    return subs + tuple(q for q in state.get("doc_queries", ()) if q.casefold() not in asked)


def retrieve(state: AgentState, run: Run) -> dict:
    """Step 3: sub-questions (or the verifier's feedback) searched concurrently; every document when needed."""
    loops = state.get("loops", 0)
    queries = state.get("feedback", ()) if loops else first_queries(state)
    k = state.get("k", 8) * (2 if loops else 1)  # a retry looks deeper
    received = {"queries": list(queries), "k": k, "strategy": state.get("strategy", "auto"), "round": loops + 1}

    def body() -> StepOut:
        if not queries:
            return StepOut({"new_hits": 0}, "nothing to search for: the round only corrects the answer")
        rnd = retrieve_round(run.retriever, state, queries, k, check_documents=not loops)
        return StepOut(rnd.updates, rnd.summary, rnd.details, warnings=rnd.warnings)

    return traced("retrieve", run, received, body)
