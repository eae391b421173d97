"""The agent's fakes: hand-made chunks and a retriever over them, a scripted chat model, the plan and verification JSON
a model would write, and a 10-K passage (Adjusted EBITDA) with its question."""

from __future__ import annotations

import json
import re
import threading
import time
from types import SimpleNamespace

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from advanced_retrieval import Hit
from agentic_rag import Budgets, build_agent, make_gemini_brain
from agentic_rag.types import ContextBlock
from document_processor import Chunk, Location, chunk_id

SECRET = "AIzaTEST-not-a-real-key-0123456789"


def make_chunk(doc: str, file: str, text: str, ordinal: int = 0, heading=(), **loc) -> Chunk:
    location = Location(**loc)
    return Chunk(chunk_id(doc, location, ordinal, text), doc, file, file.rsplit(".", 1)[1], text, location,
                 tuple(heading), ordinal)


class FakeRetriever:
    """Word-count 'BM25' plus the fake embedder's cosine over hand-made chunks; records every call."""

    def __init__(self, chunks, embedder, delay: float = 0.0):
        self.chunks, self.embedder, self.delay = list(chunks), embedder, delay
        self.calls: list[tuple] = []
        self.threads: set[int] = set()
        self._lock = threading.Lock()

    def retrieve(self, query, k=8, strategy="auto", filters=None):
        with self._lock:
            self.calls.append((query, k, strategy, filters))
            self.threads.add(threading.get_ident())
        time.sleep(self.delay)
        wanted = {w for w in re.findall(r"\w+", query.lower()) if len(w) > 3}
        qv = self.embedder.embed_query(query)
        scored = []
        for c in self.chunks:
            if filters is not None and not filters.allows(c):
                continue
            bm25 = float(sum(w in wanted for w in re.findall(r"\w+", c.index_text.lower())))
            cos = float(self.embedder.embed([c.index_text])[0] @ qv)
            if bm25 > 0 or cos > 0.2:
                scored.append((bm25 + cos, c, bm25, cos))
        scored.sort(key=lambda x: -x[0])
        return [Hit(c, s, i + 1, vector_score=cos, bm25_score=bm25 or None)
                for i, (s, c, bm25, cos) in enumerate(scored[:k])]

    def document_chunks(self, doc_id):
        return sorted((c for c in self.chunks if c.doc_id == doc_id), key=lambda c: c.ordinal)

    def documents(self):
        docs: dict[str, list[Chunk]] = {}
        for c in self.chunks:
            docs.setdefault(c.doc_id, []).append(c)
        return [SimpleNamespace(doc_id=d, file_name=cs[0].file_name, file_type=cs[0].file_type, chunks=cs)
                for d, cs in docs.items()]


class ScriptedChat(BaseChatModel):
    """A chat model that answers from a script (str, Exception, or fn(prompt_text) -> str) and records prompts.

    Usage is reported like Gemini's usage_metadata (4 characters a token), so budgets can be checked.
    """

    script: list = []
    prompts: list = []
    kwargs_seen: list = []
    delay: float = 0.0
    as_parts: bool = False

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _next(self, messages, kwargs) -> str:
        text = "\n".join(f"{m.type}: {m.content}" for m in messages)
        self.prompts.append(text)
        self.kwargs_seen.append(kwargs)
        time.sleep(self.delay)
        item = self.script.pop(0) if self.script else "{}"
        if isinstance(item, Exception):
            raise item
        return item(text) if callable(item) else item

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        out = self._next(messages, kwargs)
        usage = {"input_tokens": len(self.prompts[-1]) // 4, "output_tokens": len(out) // 4,
                 "total_tokens": (len(self.prompts[-1]) + len(out)) // 4}
        content = [{"type": "text", "text": out}] if self.as_parts else out
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=content, usage_metadata=usage))])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        out = self._next(messages, kwargs)
        pieces = re.findall(r"\S+\s*", out) or [out]
        for i, piece in enumerate(pieces):
            usage = ({"input_tokens": len(self.prompts[-1]) // 4, "output_tokens": len(out) // 4,
                      "total_tokens": 0} if i == 0 else None)
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, usage_metadata=usage))


def plan_json(question: str, qtype="fact", subs=None, complexity="simple", concepts=()) -> str:
    return json.dumps({"intent": "find a fact", "complexity": complexity, "question_type": qtype,
                       "key_concepts": list(concepts), "language": "en", "standalone_question": question,
                       "sub_questions": subs or [question]})


def verify_json(verdicts, missing=()) -> str:
    return json.dumps({"claims": [{"claim": i + 1, "verdict": v, "evidence": e} for i, (v, e) in
                                  enumerate(verdicts)], "missing": list(missing)})


def _is_refusal_estimate(result) -> bool:
    """A refusal's confidence is the estimated chance the documents lack the answer, never certainty."""
    return (result.confidence_features.get("refused") is True and 0.0 < result.confidence < 0.8
            and "lack the answer" in result.confidence_basis)


def _hit(chunk, rank=1, cos=0.5, bm25=2.0):
    return Hit(chunk, 1.0 / rank, rank, vector_score=cos, bm25_score=bm25)


STEPS = ["analyze", "decompose", "retrieve", "synthesize", "verify"]


def gemini_agent(retriever, script, *, budgets=None, delay=0.0, as_parts=False, max_retries=1, **kw):
    chat = ScriptedChat(script=list(script), prompts=[], kwargs_seen=[], delay=delay, as_parts=as_parts)
    brain = make_gemini_brain(SECRET, llm=chat, max_retries=max_retries, **kw)
    return build_agent(brain, retriever, budgets=budgets or Budgets()), chat


def _block(n, chunk, queries=(), rank=1):
    return ContextBlock(n, _hit(chunk, rank), tuple(queries))


Q = "What was Adjusted EBITDA in fiscal 2023 and 2022?"


TABLE_ANSWER = """Adjusted EBITDA by year:

| Year | Adjusted EBITDA ($M) |
|---|---|
| 2023 | 2,117 [P1] |
| 2022 | 2,311 [P1] |

It rose 4.9% [P1]."""
