"""Steps 4 and 5, and the loop between them: write the answer, check it, and revise it while that helps.

After a check, another round runs only when it can help and the same brain can finish it:
- something the question asks is missing: search for it; when the search finds no new passage and no claim
  needs correcting, the checked answer stands;
- a claim is not supported by its passage: the model rewrites the answer with those claims named, to correct
  them from the passages or remove them (never "cover what you missed");
and only while the budget still holds both the new answer and its check (the answer is always checked by the
brain that wrote it). A revision that checks out worse than the answer before it is dropped.
"""

from __future__ import annotations

from agentic_rag.citations import DisplayStream, cited_ids
from agentic_rag.confidence import Evidence, estimate
from agentic_rag.context import build_context, merge_blocks, render_coverage
from agentic_rag.extract import EMBED_CHARS, Ask
from agentic_rag.figures import figures
from agentic_rag.offline import Draft
from agentic_rag.prompts import ANSWER_SYSTEM
from agentic_rag.rules import MAX_SUB_QUESTIONS
from agentic_rag.state import AgentState, Run
from agentic_rag.steps import MIN_CALL_SECONDS, StepOut, Thought, _mode_update, think, traced
from agentic_rag.text import estimate_tokens
from agentic_rag.types import MODEL_MODES, NOT_FOUND
from agentic_rag.verify import (
    check_claim,
    claim_fit,
    confidence,
    flag_answer,
    is_refusal,
    lexical_verdict,
    quote_body,
    retrieval_confidence,
    split_claims,
)

PROMPT_OVERHEAD_TOKENS = 300  # instructions and headers around the passages, on top of what is measured
CALLS_PER_ROUND = 2  # a revision is an answer and its check
ANSWER_BASIS = "estimated chance the answer is right, from its checked claims"
REFUSAL_BASIS = "estimated chance the documents really lack the answer"
UNSURE = 0.5  # below this estimate an offline answer is labelled as the closest passages, not an answer
MAX_EMBEDDED_CLAIMS = 6  # claims whose cosine to the question is measured for the confidence
TRUNCATED_NOTE = "\n\n*(The answer was cut short at the model's output limit.)*"


def synthesize(state: AgentState, run: Run) -> dict:
    """Step 4: the answer from the passages only, citing their IDs, streamed through on_token (first round)."""
    analysis, subs = state["analysis"], state["sub_questions"]
    revising = bool(state.get("loops"))
    received = {"passages_available": len({h.chunk.id for _, hits in state.get("sub_hits", ()) for h in hits}),
                "sub_questions": list(subs), "corrections": list(state.get("corrections", ()))}

    def body() -> StepOut:
        if revising and not state.get("new_hits") and not state.get("corrections"):
            return StepOut({"revised": False}, "no new passages and nothing to correct: kept the checked answer")
        coverage = state.get("coverage", ())
        table = render_coverage(analysis.key_concepts[0], coverage) if coverage and analysis.key_concepts else ""
        overhead = estimate_tokens(ANSWER_SYSTEM + analysis.standalone + " ".join(subs) + table)
        previous = state.get("blocks", ())
        blocks = build_context(state.get("sub_hits", ()),
                               run.budgets.context_tokens - overhead - PROMPT_OVERHEAD_TOKENS, previous,
                               _region_tokens(state, run))
        every = merge_blocks(previous, blocks)
        # A revision is not streamed: the reader keeps the first answer until the checked one replaces it.
        stream = DisplayStream(run.on_token, {b.n for b in every}) if run.on_token and not revising else None
        focus = (*state.get("corrections", ()), *_not_covered(state)) if revising else ()
        keep = revising and state.get("answer_mode") in MODEL_MODES
        t = think("synthesize", state, run, lambda brain, dl: brain.answer(
            analysis, subs, blocks, coverage, on_token=stream, focus=focus, deadline=dl), keep_on_failure=keep)
        if stream is not None:
            stream.flush()
        if t is None or t.mode == "failed":
            why = t.warnings if t else ("no budget left for a checked revision; kept the checked answer.",)
            return _kept(t, why)
        draft: Draft = t.reply.value
        if revising and state.get("draft") is not None and draft.text.strip() == state["draft"].text.strip():
            return StepOut({"revised": False}, "the model wrote the same answer again: kept the checked one", {},
                           t.calls, t.input_tokens, t.output_tokens, t.warnings, t.mode)
        if draft.truncated:
            draft = Draft(draft.text + TRUNCATED_NOTE, draft.unanswered, draft.refused, True)
        cited = cited_ids(draft.text)
        summary = (f"{'revised: ' if revising else ''}{len(draft.text.split())} words citing {len(cited)} of "
                   f"{len(blocks)} passages" + ("; cut short at the output limit" if draft.truncated else ""))
        left_out = received["passages_available"] - len(blocks)
        warnings = t.warnings + ((f"Context budget ({run.budgets.context_tokens} tokens) reached: {left_out} of "
                                  f"{received['passages_available']} passages were left out of the context.",)
                                 if left_out > 0 else ())
        if draft.truncated:
            warnings += ("The answer was cut short at the model's output limit.",)
        updates = {"blocks": every, "draft": draft, "answer": draft.text, "revised": True,
                   "answer_mode": t.mode if t.mode in MODEL_MODES else "offline", **_mode_update(state, t)}
        details = {"passages": [b.header() for b in blocks], "cited": list(cited),
                   "unanswered": list(draft.unanswered)}
        return StepOut(updates, summary, details, t.calls, t.input_tokens, t.output_tokens, warnings, t.mode)

    return traced("synthesize", run, received, body)


