"""A local stand-in for the Gemini REST API on 127.0.0.1, for the real ChatGoogleGenerativeAI client.

The google-genai SDK (v2.x) that langchain-google-genai drives sends, with `base_url` pointing here:
  POST /v1beta/models/{model}:generateContent                  -> one JSON GenerateContentResponse
  POST /v1beta/models/{model}:streamGenerateContent?alt=sse    -> Server-Sent Events, one `data: {json}` per chunk
  GET  /v1beta/models?pageSize=N                               -> {"models": [...]} (models.list)
with the key in the `x-goog-api-key` header and a JSON body {"contents": [...], "systemInstruction": ...,
"generationConfig": {...}}. A responder decides each reply; a script of StubReply queued with `push` goes first,
so a test can make the next call fail in one precise way.

Replies replay what the real service sends: finish reasons (MAX_TOKENS, RECITATION, SAFETY with the blocking
safety rating), a blocked prompt (promptFeedback.blockReason, no candidates), thinking tokens
(usageMetadata.thoughtsTokenCount), errors in Google's shape (404 NOT_FOUND for a retired model, RetryInfo
details), Retry-After headers, and streams whose chunks arrive slowly.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from testing.loopback_server import LoopbackServer

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Rough Gemini-like token count: words and punctuation marks (independent of the agent's own estimate)."""
    return len(_TOKEN.findall(text))


@dataclass(frozen=True)
class StubRequest:
    """One request as the stub saw it."""

    path: str
    stream: bool
    body: dict
    api_key: str

    @property
    def system(self) -> str:
        parts = (self.body.get("systemInstruction") or {}).get("parts") or []
        return "\n".join(p.get("text", "") for p in parts)

    @property
    def prompt(self) -> str:
        """Every turn's text, and the tools' results (functionResponse outputs) as text."""
        texts = [p.get("text", "") or json.dumps((p.get("functionResponse") or {}).get("response", ""))
                 for c in self.body.get("contents", []) for p in c.get("parts", [])
                 if "text" in p or "functionResponse" in p]
        return "\n".join(texts)

    @property
    def tools(self) -> list[str]:
        """The names of the functions the request declares."""
        return [f.get("name", "") for t in self.body.get("tools", []) for f in t.get("functionDeclarations", [])]

    @property
    def turns(self) -> int:
        """How many model turns the conversation already holds (tool-calling rounds so far)."""
        return sum(1 for c in self.body.get("contents", []) if c.get("role") == "model")

    @property
    def wants_json(self) -> bool:
        return (self.body.get("generationConfig") or {}).get("responseMimeType") == "application/json"


@dataclass(frozen=True)
class StubReply:
    """What to send back: text (as 1+ chunks when streaming), or an HTTP error, a stall, raw bytes, no candidates.

    finish: the last chunk's finishReason ("STOP", "MAX_TOKENS", "RECITATION", "SAFETY", ...);
    safety: the harm categories whose rating says blocked; block: promptFeedback.blockReason (no candidates);
    thoughts: thinking tokens reported beside the text's; headers: extra HTTP headers (e.g. Retry-After);
    retry_delay: RetryInfo.retryDelay in the error details ("7s"); chunk_delay: seconds between streamed chunks;
    calls: function calls the reply makes, (name, args) pairs (several: parallel calls), as Gemini sends them.
    """

    text: str = ""
    status: int = 200
    sleep: float = 0.0
    raw: bytes | None = None
    empty: bool = False
    chunks: int = 3
    message: str = ""
    finish: str = "STOP"
    safety: tuple[str, ...] = ()
    block: str = ""
    thoughts: int = 0
    headers: tuple[tuple[str, str], ...] = ()
    retry_delay: str = ""
    chunk_delay: float = 0.0
    calls: tuple[tuple[str, object], ...] = ()


Responder = Callable[[StubRequest], "StubReply | str"]


# What models.list answers by default: text models, and ones an answer cannot use (embedding, speech, image).
STUB_MODELS = (
    {"name": "models/gemini-3.8-flash", "supportedGenerationMethods": ["generateContent", "countTokens"]},
    {"name": "models/gemini-3.6-flash", "supportedGenerationMethods": ["generateContent", "countTokens"]},
    {"name": "models/gemini-3.1-pro-preview", "supportedGenerationMethods": ["generateContent"]},
    {"name": "models/gemini-embedding-2", "supportedGenerationMethods": ["embedContent"]},
    {"name": "models/gemini-3.1-flash-tts-preview", "supportedGenerationMethods": ["generateContent"]},
    {"name": "models/gemini-3.1-flash-image", "supportedGenerationMethods": ["generateContent"]},
    {"name": "models/learnlm-2.0-flash", "supportedGenerationMethods": ["generateContent"]},
)


