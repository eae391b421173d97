"""The local-model brain: any OpenAI-compatible chat-completions server (Ollama, llama.cpp's llama-server,
LM Studio, vLLM) through langchain-openai's ChatOpenAI, with the same plan/answer/verify contract as Gemini.

Small local models are slow and messy, so: the structured calls ask for `response_format` json_schema (a
server that refuses it is asked again without, and every reply goes through the tolerant parser); the answer
streams, so the reader sees progress from the first token; timeouts and budgets (LOCAL_BUDGETS) are sized for
tens of seconds per answer on a laptop CPU; the request policy is agentic_rag.brains.transport's, with
LocalProvider saying how this kind of server fails. Nothing is ever pulled or downloaded: a missing
model is reported with the `ollama pull` command for the person to run.

How such a server fails (LocalProvider): finish_reason "length" is the output limit (continued once, or the answer marked truncated), "content_filter"
a refusal (no retry). A model the server does not have, a server that is not running, a prompt longer than
the model's context and a refused key each get a one-line reason that names the fix; the server's own words
are quoted, scrubbed of the key. A server that rejects `response_format` is asked once more without it (the
reply is then read by the tolerant JSON parser).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urlsplit

from agentic_rag.brains.model import ModelBrain, parse_json
from agentic_rag.brains.prompts import inline_schema
from agentic_rag.brains.transport import (
    Call,
    EmptyReply,
    ModelListError,
    Reply,
    chain,
    refused,
    scrub,
    status_of,
    timed_out,
)
from agentic_rag.types import Budgets

# Output limits per call: room for a small model's wordier JSON, without letting a looping one run for minutes.
MAX_OUTPUT_TOKENS = {"plan": 768, "tables": 512, "answer": 2048, "combine": 2048, "verify": 1024}
TEMPERATURE = 0.2  # small models copy figures and citations more faithfully when they sample less
DEFAULT_TIMEOUT_SECONDS = 120.0  # per request, to the first byte and between streamed pieces (prompt reading on a CPU)
# Per question: 5 minutes in all, up to 3 minutes for one step's retries; a context most 4k-8k models hold
# beside their answer (Ollama truncates a longer prompt silently); one revision round at most; no plan call for a
# simple standalone question (its JSON, written at a CPU's 20 tokens/s, came before the first words). Whole
# passages: answer_prompt_tokens=900 would bring the first words within ~4.5 s of reading at 200 tokens/s, but
# cut the evidence figures reaching the model by half on filings (bench/context_budget.py), so it is an option.
LOCAL_BUDGETS = Budgets(llm_calls=6, seconds=300.0, context_tokens=3000, max_loops=1, retry_seconds=180.0,
                        plan_call="when-needed")
PLACEHOLDER_KEY = "local"  # the OpenAI client wants some key; Ollama and llama-server ignore it


def make_local_brain(base_url: str, model: str, *, api_key: str = "", timeout: float = DEFAULT_TIMEOUT_SECONDS,
                     max_retries: int = 2, structured: bool = True, llm=None,
                     sleep: Callable[[float], None] = time.sleep) -> LocalBrain:
    """The only place ChatOpenAI is built. `llm=` injects a chat model instead (tests).

    `structured=False` never sends `response_format` (for a server known to reject it).
    Raises ValueError for a missing base URL or model, a timeout <= 0 or max_retries < 0.
    """
    if timeout <= 0 or max_retries < 0:
        raise ValueError("timeout must be > 0 and max_retries >= 0")
    if not base_url or not model:
        raise ValueError("a local model needs a server address and a model name (DOCAGENT_LOCAL_BASE_URL, "
                         "DOCAGENT_LOCAL_MODEL; e.g. http://127.0.0.1:11434/v1 and llama3.2)")
    if llm is None:
        from langchain_openai import ChatOpenAI

        # max_retries=0: retries are ours, bounded by the question's deadline; stream_usage asks for token counts;
        # the Responses API is OpenAI's own, never a local server's.
        llm = ChatOpenAI(model=model, base_url=base_url, api_key=api_key or PLACEHOLDER_KEY, timeout=timeout,
                         max_retries=0, temperature=TEMPERATURE, stream_usage=True, use_responses_api=False)
    return LocalBrain(llm, model=model, base_url=base_url, timeout=timeout, max_retries=max_retries,
                      structured=structured, secrets=(api_key,) if api_key else (), sleep=sleep)


@dataclass(frozen=True)
class LocalBrain(ModelBrain):
    """A ChatOpenAI on a local server plus the call policy; plan/answer/verify are ModelBrain's.

    `mode` "local" is one of agentic_rag.types.MODEL_MODES: the graph, the checks and the confidence treat it as
    they treat Gemini; `label()` says which model at which address.
    """

    llm: object
    model: str = ""
    base_url: str = ""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    max_retries: int = 2
    structured: bool = True
    secrets: tuple[str, ...] = field(default=(), repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)
    mode: ClassVar[str] = "local"
    provider: ClassVar[str] = "local"
    source: ClassVar[str] = "local model"

    def label(self) -> str:
        """'Local · llama3.2 @ 127.0.0.1:11434'."""
        return f"Local · {self.model} @ {host_of(self.base_url)}"

    def _provider(self):
        return LocalProvider(self.model, self.base_url)

    def _call(self, kind: str, messages, *, deadline: float, schema=None, on_token=None):
        """One step's request under the transport policy; JSON steps are parsed into `schema`."""
        limit = MAX_OUTPUT_TOKENS[kind]
        # ChatOpenAI sends max_tokens as max_completion_tokens; Ollama reads only max_tokens, so both go.
        options: dict = {"max_tokens": limit, "extra_body": {"max_tokens": limit}}
        if schema is not None and self.structured:
            options["response_format"] = {"type": "json_schema", "json_schema": {
                "name": schema.__name__, "schema": inline_schema(schema), "strict": False}}
        parse = (lambda text: schema.model_validate(parse_json(text))) if schema is not None else None
        provider = LocalProvider(self.model, self.base_url)
        return Call(self.llm, messages, provider, deadline, self.timeout, self.max_retries + 1, options,
                    on_token=on_token, parse=parse, sleep=self.sleep, secrets=self.secrets).run()




