"""The Gemini brain: one structured plan call, a streamed answer call, one structured verify call.

Failure policy: every call gets a timeout and at most `max_retries` retries of its own (the SDK's ~35 s of
built-in retrying is switched off), all inside the deadline the step gives it. When a step still fails it
raises BrainError with a reason that is safe to show; the graph then finishes the question offline.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from agentic_rag.context import render_coverage
from agentic_rag.offline import Draft
from agentic_rag.prompts import (
    PlanOut,
    VerifyOut,
    answer_messages,
    inline_schema,
    plan_messages,
    verify_messages,
)
from agentic_rag.rules import classify, decompose, negation_target
from agentic_rag.text import detect_language
from agentic_rag.types import (
    NOT_FOUND_MARK,
    QUESTION_TYPES,
    Analysis,
    BrainError,
    BrainReply,
    ContextBlock,
    Coverage,
    Plan,
    Verdict,
)
from agentic_rag.verify import ClaimDraft

RETRIABLE_STATUS = (408, 429, 500, 502, 503, 504)
MIN_ATTEMPT_SECONDS = 0.5  # not worth starting a request with less time than this left
BACKOFF_SECONDS = 0.5


class _EmptyReply(ValueError):
    """Gemini answered 200 with no text (e.g. an empty `candidates` list)."""


def make_gemini_brain(api_key: str, *, model: str = "gemini-2.5-flash", base_url: str | None = None,
                      timeout: float = 20.0, max_retries: int = 1, llm=None) -> GeminiBrain:
    """The only place ChatGoogleGenerativeAI is built. `llm=` injects a chat model instead (tests).

    Raises ValueError for a missing key (when no llm is given), a timeout <= 0 or max_retries < 0.
    """
    if timeout <= 0 or max_retries < 0:
        raise ValueError("timeout must be > 0 and max_retries >= 0")
    if llm is None:
        if not api_key:
            raise ValueError("a Gemini API key is required (or pass llm=)")
        from langchain_google_genai import ChatGoogleGenerativeAI

        # max_retries=1 means one attempt in this SDK: retries are ours, bounded by the question's deadline.
        llm = ChatGoogleGenerativeAI(model=model, google_api_key=api_key, base_url=base_url, timeout=timeout,
                                     max_retries=1, temperature=0.2)
    return GeminiBrain(llm, model=model, timeout=timeout, max_retries=max_retries,
                       secrets=(api_key,) if api_key else ())


@dataclass(frozen=True)
class GeminiBrain:
    """A chat model plus its call policy. `secrets` are scrubbed from every error reason."""

    llm: object
    model: str = "gemini-2.5-flash"
    timeout: float = 20.0
    max_retries: int = 1
    secrets: tuple[str, ...] = field(default=(), repr=False)
    mode: ClassVar[str] = "gemini"

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), *, deadline: float) -> BrainReply:
        """Analysis and sub-questions from one structured call."""
        out, usage = self._call(plan_messages(question, history), deadline=deadline, schema=PlanOut)
        return BrainReply(_to_plan(out, question, bool(history)), *usage)

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None, *,
               deadline: float, focus: Sequence[str] = ()) -> BrainReply:
        """The streamed, cited answer; `focus` names what a previous attempt missed."""
        table = render_coverage(analysis.key_concepts[0], coverage) if coverage and analysis.key_concepts else ""
        messages = answer_messages(analysis, sub_questions, blocks, table, focus)
        shown = _HideMark(on_token) if on_token is not None else None
        text, usage = self._call(messages, deadline=deadline, on_token=shown)
        if shown is not None:
            shown.flush()
        refused = NOT_FOUND_MARK in text
        return BrainReply(Draft(text.replace(NOT_FOUND_MARK, "").strip(), refused=refused), *usage)

    def verify(self, drafts: Sequence[ClaimDraft], blocks: Sequence[ContextBlock], *, question: str,
               deadline: float) -> BrainReply:
        """Verdicts per claim and what the answer misses, from one structured call."""
        out, usage = self._call(verify_messages(question, drafts, blocks), deadline=deadline, schema=VerifyOut)
        verdicts = tuple(Verdict(c.claim - 1, c.verdict.strip().lower(), c.evidence, "gemini")
                         for c in out.claims if 0 < c.claim <= len(drafts))
        return BrainReply((verdicts, tuple(m.strip() for m in out.missing if m.strip())), *usage)

    def _call(self, messages, *, deadline: float, schema=None, on_token=None) -> tuple[object, tuple[int, int, int]]:
        """One request with bounded retries; returns (text or parsed `schema`, (calls, input, output tokens))."""
        errors = _remote_errors()
        calls = tin = tout = 0
        reason = "had no time left to call"
        for attempt in range(self.max_retries + 1):
            left = deadline - time.monotonic()
            if left < MIN_ATTEMPT_SECONDS:
                break
            calls += 1
            streamed: list[str] = []
            try:
                text, i, o = self._once(messages, schema, min(self.timeout, left), on_token, streamed)
                tin, tout = tin + i, tout + o
                value = schema.model_validate(parse_json(text)) if schema is not None else text
                return value, (calls, tin, tout)
            except errors as exc:
                reason = _describe(exc, min(self.timeout, left))
                if streamed or not _retriable(exc):
                    break  # tokens already reached the reader, or retrying cannot help (bad key, bad request)
            wait = BACKOFF_SECONDS * 2 ** attempt
            if attempt == self.max_retries or deadline - time.monotonic() - wait < MIN_ATTEMPT_SECONDS:
                break  # no retry fits in the time this step was given
            time.sleep(wait)
        raise BrainError(_scrub(f"Gemini {reason}", self.secrets), calls=calls, input_tokens=tin,
                         output_tokens=tout)

    def _once(self, messages, schema, timeout: float, on_token, streamed: list[str]) -> tuple[str, int, int]:
        llm = self.llm
        if schema is not None:
            llm = llm.bind(response_mime_type="application/json", response_json_schema=inline_schema(schema))
        if on_token is None:
            message = llm.invoke(messages, timeout=timeout)
            text, usage = content_text(message.content), message.usage_metadata or {}
            tin, tout = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        else:
            tin = tout = 0
            for chunk in llm.stream(messages, timeout=timeout):
                piece = content_text(chunk.content)
                usage = chunk.usage_metadata or {}
                tin, tout = tin + usage.get("input_tokens", 0), tout + usage.get("output_tokens", 0)
                if piece:
                    streamed.append(piece)
                    on_token(piece)
            text = "".join(streamed)
        if not text.strip():
            raise _EmptyReply("empty response")
        return text, tin, tout


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


def content_text(content) -> str:
    """Message content as text: a string, or a list of parts (strings or {'type': 'text', 'text': ...})."""
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type", "text") == "text":
            out.append(str(part.get("text", "")))
    return "".join(out)


def parse_json(text: str) -> dict:
    """The JSON object in a reply: bare, in a ```json fence, or surrounded by prose. Raises ValueError."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    body = fenced.group(1) if fenced else text
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the reply")
    data = json.loads(body[start:end + 1])
    if not isinstance(data, dict):
        raise ValueError("the reply's JSON is not an object")
    return data


def _to_plan(out: PlanOut, question: str, has_history: bool) -> Plan:
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
                        follow_up=follow_up, source="gemini")
    subs = tuple(dict.fromkeys(s.strip() for s in out.sub_questions if s.strip()))[:4]
    return Plan(analysis, subs or decompose(analysis))


def _remote_errors() -> tuple[type[BaseException], ...]:
    """What a failing Gemini call raises: SDK/LangChain API errors, httpx transport errors, bad JSON, OS errors."""
    import httpx
    from google.genai.errors import APIError
    from langchain_core.exceptions import LangChainException
    from langchain_google_genai._common import GoogleGenerativeAIError

    found: list[type[BaseException]] = [APIError, GoogleGenerativeAIError, LangChainException, httpx.HTTPError,
                                        OSError, ValueError]
    try:
        import httpx2

        found.append(httpx2.HTTPError)
    except ImportError:  # the SDK falls back to httpx when httpx2 is absent
        pass
    return tuple(found)


def _status(exc: BaseException) -> int | None:
    for e in (exc, exc.__cause__):
        code = getattr(e, "code", None) or getattr(e, "status_code", None)
        if isinstance(code, int):
            return code
    m = re.search(r"\b(4\d\d|5\d\d)\b", str(exc))
    return int(m.group(1)) if m and "Error calling model" in str(exc) else None


def _retriable(exc: BaseException) -> bool:
    status = _status(exc)
    if status is not None:
        return status in RETRIABLE_STATUS
    return True  # timeouts, refused connections, malformed or empty replies: worth one more try


def _describe(exc: BaseException, timeout: float) -> str:
    status = _status(exc)
    name = type(exc).__name__
    if status == 429:
        return "is rate limited (HTTP 429)"
    if status is not None:
        return f"failed with HTTP {status}"
    if isinstance(exc, _EmptyReply):
        return "returned an empty response"
    if "Timeout" in name or isinstance(exc, TimeoutError):
        return f"did not answer within {timeout:.0f} s"
    if "Connect" in name or isinstance(exc, ConnectionError):
        return "could not be reached (connection failed)"
    if isinstance(exc, ValueError):
        return f"returned malformed JSON or output ({name})"
    return f"failed ({name}: {str(exc).splitlines()[0][:120] if str(exc) else 'no detail'})"


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