@dataclass
class GeminiStub(LoopbackServer):
    """ThreadingHTTPServer in a daemon thread; counts requests and tokens; optional fixed delay per call.

    `models` is what models.list returns; `list_status` != 200 makes the listing fail with that status.
    """

    responder: Responder = lambda request: StubReply(text="OK")
    delay: float = 0.0
    models: tuple[dict, ...] = STUB_MODELS
    list_status: int = 200
    list_requests: int = 0
    requests: list[StubRequest] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def base_url(self) -> str:
        return self.address + ""

    def _next_reply(self, request: StubRequest) -> StubReply:
        with self._lock:
            self.requests.append(request)
            self.input_tokens += count_tokens(request.system) + count_tokens(request.prompt)
            scripted = self.scripted()
        reply = scripted if scripted is not None else self.responder(request)
        return StubReply(text=reply) if isinstance(reply, str) else reply

    def _count_output(self, text: str, reply: StubReply | None = None) -> int:
        """Tokens of `text`; the reply's thinking tokens are counted (once) in the total, not in the return."""
        n = count_tokens(text)
        with self._lock:
            self.output_tokens += reply.thoughts if reply is not None else 0
            self.output_tokens += n
        return n


def _response_json(reply: StubReply, text: str, prompt_tokens: int, output_tokens: int, final: bool = True) -> dict:
    usage = {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output_tokens,
             "totalTokenCount": prompt_tokens + output_tokens + reply.thoughts}
    if reply.thoughts:
        usage["thoughtsTokenCount"] = reply.thoughts
    if reply.block:
        return {"promptFeedback": {"blockReason": reply.block}, "usageMetadata": usage, "modelVersion": "stub"}
    if reply.empty:
        return {"candidates": [], "usageMetadata": usage}
    parts = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.calls] if final else []
    candidate = {"content": {"role": "model", "parts": parts}, "index": 0}
    if final:
        candidate["finishReason"] = reply.finish
        if reply.safety:
            candidate["safetyRatings"] = [{"category": c, "probability": "HIGH", "blocked": True}
                                          for c in reply.safety]
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "stub"}


def _error_json(reply: StubReply) -> dict:
    status = {404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
              504: "DEADLINE_EXCEEDED", 400: "INVALID_ARGUMENT"}.get(reply.status, "ERROR")
    error = {"code": reply.status, "message": reply.message or f"stub error {reply.status}", "status": status}
    if reply.retry_delay:
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": reply.retry_delay}]
    return {"error": error}


