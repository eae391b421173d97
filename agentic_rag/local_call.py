"""What the request policy (agentic_rag.transport) needs to know about an OpenAI-compatible local server
(Ollama, llama.cpp's llama-server, LM Studio, vLLM) reached through langchain-openai.

finish_reason "length" is the output limit (continued once, or the answer marked truncated), "content_filter"
a refusal (no retry). A model the server does not have, a server that is not running, a prompt longer than
the model's context and a refused key each get a one-line reason that names the fix; the server's own words
are quoted, scrubbed of the key. A server that rejects `response_format` is asked once more without it (the
reply is then read by the tolerant JSON parser).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

from agentic_rag.transport import EmptyReply, Reply, chain, refused, status_of, timed_out

FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "CONTENT_FILTER"}
DECLINED = {"CONTENT_FILTER": "content filter"}
START_HELP = ("start it (`ollama serve`, or `llama-server -m MODEL.gguf --port 8080`) or point "
              "DOCAGENT_LOCAL_BASE_URL at it")
MODEL_HELP = "or choose a model the server lists in Settings (DOCAGENT_LOCAL_MODEL)"
CONTEXT_HELP = ("give the server a longer context (llama-server -c 8192; Ollama: OLLAMA_CONTEXT_LENGTH=8192) or "
                "lower 'Sources per question' in Settings")
_CONTEXT_WORDS = re.compile(r"context (?:length|size|window)|exceed_context|too long|n_ctx|maximum context",
                            re.IGNORECASE)
_FORMAT_WORDS = re.compile(r"response_format|json_schema|json schema|structured output", re.IGNORECASE)


def host_of(base_url: str) -> str:
    """'127.0.0.1:11434' from 'http://127.0.0.1:11434/v1' (what the badge and the reasons show)."""
    parts = urlsplit(base_url or "")
    return parts.netloc or base_url or "?"


@dataclass(frozen=True)
class LocalProvider:
    """transport.Provider for a chat-completions server at `base_url` serving `model`."""

    model: str
    base_url: str
    declined: ClassVar[dict] = DECLINED

    @property
    def name(self) -> str:
        return f"The local model '{self.model}' at {host_of(self.base_url)}"

    def errors(self) -> tuple[type[BaseException], ...]:
        return remote_errors()

    def describe(self, exc: BaseException, timeout: float) -> str:
        return describe(exc, timeout, self.model, self.base_url)

    def stop_reasons(self, metas: Sequence[dict]) -> tuple[str, str, tuple[str, ...]]:
        """(finish as the transport names it, no prompt block, no categories): OpenAI servers say less."""
        finish = next((str(m["finish_reason"]) for m in reversed(metas) if m.get("finish_reason")), "")
        return FINISH.get(finish, "STOP" if finish else ""), "", ()

    def finished(self, exc: BaseException) -> Reply | None:
        """openai's parse() raises on finish_reason length/content_filter; the reply is still a reply."""
        import openai

        for e in chain(exc):
            if isinstance(e, openai.LengthFinishReasonError | openai.ContentFilterFinishReasonError):
                completion = e.completion
                usage = completion.usage
                text = (completion.choices[0].message.content or "") if completion.choices else ""
                finish = "MAX_TOKENS" if isinstance(e, openai.LengthFinishReasonError) else "CONTENT_FILTER"
                return Reply(text, usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0,
                             finish)
        return None

    def downgrade(self, exc: BaseException, options: dict) -> dict | None:
        """The options without `response_format` when the server refused it (HTTP 400/422 naming it)."""
        if "response_format" not in options or status_of(exc) not in (400, 422):
            return None
        if not _FORMAT_WORDS.search(server_message(exc)):
            return None
        return {k: v for k, v in options.items() if k != "response_format"}


def remote_errors() -> tuple[type[BaseException], ...]:
    """What a failing call raises: openai SDK errors (HTTP, connection, timeout, finish reasons), LangChain and
    httpx errors, malformed JSON or replies (ValueError), OS errors."""
    import httpx
    import openai
    from langchain_core.exceptions import LangChainException

    return (openai.OpenAIError, LangChainException, httpx.HTTPError, OSError, ValueError)


def server_message(exc: BaseException) -> str:
    """The server's own error text ({"error": {"message": ...}} or {"error": "..."}), first line, short."""
    for e in chain(exc):
        message = getattr(e, "message", None)
        body = getattr(e, "body", None)
        if isinstance(body, dict):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, dict) else inner or message
        if message:
            return str(message).splitlines()[0][:200]
    return ""


def describe(exc: BaseException, timeout: float, model: str, base_url: str) -> str:
    """A reason safe to show once scrubbed of the key: what went wrong, and the fix."""
    status, said = status_of(exc), server_message(exc)
    quoted = f": {said}" if said else ""
    if status == 404 and ((model and model in said) or "model" in said.lower()):
        return (f"is not available there (HTTP 404{quoted}): pull it with `ollama pull {model}` (or load it in "
                f"your server), {MODEL_HELP}")
    if status == 404:
        return (f"has no chat-completions endpoint at {base_url} (HTTP 404): DOCAGENT_LOCAL_BASE_URL should end in "
                "/v1, e.g. http://127.0.0.1:11434/v1")
    if status in (400, 413) and _CONTEXT_WORDS.search(said):
        return f"could not take the passages: they exceed its context window (HTTP {status}{quoted}); {CONTEXT_HELP}"
    if status in (401, 403):
        return f"refused the request (HTTP {status}{quoted}): set DOCAGENT_LOCAL_API_KEY to the key the server expects"
    if status == 429:
        return f"is busy (HTTP 429{quoted})"
    if status == 503:
        return f"is loading the model or overloaded (HTTP 503{quoted})"
    if status is not None:
        return f"failed with HTTP {status}{quoted}"
    if isinstance(exc, EmptyReply):
        return "returned an empty response"
    if timed_out(exc) or any(timed_out(e) for e in chain(exc)):
        return f"did not answer within {timeout:.0f} s (on a CPU a smaller model answers sooner)"
    if refused(exc):
        return f"could not be reached (nothing answers at {base_url}): {START_HELP}"
    if isinstance(exc, ValueError):
        return f"returned malformed JSON or output ({type(exc).__name__})"
    return f"failed ({type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else 'no detail'})"
