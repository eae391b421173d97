"""One model step's request and the policy around it, for every provider: retries, Retry-After, finish reasons,
continuation. What differs between services (their errors, their finish reasons, how a failure reads) is a
Provider (gemini.GeminiProvider, local.LocalProvider).

Policy, all inside the deadline the step gives and within `max_calls` requests (retries, the recitation retry
and the continuation each count as a call):
- HTTP 429/500/502/503/504/408 are retried after the delay the service asked for (the Retry-After header, or
  RetryInfo.retryDelay in the error details) when that fits in the time left, else after a jittered exponential
  backoff (BACKOFF_BASE_SECONDS doubling); when the wait does not fit, the step gives up at once and says when
  to try again. Timeouts, failed connections and malformed or empty replies are retried at once (no wait);
  other 4xx are not retried, unless the provider can ask again without an option the server refused.
- finish MAX_TOKENS: the text so far is sent back once, asking the model to continue where it stopped
  (appended, streamed); when no call or time is left for that, the text is returned marked truncated.
  RECITATION: asked once more, to paraphrase instead of quoting at length. A finish the provider lists as
  declined (a safety or content filter), or a blocked prompt: no retry; BrainError with the reason.
Every reason is scrubbed of the API key.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from agentic_rag.types import BrainError

RETRIABLE_STATUS = (408, 429, 500, 502, 503, 504)
MIN_ATTEMPT_SECONDS = 0.5  # not worth starting a request with less time than this left
BACKOFF_BASE_SECONDS = 1.0  # first wait after a 429/5xx; doubles per failure, jittered between half and all
MAX_BACKOFF_SECONDS = 8.0
CONTINUE_NOTE = ("Your answer above was cut off at the output limit. Continue it exactly where it stopped: do not "
                 "repeat anything already written and do not start over; keep citing the same way.")
PARAPHRASE_NOTE = ("Your previous reply was stopped because it quoted a source at length (recitation). Answer "
                   "again in your own words: paraphrase, quote at most a few words, and keep the citations.")


class EmptyReply(ValueError):
    """The service answered 200 with no text and no reason (e.g. an empty `candidates` list)."""


class ModelListError(Exception):
    """A service's model list could not be fetched (Gemini's for a key, a local server's); `reason` is safe to
    show."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Reply:
    """One request's outcome: the text, its tokens (thinking included in output), and why generation stopped."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    finish: str = ""  # "STOP", "MAX_TOKENS", "RECITATION" or a declined reason; "" when the model did not say
    blocked: str = ""  # why the prompt itself was blocked (Gemini's promptFeedback.blockReason)
    categories: tuple[str, ...] = ()  # safety categories that blocked the reply


@dataclass(frozen=True)
class Result:
    """What a step's request produced: the text (or parsed value) and what all its calls cost."""

    value: object
    calls: int
    input_tokens: int
    output_tokens: int
    truncated: bool = False


class Provider(Protocol):
    """What the policy needs to know about one service. `name` starts every reason ("Gemini", "The local
    model 'llama3.2' at 127.0.0.1:11434"); `declined` maps finish reasons that refuse to words."""

    name: str
    declined: Mapping[str, str]

    def errors(self) -> tuple[type[BaseException], ...]:
        """What a failing call raises (SDK errors, transport errors, bad JSON, OS errors)."""

    def describe(self, exc: BaseException, timeout: float) -> str:
        """A reason safe to show, after `name`: what went wrong and, where there is one, the fix."""

    def stop_reasons(self, metas: Sequence[dict]) -> tuple[str, str, tuple[str, ...]]:
        """(finish as STOP/MAX_TOKENS/RECITATION/a declined key, prompt block reason, blocking categories)."""

    def finished(self, exc: BaseException) -> Reply | None:
        """A reply the SDK raised as an exception (a finish reason it refuses to parse), else None."""

    def downgrade(self, exc: BaseException, options: dict) -> dict | None:
        """Options without the one the server refused in `exc` (to ask again without it), else None."""


