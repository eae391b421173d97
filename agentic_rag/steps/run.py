"""What every step shares: a trace entry per step, the choice of brain (the model while it works and budgets
allow, else the offline one), and what a failure does to the rest of the question.

Each step takes the state and the run context and returns only the keys it changes. Every step appends one trace entry (what it received, what it decided, seconds, LLM calls and tokens) and
announces itself through on_event when it starts and ends. A Gemini failure or an exhausted budget switches
the rest of the question to the offline brain, with a warning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentic_rag.brains.model import ModelBrain
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
                reply = call(limited_brain(run, state), min(run.deadline, time.monotonic() + run.budgets.retry_seconds))
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


def consult(step: str, state: AgentState, run: Run, call: Callable[[object, float], BrainReply],
            instead: str) -> Thought:
    """An optional model call (a query over the tables): the model's reply when the question is in a model's
    hands and budgets allow; otherwise, or when it fails, a Thought whose value is None, with a warning saying
    what is done `instead`. Unlike `think`, a failure here does not send the question offline."""
    if state.get("mode") not in MODEL_MODES:
        return Thought(BrainReply(None), OFFLINE_LABEL)
    blocked = _budget_block(state, run)
    if blocked:
        return Thought(BrainReply(None), OFFLINE_LABEL, (f"{blocked}: {instead}.",))
    try:
        reply = call(limited_brain(run, state), min(run.deadline, time.monotonic() + run.budgets.retry_seconds))
    except BrainError as exc:
        return Thought(BrainReply(None), "failed", (f"{exc.reason}; {instead}.",), exc.calls, exc.input_tokens,
                       exc.output_tokens)
    return Thought(reply, state["mode"], (), reply.calls, reply.input_tokens, reply.output_tokens)


def _budget_block(state: AgentState, run: Run) -> str:
    used = sum(t["llm_calls"] for t in state.get("trace", []))
    if used >= run.budgets.llm_calls:
        return f"LLM call budget ({run.budgets.llm_calls}) used up"
    if run.seconds_left() < MIN_CALL_SECONDS:
        return f"time budget ({run.budgets.seconds:.0f} s) used up"
    return ""


def limited_brain(run: Run, state: AgentState):
    """The Gemini brain with no more retries than the call budget has room for."""
    left = run.budgets.llm_calls - sum(t["llm_calls"] for t in state.get("trace", []))
    if not isinstance(run.brain, ModelBrain):
        return run.brain
    return replace(run.brain, max_retries=max(0, min(run.brain.max_retries, left - 1)))


def mode_update(state: AgentState, thought: Thought) -> dict:
    """A step Gemini could not do sends the rest of the question offline (a rules plan does not)."""
    offline = thought.mode not in (*MODEL_MODES, "rules", "failed")
    return {"mode": "offline"} if offline and state.get("mode") in MODEL_MODES else {}
