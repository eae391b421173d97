"""The wiring: analyze -> decompose -> retrieve -> synthesize -> verify, then back to retrieve (something is missing)
or to synthesize (a claim needs correcting) while that helps."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from langgraph.graph import END, START, StateGraph

from advanced_retrieval import STRATEGIES, Filters
from agentic_rag.brains.model import ModelBrain
from agentic_rag.brains.offline import OfflineBrain
from agentic_rag.checks.citations import display
from agentic_rag.language.meaning import remembering
from agentic_rag.seams import Brain, OutlineSource, Retriever, TableSource
from agentic_rag.state import AgentState, Run
from agentic_rag.steps import analyze, decompose_step, retrieve, synthesize, verify
from agentic_rag.types import AnswerResult, Budgets, Citation, Usage
from vector_db import Embedder

HISTORY_TURNS = 3
DEFAULT_BUDGETS = Budgets()  # frozen, so one shared default is safe


def build_agent(brain: Brain, retriever: Retriever, *, embedder: Embedder | None = None,
                budgets: Budgets = DEFAULT_BUDGETS, tables: TableSource | None = None,
                outlines: OutlineSource | None = None) -> Agent:
    """An Agent over `retriever` thinking with `brain` (GeminiBrain or OfflineBrain).

    `embedder` (optional) sharpens the offline brain's choice of sentences and measures meaning for the checks and
    the confidence, whichever brain answers; one memory of its vectors is shared by all of them. `tables`
    (the library's TableStore) lets a question about figures be answered by a query over the documents' tables;
    `outlines` (the KnowledgeBase) gives the outlines kept with the documents (without it they are built from the
    chunks when a question needs one).
    """
    if not isinstance(brain, (ModelBrain, OfflineBrain)):
        raise ValueError("brain must be a GeminiBrain (make_gemini_brain), a LocalBrain (make_local_brain) or an "
                         "OfflineBrain")
    if isinstance(brain, OfflineBrain):
        offline = brain if brain.embedder is not None or embedder is None else replace(brain, embedder=embedder)
        brain = offline
    else:
        offline = OfflineBrain(remembering(embedder))
    return Agent(brain, offline, retriever, budgets, offline.embedder, tables, outlines)


def _node(step: Callable[[AgentState, Run], dict]):
    def node(state: AgentState, runtime) -> dict:
        return step(state, runtime.context)

    node.__name__ = step.__name__
    return node


def _after_verify(state: AgentState, runtime) -> str:
    """The one conditional edge: the round the check asked for (search again, or correct the answer), or done.
    agentic_rag.steps.verify decides, within the budgets."""
    return state.get("next") or END


def _compile():
    graph = StateGraph(AgentState, context_schema=Run)
    for name, step in (("analyze", analyze), ("decompose", decompose_step), ("retrieve", retrieve),
                       ("synthesize", synthesize), ("verify", verify)):
        graph.add_node(name, _node(step))
    graph.add_edge(START, "analyze")
    graph.add_edge("analyze", "decompose")
    graph.add_edge("decompose", "retrieve")
    graph.add_edge("retrieve", "synthesize")
    graph.add_edge("synthesize", "verify")
    graph.add_conditional_edges("verify", _after_verify, ["retrieve", "synthesize", END])
    return graph.compile()


class Agent:
    """Answers questions about the indexed documents; one compiled graph, reused for every question."""

    def __init__(self, brain: Brain, offline: Brain, retriever: Retriever, budgets: Budgets,
                 embedder: Embedder | None = None, tables: TableSource | None = None,
                 outlines: OutlineSource | None = None):
        self.brain = brain
        self.offline = offline
        self.embedder = embedder
        self.tables = tables
        self.outlines = outlines
        self.retriever = retriever
        self.budgets = budgets
        self._graph = _compile()

    @property
    def mode(self) -> str:
        return self.brain.mode

    def ask(self, question: str, *, history: Sequence[tuple[str, str]] = (), filters: Filters | None = None,
            strategy: str = "auto", k: int = 8, verify: bool = True,
            on_event: Callable[[str, dict], None] | None = None,
            on_token: Callable[[str], None] | None = None) -> AnswerResult:
        """Answer `question` from the documents.

        history: earlier (question, answer) pairs, oldest first (the last three are used); the last may carry a
            third element, the citations of that answer (objects with `doc_id` and `text`), so that a follow-up
            comparison ("Compare it with BERT") keeps the passages the answer it follows was built on.
        on_event(step, entry): a step started (entry["status"] == "started"), ended ("done"), or Gemini failed and
        the step restarts offline ("fallback": text already streamed is to be replaced).
        on_token(text): pieces of the answer as it is written.
        Raises ValueError for an unknown strategy or k < 1. An empty question gives an empty result.
        """
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
        if k < 1:
            raise ValueError("k must be >= 1")
        question = " ".join(question.split())
        if not question:
            return AnswerResult(answer="", mode=self.brain.mode)
        started = time.monotonic()
        run = Run(self.brain, self.offline, self.retriever, self.budgets, started + self.budgets.seconds,
                  self.embedder, self.tables, self.outlines, on_event, on_token)
        state = {"question": question, "history": tuple((h[0], h[1]) for h in history)[-HISTORY_TURNS:],
                 "cited_before": _cited(history[-1]) if history else (),
                 "filters": filters, "strategy": strategy, "k": k, "verify": verify, "mode": self.brain.mode,
                 "loops": 0, "trace": [], "warnings": []}
        final = self._graph.invoke(state, context=run)
        return _result(final, time.monotonic() - started)


def _cited(exchange: Sequence) -> tuple[tuple[str, str], ...]:
    """(doc_id, text) of each passage an exchange's answer cited, when it carries its citations; the engine's own
    calculations (no stored passage) are left out."""
    citations = exchange[2] if len(exchange) > 2 else ()
    return tuple((c.doc_id, c.text) for c in citations or () if getattr(c, "doc_id", "") and getattr(c, "text", ""))


def _result(state: dict, seconds: float) -> AnswerResult:
    """The public result: passage IDs shown as reader numbers [1], [2], ... in the order the answer cites them."""
    blocks = {b.n: b for b in state.get("blocks", ())}
    answer, order = display(state.get("answer", ""), blocks)
    cited = sorted((r, n) for n, r in order.items())
    citations = tuple(Citation(r, blocks[n].chunk.file_name, blocks[n].chunk.doc_id, blocks[n].chunk.location,
                               blocks[n].chunk.text) for r, n in cited)
    claims = tuple(replace(c, citations=tuple(order[n] for n in c.citations if n in order))
                   for c in state.get("claims", ()))
    trace = tuple(state.get("trace", ()))
    usage = Usage(sum(t["llm_calls"] for t in trace), sum(t["input_tokens"] for t in trace),
                  sum(t["output_tokens"] for t in trace))
    analysis = state.get("analysis")
    return AnswerResult(
        answer=answer, mode=state.get("answer_mode", state.get("mode", "offline")), citations=citations,
        claims=claims, confidence=state.get("confidence", 0.0), trace=trace, usage=usage,
        seconds=round(seconds, 3), warnings=tuple(dict.fromkeys(state.get("warnings", ()))),
        question=state.get("question", ""), analysis=analysis, sub_questions=tuple(state.get("sub_questions", ())),
        sub_hits=tuple(state.get("sub_hits", ())), coverage=tuple(state.get("coverage", ())),
        confidence_basis=state.get("confidence_basis", "nothing found"),
        confidence_features=dict(state.get("confidence_features") or {}),
    )