def _region_tokens(state: AgentState, run: Run) -> int:
    """Page regions for a model only: it reads a table with its headers, while the offline brain quotes sentences
    and grows less precise with more text per passage (held-out set: a refusal turned into a quoted tax table)."""
    return run.budgets.region_tokens if state.get("mode") in MODEL_MODES else 0


def _not_covered(state: AgentState) -> tuple[str, ...]:
    """What the last check found missing, for a rewrite that has new passages to draw on."""
    if not state.get("new_hits"):
        return ()
    return tuple(f"Not covered: {m} (answer it if the new passages allow; otherwise say it is not in them)."
                 for m in state.get("feedback", ()))


def _kept(t: Thought | None, why: tuple[str, ...]) -> StepOut:
    if t is None:
        return StepOut({"revised": False}, "kept the checked answer (" + why[0].rstrip(".") + ")")
    return StepOut({"revised": False}, "kept the checked answer: the revision failed", {}, t.calls,
                   t.input_tokens, t.output_tokens, why, "failed")


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
            return StepOut({"claims": (), "confidence": score, "confidence_basis": "retrieval scores (not verified)",
                            "next": ""}, "skipped (verify=False); " + note, warnings=(note,))
        if state.get("loops") and not state.get("revised"):
            return StepOut({"next": ""}, "nothing new to check: kept the previous verdicts")
        return _check(state, run, draft, blocks)

    return traced("verify", run, received, body)


