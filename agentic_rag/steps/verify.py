"""Step 5, verify, and the loop back: check the answer, estimate its confidence, and decide whether another round
can help.

After a check, another round runs only when it can help and the same brain can finish it:
- something the question asks is missing: search for it; when the search finds no new passage and no claim
  needs correcting, the checked answer stands;
- a claim is not supported by its passage: the model rewrites the answer with those claims named, to correct
  them from the passages or remove them (never "cover what you missed");
and only while the budget still holds both the new answer and its check (the answer is always checked by the
brain that wrote it). A revision that checks out worse than the answer before it is dropped.
"""

from __future__ import annotations

from agentic_rag.checks import check_answer, is_refusal
from agentic_rag.checks.citations import cited_ids
from agentic_rag.confidence import (
    ANSWER_BASIS,
    REFUSAL_BASIS,
    RETRIEVAL_BASIS,
    Evidence,
    assess,
    estimate,
    retrieval_confidence,
)
from agentic_rag.language.question_rules import MAX_SUB_QUESTIONS
from agentic_rag.state import AgentState, Run
from agentic_rag.steps.run import MIN_CALL_SECONDS, StepOut, Thought, mode_update, think, traced
from agentic_rag.types import MODEL_MODES, NOT_FOUND, Draft

CALLS_PER_ROUND = 2  # a revision is an answer and its check
UNSURE = 0.5  # below this estimate an offline answer is labelled as the closest passages, not an answer


def verify(state: AgentState, run: Run) -> dict:
    """Step 5: claims, a verdict each, citation checks, computed confidence, and what to do next."""
    draft: Draft = state["draft"]
    received = {"answer_words": len(draft.text.split()), "verify": state.get("verify", True)}

    def body() -> StepOut:
        blocks = state.get("blocks", ())
        if not state.get("verify", True):
            cited = [b for b in blocks if b.n in cited_ids(draft.text)]
            refused = draft.refused or is_refusal(draft.text) or (NOT_FOUND.rstrip(".") in draft.text and not cited)
            score = 0.0 if refused else retrieval_confidence(cited or blocks)
            note = f"Not verified: confidence {score:.0%} is estimated from retrieval scores."
            return StepOut({"claims": (), "confidence": score, "confidence_basis": RETRIEVAL_BASIS,
                            "next": ""}, "skipped (verify=False); " + note, warnings=(note,))
        if state.get("loops") and not state.get("revised"):
            return StepOut({"next": ""}, "nothing new to check: kept the previous verdicts")
        return _check(state, run, draft, blocks)

    return traced("verify", run, received, body)