def _split(text: str, n: int) -> list[str]:
    words = re.findall(r"\s*\S+\s*", text) or [text]
    size = max(1, -(-len(words) // max(1, n)))
    return ["".join(words[i:i + size]) for i in range(0, len(words), size)]


class _Handler(BaseHTTPRequestHandler):
    stub: GeminiStub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        return

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """models.list: the stub's models, one page."""
        with self.stub._lock:
            self.stub.list_requests += 1
        if not self.path.startswith("/v1beta/models"):
            return self._send(404, b'{"error": {"code": 404, "status": "NOT_FOUND"}}', "application/json")
        if self.stub.list_status != 200:
            data = _error_json(StubReply(status=self.stub.list_status))
            return self._send(self.stub.list_status, json.dumps(data).encode(), "application/json")
        self._send(200, json.dumps({"models": list(self.stub.models)}).encode(), "application/json")

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        stream = ":streamGenerateContent" in self.path
        request = StubRequest(self.path, stream, body, self.headers.get("x-goog-api-key", ""))
        reply = self.stub._next_reply(request)
        time.sleep(self.stub.delay + reply.sleep)
        try:
            self._reply(request, reply)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (its timeout): nothing left to answer

    def _reply(self, request: StubRequest, reply: StubReply) -> None:
        if reply.status != 200:
            return self._send(reply.status, json.dumps(_error_json(reply)).encode(), "application/json",
                              reply.headers)
        if reply.raw is not None:
            return self._send(200, reply.raw, "text/event-stream" if request.stream else "application/json")
        prompt_tokens = count_tokens(request.system) + count_tokens(request.prompt)
        if not request.stream:
            data = _response_json(reply, reply.text, prompt_tokens, self.stub._count_output(reply.text, reply))
            return self._send(200, json.dumps(data).encode(), "application/json", reply.headers)
        pieces, done = _split(reply.text, reply.chunks), 0
        events = []
        for i, piece in enumerate(pieces):
            done += self.stub._count_output(piece, reply if i == 0 else None)
            data = _response_json(reply, piece, prompt_tokens, done, final=i == len(pieces) - 1)
            events.append(f"data: {json.dumps(data)}\r\n\r\n".encode())
        self._send_events(events, reply)

    def _send(self, status: int, payload: bytes, content_type: str, headers=()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _send_events(self, events: list[bytes], reply: StubReply) -> None:
        """The SSE body, one event at a time with `chunk_delay` between them (a slow stream)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(sum(len(e) for e in events)))
        self.end_headers()
        for i, event in enumerate(events):
            if i and reply.chunk_delay:
                time.sleep(reply.chunk_delay)
            self.wfile.write(event)
            self.wfile.flush()


def docagent_responder(request: StubRequest) -> StubReply:
    """Plays Gemini for agentic_rag's three prompts, recognised by their system instructions.

    plan: JSON with the question as its own sub-question (split at ' and ' before a question word);
    answer: the first sentence of the first passage (one per part when there are parts), cited in the form its
    header uses ([P1] or [1]); the continuation of a cut-short answer: a closing sentence; combine: the partial
    answers as bullets;
    verify: every claim supported by the first passage it cites.
    """
    if "You plan how to answer" in request.system:
        return StubReply(text=json.dumps(plan_for(request.prompt.rsplit("Question:", 1)[-1].strip())))
    if "You answer questions using ONLY" in request.system:
        if "cut off at the output limit" in request.prompt:
            return StubReply(text=" That is all the passages say.", chunks=2)
        return StubReply(text=answer_from_passages(request.prompt), chunks=4)
    if "You merge partial answers" in request.system:
        parts = re.findall(r"<part n=\"\d+\">\n(.*?)\n</part>", request.prompt, re.DOTALL)
        return StubReply(text="\n".join(f"- {p.strip()}" for p in parts) or "[[NOT FOUND]] Nothing.", chunks=3)
    if "You check an answer" in request.system:
        claims = re.findall(r"^(\d+)\. .*?\(cites (?:\[P?(\d+)\])?", request.prompt, re.MULTILINE)
        verdicts = [{"claim": int(i), "verdict": "supported", "evidence": int(n or 0)} for i, n in claims]
        return StubReply(text=json.dumps({"claims": verdicts, "missing": []}))
    return StubReply(text="OK")


def plan_for(question: str) -> dict:
    """A plan JSON for `question`: split at "and" before a question word, or into the sides of "compare"."""
    compare = re.match(r"compare (?:the )?(?P<aspect>.+?) of (?P<a>.+?) and (?P<b>.+?)\??$", question, re.IGNORECASE)
    if compare:
        parts = [f"{compare['aspect']} of {side}" for side in (compare["a"], compare["b"])]
    else:
        parts = [p.strip(" ?") + "?" for p in re.split(r",?\s+and\s+(?=(?:what|who|when|where|which|how)\b)",
                                                      question, flags=re.IGNORECASE)]
    return {"intent": "answer from the documents", "complexity": "complex" if len(parts) > 1 else "simple",
            "question_type": "fact", "key_concepts": re.findall(r"\b[A-Z]\w+", question)[1:4] or [question],
            "language": "en", "standalone_question": question, "sub_questions": parts}


def answer_from_passages(prompt: str) -> str:
    """The first sentence of the first passage (of passage i for part i when the prompt lists parts), cited as
    the passage headers are written: [P1] after the labels became P-numbers, [1] before."""
    passages = re.findall(r"^\[(P?\d+)\] [^\n]*\n(?:…\n)?([^\n]+)", prompt, re.MULTILINE)  # not a window's gap
    if not passages:
        return "[[NOT FOUND]] I could not find this in the documents."
    parts = re.findall(r"^- (.+)$", prompt.split("Cover each part:", 1)[1], re.MULTILINE) \
        if "Cover each part:" in prompt else [""]
    lines = []
    for i, _ in enumerate(parts):
        label, text = passages[min(i, len(passages) - 1)]
        first = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
        lines.append(f"{first.rstrip('.')} [{label}].")
    return " ".join(lines)


GeminiStub.handler = _Handler  # the protocol GeminiStub serves (defined after it: it reads the stub's state)