def _check(state: AgentState, run: Run, draft: Draft, blocks) -> StepOut:
    drafts = split_claims(draft.text, refused=draft.refused)
    by_n = {b.n: b for b in blocks}
    cited = [b for b in blocks if any(b.n in d.citations for d in drafts)]
    question = state["analysis"].standalone
    t = think("verify", state, run, lambda brain, dl: brain.verify(drafts, cited, question=question, deadline=dl),
              keep_on_failure=bool(state.get("loops"))) if drafts else None
    if state.get("loops") and (t is None or t.mode == "failed") and drafts:
        out = _restore(state, "the revision could not be checked by the same model")
        return out if t is None else StepOut(out.updates, out.summary, {}, t.calls, t.input_tokens,
                                             t.output_tokens, t.warnings, "failed")
    verdicts, missing = t.reply.value if t else ((), ())
    given = {v.index: v for v in verdicts}
    # A claim the model's check skipped gets the offline check instead of a silent pass.
    checked = tuple(check_claim(d, given.get(i) or lexical_verdict(i, d, by_n), by_n, state.get("coverage", ()),
                                question)
                    for i, d in enumerate(drafts))
    missing = tuple(dict.fromkeys([*missing, *draft.unanswered]))
    if not drafts and not draft.unanswered and not (draft.refused or is_refusal(draft.text)):
        missing = missing or (question,)
    evidence = _evidence(state, run, draft, drafts, checked, missing, blocks)
    score = estimate(evidence)
    answer = _unsure(flag_answer(draft.text, drafts, checked), state, evidence, score) + _missing_note(missing, drafts)
    best = state.get("best")
    if best is not None and not checked and best["claims"]:
        # A rewrite that claims nothing replaces an answer only as a refusal of one that had nothing right
        # (a refusal's estimate is of another thing and cannot be ranked against an answer's).
        if not (draft.refused or is_refusal(draft.text)) or any(c.verdict == "supported" for c in best["claims"]):
            return _restore(state, "the rewrite claims nothing")
    elif best is not None and score < best["confidence"]:
        return _restore(state, f"the revision checked out worse ({score:.0%} against {best['confidence']:.0%})")
    basis = REFUSAL_BASIS if evidence.refused else ANSWER_BASIS
    current = {"answer": answer, "claims": checked, "confidence": score, "draft": draft, "confidence_basis": basis,
               "confidence_features": evidence.to_dict(), "answer_mode": state.get("answer_mode"),
               "missing": missing}
    nxt, feedback, corrections = _next_round(state, run, t, missing, drafts, checked)
    loops = state.get("loops", 0)
    updates = {**{k: v for k, v in current.items() if k != "missing"}, "best": current, "next": nxt,
               "feedback": feedback, "corrections": corrections, "loops": loops + 1 if nxt else loops,
               **(_mode_update(state, t) if t else {})}
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


def _evidence(state: AgentState, run: Run, draft: Draft, drafts, checked, missing, blocks) -> Evidence:
    """The measured evidence the confidence is estimated from (see agentic_rag.confidence)."""
    question = state["analysis"].standalone
    by_n = {b.n: b for b in blocks}
    retrieval = max((b.hit.vector_score or 0.0 for b in blocks), default=0.0)
    if not checked:
        # A model's refusal is doubtful when the extractor finds a quote that answers the question in the same
        # passages (an offline refusal means it found none).
        found = state.get("answer_mode") != "offline" and bool(blocks) and bool(
            run.offline.quotes(question, state["analysis"].question_type, blocks))
        return Evidence(refused=True, retrieval=retrieval, found=float(found))
    fits = [claim_fit(question, d, by_n) for d in drafts]
    cosine = 0.0
    embedder = run.offline._embedder()
    if embedder is not None:
        texts = [quote_body(d.text)[:EMBED_CHARS] for d in drafts[:MAX_EMBEDDED_CLAIMS]]
        cosine = float(max(embedder.embed(texts) @ embedder.embed_query(question)))
    subs = max(1, len(state.get("sub_questions", ())))
    return Evidence(support=confidence(checked, len(missing)), fit=sum(fits) / len(fits), cosine=max(0.0, cosine),
                    answered=1.0 - min(1.0, len(draft.unanswered or missing) / subs), retrieval=retrieval,
                    comparison=float(state["analysis"].question_type == "comparison"),
                    refuted=float(any(c.refuted for c in checked)),
                    no_figure=float(_states_no_count(question, drafts)))


def _states_no_count(question: str, drafts) -> bool:
    """"How many / how much" answered without any figure. (Requiring the figure next to what is counted, as the
    extractor does, also capped right answers that name the counted thing differently, "92,000 employees" for
    "people": on the held-out set it lowered AUROC 0.764 -> 0.730 and caught no wrong answer, so it is not used.)"""
    return Ask.of(question).counts and not any(not f.period for d in drafts for f in figures(d.text))


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
