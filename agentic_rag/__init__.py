"""The five-step agent (analyze, decompose, retrieve, synthesize, verify) on Gemini, a local model or fully offline.

    brain = make_gemini_brain(key, model=m)  # or make_local_brain("http://127.0.0.1:11434/v1", "llama3.2"),
                                             # or OfflineBrain(embedder)
    agent = build_agent(brain, knowledge_base.retriever, embedder=embedder)  # budgets=LOCAL_BUDGETS for local
    result = agent.ask("Which documents don't mention GDPR?", on_token=print)
    result.to_dict()  # answer, mode, citations, claims, confidence, trace, usage, seconds, warnings
"""

from agentic_rag.answer_record import answer_from_record, answer_record
from agentic_rag.brains import (
    LOCAL_BUDGETS,
    GeminiBrain,
    LocalBrain,
    ModelListError,
    OfflineBrain,
    host_of,
    list_gemini_models,
    list_local_models,
    make_gemini_brain,
    make_local_brain,
)
from agentic_rag.checks import is_refusal
from agentic_rag.graph import DEFAULT_BUDGETS, Agent, build_agent
from agentic_rag.state import AgentState
from agentic_rag.types import (
    NOT_FOUND,
    OFFLINE_LABEL,
    QUESTION_TYPES,
    Analysis,
    AnswerResult,
    BrainError,
    Budgets,
    Citation,
    Claim,
    ContextBlock,
    Coverage,
    Draft,
    Plan,
    Usage,
)

__all__ = [
    "DEFAULT_BUDGETS", "LOCAL_BUDGETS", "NOT_FOUND", "OFFLINE_LABEL", "QUESTION_TYPES", "Agent", "AgentState",
    "Analysis", "AnswerResult", "BrainError", "Budgets", "Citation", "Claim", "ContextBlock", "Coverage", "Draft",
    "GeminiBrain", "LocalBrain", "ModelListError", "OfflineBrain", "Plan", "Usage", "answer_from_record",
    "answer_record", "build_agent", "host_of", "is_refusal", "list_gemini_models", "list_local_models",
    "make_gemini_brain", "make_local_brain",
]
