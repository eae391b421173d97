"""What the request policy (agentic_rag.transport) needs to know about Gemini: its errors, its finish reasons and
how a failure reads.

finishReason MAX_TOKENS is continued once, RECITATION asked again to paraphrase (transport.Call); SAFETY, a
blocked prompt, PROHIBITED_CONTENT and the like are declined without a retry. A 404 names the model and how to
change it. The policy's names are re-exported here for the code and tests that know them from this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from agentic_rag.transport import (
    BACKOFF_BASE_SECONDS,
    CONTINUE_NOTE,
    MAX_BACKOFF_SECONDS,
    PARAPHRASE_NOTE,
    Call,
    EmptyReply,
    Reply,
    Result,
    content_text,
    refused,
    scrub,
    status_of,
    timed_out,
)

__all__ = ["BACKOFF_BASE_SECONDS", "CONTINUE_NOTE", "DECLINED", "MAX_BACKOFF_SECONDS", "MODEL_HELP",
           "PARAPHRASE_NOTE", "Call", "EmptyReply", "GeminiProvider", "Reply", "Result", "content_text",
           "describe", "remote_errors", "scrub"]

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
