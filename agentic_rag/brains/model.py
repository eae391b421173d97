"""What every language-model brain shares: one structured plan call, a streamed answer call, one structured
verify call, and the tolerant reading of their replies.

A brain (GeminiBrain, LocalBrain) supplies `_call(kind, messages, deadline=, schema=, on_token=)`, which sends
one step's request under the transport policy (agentic_rag.brains.transport.Call) and returns its Result, and `source`,
the name its analyses and verdicts are credited to. The replies keep one contract for the engine: BrainReply
values of Plan, Draft and (verdicts, missing); BrainError when a step fails.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence

from agentic_rag.brains.prompts import (
    EXPLORE_SYSTEM,
    PlanOut,
    TableSqlOut,
    VerifyOut,
    answer_messages,
    combine_messages,
    plan_messages,
    tables_messages,
    verify_messages,
)
from agentic_rag.brains.transport import content_text, scrub
from agentic_rag.checks.claims import ClaimDraft
from agentic_rag.context import render_coverage
from agentic_rag.language.question_rules import classify, decompose, negation_target
from agentic_rag.language.text import detect_language
from agentic_rag.types import (
    NOT_FOUND_MARK,
    QUESTION_TYPES,
    Analysis,
    BrainError,
    BrainReply,
    ContextBlock,
    Coverage,
    Draft,
    ExploreTurn,
    Plan,
    ToolCall,
    Verdict,
)

MAX_SEARCH_QUERIES = 3  # document-worded queries searched beside the sub-questions
MAX_QUERY_CHARS = 200  # a keyword query, not a paragraph
THINKING = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
_CLOSED = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


def without_thinking(text: str) -> tuple[str, str]:
    """A reply without the reasoning a local model writes into it, and what was odd about it ("" if nothing):
    every closed <think> block goes wherever it stands (a second one too); a closing tag with no opening (the
    server's template opened the block) drops what comes before it; an opening tag never closed (thoughts cut at
    the output limit, or a model that never closed them) drops what follows it."""
    odd = []
    close = list(_CLOSE.finditer(text))
    first_open = _OPEN.search(text)
    if close and (first_open is None or close[0].start() < first_open.start()):
        text = text[close[0].end():]
        odd.append("its reasoning began before the reply (a closing </think> with no opening)")
    if len(_CLOSED.findall(text)) > 1:
        odd.append("several <think> blocks")
    text = _CLOSED.sub("", text)
    unclosed = _OPEN.search(text)
    if unclosed:
        text = text[:unclosed.start()]
        odd.append("a <think> block never closed")
    return text.strip(), "; ".join(odd)


class ModelBrain:
    """plan / answer / verify over a subclass's `_call`; subclasses are frozen dataclasses with `max_retries`
    (the engine lowers it to what the call budget has room for)."""

    source = "model"

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), *, deadline: float,
             documents_language: str = "") -> BrainReply:
        """Analysis and sub-questions from one structured call (searching in `documents_language` when the
        question is in another)."""
        r = self._call("plan", plan_messages(question, history, documents_language), deadline=deadline,
                       schema=PlanOut)
        plan = _to_plan(r.value, question, bool(history), self.source)
        return BrainReply(plan, r.calls, r.input_tokens, r.output_tokens)

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None, *,
               deadline: float, focus: Sequence[str] = (), part: tuple[int, int] | None = None,
               reading: dict | None = None) -> BrainReply:
        """The streamed, cited answer; `focus` names what a previous attempt missed; `part` (i, n) says the
        passages are part i of n of a long reading (combine merges the parts). A reply cut short at the output
        limit is continued once; when it cannot be, the Draft says it is truncated. `reading` (scope.Reading.to_dict())
        tells the model which sections the passages come from."""
        table = render_coverage(analysis.key_concepts[0], coverage) if coverage and analysis.key_concepts else ""
        messages = answer_messages(analysis, sub_questions, blocks, table, focus, part, reading)
        return self._drafted("answer", messages, on_token, deadline)

    def combine(self, analysis: Analysis, partials: Sequence[str], on_token: Callable[[str], None] | None = None,
                *, deadline: float) -> BrainReply:
        """One answer merged from the answers written from each part of a long reading, streamed."""
        return self._drafted("combine", combine_messages(analysis, partials), on_token, deadline)

    def _drafted(self, step: str, messages, on_token, deadline: float) -> BrainReply:
        """The streamed reply as a Draft, without the model's reasoning. A reply that holds nothing else (its
        thoughts never closed, or cut at the output limit) is asked for once more; a second empty one is a
        BrainError naming the cause, and the question is answered offline with that warning."""
        spent = [0, 0, 0]
        for attempt in (1, 2):
            shown = _HideThinking(_HideMark(on_token)) if on_token is not None else None
            r = self._call(step, messages, deadline=deadline, on_token=shown)
            if shown is not None:
                shown.flush()
            spent = [spent[0] + r.calls, spent[1] + r.input_tokens, spent[2] + r.output_tokens]
            text, odd = without_thinking(r.value)
            if text or attempt == 2 or time.monotonic() >= deadline:
                break
        if not text:
            name = self._provider().name
            said = (f"{name} wrote no answer, only its reasoning ({odd})" if odd else
                    f"{name} wrote an empty answer" + (" (cut at the output limit)" if r.truncated else ""))
            raise BrainError(f"{said}, {attempt} time(s)", calls=spent[0], input_tokens=spent[1],
                             output_tokens=spent[2])
        draft = Draft(text.replace(NOT_FOUND_MARK, "").strip(), refused=NOT_FOUND_MARK in text, truncated=r.truncated)
        return BrainReply(draft, *spent)

    def table_sql(self, question: str, schemas: str, *, deadline: float) -> BrainReply:
        """One read-only query over the described tables ('' when they cannot answer), from one structured call."""
        r = self._call("tables", tables_messages(question, schemas), deadline=deadline, schema=TableSqlOut)
        return BrainReply(r.value.sql.strip(), r.calls, r.input_tokens, r.output_tokens)

    def explore(self, question: str, tools: Sequence[dict], turns: Sequence[ExploreTurn], *,
                deadline: float) -> BrainReply:
        """One round of the explore route: the model, given the tools and the rounds so far (its calls and their
        results), calls tools or stops (an ExploreTurn with no calls). One request, no retry: a failure ends the
        exploration (BrainError), and the engine answers from what it has."""
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

        messages: list = [SystemMessage(EXPLORE_SYSTEM), HumanMessage(f"Question: {question}")]
        for turn in turns:
            messages.append(AIMessage(content=turn.text, tool_calls=[
                {"name": c.name, "args": c.args if isinstance(c.args, dict) else {}, "id": c.id, "type": "tool_call"}
                for c in turn.calls]))
            messages += [ToolMessage(content=r, tool_call_id=c.id, name=c.name)
                         for c, r in zip(turn.calls, turn.results, strict=True)]
        provider = self._provider()
        timeout = max(1.0, min(self.timeout, deadline - time.monotonic()))
        try:
            bound = self.llm.bind_tools(list(tools))
        except NotImplementedError as exc:  # a chat model class without tool calling: nothing was sent
            raise BrainError("this chat model cannot call tools", calls=0) from exc
        try:
            message = bound.invoke(messages, timeout=timeout)
        except provider.errors() as exc:
            raise BrainError(scrub(f"{provider.name} {provider.describe(exc, timeout)}", self.secrets),
                             calls=1) from exc
        usage = message.usage_metadata or {}
        calls = tuple(ToolCall(str(c.get("id") or f"call_{i}"), str(c.get("name", "")), c.get("args"))
                      for i, c in enumerate(message.tool_calls or ()))
        calls += tuple(ToolCall(str(c.get("id") or f"bad_{i}"), str(c.get("name") or ""), str(c.get("args") or ""))
                       for i, c in enumerate(getattr(message, "invalid_tool_calls", None) or ()))
        turn = ExploreTurn(calls, content_text(message.content))
        return BrainReply(turn, 1, usage.get("input_tokens", 0), usage.get("output_tokens", 0))

    def verify(self, drafts: Sequence[ClaimDraft], blocks: Sequence[ContextBlock], *, question: str,
               deadline: float) -> BrainReply:
        """Verdicts per claim and what the answer misses, from one structured call."""
        r = self._call("verify", verify_messages(question, drafts, blocks), deadline=deadline, schema=VerifyOut)
        verdicts = tuple(Verdict(c.claim - 1, c.verdict.strip().lower(), _passage_number(c.evidence), self.source)
                         for c in r.value.claims if 0 < c.claim <= len(drafts))
        missing = tuple(m.strip() for m in r.value.missing if m.strip())
        return BrainReply((verdicts, missing), r.calls, r.input_tokens, r.output_tokens)


class _HideMark:
    """Streams text on without NOT_FOUND_MARK, holding back a tail that may be the mark's beginning."""

    def __init__(self, on_token: Callable[[str], None]):
        self.on_token = on_token
        self.held = ""

    def __call__(self, piece: str) -> None:
        text = (self.held + piece).replace(NOT_FOUND_MARK, "")
        keep = next((k for k in range(min(len(NOT_FOUND_MARK) - 1, len(text)), 0, -1)
                     if text.endswith(NOT_FOUND_MARK[:k])), 0)
        self.held = text[len(text) - keep:] if keep else ""
        if text[:len(text) - keep]:
            self.on_token(text[:len(text) - keep])

    def flush(self) -> None:
        if self.held:
            self.on_token(self.held)
            self.held = ""


