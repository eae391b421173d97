"""The Gemini brain: one structured plan call, a streamed answer call, one structured verify call.

Failure policy (gemini_call.py): every call gets a timeout and at most `max_retries` further requests of its own
(retries, a recitation retry or a continuation; the SDK's own retrying is switched off), all inside the deadline
the step gives it. When a step still fails it raises BrainError with a reason that is safe to show; the graph
then finishes the question offline. Each call has an output limit (MAX_OUTPUT_TOKENS); the plan and verify
calls think as little as the model allows (thinking tokens are counted in output_tokens).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from agentic_rag.context import render_coverage
from agentic_rag.gemini_call import Call, content_text, scrub
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
    BrainReply,
    ContextBlock,
    Coverage,
    Plan,
    Verdict,
)
from agentic_rag.verify import ClaimDraft

# Output limits per call; on thinking models they include the thinking tokens, so the answer keeps room for both.
MAX_OUTPUT_TOKENS = {"plan": 2048, "answer": 8192, "verify": 4096}
TEMPERATURE_2X = 0.2  # Gemini 2.x only: copies figures and citations more faithfully than its default of 1.0
__all__ = ["MAX_OUTPUT_TOKENS", "GeminiBrain", "content_text", "make_gemini_brain", "parse_json", "scrub"]


def make_gemini_brain(api_key: str, *, model: str = "", base_url: str | None = None, timeout: float = 20.0,
                      max_retries: int = 3, llm=None, sleep: Callable[[float], None] = time.sleep) -> GeminiBrain:
    """The only place ChatGoogleGenerativeAI is built. `llm=` injects a chat model instead (tests).

    `model` comes from the composition root (wiring.DEFAULT_GEMINI_MODEL, DOCAGENT_GEMINI_MODEL overrides it).
    Gemini 3 models keep the library's default sampling (Google advises against setting temperature for them).
    Raises ValueError for a missing key or model (when no llm is given), a timeout <= 0 or max_retries < 0.
    """
    if timeout <= 0 or max_retries < 0:
        raise ValueError("timeout must be > 0 and max_retries >= 0")
    if llm is None:
        if not api_key:
            raise ValueError("a Gemini API key is required (or pass llm=)")
        if not model:
            raise ValueError("a Gemini model name is required (wiring.DEFAULT_GEMINI_MODEL, or DOCAGENT_GEMINI_MODEL)")
        from langchain_google_genai import ChatGoogleGenerativeAI

        sampling = {"temperature": TEMPERATURE_2X} if generation(model) == 2 else {}
        # max_retries=1 means one attempt in this SDK: retries are ours, bounded by the question's deadline.
        llm = ChatGoogleGenerativeAI(model=model, google_api_key=api_key, base_url=base_url, timeout=timeout,
                                     max_retries=1, **sampling)
    return GeminiBrain(llm, model=model, timeout=timeout, max_retries=max_retries,
                       secrets=(api_key,) if api_key else (), sleep=sleep)


def generation(model: str) -> int:
    """The major Gemini version in a model name ('gemini-3.8-flash' -> 3), 0 when it names none."""
    m = re.match(r"(?:models/)?gemini-(\d+)", model or "")
    return int(m.group(1)) if m else 0


def light_thinking(model: str, llm=None) -> dict:
    """Options for the least thinking `model` allows (plan and verify calls): Gemini 3+ takes a thinking_level
    ('minimal' where the model profile lists it, else 'low', which every Gemini 3 model accepts); 2.5 Flash
    a thinking_budget of 0, 2.5 Pro its minimum of 128; other models are left alone."""
    name = (model or "").removeprefix("models/")
    if generation(name) >= 3:
        levels = (getattr(llm, "profile", None) or {}).get("reasoning_effort_levels") or ()
        return {"thinking_level": "minimal" if "minimal" in levels else "low"}
    if name.startswith("gemini-2.5-pro"):
        return {"thinking_budget": 128}
    if name.startswith("gemini-2.5-flash"):
        return {"thinking_budget": 0}
    return {}


@dataclass(frozen=True)
class GeminiBrain:
    """A chat model plus its call policy. `secrets` are scrubbed from every error reason; `sleep` is the wait
    between retries (a seam for tests)."""

    llm: object
    model: str = ""
    timeout: float = 20.0
    max_retries: int = 3
    secrets: tuple[str, ...] = field(default=(), repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    mode: ClassVar[str] = "gemini"

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), *, deadline: float) -> BrainReply:
        """Analysis and sub-questions from one structured call."""
        r = self._call("plan", plan_messages(question, history), deadline=deadline, schema=PlanOut)
        return BrainReply(_to_plan(r.value, question, bool(history)), r.calls, r.input_tokens, r.output_tokens)

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None, *,
               deadline: float, focus: Sequence[str] = ()) -> BrainReply:
        """The streamed, cited answer; `focus` names what a previous attempt missed. A reply cut short at the
        output limit is continued once; when it cannot be, the Draft says it is truncated."""
        table = render_coverage(analysis.key_concepts[0], coverage) if coverage and analysis.key_concepts else ""
        messages = answer_messages(analysis, sub_questions, blocks, table, focus)
        shown = _HideMark(on_token) if on_token is not None else None
        r = self._call("answer", messages, deadline=deadline, on_token=shown)
        if shown is not None:
            shown.flush()
        text = r.value
        draft = Draft(text.replace(NOT_FOUND_MARK, "").strip(), refused=NOT_FOUND_MARK in text, truncated=r.truncated)
        return BrainReply(draft, r.calls, r.input_tokens, r.output_tokens)

    def verify(self, drafts: Sequence[ClaimDraft], blocks: Sequence[ContextBlock], *, question: str,
               deadline: float) -> BrainReply:
        """Verdicts per claim and what the answer misses, from one structured call."""
        r = self._call("verify", verify_messages(question, drafts, blocks), deadline=deadline, schema=VerifyOut)
        verdicts = tuple(Verdict(c.claim - 1, c.verdict.strip().lower(), _passage_number(c.evidence), "gemini")
                         for c in r.value.claims if 0 < c.claim <= len(drafts))
        missing = tuple(m.strip() for m in r.value.missing if m.strip())
        return BrainReply((verdicts, missing), r.calls, r.input_tokens, r.output_tokens)

    def _call(self, kind: str, messages, *, deadline: float, schema=None, on_token=None):
        """One step's request under the policy of gemini_call.Call; JSON steps are parsed into `schema`."""
        options = {"max_output_tokens": MAX_OUTPUT_TOKENS[kind]}
        if schema is not None:
            options.update(response_mime_type="application/json", response_json_schema=inline_schema(schema),
                           **light_thinking(self.model, self.llm))
        parse = (lambda text: schema.model_validate(parse_json(text))) if schema is not None else None
        return Call(self.llm, messages, self.model, deadline, self.timeout, self.max_retries + 1, options,
                    on_token=on_token, parse=parse, sleep=self.sleep, secrets=self.secrets).run()


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


def parse_json(text: str) -> dict:
    """The first JSON object in a reply: in a ```json fence first, else bare or surrounded by prose (which may
    itself hold braces). Raises ValueError."""
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
