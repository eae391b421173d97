"""A local stand-in for the Gemini REST API on 127.0.0.1, for the real ChatGoogleGenerativeAI client.

The google-genai SDK (v2.x) that langchain-google-genai drives sends, with `base_url` pointing here:
  POST /v1beta/models/{model}:generateContent                  -> one JSON GenerateContentResponse
  POST /v1beta/models/{model}:streamGenerateContent?alt=sse    -> Server-Sent Events, one `data: {json}` per chunk
with the key in the `x-goog-api-key` header and a JSON body {"contents": [...], "systemInstruction": ...,
"generationConfig": {...}}. A responder decides each reply; a script of StubReply queued with `push` goes first,
so a test can make the next call fail in one precise way.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
        texts = [p.get("text", "") for c in self.body.get("contents", []) for p in c.get("parts", [])]
        return "\n".join(texts)

    @property
    def wants_json(self) -> bool:
        return (self.body.get("generationConfig") or {}).get("responseMimeType") == "application/json"


@dataclass(frozen=True)
class StubReply:
    """What to send back: text (as 1+ chunks when streaming), or an HTTP error, a stall, raw bytes, no candidates."""

    text: str = ""
    status: int = 200
    sleep: float = 0.0
    raw: bytes | None = None
    empty: bool = False
    chunks: int = 3
    message: str = ""


Responder = Callable[[StubRequest], "StubReply | str"]


@dataclass
class GeminiStub:
    """ThreadingHTTPServer in a daemon thread; counts requests and tokens; optional fixed delay per call."""

    responder: Responder = lambda request: StubReply(text="OK")
    delay: float = 0.0
    requests: list[StubRequest] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    _script: deque = field(default_factory=deque)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def push(self, *replies: StubReply) -> None:
        """Queue replies that are used, in order, before the responder is asked."""
        self._script.extend(replies)

    def start(self) -> GeminiStub:
        handler = type("Handler", (_Handler,), {"stub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> GeminiStub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next_reply(self, request: StubRequest) -> StubReply:
        with self._lock:
            self.requests.append(request)
            self.input_tokens += count_tokens(request.system) + count_tokens(request.prompt)
            scripted = self._script.popleft() if self._script else None
        reply = scripted if scripted is not None else self.responder(request)
        return StubReply(text=reply) if isinstance(reply, str) else reply

    def _count_output(self, text: str) -> int:
        n = count_tokens(text)
        with self._lock:
            self.output_tokens += n
        return n


def _response_json(text: str, prompt_tokens: int, output_tokens: int, empty: bool, final: bool = True) -> dict:
    usage = {"promptTokenCount": prompt_tokens, "candidatesTokenCount": output_tokens,
             "totalTokenCount": prompt_tokens + output_tokens}
    if empty:
        return {"candidates": [], "usageMetadata": usage}
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if final:
        candidate["finishReason"] = "STOP"
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "stub"}


def _split(text: str, n: int) -> list[str]:
    words = re.findall(r"\S+\s*", text) or [text]
    size = max(1, -(-len(words) // max(1, n)))
    return ["".join(words[i:i + size]) for i in range(0, len(words), size)]


class _Handler(BaseHTTPRequestHandler):
    stub: GeminiStub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        return

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
            status = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}.get(reply.status, "ERROR")
            message = reply.message or f"stub error {reply.status}"
            error = {"error": {"code": reply.status, "message": message, "status": status}}
            return self._send(reply.status, json.dumps(error).encode(), "application/json")
        if reply.raw is not None:
            return self._send(200, reply.raw, "text/event-stream" if request.stream else "application/json")
        prompt_tokens = count_tokens(request.system) + count_tokens(request.prompt)
        if not request.stream:
            data = _response_json(reply.text, prompt_tokens, self.stub._count_output(reply.text), reply.empty)
            return self._send(200, json.dumps(data).encode(), "application/json")
        pieces, done = _split(reply.text, reply.chunks), 0
        events = []
        for i, piece in enumerate(pieces):
            done += self.stub._count_output(piece)
            data = _response_json(piece, prompt_tokens, done, reply.empty, final=i == len(pieces) - 1)
            events.append(f"data: {json.dumps(data)}\r\n\r\n".encode())
        self._send(200, b"".join(events), "text/event-stream")

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def docagent_responder(request: StubRequest) -> StubReply:
    """Plays Gemini for agentic_rag's three prompts, recognised by their system instructions.

    plan: JSON with the question as its own sub-question (split at ' and ' before a question word);
    answer: the first sentence of passage [1] (one per part when there are parts), cited;
    verify: every claim supported by the first passage it cites.
    """
    if "You plan how to answer" in request.system:
        return StubReply(text=json.dumps(plan_for(request.prompt.rsplit("Question:", 1)[-1].strip())))
    if "You answer questions using ONLY" in request.system:
        return StubReply(text=answer_from_passages(request.prompt), chunks=4)
    if "You check an answer" in request.system:
        claims = re.findall(r"^(\d+)\. .*?\(cites (?:\[(\d+)\])?", request.prompt, re.MULTILINE)
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
    """The first sentence of passage [1] (of passage [i] for part i when the prompt lists parts), cited."""
    passages = re.findall(r"^\[(\d+)\] [^\n]*\n([^\n]+)", prompt, re.MULTILINE)
    if not passages:
        return "[[NOT FOUND]] I could not find this in the documents."
    parts = re.findall(r"^- (.+)$", prompt.split("Cover each part:", 1)[1], re.MULTILINE) \
        if "Cover each part:" in prompt else [""]
    lines = []
    for i, _ in enumerate(parts):
        n, text = passages[min(i, len(passages) - 1)]
        first = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
        lines.append(f"{first.rstrip('.')} [{n}].")
    return " ".join(lines)
