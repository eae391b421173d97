"""The Gemini brain: one structured plan call, a streamed answer call, one structured verify call.

Failure policy (agentic_rag.brains.transport, with GeminiProvider below): every call gets a timeout and at most `max_retries` further requests of its own
(retries, a recitation retry or a continuation; the SDK's own retrying is switched off), all inside the deadline
the step gives it. When a step still fails it raises BrainError with a reason that is safe to show; the graph
then finishes the question offline. Each call has an output limit (MAX_OUTPUT_TOKENS); the plan and verify
calls think as little as the model allows (thinking tokens are counted in output_tokens).

What the transport needs to know about Gemini (GeminiProvider): finishReason MAX_TOKENS is continued once,
RECITATION asked again to paraphrase; SAFETY, a blocked prompt, PROHIBITED_CONTENT and the like are declined
without a retry; a 404 names the model and how to change it. `list_gemini_models` lists the text models a key
may use (ModelListError, scrubbed of the key, when it cannot).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from agentic_rag.brains.model import ModelBrain, parse_json
from agentic_rag.brains.prompts import inline_schema
from agentic_rag.brains.transport import (
    Call,
    EmptyReply,
    ModelListError,
    Reply,
    refused,
    scrub,
    status_of,
    timed_out,
)

# Output limits per call; on thinking models they include the thinking tokens, so the answer keeps room for both.
MAX_OUTPUT_TOKENS = {"plan": 2048, "tables": 2048, "answer": 8192, "combine": 8192, "verify": 4096}
TEMPERATURE_2X = 0.2  # Gemini 2.x only: copies figures and citations more faithfully than its default of 1.0


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

    def _provider(self):
        return GeminiProvider(self.model)

    def _call(self, kind: str, messages, *, deadline: float, schema=None, on_token=None):
        """One step's request under the transport policy; JSON steps are parsed into `schema`."""
        options = {"max_output_tokens": MAX_OUTPUT_TOKENS[kind]}
        if schema is not None:
            options.update(response_mime_type="application/json", response_json_schema=inline_schema(schema),
                           **light_thinking(self.model, self.llm))
        parse = (lambda text: schema.model_validate(parse_json(text))) if schema is not None else None
        return Call(self.llm, messages, GeminiProvider(self.model), deadline, self.timeout, self.max_retries + 1,
                    options, on_token=on_token, parse=parse, sleep=self.sleep, secrets=self.secrets).run()


MODEL_HELP = ("choose another model in the app's Settings (Gemini model) or set DOCAGENT_GEMINI_MODEL "
              "(cli: --model)")
# Finish reasons that mean "will not answer this": retrying the same prompt cannot help.
DECLINED = {"SAFETY": "safety filter", "BLOCKLIST": "blocked terms", "PROHIBITED_CONTENT": "prohibited content",
            "SPII": "sensitive personal information", "IMAGE_SAFETY": "safety filter",
            "IMAGE_PROHIBITED_CONTENT": "prohibited content", "LANGUAGE": "unsupported language"}


@dataclass(frozen=True)
class GeminiProvider:
    """transport.Provider for Gemini through langchain-google-genai; `model` is named when it is not found."""

    model: str = ""
    name: ClassVar[str] = "Gemini"
    declined: dict = field(default_factory=lambda: dict(DECLINED))

    def errors(self) -> tuple[type[BaseException], ...]:
        return remote_errors()

    def describe(self, exc: BaseException, timeout: float) -> str:
        return describe(exc, timeout, self.model)

    def stop_reasons(self, metas: Sequence[dict]) -> tuple[str, str, tuple[str, ...]]:
        """(finish reason, prompt block reason, blocking safety categories) from the replies' response_metadata."""
        finish = next((_name(m["finish_reason"]) for m in reversed(metas) if m.get("finish_reason")), "")
        feedback = next((m["prompt_feedback"] for m in metas if m.get("prompt_feedback")), None) or {}
        blocked = _name(feedback.get("block_reason")) if isinstance(feedback, dict) else ""
        if blocked in ("0", "BLOCKED_REASON_UNSPECIFIED", "NONE"):
            blocked = ""
        ratings = [r for m in metas
                   for r in (m.get("safety_ratings") or []) + list(feedback.get("safety_ratings") or [])
                   if isinstance(r, dict) and r.get("blocked")]
        return finish, blocked, tuple(dict.fromkeys(_name(r.get("category")) for r in ratings))

    def finished(self, exc: BaseException) -> Reply | None:
        return None  # the Gemini SDK reports every finish reason in the reply

    def downgrade(self, exc: BaseException, options: dict) -> dict | None:
        return None  # Gemini takes every option we send


def _name(value) -> str:
    """An SDK enum, an int or a string as its name ('SAFETY'); '' for None."""
    if value is None:
        return ""
    return str(getattr(value, "name", value))


def remote_errors() -> tuple[type[BaseException], ...]:
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


def describe(exc: BaseException, timeout: float, model: str = "") -> str:
    """A reason safe to show (scrub it of the key): what went wrong, in words."""
    status = status_of(exc)
    name = type(exc).__name__
    if status == 404:
        return (f"model '{model}' was not found (HTTP 404: retired, misspelled, or not available to this key); "
                f"{MODEL_HELP}")
    if status == 429:
        return "is rate limited (HTTP 429)"
    if status == 503:
        return "is overloaded or unavailable (HTTP 503)"
    if status is not None:
        return f"failed with HTTP {status}"
    if isinstance(exc, EmptyReply):
        return "returned an empty response"
    if timed_out(exc):
        return f"did not answer within {timeout:.0f} s"
    if refused(exc):
        return "could not be reached (connection failed)"
    if isinstance(exc, ValueError):
        return f"returned malformed JSON or output ({name})"
    return f"failed ({name}: {str(exc).splitlines()[0][:120] if str(exc) else 'no detail'})"


LIST_TIMEOUT_SECONDS = 5.0
_NOT_FOR_ANSWERS = re.compile(r"embedding|tts|image|live|audio|robotics|computer-use|omni|veo|imagen|aqa",
                              re.IGNORECASE)




def list_gemini_models(api_key: str, *, base_url: str | None = None,
                       timeout: float = LIST_TIMEOUT_SECONDS) -> tuple[str, ...]:
    """Names ('gemini-3.8-flash', ...) of the text Gemini models `api_key` can call, in the service's order.

    Raises:
        ValueError: no key.
        ModelListError: the service could not be asked or refused (bad key, offline, timeout).
    """
    if not api_key:
        raise ValueError("listing models needs a Gemini API key")
    from google import genai
    from google.genai import types

    options = types.HttpOptions(base_url=base_url, timeout=int(timeout * 1000),
                                retry_options=types.HttpRetryOptions(attempts=1))
    try:
        client = genai.Client(api_key=api_key, http_options=options)
        models = list(client.models.list(config={"page_size": 100}))
    except remote_errors() as exc:
        raise ModelListError(scrub(f"Gemini's model list {describe(exc, timeout)}", (api_key,))) from exc
    return tuple(dict.fromkeys(name for m in models if (name := answer_model(m.name, m.supported_actions))))


def answer_model(name: str | None, actions) -> str:
    """The short name of a model that can write answers, or '' for one that cannot."""
    short = (name or "").removeprefix("models/")
    if not short.startswith("gemini") or "generateContent" not in (actions or ()):
        return ""
    return "" if _NOT_FOR_ANSWERS.search(short) else short