class _HideThinking:
    """Streams text on without a reasoning model's <think>...</think> blocks (some local servers put the
    thoughts in the content), wherever they stand; a tail that may be a tag's beginning is held back."""

    OPEN = "<think"

    def __init__(self, inner: _HideMark):
        self.inner = inner
        self.held = ""
        self.thinking = False

    def __call__(self, piece: str) -> None:
        self.held += piece
        while True:
            if self.thinking:
                end = _CLOSE.search(self.held)
                if end is None:
                    self.held = self.held[-len("</thinking>"):]  # only what may be the closing tag's beginning
                    return None
                self.held, self.thinking = self.held[end.end():].lstrip(), False
                continue
            begin = _OPEN.search(self.held)
            if begin is not None:
                if self.held[:begin.start()]:
                    self.inner(self.held[:begin.start()])
                self.held, self.thinking = self.held[begin.end():], True
                continue
            lower = self.held.lower()
            keep = next((k for k in range(min(len("<thinking"), len(lower)), 0, -1)
                         if "<thinking>".startswith(lower[-k:])), 0)
            out, self.held = (self.held[:-keep], self.held[-keep:]) if keep else (self.held, "")
            if out:
                self.inner(out)
            return None

    def flush(self) -> None:
        if not self.thinking and self.held:
            self.inner(self.held)
        self.held = ""
        self.inner.flush()