@dataclass
class Call:
    """One step's request with the policy above. `parse` turns the text into the value (JSON steps); `sleep`
    is the seam tests use to see the waits without waiting."""

    llm: object
    messages: list
    provider: Provider
    deadline: float
    timeout: float
    max_calls: int
    options: dict = field(default_factory=dict)
    on_token: Callable[[str], None] | None = None
    parse: Callable[[str], object] | None = None
    sleep: Callable[[float], None] = time.sleep
    secrets: tuple[str, ...] = ()
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    written: str = ""  # text of a reply cut short at MAX_TOKENS, to be continued
    malformed: bool = False  # the last failure was a reply in the wrong shape (a plan can use the rules)
    downgraded: bool = False

    def run(self) -> Result:
        asked, failures, reason = self.messages, 0, "had no time left to call"
        while True:
            left = self.deadline - time.monotonic()
            if self.calls >= self.max_calls or left < MIN_ATTEMPT_SECONDS:
                return self._give_up(reason)
            self.calls += 1
            streamed: list[str] = []
            try:
                outcome = self._after(self._once(asked, min(self.timeout, left), streamed), asked)
            except _Stop as stop:
                raise self._error(stop.reason) from None
            except self.provider.errors() as exc:
                wait, reason = self._failed(exc, streamed, failures, min(self.timeout, left))
                if isinstance(wait, Result):
                    return wait
                failures += 1
                self.sleep(wait)
                continue
            if isinstance(outcome, Result):
                return outcome
            asked, reason = outcome
            if streamed and self.on_token is not None and not self.written:
                self.on_token("\n\n")  # the paraphrase starts on its own paragraph after the stopped fragment

    def _once(self, asked: list, timeout: float, streamed: list[str]) -> Reply:
        try:
            reply = once(self.llm, asked, self.options, timeout, self.on_token, streamed, self.provider)
        except self.provider.errors() as exc:
            reply = self.provider.finished(exc)
            if reply is None:
                raise
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        return reply

    def _failed(self, exc: BaseException, streamed: list[str], failures: int,
                timeout: float) -> tuple[float | Result, str]:
        """After a failed request: the wait before the next one (or the text kept), or raise BrainError."""
        reason = self.provider.describe(exc, timeout)
        # Reachable, but the reply was not the JSON asked for: a plan can then fall back to the rules.
        self.malformed = isinstance(exc, ValueError) and not isinstance(exc, EmptyReply) and status_of(exc) is None
        if self.written:
            self.written += "".join(streamed)
            return self._truncated(), reason  # the continuation failed: keep what was written
        fewer = None if streamed or self.downgraded else self.provider.downgrade(exc, self.options)
        if fewer is not None:
            self.options, self.downgraded = fewer, True
            return 0.0, reason
        if streamed or not retriable(exc):
            raise self._error(reason) from exc  # tokens reached the reader, or retrying cannot help
        wait, reason = self._wait(exc, failures, reason)
        if wait is None:
            raise self._error(reason) from exc
        return wait, reason

    def _after(self, reply: Reply, asked: list) -> Result | tuple[list, str]:
        """The result, or the next messages to send (paraphrase, continue) with the reason to give if none can be."""
        self._refuse_if_declined(reply)
        if reply.finish == "RECITATION":
            if self.written:
                return self._truncated()
            if asked is not self.messages:
                raise _Stop("stopped twice because its answer quoted a source at length (recitation)")
            return with_note(self.messages, PARAPHRASE_NOTE), "stopped because its answer quoted a source at length"
        if reply.finish == "MAX_TOKENS" and self.parse is not None:
            raise _Stop(_limit_reason(self.options, "in the middle of its structured reply"))
        if reply.finish == "MAX_TOKENS":
            continued = bool(self.written)
            self.written += reply.text
            if not self.written.strip():
                raise _Stop(_limit_reason(self.options, "before writing anything"))
            if continued:
                return self._truncated()
            return continued_messages(self.messages, self.written), _limit_reason(self.options, "(not continued)")
        text = self.written + reply.text
        value = self.parse(text) if self.parse is not None else text
        return Result(value, self.calls, self.input_tokens, self.output_tokens)

    def _refuse_if_declined(self, reply: Reply) -> None:
        if reply.blocked:
            raise _Stop(f"declined to answer (the prompt was blocked: {_words(reply.blocked)})")
        if reply.finish in self.provider.declined:
            what = ", ".join(_words(c.removeprefix("HARM_CATEGORY_")) for c in reply.categories)
            raise _Stop(f"declined to answer ({self.provider.declined[reply.finish]}{': ' + what if what else ''})")

    def _wait(self, exc: BaseException, failures: int, reason: str) -> tuple[float | None, str]:
        """How long to wait before the next try, or None (with the reason, saying when to retry) when it won't fit."""
        asked = retry_after(exc)
        status = status_of(exc)
        if asked is not None:
            wait = asked
        elif status is not None:
            wait = min(MAX_BACKOFF_SECONDS, BACKOFF_BASE_SECONDS * 2 ** failures) * random.uniform(0.5, 1.0)
        else:
            wait = 0.0  # a timeout or a malformed reply: nothing to wait for
        left = self.deadline - time.monotonic()
        if self.calls < self.max_calls and left - wait >= MIN_ATTEMPT_SECONDS:
            return wait, reason
        if asked is not None and asked > left:
            reason += (f"; it asked to wait {asked:.0f} s, more than this step had left: "
                       f"try again in about {asked:.0f} s")
        return None, reason

    def _truncated(self) -> Result:
        return Result(self.written, self.calls, self.input_tokens, self.output_tokens, truncated=True)

    def _give_up(self, reason: str) -> Result:
        if self.written.strip() and self.parse is None:
            return self._truncated()
        raise self._error(reason)

    def _error(self, reason: str) -> BrainError:
        name = self.provider.name
        text = reason if reason.startswith(name) else f"{name} {reason}"
        return BrainError(scrub(text, self.secrets), calls=self.calls, input_tokens=self.input_tokens,
                          output_tokens=self.output_tokens, malformed=self.malformed)


