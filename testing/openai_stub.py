"""A local stand-in for an OpenAI-compatible chat server (Ollama, llama-server, LM Studio, vLLM) on 127.0.0.1,
for the real ChatOpenAI client (langchain-openai + openai SDK).

  POST /v1/chat/completions   {"model", "messages", "stream", "stream_options", "max_completion_tokens",
                               "max_tokens", "response_format", ...} -> one chat.completion JSON, or with
                               "stream": true Server-Sent Events `data: {chunk}` ... `data: [DONE]`
                               (a last chunk with `usage` when stream_options.include_usage)
  GET  /v1/models             {"object": "list", "data": [{"id": ...}, ...]}

A model the stub does not list gets Ollama's 404 ("model \"x\" not found, try pulling it first"). A responder
decides each reply; a script of OpenAIReply queued with `push` goes first. Replies replay what local servers
send: finish_reason length / content_filter, errors in OpenAI's {"error": {...}} shape (llama-server's
exceed_context_size_error), Retry-After headers, stalls before the first byte, streams at a set token rate,
and a server that refuses `response_format` (reject_response_format).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from testing.gemini_stub import count_tokens, docagent_responder
from testing.loopback_server import LoopbackServer

STUB_MODELS = ("llama3.2", "qwen2.5:3b-instruct")


@dataclass(frozen=True)
class OpenAIRequest:
    """One chat request as the stub saw it."""

    path: str
    body: dict
    api_key: str

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def system(self) -> str:
        return "\n".join(_text(m) for m in self.body.get("messages", []) if m.get("role") in ("system", "developer"))

    @property
    def prompt(self) -> str:
        return "\n".join(_text(m) for m in self.body.get("messages", []) if m.get("role") not in ("system", "developer"))

    @property
    def wants_json(self) -> bool:
        return (self.body.get("response_format") or {}).get("type") == "json_schema"

    @property
    def roles(self) -> list[str]:
        return [m.get("role") for m in self.body.get("messages", [])]

    @property
    def tools(self) -> list[str]:
        """The names of the functions the request declares."""
        return [(t.get("function") or {}).get("name", "") for t in self.body.get("tools", [])]

    @property
    def turns(self) -> int:
        """How many assistant turns the conversation already holds (tool-calling rounds so far)."""
        return sum(1 for m in self.body.get("messages", []) if m.get("role") == "assistant")


def _text(message: dict) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


@dataclass(frozen=True)
class OpenAIReply:
    """What to send back: text (as `chunks` SSE pieces when streaming), or an HTTP error, a stall, raw bytes.

    finish: finish_reason of the last piece ("stop", "length", "content_filter"); message/error_type: the
    error body; headers: extra HTTP headers (Retry-After); sleep: seconds before the first byte;
    chunk_delay: seconds between streamed pieces; usage: False leaves usage out (servers that never send it).
    """

    text: str = ""
    status: int = 200
    sleep: float = 0.0
    raw: bytes | None = None
    chunks: int = 3
    finish: str = "stop"
    message: str = ""
    error_type: str = "api_error"
    headers: tuple[tuple[str, str], ...] = ()
    chunk_delay: float = 0.0
    usage: bool = True
    calls: tuple[tuple[str, object], ...] = ()  # tool calls: (name, arguments); a str is sent as written (malformed)


Responder = Callable[[OpenAIRequest], "OpenAIReply | str"]


def local_responder(request: OpenAIRequest) -> OpenAIReply:
    """Plays a local model for agentic_rag's three prompts (gemini_stub.docagent_responder's answers)."""
    reply = docagent_responder(request)  # reads only .system and .prompt
    return OpenAIReply(text=reply.text, chunks=reply.chunks)


@dataclass
class OpenAIStub(LoopbackServer):
    """ThreadingHTTPServer in a daemon thread; counts requests and tokens.

    `models` is what /v1/models lists and which models answer; `list_status` != 200 fails the listing;
    `reject_response_format` answers 400 to a request with response_format (a server without JSON schemas);
    `tokens_per_second` writes at that rate, one token per streamed piece (bench/agent.py), and
    `prompt_tokens_per_second` reads the prompt at that rate before the first byte; 0 = as fast as possible.
    """

    responder: Responder = local_responder
    models: tuple[str, ...] = STUB_MODELS
    list_status: int = 200
    reject_response_format: bool = False
    tokens_per_second: float = 0.0
    prompt_tokens_per_second: float = 0.0
    list_requests: int = 0
    requests: list[OpenAIRequest] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def base_url(self) -> str:
        return self.address + "/v1"

    def _next_reply(self, request: OpenAIRequest) -> OpenAIReply:
        with self._lock:
            self.requests.append(request)
            scripted = self.scripted()
        if scripted is None and request.body.get("model") not in self.models:
            name = request.body.get("model")
            return OpenAIReply(status=404, message=f'model "{name}" not found, try pulling it first')
        if scripted is None and self.reject_response_format and "response_format" in request.body:
            return OpenAIReply(status=400, message="response_format json_schema is not supported",
                               error_type="invalid_request_error")
        reply = scripted if scripted is not None else self.responder(request)
        return OpenAIReply(text=reply) if isinstance(reply, str) else reply

    def _count(self, prompt: str, output: str) -> tuple[int, int]:
        tin, tout = count_tokens(prompt), count_tokens(output)
        with self._lock:
            self.input_tokens += tin
            self.output_tokens += tout
        return tin, tout


def _error_json(reply: OpenAIReply) -> dict:
    return {"error": {"message": reply.message or f"stub error {reply.status}", "type": reply.error_type,
                      "param": None, "code": None}}


def _pieces(text: str, n: int) -> list[str]:
    words = re.findall(r"\s*\S+\s*", text) or [text]
    size = max(1, -(-len(words) // max(1, n)))
    return ["".join(words[i:i + size]) for i in range(0, len(words), size)]


def _chunk(model: str, delta: dict, finish: str | None, usage: dict | None = None) -> bytes:
    data = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
            "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        data["usage"] = usage
    return f"data: {json.dumps(data)}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    stub: OpenAIStub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        return

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        with self.stub._lock:
            self.stub.list_requests += 1
        if self.path.rstrip("/") != "/v1/models":
            return self._send(404, b'{"error": {"message": "404 page not found"}}')
        if self.stub.list_status != 200:
            body = _error_json(OpenAIReply(status=self.stub.list_status))
            return self._send(self.stub.list_status, json.dumps(body).encode())
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "library"} for m in self.stub.models]
        self._send(200, json.dumps({"object": "list", "data": data}).encode())

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/v1/chat/completions":
            return self._send(404, b'{"error": {"message": "404 page not found"}}')
        key = self.headers.get("Authorization", "").removeprefix("Bearer ")
        request = OpenAIRequest(self.path, body, key)
        reply = self.stub._next_reply(request)
        time.sleep(reply.sleep)
        try:
            self._reply(request, reply)
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (its timeout): nothing left to answer

    def _reply(self, request: OpenAIRequest, reply: OpenAIReply) -> None:
        if reply.status != 200:
            return self._send(reply.status, json.dumps(_error_json(reply)).encode(), reply.headers)
        if reply.raw is not None:
            return self._send(200, reply.raw, content_type="text/event-stream" if request.stream else None)
        tin, tout = self.stub._count(request.system + "\n" + request.prompt, reply.text)
        usage = {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}
        model = request.body.get("model", "")
        if self.stub.prompt_tokens_per_second:
            time.sleep(tin / self.stub.prompt_tokens_per_second)
        if not request.stream:
            if self.stub.tokens_per_second:
                time.sleep(tout / self.stub.tokens_per_second)
            message = {"role": "assistant", "content": reply.text}
            if reply.calls:
                message["tool_calls"] = [{"id": f"call_{i}", "type": "function", "function": {
                    "name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                    for i, (name, args) in enumerate(reply.calls)]
            data = {"id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()), "model": model,
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if reply.calls else reply.finish}]}
            if reply.usage:
                data["usage"] = usage
            return self._send(200, json.dumps(data).encode(), reply.headers)
        self._stream(request, reply, model, usage)

    def _stream(self, request: OpenAIRequest, reply: OpenAIReply, model: str, usage: dict) -> None:
        rate = self.stub.tokens_per_second
        pieces = _pieces(reply.text, max(1, count_tokens(reply.text)) if rate else reply.chunks)
        delay = 1.0 / rate if rate else reply.chunk_delay
        events = [_chunk(model, {"role": "assistant", "content": ""}, None)]
        events += [_chunk(model, {"content": p}, reply.finish if i == len(pieces) - 1 else None)
                   for i, p in enumerate(pieces)]
        if reply.usage and (request.body.get("stream_options") or {}).get("include_usage"):
            events.append(_chunk(model, None, None, usage))
        events.append(b"data: [DONE]\n\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i, event in enumerate(events):
            if 1 < i <= len(pieces) and delay:
                time.sleep(delay)
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _send(self, status: int, payload: bytes, headers=(), content_type: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type or "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


OpenAIStub.handler = _Handler  # the protocol OpenAIStub serves (defined after it: it reads the stub's state)