def parse_json(text: str) -> dict:
    """The first JSON object in a reply: in a ```json fence first, else bare or surrounded by prose (which may
    itself hold braces); a <think> block before it is skipped. Raises ValueError."""
    text = THINKING.sub("", text)  # a reasoning model's thoughts may hold braces of their own
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    for body in ([fenced.group(1)] if fenced else []) + [text]:
        found = _first_object(body)
        if found is not None:
            return found
    raise ValueError("no JSON object in the reply")


def _passage_number(evidence) -> int:
    """3 from 3, "3" or "P3" (models write all three); 0 for none."""
    digits = re.sub(r"\D", "", str(evidence))
    return int(digits) if digits else 0


def _first_object(body: str) -> dict | None:
    """The object decoded from the first "{" that starts one (json.JSONDecoder.raw_decode), or None."""
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", body):
        try:
            value, _ = decoder.raw_decode(body, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _to_plan(out: PlanOut, question: str, has_history: bool, source: str) -> Plan:
    standalone = " ".join((out.standalone_question or question).split())
    qtype = out.question_type.strip().lower()
    follow_up = qtype == "follow-up" or (has_history and standalone.lower() != question.strip().lower())
    if qtype not in QUESTION_TYPES or qtype == "follow-up":
        qtype = classify(standalone)
    concepts = tuple(c.strip() for c in out.key_concepts if c.strip())
    target = negation_target(standalone)
    if qtype in ("negation", "exhaustive") and target:
        concepts = (target, *[c for c in concepts if c.lower() != target.lower()])
    lang = out.language.strip().lower()[:2]
    analysis = Analysis(standalone=standalone, intent=out.intent.strip(),
                        complexity="complex" if out.complexity.strip().lower() == "complex" else "simple",
                        question_type=qtype, key_concepts=concepts[:8],
                        language=lang if lang.isalpha() and len(lang) == 2 else detect_language(question),
                        follow_up=follow_up, source=source)
    subs = tuple(dict.fromkeys(s.strip() for s in out.sub_questions if s.strip()))[:4] or decompose(analysis)
    return Plan(analysis, subs, search_queries(out.search_queries, (*subs, standalone)))


def search_queries(proposed: Sequence[str], asked: Sequence[str]) -> tuple[str, ...]:
    """The plan's document-worded queries, cleaned: whitespace collapsed, cut to MAX_QUERY_CHARS, empty ones,
    repeats and copies of a sub-question (case ignored) left out, at most MAX_SEARCH_QUERIES."""
    seen = {" ".join(a.split()).casefold() for a in asked}
    out: list[str] = []
    for query in proposed:
        text = " ".join(query.split())[:MAX_QUERY_CHARS].strip()
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return tuple(out[:MAX_SEARCH_QUERIES])
