"""Step 1, analyze: what the question asks (type, complexity, concepts, language), a follow-up rewritten as a
standalone question, and the sub-questions and document-worded queries the same plan call proposes."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from agentic_rag.brains.prompts import LANGUAGES
from agentic_rag.language.question_rules import plan_question
from agentic_rag.language.text import language_of
from agentic_rag.scope import scope_of
from agentic_rag.state import AgentState, Run
from agentic_rag.steps.run import StepOut, Thought, mode_update, think, traced
from agentic_rag.types import MODEL_MODES, BrainReply, Plan

_SCOPE_SAID = {"document": "a whole document", "section": "a section of a document",
              "list": "every item of a kind in a document", "library": "every document"}


def analyze(state: AgentState, run: Run) -> dict:
    """Step 1: intent, type, complexity, concepts, language; a follow-up rewritten as a standalone question.
    The documents' language goes to the plan, so a question in another language is searched in theirs."""
    question, history = state["question"], state.get("history", ())
    received = {"question": question, "history_turns": len(history)}

    def body() -> StepOut:
        documents = documents_language(run.retriever)
        ruled = _rules_plan(question, history, documents) if (
            run.budgets.plan_call == "when-needed" and state.get("mode") in MODEL_MODES) else None
        if ruled is not None:  # zero calls: the model's first words are the answer's
            t = Thought(BrainReply(ruled), "rules")
        else:
            t = think("analyze", state, run, lambda brain, dl: brain.plan(question, history, deadline=dl,
                                                                          documents_language=documents))
        plan = t.reply.value
        a = replace(plan.analysis, scope=scope_of(plan.analysis.standalone, plan.analysis.question_type))
        about = f", about {_SCOPE_SAID[a.scope]}" if a.scope != "passage" else ""
        summary = (f"{a.question_type} question, {a.complexity}{about}; concepts: {', '.join(a.key_concepts) or '-'}; "
                   f"language: {a.language}" + (f"; follow-up read as: {a.standalone}" if a.follow_up else ""))
        if t.mode in MODEL_MODES:
            summary += " (one call shared with decompose)"
        elif ruled is not None:
            summary += (" (rules: a simple standalone question, planned without a model call so the answer's first"
                        " words come sooner)")
        elif t.mode == "rules":
            summary += " (rules: the model's plan was unusable)"
        if plan.search_queries:
            summary += f"; in the documents' words: {'; '.join(plan.search_queries)}"
        asked = language_of(question, least=2)
        warnings = t.warnings
        if documents and asked and asked != documents:
            summary += f"; the documents are in {_name(documents)}"
            if t.mode not in MODEL_MODES:  # words are matched, not meanings: say so instead of quoting at random
                warnings += (f"The question is in {_name(asked)} and the documents are in {_name(documents)}: "
                             "without a model the engine matches words, not meanings across languages, so "
                             f"nothing it quotes can answer reliably. Ask in {_name(documents)}, or set up Gemini "
                             "or a local model in Settings.",)
        return StepOut({"analysis": a, "proposed": plan.sub_questions, "doc_queries": plan.search_queries,
                        **mode_update(state, t)}, summary,
                       {"analysis": a.to_dict(), "doc_queries": list(plan.search_queries),
                        "documents_language": documents}, t.calls,
                       t.input_tokens, t.output_tokens, warnings, t.mode)

    return traced("analyze", run, received, body)


def _rules_plan(question: str, history, documents: str) -> Plan | None:
    """The rules' plan when it serves as well as a model's would: one simple question (a fact, a figure or a
    list, asked once), not a follow-up the rules had to rewrite, about passages rather than a whole document,
    asked in English about documents in English (the rules read English questions only, and a model's plan
    would search documents in another language in their words). Else None: ask the model."""
    plan = plan_question(question, history)
    a = plan.analysis
    if a.complexity != "simple" or len(plan.sub_questions) != 1 or a.follow_up:
        return None
    if scope_of(a.standalone, a.question_type) != "passage":
        return None
    if a.language != "en" or language_of(question, least=2) not in ("", "en") or documents not in ("", "en"):
        return None
    return plan


SAMPLE_DOCUMENTS, SAMPLE_CHUNKS = 8, 2  # the documents read, and the first chunks of each, to tell their language
_known: dict[frozenset, str] = {}  # documents' language by the set of doc_ids (a doc_id is its bytes' hash)


def documents_language(retriever) -> str:
    """The language most of the library's documents are written in (ISO 639-1), '' when unsure or mixed: told
    from the function words of the first chunks of up to SAMPLE_DOCUMENTS documents, remembered per library."""
    docs = list(retriever.documents())
    key = frozenset(d.doc_id for d in docs)
    if key not in _known:
        found = Counter()
        for doc in docs[:SAMPLE_DOCUMENTS]:
            text = " ".join(c.text for c in retriever.document_chunks(doc.doc_id)[:SAMPLE_CHUNKS])
            found[language_of(text)] += 1
        found.pop("", None)
        top = found.most_common(1)
        if len(_known) > 64:  # libraries seen by this process: a bound, not a cache policy
            _known.clear()
        # one language for at least two thirds of the documents it could tell: else '' (mixed, or unsure)
        _known[key] = top[0][0] if top and top[0][1] * 3 >= sum(found.values()) * 2 else ""
    return _known[key]


def _name(code: str) -> str:
    return LANGUAGES.get(code, code)
