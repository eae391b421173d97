"""The graph's state (one line per field) and the per-question run context the steps share."""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, TypedDict

from advanced_retrieval import Filters, Hit
from agentic_rag.seams import Brain, OutlineSource, Retriever, TableSource
from agentic_rag.types import Analysis, Budgets, Claim, ContextBlock, Coverage, Draft
from vector_db import Embedder


class AgentState(TypedDict, total=False):
    question: str  # as the user asked it
    history: tuple[tuple[str, str], ...]  # the last exchanges, (question, answer)
    cited_before: tuple[tuple[str, str], ...]  # the previous answer's cited passages, (doc_id, text)
    filters: Filters | None  # the user's filter; every retrieval respects it
    strategy: str  # retrieval strategy: auto | hybrid | vector | bm25
    k: int  # hits per sub-question
    verify: bool  # run the verification step
    mode: str  # "gemini" until Gemini fails or a budget runs out, then "offline"
    analysis: Analysis  # step 1
    proposed: tuple[str, ...]  # sub-questions proposed with the analysis (one shared call)
    doc_queries: tuple[str, ...]  # step 1 (model plans): the question in the documents' words, searched in step 3
    sub_questions: tuple[str, ...]  # step 2
    sub_hits: tuple[tuple[str, tuple[Hit, ...]], ...]  # step 3: every query so far and its hits
    coverage: tuple[Coverage, ...]  # step 3, negation/exhaustive questions: every document checked
    new_hits: int  # chunks the latest retrieval added
    reading: dict | None  # step 3, document/section/list/library scopes: what was read (scope.Reading.to_dict())
    computed: dict | None  # step 3: the query run over a table and its result (Computation.to_dict()), if any
    blocks: tuple[ContextBlock, ...]  # step 4: every passage numbered so far ([P n], stable for the question)
    draft: Draft  # step 4: the answer as written, and what it could not answer
    answer_mode: str  # which brain wrote the answer: "gemini" or "offline"
    claims: tuple[Claim, ...]  # step 5
    answer: str  # the answer returned, unsupported claims flagged
    confidence: float  # computed from the verdicts (or from retrieval scores when not verified)
    confidence_basis: str  # where the confidence came from
    confidence_features: dict  # the evidence it was estimated from (agentic_rag.confidence.Evidence)
    feedback: tuple[str, ...]  # what verification found missing: the next retrieval's queries
    corrections: tuple[str, ...]  # notes for a rewrite: claims to correct or remove, parts not covered
    next: str  # what verification asked for: "retrieve", "synthesize" (a correction) or "" (done)
    revised: bool  # whether the latest synthesize wrote a new answer (a round may keep the checked one)
    best: dict | None  # the best checked answer so far: answer, claims, confidence, draft, basis, mode
    loops: int  # extra rounds taken after the first check
    trace: Annotated[list[dict], operator.add]  # one entry per step run
    warnings: Annotated[list[str], operator.add]  # what the reader should know (fallbacks, budgets)


@dataclass(frozen=True)
class Run:
    """Collaborators and callbacks of one question (LangGraph's run context).

    `offline` is the brain a step falls back to when the model fails or a budget runs out; `embedder` (None
    without one) measures meaning for the checks and the confidence, whichever brain answered; `tables` are the
    documents' tables as data, which the retrieve step queries for a question about figures.
    """

    brain: Brain
    offline: Brain
    retriever: Retriever
    budgets: Budgets
    deadline: float
    embedder: Embedder | None = None
    tables: TableSource | None = None  # the documents' tables as data, for the compute route (None: quote only)
    outlines: OutlineSource | None = None  # the documents' kept outlines (None: built from their chunks)
    on_event: Callable[[str, dict], None] | None = None
    on_token: Callable[[str], None] | None = None

    def emit(self, step: str, entry: dict) -> None:
        if self.on_event is not None:
            self.on_event(step, entry)

    def seconds_left(self) -> float:
        return self.deadline - time.monotonic()
