"""Step 1, analyze: what the question asks (type, complexity, concepts, language), a follow-up rewritten as a
standalone question, and the sub-questions and document-worded queries the same plan call proposes."""

from __future__ import annotations

from dataclasses import replace

from agentic_rag.scope import scope_of
from agentic_rag.state import AgentState, Run
from agentic_rag.steps.run import StepOut, mode_update, think, traced
from agentic_rag.types import MODEL_MODES

_SCOPE_SAID = {"document": "a whole document", "section": "a section of a document",
              "list": "every item of a kind in a document", "library": "every document"}


def analyze(state: AgentState, run: Run) -> dict:
    """Step 1: intent, type, complexity, concepts, language; a follow-up rewritten as a standalone question."""
    question, history = state["question"], state.get("history", ())
    received = {"question": question, "history_turns": len(history)}

    def body() -> StepOut:
        t = think("analyze", state, run, lambda brain, dl: brain.plan(question, history, deadline=dl))
        plan = t.reply.value
        a = replace(plan.analysis, scope=scope_of(plan.analysis.standalone, plan.analysis.question_type))
        about = f", about {_SCOPE_SAID[a.scope]}" if a.scope != "passage" else ""
        summary = (f"{a.question_type} question, {a.complexity}{about}; concepts: {', '.join(a.key_concepts) or '-'}; "
                   f"language: {a.language}" + (f"; follow-up read as: {a.standalone}" if a.follow_up else ""))
        if t.mode in MODEL_MODES:
            summary += " (one call shared with decompose)"
        elif t.mode == "rules":
            summary += " (rules: the model's plan was unusable)"
        if plan.search_queries:
            summary += f"; in the documents' words: {'; '.join(plan.search_queries)}"
        return StepOut({"analysis": a, "proposed": plan.sub_questions, "doc_queries": plan.search_queries,
                        **mode_update(state, t)}, summary,
                       {"analysis": a.to_dict(), "doc_queries": list(plan.search_queries)}, t.calls,
                       t.input_tokens, t.output_tokens, t.warnings, t.mode)

    return traced("analyze", run, received, body)
