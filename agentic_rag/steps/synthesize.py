"""Step 4, synthesize: the answer from the passages only, citing their IDs, streamed to the reader in the first
round; a later round rewrites it with what the check found (new passages, claims to correct or remove)."""

from __future__ import annotations

from agentic_rag.brains.prompts import ANSWER_HINTS, ANSWER_SYSTEM
from agentic_rag.checks.citations import DisplayStream, cited_ids
from agentic_rag.context import build_context, merge_blocks, render_coverage
from agentic_rag.language.text import estimate_tokens
from agentic_rag.state import AgentState, Run
from agentic_rag.steps.run import StepOut, Thought, mode_update, think, traced
from agentic_rag.types import MODEL_MODES, NOT_FOUND, BrainReply, Draft

PROMPT_OVERHEAD_TOKENS = 300  # instructions and headers around the passages, on top of what is measured
FRAMING_TOKENS = 40  # under a capped answer prompt: the lines around the passages ("Passages:", "Question:")
WINDOW_TOKENS = 100  # under a capped answer prompt: a passage's sentences that bear on the question, at most
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
        reading = state.get("reading") if not revising else None
        if reading:  # a scoped reading was measured to fit (agentic_rag.scope): its passages as read, in order
            blocks = build_context(state.get("sub_hits", ()), reading["per_call"] * reading["groups"], previous, 0)
        else:
            budget, window = run.budgets.context_tokens - overhead - PROMPT_OVERHEAD_TOKENS, 0
            capped = run.budgets.answer_prompt_tokens
            if capped and state.get("mode") in MODEL_MODES:
                hint = estimate_tokens(ANSWER_HINTS.get(analysis.question_type, ""))
                budget, window = min(budget, capped - overhead - hint - FRAMING_TOKENS), WINDOW_TOKENS
            blocks = build_context(state.get("sub_hits", ()), budget, previous, _region_tokens(state, run), window)
        every = merge_blocks(previous, blocks)
        parts = _parts(blocks, reading["per_call"]) if reading and state.get("mode") in MODEL_MODES else [blocks]
        # A revision is not streamed: the reader keeps the first answer until the checked one replaces it.
        stream = DisplayStream(run.on_token, {b.n for b in every}) if run.on_token and not revising else None
        focus = (*state.get("corrections", ()), *_not_covered(state)) if revising else ()
        keep = revising and state.get("answer_mode") in MODEL_MODES
        said = state.get("reading")
        if len(parts) > 1:
            t = _map_reduce(state, run, parts, stream)
        else:
            t = think("synthesize", state, run, lambda brain, dl: brain.answer(
                analysis, subs, blocks, coverage, on_token=stream, focus=focus, deadline=dl, reading=said),
                keep_on_failure=keep)
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
        if said and not draft.refused:  # what the answer covered, in the engine's words
            note = f"\n\n*({said['coverage']})*"
            draft = Draft(draft.text + note, draft.unanswered, draft.refused, draft.truncated)
            if stream is not None and not revising:
                run.on_token(note)
        cited = cited_ids(draft.text)
        summary = (f"{'revised: ' if revising else ''}{len(draft.text.split())} words citing {len(cited)} of "
                   f"{len(blocks)} passages" + ("; cut short at the output limit" if draft.truncated else "")
                   + (f"; read in {len(parts)} parts, one answer call each, then one call merged them"
                      if len(parts) > 1 and t.mode in MODEL_MODES else ""))
        left_out = received["passages_available"] - len(blocks)
        warnings = t.warnings + ((f"Context budget ({run.budgets.context_tokens} tokens) reached: {left_out} of "
                                  f"{received['passages_available']} passages were left out of the context.",)
                                 if left_out > 0 else ())
        if draft.truncated:
            warnings += ("The answer was cut short at the model's output limit.",)
        updates = {"blocks": every, "draft": draft, "answer": draft.text, "revised": True,
                   "answer_mode": t.mode if t.mode in MODEL_MODES else "offline", **mode_update(state, t)}
        details = {"passages": [b.header() for b in blocks], "cited": list(cited),
                   "unanswered": list(draft.unanswered)}
        return StepOut(updates, summary, details, t.calls, t.input_tokens, t.output_tokens, warnings, t.mode)

    return traced("synthesize", run, received, body)


def _parts(blocks, per_call: int) -> list[list]:
    """The blocks in reading order, cut into as few consecutive parts of about equal size as hold `per_call`
    tokens each (the reading was measured to fit its number of calls, so parts never outnumber them)."""
    costs = [estimate_tokens(b.header()) + estimate_tokens(b.chunk.text) + 2 for b in blocks]
    total = sum(costs)
    count = max(1, -(-total // max(1, per_call)))
    if count == 1:
        return [list(blocks)]
    parts: list[list] = [[] for _ in range(count)]
    used = 0
    for block, cost in zip(blocks, costs, strict=True):
        parts[min(count - 1, used * count // total)].append(block)
        used += cost
    return [p for p in parts if p]


def _map_reduce(state: AgentState, run: Run, parts: list, stream) -> Thought | None:
    """A reading longer than one call: one answer per part, then one call merging them (streamed). When a part's
    call fails, the question goes offline as any failed call does, and the offline brain reads every part."""
    analysis, subs = state["analysis"], state["sub_questions"]
    partials: list[str] = []
    spent = [0, 0, 0]
    for i, blocks in enumerate(parts, start=1):
        t = think("synthesize", state, run, lambda brain, dl, blocks=blocks, i=i: brain.answer(
            analysis, subs, blocks, deadline=dl, part=(i, len(parts)), reading=state.get("reading")))
        spent = [spent[0] + t.calls, spent[1] + t.input_tokens, spent[2] + t.output_tokens]
        if t.mode not in MODEL_MODES:
            every = [b for p in parts for b in p]
            reply = run.offline.answer(analysis, subs, every, on_token=stream, reading=state.get("reading"))
            return Thought(reply, t.mode, t.warnings, *spent)
        if not t.reply.value.refused:
            partials.append(t.reply.value.text)
    if not partials:
        return Thought(BrainReply(Draft(NOT_FOUND, tuple(subs), refused=True)), state["mode"], (), *spent)
    every = [b for p in parts for b in p]

    def merge(brain, deadline):
        if brain is run.offline:  # the merging call failed: the offline brain reads every part itself
            return brain.answer(analysis, subs, every, on_token=stream, reading=state.get("reading"))
        return brain.combine(analysis, partials, on_token=stream, deadline=deadline)

    t = think("synthesize", state, run, merge)
    return Thought(t.reply, t.mode, t.warnings, spent[0] + t.calls, spent[1] + t.input_tokens,
                   spent[2] + t.output_tokens)


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