def list_local_models(base_url: str, *, api_key: str = "", timeout: float = 3.0) -> tuple[str, ...]:
    """The model names the server at `base_url` lists (GET /v1/models), in its order.

    Raises:
        ValueError: no base URL.
        ModelListError: the server could not be asked or refused (not running, wrong address, timeout).
    """
    if not base_url:
        raise ValueError("listing local models needs the server address (DOCAGENT_LOCAL_BASE_URL)")
    import openai

    client = openai.OpenAI(base_url=base_url, api_key=api_key or PLACEHOLDER_KEY, timeout=timeout, max_retries=0)
    try:
        models = list(client.models.list())
    except remote_errors() as exc:
        reason = f"The server at {host_of(base_url)} {describe(exc, timeout, '', base_url).removeprefix('is ')}"
        raise ModelListError(scrub(reason, (api_key,))) from exc
    finally:
        client.close()
    return tuple(dict.fromkeys(m.id for m in models if getattr(m, "id", None)))


FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "content_filter": "CONTENT_FILTER"}
DECLINED = {"CONTENT_FILTER": "content filter"}
START_HELP = ("start it (`ollama serve`, or `llama-server -m MODEL.gguf --port 8080`) or correct the server "
              "address (Settings: Server address; DOCAGENT_LOCAL_BASE_URL)")
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
        return (f"has no chat-completions endpoint at {base_url} (HTTP 404): the server address (Settings: Server "
                "address; DOCAGENT_LOCAL_BASE_URL) should end in /v1, e.g. http://127.0.0.1:11434/v1")
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