class _Stop(Exception):
    """A reply that ends the step without a retry (declined, recited twice, cut short in JSON)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _limit_reason(options: dict, when: str) -> str:
    limit = options.get("max_output_tokens") or options.get("max_tokens")
    return f"reached its output limit{f' ({limit} tokens)' if limit else ''} {when}"


def _words(name: str) -> str:
    return name.replace("_", " ").lower()


def once(llm, messages, options: dict, timeout: float, on_token, streamed: list[str], provider: Provider) -> Reply:
    """One request: invoke, or stream through on_token (pieces also go to `streamed`). Raises EmptyReply when a
    200 reply holds no text and no reason."""
    bound = llm.bind(**options) if options else llm
    metas: list[dict] = []
    if on_token is None:
        message = bound.invoke(messages, timeout=timeout)
        text, usage = content_text(message.content), message.usage_metadata or {}
        tin, tout = usage.get("input_tokens", 0), usage.get("output_tokens", 0)
        metas.append(message.response_metadata or {})
    else:
        tin = tout = 0
        for chunk in bound.stream(messages, timeout=timeout):
            piece, usage = content_text(chunk.content), chunk.usage_metadata or {}
            tin, tout = tin + usage.get("input_tokens", 0), tout + usage.get("output_tokens", 0)
            metas.append(chunk.response_metadata or {})
            if piece:
                streamed.append(piece)
                on_token(piece)
        text = "".join(streamed)
    reply = Reply(text, tin, tout, *provider.stop_reasons(metas))
    if not text.strip() and not reply.blocked and reply.finish in ("", "STOP", "FINISH_REASON_UNSPECIFIED"):
        raise EmptyReply("empty response")
    return reply


def content_text(content) -> str:
    """Message content as text: a string, or a list of parts (strings or {'type': 'text', 'text': ...})."""
    if isinstance(content, str):
        return content
    out = []
    for part in content or []:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type", "text") == "text":
            out.append(str(part.get("text", "")))
    return "".join(out)


def with_note(messages: list, note: str) -> list:
    """The messages with `note` added to the last user message (Gemini wants user and model turns to alternate)."""
    *head, (role, text) = messages
    return [*head, (role, f"{text}\n\n{note}")]


def continued_messages(messages: list, written: str) -> list:
    """The conversation so far plus the cut-short answer as the model's turn, and the request to go on."""
    return [*messages, ("ai", written), ("human", CONTINUE_NOTE)]


def chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes (LangChain wraps the SDK's error, which holds the HTTP response)."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 5:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a failed call, when it had one."""
    for e in chain(exc):
        code = getattr(e, "code", None) or getattr(e, "status_code", None)
        if isinstance(code, int) and 100 <= code < 600:
            return code
    m = re.search(r"\b(4\d\d|5\d\d)\b", str(exc))
    return int(m.group(1)) if m and "Error calling model" in str(exc) else None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the service asked us to wait: the Retry-After header, or RetryInfo.retryDelay in the details."""
    for e in chain(exc):
        headers = getattr(getattr(e, "response", None), "headers", None)
        value = headers.get("retry-after") if headers is not None else None
        if value:
            seconds = _header_seconds(str(value))
            if seconds is not None:
                return seconds
        details = getattr(e, "details", None)
        error = details.get("error", details) if isinstance(details, dict) else {}
        for item in (error.get("details") or []) if isinstance(error, dict) else []:
            delay = str(item.get("retryDelay", "")) if isinstance(item, dict) else ""
            m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)s\s*", delay)
            if m:
                return float(m.group(1))
    return None


def _header_seconds(value: str) -> float | None:
    if re.fullmatch(r"\s*\d+(\.\d+)?\s*", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def retriable(exc: BaseException) -> bool:
    """Whether another try may succeed: overload, rate limits, timeouts, failed connections, bad replies."""
    status = status_of(exc)
    return status in RETRIABLE_STATUS if status is not None else True


def refused(exc: BaseException) -> bool:
    """The connection failed (nothing listens there, DNS, a reset)."""
    return any("Connect" in type(e).__name__ or isinstance(e, ConnectionError) for e in chain(exc))


def timed_out(exc: BaseException) -> bool:
    return "Timeout" in type(exc).__name__ or isinstance(exc, TimeoutError)


def scrub(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret replaced by ***."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
