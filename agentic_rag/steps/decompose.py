"""Step 2, decompose: 1-4 focused sub-questions, proposed by the analyze call or by the rules."""

from __future__ import annotations

from agentic_rag.language.question_rules import MAX_SUB_QUESTIONS, decompose
from agentic_rag.state import AgentState, Run
from agentic_rag.steps.run import StepOut, traced


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
