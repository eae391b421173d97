"""The five steps. Each takes the state and the run context and returns only the keys it changes.

Every step appends one trace entry (what it received, what it decided, seconds, LLM calls and tokens) and
announces itself through on_event when it starts and ends. A Gemini failure or an exhausted budget switches
the rest of the question to the offline brain, with a warning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentic_rag.context import build_context, render_coverage
from agentic_rag.offline import Draft
from agentic_rag.prompts import ANSWER_SYSTEM
from agentic_rag.retrieval import retrieve_round
from agentic_rag.rules import MAX_SUB_QUESTIONS, decompose
from agentic_rag.state import AgentState, Run
from agentic_rag.text import cited_numbers, estimate_tokens
from agentic_rag.types import NOT_FOUND, OFFLINE_LABEL, BrainError, BrainReply, Verdict
from agentic_rag.verify import (
    check_claim,
    confidence,
    flag_answer,
    lexical_verdict,
    retrieval_confidence,
    split_claims,
)

MIN_CALL_SECONDS = 2.0  # below this much time left, no new LLM call is started
PROMPT_OVERHEAD_TOKENS = 300  # instructions and headers around the passages, on top of what is measured


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


def think(step: str, state: AgentState, run: Run, call: Callable[[object, float], BrainReply]) -> Thought:
    """Ask Gemini when the question is still in Gemini mode and budgets allow, else (or on failure) offline."""
    warnings: list[str] = []
    spent = (0, 0, 0)
    if state.get("mode") == "gemini":
        blocked = _budget_block(state, run)
        if blocked:
            warnings.append(f"{blocked}: {step} done {OFFLINE_LABEL}, answering with what was found so far.")
        else:
            try:
                reply = call(_limited(run, state), min(run.deadline, time.monotonic() + run.budgets.retry_seconds))
                return Thought(reply, "gemini", (), reply.calls, reply.input_tokens, reply.output_tokens)
            except BrainError as exc:
                warnings.append(f"{exc.reason}; finished this question {OFFLINE_LABEL}.")
                spent = (exc.calls, exc.input_tokens, exc.output_tokens)
                run.emit(step, {"step": step, "status": "fallback", "reason": exc.reason})
    reply = call(run.offline, run.deadline)
    return Thought(reply, OFFLINE_LABEL, tuple(warnings), *spent)


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
    retries = getattr(run.brain, "max_retries", None)
    return replace(run.brain, max_retries=max(0, min(retries, left - 1))) if retries is not None else run.brain


def _mode_update(state: AgentState, thought: Thought) -> dict:
    return {"mode": "offline"} if thought.mode != "gemini" and state.get("mode") == "gemini" else {}


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
        if t.mode == "gemini":
            summary += " (one call shared with decompose)"
        return StepOut({"analysis": a, "proposed": plan.sub_questions, **_mode_update(state, t)}, summary,
                       {"analysis": a.to_dict()}, t.calls, t.input_tokens, t.output_tokens, t.warnings, t.mode)

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


def retrieve(state: AgentState, run: Run) -> dict:
    """Step 3: sub-questions (or the verifier's feedback) searched concurrently; every document when needed."""
    loops = state.get("loops", 0)
    queries = state.get("feedback") if loops else state["sub_questions"]
    k = state.get("k", 8) * (2 if loops else 1)  # a retry looks deeper
    received = {"queries": list(queries), "k": k, "strategy": state.get("strategy", "auto"), "round": loops + 1}

    def body() -> StepOut:
        rnd = retrieve_round(run.retriever, state, queries, k, check_documents=not loops)
        return StepOut(rnd.updates, rnd.summary, rnd.details, warnings=rnd.warnings)

    return traced("retrieve", run, received, body)


def synthesize(state: AgentState, run: Run) -> dict:
    """Step 4: the answer from the retrieved passages only, with [n] citations, streamed through on_token."""
    analysis, subs = state["analysis"], state["sub_questions"]
    received = {"passages_available": len({h.chunk.id for _, hits in state.get("sub_hits", ()) for h in hits}),
                "sub_questions": list(subs)}

    def body() -> StepOut:
        if _nothing_new(state):
            return StepOut({}, "no new passages: kept the previous answer")
        focus = state.get("feedback", ()) if state.get("loops") else ()
        coverage = state.get("coverage", ())
        table = render_coverage(analysis.key_concepts[0], coverage) if coverage and analysis.key_concepts else ""
        overhead = estimate_tokens(ANSWER_SYSTEM + analysis.standalone + " ".join(subs) + table)
        blocks = build_context(state.get("sub_hits", ()),
                               run.budgets.context_tokens - overhead - PROMPT_OVERHEAD_TOKENS)
        t = think("synthesize", state, run, lambda brain, dl: brain.answer(
            analysis, subs, blocks, coverage, on_token=run.on_token, focus=focus, deadline=dl))
        draft: Draft = t.reply.value
        mode = "gemini" if t.mode == "gemini" else "offline"
        cited = cited_numbers(draft.text)
        summary = f"{len(draft.text.split())} words citing {len(cited)} of {len(blocks)} passages"
        left_out = received["passages_available"] - len(blocks)
        warnings = t.warnings + ((f"Context budget ({run.budgets.context_tokens} tokens) reached: {left_out} of "
                                  f"{received['passages_available']} passages were left out of the context.",)
                                 if left_out > 0 else ())
        updates = {"blocks": blocks, "draft": draft, "answer": draft.text, "answer_mode": mode,
                   **_mode_update(state, t)}
        details = {"passages": [b.header() for b in blocks], "cited": list(cited),
                   "unanswered": list(draft.unanswered)}
        return StepOut(updates, summary, details, t.calls, t.input_tokens, t.output_tokens, warnings, t.mode)

    return traced("synthesize", run, received, body)


def verify(state: AgentState, run: Run) -> dict:
    """Step 5: claims, a verdict each, citation checks, computed confidence, feedback for another round."""
    draft: Draft = state["draft"]
    received = {"answer_words": len(draft.text.split()), "verify": state.get("verify", True)}

    def body() -> StepOut:
        blocks = state.get("blocks", ())
        if not state.get("verify", True):
            cited = [b for b in blocks if b.n in cited_numbers(draft.text)]
            refused = draft.refused or (NOT_FOUND.rstrip(".") in draft.text and not cited)
            score = 0.0 if refused else retrieval_confidence(cited or blocks)
            note = f"Not verified: confidence {score:.0%} is estimated from retrieval scores."
            return StepOut({"claims": (), "confidence": score, "confidence_basis": "retrieval scores (not verified)",
                            "feedback": ()}, "skipped (verify=False); " + note, warnings=(note,))
        if _nothing_new(state):
            return StepOut({"feedback": ()}, "no new passages: kept the previous verdicts")
        return _verify_body(state, run, draft, blocks)

    return traced("verify", run, received, body)


def _verify_body(state: AgentState, run: Run, draft: Draft, blocks) -> StepOut:
    drafts = split_claims(draft.text, refused=draft.refused)
    by_n = {b.n: b for b in blocks}
    cited = [b for b in blocks if any(b.n in d.citations for d in drafts)]
    t = think("verify", state, run, lambda brain, dl: brain.verify(
        drafts, cited, question=state["analysis"].standalone, deadline=dl)) if drafts else None
    verdicts, missing = t.reply.value if t else ((), ())
    given = {v.index: v for v in verdicts}
    checked = tuple(check_claim(d, given.get(i) or _fallback(i, d, by_n), by_n, state.get("coverage", ()))
                    for i, d in enumerate(drafts))
    missing = tuple(dict.fromkeys([*missing, *draft.unanswered]))
    if not drafts and not draft.unanswered:
        missing = missing or (state["analysis"].standalone,)
    score = confidence(checked, len(missing))
    feedback = _feedback(state, run, t, missing, checked)
    counts = {v: sum(c.verdict == v for c in checked) for v in ("supported", "partial", "unsupported")}
    summary = (f"{len(checked)} claims: {counts['supported']} supported, {counts['partial']} partial, "
               f"{counts['unsupported']} unsupported; confidence {score:.0%}"
               + (f"; missing: {'; '.join(missing)}" if missing else "") + ("; searching again" if feedback else ""))
    loops = state.get("loops", 0)
    updates = {"claims": checked, "answer": flag_answer(draft.text, drafts, checked), "confidence": score,
               "confidence_basis": "verified claims" if checked else "nothing found", "feedback": feedback,
               "loops": loops + 1 if feedback else loops, **(_mode_update(state, t) if t else {})}
    details = {"claims": [{**c.to_dict(), "evidence": c.evidence, "reason": c.reason} for c in checked],
               "missing": list(missing), "feedback": list(feedback)}
    if t is None:
        return StepOut(updates, summary, details)
    return StepOut(updates, summary, details, t.calls, t.input_tokens, t.output_tokens, t.warnings, t.mode)


def _feedback(state: AgentState, run: Run, thought: Thought | None, missing, checked) -> tuple[str, ...]:
    """Queries for another retrieval round: what is missing, then what is unsupported; () when no round is due.

    Another round runs only while the same brain would write the answer: a Gemini answer is never replaced by
    a quote-only one because a budget ran out.
    """
    offline_now = state.get("mode") != "gemini" or (thought is not None and thought.mode != "gemini")
    same_writer = ("offline" if offline_now else "gemini") == state.get("answer_mode")
    if state.get("loops", 0) >= run.budgets.max_loops or run.seconds_left() <= MIN_CALL_SECONDS or not same_writer:
        return ()
    unsupported = [c.text for c in checked if c.verdict == "unsupported"]
    return tuple(dict.fromkeys([*missing, *unsupported]))[:MAX_SUB_QUESTIONS]


def _nothing_new(state: AgentState) -> bool:
    """A retry round without new passages changes nothing, unless Gemini's answer had claims yet missed parts
    (the context may hold them)."""
    if not state.get("loops") or state.get("new_hits"):
        return False
    return not (state.get("mode") == "gemini" and state.get("feedback") and state.get("claims"))


def _fallback(index: int, draft, by_n) -> Verdict:
    """A claim the model skipped gets the offline check instead of a silent pass."""
    return lexical_verdict(index, draft, by_n)
