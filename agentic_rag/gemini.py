"""The Gemini brain: one structured plan call, a streamed answer call, one structured verify call.

Failure policy (agentic_rag.transport, with gemini_call.GeminiProvider): every call gets a timeout and at most `max_retries` further requests of its own
(retries, a recitation retry or a continuation; the SDK's own retrying is switched off), all inside the deadline
the step gives it. When a step still fails it raises BrainError with a reason that is safe to show; the graph
then finishes the question offline. Each call has an output limit (MAX_OUTPUT_TOKENS); the plan and verify
calls think as little as the model allows (thinking tokens are counted in output_tokens).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from agentic_rag.gemini_call import GeminiProvider
from agentic_rag.model_brain import ModelBrain, parse_json
from agentic_rag.prompts import inline_schema
from agentic_rag.transport import Call, content_text, scrub

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
class GeminiBrain(ModelBrain):
    """A chat model plus its call policy; plan/answer/verify are ModelBrain's. `secrets` are scrubbed from every
    error reason; `sleep` is the wait between retries (a seam for tests)."""

    llm: object
    model: str = ""
    timeout: float = 20.0
    max_retries: int = 3
    secrets: tuple[str, ...] = field(default=(), repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    mode: ClassVar[str] = "gemini"
    source: ClassVar[str] = "gemini"

    def _call(self, kind: str, messages, *, deadline: float, schema=None, on_token=None):
        """One step's request under the transport policy; JSON steps are parsed into `schema`."""
        options = {"max_output_tokens": MAX_OUTPUT_TOKENS[kind]}
        if schema is not None:
            options.update(response_mime_type="application/json", response_json_schema=inline_schema(schema),
                           **light_thinking(self.model, self.llm))
        parse = (lambda text: schema.model_validate(parse_json(text))) if schema is not None else None
        return Call(self.llm, messages, GeminiProvider(self.model), deadline, self.timeout, self.max_retries + 1,
                    options, on_token=on_token, parse=parse, sleep=self.sleep, secrets=self.secrets).run()
