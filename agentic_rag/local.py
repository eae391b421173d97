"""The local-model brain: any OpenAI-compatible chat-completions server (Ollama, llama.cpp's llama-server,
LM Studio, vLLM) through langchain-openai's ChatOpenAI, with the same plan/answer/verify contract as Gemini.

Small local models are slow and messy, so: the structured calls ask for `response_format` json_schema (a
server that refuses it is asked again without, and every reply goes through the tolerant parser); the answer
streams, so the reader sees progress from the first token; timeouts and budgets (LOCAL_BUDGETS) are sized for
tens of seconds per answer on a laptop CPU; the request policy is agentic_rag.transport's, with
local_call.LocalProvider saying how this kind of server fails. Nothing is ever pulled or downloaded: a missing
model is reported with the `ollama pull` command for the person to run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from agentic_rag.local_call import LocalProvider, describe, host_of, remote_errors
from agentic_rag.model_brain import ModelBrain, parse_json
from agentic_rag.prompts import inline_schema
from agentic_rag.transport import Call, scrub
from agentic_rag.types import Budgets

# Output limits per call: room for a small model's wordier JSON, without letting a looping one run for minutes.
MAX_OUTPUT_TOKENS = {"plan": 768, "answer": 2048, "verify": 1024}
TEMPERATURE = 0.2  # small models copy figures and citations more faithfully when they sample less
DEFAULT_TIMEOUT_SECONDS = 120.0  # per request, to the first byte and between streamed pieces (prompt reading on a CPU)
# Per question: 5 minutes in all, up to 3 minutes for one step's retries; a context most 4k-8k models hold
# beside their answer (Ollama truncates a longer prompt silently); one revision round at most.
LOCAL_BUDGETS = Budgets(llm_calls=6, seconds=300.0, context_tokens=3000, max_loops=1, retry_seconds=180.0)
PLACEHOLDER_KEY = "local"  # the OpenAI client wants some key; Ollama and llama-server ignore it
__all__ = ["LOCAL_BUDGETS", "MAX_OUTPUT_TOKENS", "LocalBrain", "ModelListError", "list_local_models",
           "make_local_brain"]


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


class ModelListError(Exception):
    """The server's model list could not be fetched; `reason` is safe to show."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


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
