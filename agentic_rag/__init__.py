"""The five-step agent (analyze, decompose, retrieve, synthesize, verify) on Gemini or fully offline.

    brain = make_gemini_brain(key) if key else OfflineBrain(embedder)
    agent = build_agent(brain, knowledge_base.retriever, embedder=embedder)
    result = agent.ask("Which documents don't mention GDPR?", on_token=print)
    result.to_dict()  # answer, mode, citations, claims, confidence, trace, usage, seconds, warnings
"""

from agentic_rag.gemini import GeminiBrain, make_gemini_brain
from agentic_rag.graph import Agent, build_agent
from agentic_rag.offline import Draft, OfflineBrain
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
    Plan,
    Usage,
)

__all__ = [
    "NOT_FOUND", "OFFLINE_LABEL", "QUESTION_TYPES", "Agent", "AgentState", "Analysis", "AnswerResult",
    "BrainError", "Budgets", "Citation", "Claim", "ContextBlock", "Coverage", "Draft", "GeminiBrain", "OfflineBrain",
    "Plan", "Usage", "build_agent", "make_gemini_brain",
]