def _check(state: AgentState, run: Run, draft: Draft, blocks) -> StepOut:
    """One call to the checks (with the brain's verification as the judge), the confidence, the next round."""
    analysis = state["analysis"]
    question = analysis.standalone
    thoughts: list[Thought | None] = []

    def judge(drafts, cited):
        t = think("verify", state, run, lambda brain, dl: brain.verify(drafts, cited, question=question, deadline=dl),
                  keep_on_failure=bool(state.get("loops")))
        thoughts.append(t)
        return t.reply.value if t is not None and t.mode != "failed" else None

    check = check_answer(draft, blocks, question=question, coverage=state.get("coverage", ()), judge=judge)
    t = thoughts[0] if thoughts else None
    if state.get("loops") and check.drafts and not check.judged:
        out = _restore(state, "the revision could not be checked by the same model")
        return out if t is None else StepOut(out.updates, out.summary, {}, t.calls, t.input_tokens,
                                             t.output_tokens, t.warnings, "failed")
    checked, missing = check.claims, check.missing
    evidence = assess(check, draft, blocks, question=question, qtype=analysis.question_type,
                      sub_questions=len(state.get("sub_questions", ())), embedder=run.embedder,
                      answer_mode=state.get("answer_mode", "offline"))
    score = estimate(evidence)
    answer = _unsure(check.flagged, state, evidence, score) + _missing_note(missing, check.drafts)
    best = state.get("best")
    if best is not None and not checked and best["claims"]:
        # A rewrite that claims nothing replaces an answer only as a refusal of one that had nothing right
        # (a refusal's estimate is of another thing and cannot be ranked against an answer's).
        if not check.refused or any(c.verdict == "supported" for c in best["claims"]):
            return _restore(state, "the rewrite claims nothing")
    elif best is not None and score < best["confidence"]:
        return _restore(state, f"the revision checked out worse ({score:.0%} against {best['confidence']:.0%})")
    basis = REFUSAL_BASIS if evidence.refused else ANSWER_BASIS
    current = {"answer": answer, "claims": checked, "confidence": score, "draft": draft, "confidence_basis": basis,
               "confidence_features": evidence.to_dict(), "answer_mode": state.get("answer_mode"),
               "missing": missing}
    nxt, feedback, corrections = _next_round(state, run, t, missing, check.drafts, checked)
    loops = state.get("loops", 0)
    updates = {**{k: v for k, v in current.items() if k != "missing"}, "best": current, "next": nxt,
               "feedback": feedback, "corrections": corrections, "loops": loops + 1 if nxt else loops,
               **(mode_update(state, t) if t else {})}
    counts = {v: sum(c.verdict == v for c in checked) for v in ("supported", "partial", "unsupported")}
    summary = (f"{len(checked)} claims: {counts['supported']} supported, {counts['partial']} partial, "
               f"{counts['unsupported']} unsupported; confidence {score:.0%}"
               + (f"; missing: {'; '.join(missing)}" if missing else "")
               + {"retrieve": "; searching again", "synthesize": "; asking for a correction"}.get(nxt, ""))
    details = {"claims": [{**c.to_dict(), "evidence": c.evidence, "reason": c.reason} for c in checked],
               "missing": list(missing), "feedback": list(feedback), "corrections": list(corrections),
               "confidence_features": evidence.to_dict()}
    if t is None:
        return StepOut(updates, summary, details)
    return StepOut(updates, summary, details, t.calls, t.input_tokens, t.output_tokens, t.warnings, t.mode)


def _restore(state: AgentState, why: str) -> StepOut:
    """Back to the best checked answer of the question; no further round."""
    best = state["best"]
    updates = {k: v for k, v in best.items() if k != "missing"}
    return StepOut({**updates, "next": ""}, f"kept the checked answer: {why}", {"kept": why})


def _next_round(state: AgentState, run: Run, thought: Thought | None, missing, drafts, checked
                ) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """("retrieve" | "synthesize" | "", queries to search, notes for the rewrite)."""
    wrong = [(d, c) for d, c in zip(drafts, checked, strict=True) if c.verdict == "unsupported"]
    gemini = state.get("answer_mode") in MODEL_MODES and state.get("mode") == state.get("answer_mode") and (
        thought is None or thought.mode in MODEL_MODES)
    if state.get("loops", 0) >= run.budgets.max_loops or run.seconds_left() <= 2 * MIN_CALL_SECONDS:
        return "", (), ()
    if gemini and _calls_left(state, run, thought) < CALLS_PER_ROUND:
        return "", (), ()
    notes = tuple(f'The statement "{d.text}" is not supported by the passage it cites ({c.reason}): correct it '
                  "from the passages or remove it." for d, c in wrong) if gemini else ()
    if missing and (gemini or state.get("answer_mode") == "offline"):
        return "retrieve", tuple(dict.fromkeys(missing))[:MAX_SUB_QUESTIONS], notes
    if wrong and gemini:
        return "synthesize", (), notes
    return "", (), ()


def _calls_left(state: AgentState, run: Run, thought: Thought | None) -> int:
    used = sum(t["llm_calls"] for t in state.get("trace", [])) + (thought.calls if thought else 0)
    return run.budgets.llm_calls - used


def _unsure(answer: str, state: AgentState, evidence: Evidence, score: float) -> str:
    """Quotes the extractor is unsure of are shown as the closest passages, not as an answer."""
    if state.get("answer_mode") != "offline" or evidence.refused or score >= UNSURE:
        return answer
    head, sep, body = answer.partition("\n\n")
    note = f"*Unsure ({score:.0%}): these are the closest passages found, not a confirmed answer.*"
    return f"{head}\n\n{note}\n\n{body}" if sep else f"{note}\n\n{answer}"


def _missing_note(missing, drafts) -> str:
    """A partial answer says what it does not cover (an answer that claims nothing already says so)."""
    if not missing or not drafts:
        return ""
    return "\n\n*Not found in the documents:* " + "; ".join(m.rstrip("?") for m in missing) + "."
