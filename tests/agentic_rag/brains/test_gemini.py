"""The real ChatGoogleGenerativeAI (langchain-google-genai + google-genai SDK) against a local stub server.

Checks the request wiring (paths, key header, JSON mode, output limits, thinking, SSE streaming), token counting
(thinking included), the replies real models give (finish reasons MAX_TOKENS, RECITATION, SAFETY, a blocked
prompt, chatty JSON, slow streams), the retry policy (backoff, Retry-After, RetryInfo, a retired model), that every
failure ends in an offline answer with a warning, and that the key never shows. Nothing here measures time: the
waits are recorded through the brain's sleep seam (bench/agent.py measures the seconds).
"""

from __future__ import annotations

import json
import re
import socket

import pytest

from agentic_rag import NOT_FOUND, OFFLINE_LABEL, Analysis, Budgets, ContextBlock, build_agent, make_gemini_brain
from agentic_rag.brains.gemini import MAX_OUTPUT_TOKENS, list_gemini_models
from agentic_rag.brains.transport import BACKOFF_BASE_SECONDS, CONTINUE_NOTE, MAX_BACKOFF_SECONDS, ModelListError
from testing.gemini_stub import GeminiStub, StubReply, docagent_responder

KEY = "AIzaSy-stub-key-that-must-never-leak-42"
MODEL = "gemini-3.8-flash"  # a fixed name: these tests check the transport, not the default
QUESTION = "What was Acme's revenue in 2023?"
ANSWERING = "You answer questions using ONLY"


class Sleeps(list):
    """The brain's sleep seam: records each wait asked for, waits for none."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def agent_for(base_url: str, corpus, *, timeout=5.0, budgets=None, max_retries=3, sleeps=None, model=MODEL):
    brain = make_gemini_brain(KEY, model=model, base_url=base_url, timeout=timeout, max_retries=max_retries,
                              sleep=sleeps if sleeps is not None else Sleeps())
    return build_agent(brain, corpus, budgets=budgets or Budgets())


def label_of(prompt: str) -> str:
    """The first passage's ID as the prompt writes it: 'P1' or '1' (both label forms are served)."""
    return re.search(r"^\[(P?\d+)\] ", prompt, re.MULTILINE).group(1)


def on_answer(*replies):
    """A responder that gives the answer call the scripted replies in turn (fn(request) or StubReply)."""
    queue = list(replies)

    def responder(request):
        if ANSWERING in request.system and queue:
            reply = queue.pop(0)
            return reply(request) if callable(reply) else reply
        return docagent_responder(request)

    return responder


def thinking_of(config: dict) -> dict:
    """generationConfig.thinkingConfig with its keys as the service reads them (it takes snake or camel case;
    the SDK sends thinking_level)."""
    return {k.replace("_", "").lower(): v for k, v in config["thinkingConfig"].items()}


def answer_requests(stub) -> list:
    return [r for r in stub.requests if ANSWERING in r.system]


def test_request_wiring_limits_thinking_streaming_and_tokens(corpus):
    def thinking(request):  # a thinking model reports thoughtsTokenCount beside the text's tokens
        reply = docagent_responder(request)
        return StubReply(text=reply.text, chunks=reply.chunks, thoughts=11)

    with GeminiStub(responder=thinking) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.mode == "gemini" and result.warnings == ()
    assert result.answer.startswith("Revenue in 2023 was $5.2 million")
    assert len(tokens) >= 2 and "".join(tokens) == result.answer
    plan, answer, verify = stub.requests
    assert [r.path for r in stub.requests] == [f"/v1beta/models/{MODEL}:generateContent",
                                               f"/v1beta/models/{MODEL}:streamGenerateContent?alt=sse",
                                               f"/v1beta/models/{MODEL}:generateContent"]
    assert {r.api_key for r in stub.requests} == {KEY}
    assert plan.wants_json and verify.wants_json and not answer.wants_json
    steps = ("plan", "answer", "verify")
    config = {name: r.body["generationConfig"] for name, r in zip(steps, stub.requests, strict=True)}
    assert {name: c["maxOutputTokens"] for name, c in config.items()} == {s: MAX_OUTPUT_TOKENS[s] for s in steps}
    assert thinking_of(config["plan"]) == thinking_of(config["verify"]) == {"thinkinglevel": "LOW"}
    assert "thinkingConfig" not in config["answer"]  # the answer thinks as the model does by default
    assert not any("temperature" in c for c in config.values())  # no forced temperature for Gemini 3
    schema = config["plan"]["responseJsonSchema"]
    assert "sub_questions" in schema["properties"] and "$ref" not in json.dumps(schema)
    assert "You plan how to answer" in plan.system and QUESTION in plan.prompt
    assert f"[{label_of(answer.prompt)}] acme_report.pdf, p. 3" in answer.prompt
    assert result.claims[0].verdict == "supported" and result.citations[0].file == "acme_report.pdf"
    assert result.usage.llm_calls == 3
    assert result.usage.input_tokens == stub.input_tokens
    assert result.usage.output_tokens == stub.output_tokens  # thinking tokens (3 x 11) are part of the cost
    assert result.to_dict()["citations"][0]["location"] == {"page": 3}


def test_gemini_2_models_get_a_thinking_budget_and_a_low_temperature(stub, corpus):
    agent_for(stub.base_url, corpus, model="gemini-2.5-flash").ask(QUESTION)
    plan, answer, _ = (r.body["generationConfig"] for r in stub.requests)
    assert thinking_of(plan) == {"thinkingbudget": 0} and "thinkingConfig" not in answer
    assert plan["temperature"] == answer["temperature"] == 0.2


@pytest.mark.parametrize("chunks", [1, 7, 40])
def test_a_refusal_in_another_language_claims_nothing(corpus, chunks):
    """Gemini marks a refusal (NOT_FOUND_MARK) in any language; the mark is never shown, even split across
    streamed pieces, and the passages it then describes are not taken for an answer."""
    spanish = ("[[NOT FOUND]] No pude encontrar esto en los documentos. Los pasajes tratan de los ingresos de "
               "Acme en 2023, que fueron de 5,2 millones de dólares [P1].")

    def responder(request):
        if ANSWERING in request.system:
            assert "[[NOT FOUND]]" in request.system  # the prompt asks for the mark
            return StubReply(text=spanish, chunks=chunks)
        return docagent_responder(request)

    with GeminiStub(responder=responder) as server:
        tokens = []
        result = agent_for(server.base_url, corpus).ask("¿Quién fundó Acme?", on_token=tokens.append)
    assert result.mode == "gemini"
    assert result.answer.startswith("No pude encontrar esto en los documentos.")
    assert not any("[[" in t or "]]" in t for t in tokens) and "[[NOT FOUND]]" not in result.answer
    assert result.claims == ()  # what confidence a refusal gets is the engine's (tests/agentic_rag/test_graph.py)
    # plan, one round of the explore route (the first retrieval was thin: the model looked and stopped) and the
    # answer; a refusal has nothing to verify
    assert result.usage.llm_calls == 3 and sum(bool(r.tools) for r in server.requests) == 1


def test_a_complex_question_stays_within_five_calls(stub, corpus):
    result = agent_for(stub.base_url, corpus).ask(
        "What was the revenue in 2023 and when does the steering committee meet?")
    assert len(result.sub_questions) == 2 and result.usage.llm_calls == len(stub.requests) <= 5
    assert result.mode == "gemini"


def test_an_answer_cut_at_max_tokens_is_continued_once_and_streams_whole(corpus):
    def cut(request):
        return StubReply(text=f"Revenue in 2023 was $5.2 million [{label_of(request.prompt)}], while",
                         finish="MAX_TOKENS", chunks=3)

    def rest(request):
        assert CONTINUE_NOTE in request.prompt and request.body["contents"][-2]["role"] == "model"
        return StubReply(text=" costs were flat.", chunks=2)

    with GeminiStub(responder=on_answer(cut, rest)) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.mode == "gemini" and not any("Gemini" in w for w in result.warnings)
    assert result.answer.startswith("Revenue in 2023 was $5.2 million") and "while costs were flat." in result.answer
    assert "".join(tokens).endswith(", while costs were flat.")
    assert len(answer_requests(stub)) == 2 and result.usage.llm_calls == len(stub.requests) == 4


def test_an_answer_cut_at_max_tokens_without_a_call_left_is_marked_truncated(stub, corpus):
    stub.responder = on_answer(StubReply(text="Revenue in 2023 was $5.2 million [P1] and the", finish="MAX_TOKENS"))
    brain = make_gemini_brain(KEY, model=MODEL, base_url=stub.base_url, max_retries=0, sleep=Sleeps())
    blocks = tuple(ContextBlock(n, hit) for n, hit in enumerate(corpus.retrieve(QUESTION, k=2), start=1))
    reply = brain.answer(Analysis(standalone=QUESTION), [QUESTION], blocks, deadline=_in(10))
    assert reply.value.truncated and reply.value.text == "Revenue in 2023 was $5.2 million [P1] and the"
    assert reply.calls == 1 == len(stub.requests)


def test_recitation_is_retried_once_asking_for_a_paraphrase(corpus):
    fragment = StubReply(text="The encoder is composed of a stack of", finish="RECITATION", chunks=2)

    def paraphrase(request):
        assert "paraphrase" in request.prompt.lower()
        return StubReply(text=f"Acme's 2023 revenue came to $5.2 million [{label_of(request.prompt)}].")

    with GeminiStub(responder=on_answer(fragment, paraphrase)) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.mode == "gemini" and result.answer.startswith("Acme's 2023 revenue came to $5.2 million")
    assert "composed of a stack" not in result.answer
    assert "".join(tokens).startswith("The encoder is composed of a stack of\n\nAcme's")  # the stream says so
    assert len(answer_requests(stub)) == 2


def test_recitation_twice_finishes_offline_with_the_reason(corpus):
    fragment = StubReply(text="The encoder is composed of a stack of", finish="RECITATION")
    with GeminiStub(responder=on_answer(fragment, fragment, fragment)) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    assert "quoted a source at length (recitation)" in result.warnings[0]
    assert len(answer_requests(stub)) == 2


def test_a_safety_stop_is_not_retried_and_says_why(corpus):
    blocked = StubReply(text="", finish="SAFETY", safety=("HARM_CATEGORY_DANGEROUS_CONTENT",))
    with GeminiStub(responder=on_answer(blocked, blocked)) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL) and "$5.2 million" in result.answer
    assert result.warnings[0].startswith("Gemini declined to answer (safety filter: dangerous content)")
    assert OFFLINE_LABEL in result.warnings[0] and "empty response" not in result.warnings[0]
    assert len(answer_requests(stub)) == 1


@pytest.mark.parametrize("block", ["SAFETY", "PROHIBITED_CONTENT"])
@pytest.mark.parametrize("step", ["plan", "answer"])  # a structured call, and a streamed one
def test_a_blocked_prompt_is_not_retried_and_says_why(corpus, block, step):
    blocked = StubReply(block=block)
    with GeminiStub(responder=on_answer(blocked, blocked) if step == "answer" else docagent_responder) as stub:
        if step == "plan":
            stub.push(blocked, blocked)
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    reason = block.replace("_", " ").lower()
    assert result.warnings[0].startswith(f"Gemini declined to answer (the prompt was blocked: {reason})")
    assert len(stub.requests) == (1 if step == "plan" else 2)  # the blocked call was not asked again


@pytest.mark.parametrize("reply", [
    '```json\n{"standalone_question": "%s", "sub_questions": ["%s"]}\n```\nNote: {"fields"} may vary.',
    'Here is the plan: {"standalone_question": "%s", "sub_questions": ["%s"]} Hope this helps, use {x} freely.',
])
def test_chatty_or_fenced_plan_json_parses_on_the_first_call(stub, corpus, reply):
    stub.push(StubReply(text=reply % (QUESTION, QUESTION)))
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "gemini" and result.warnings == () and result.trace[0]["llm_calls"] == 1


def test_a_slow_stream_within_the_read_timeout_is_not_a_timeout(corpus):
    slow = StubReply(text="Revenue in 2023 was $5.2 million [P1]. Costs were flat [P1].", chunks=4,
                     chunk_delay=0.4)
    with GeminiStub(responder=on_answer(slow)) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus, timeout=1.0).ask(QUESTION, on_token=tokens.append)
    assert result.mode == "gemini" and len(tokens) == 4 and len(answer_requests(stub)) == 1


FAILURES = {
    "429": (StubReply(status=429), "rate limited (HTTP 429)", 4),
    "500": (StubReply(status=500), "HTTP 500", 4),
    "503": (StubReply(status=503, message="The model is overloaded."), "overloaded or unavailable (HTTP 503)", 4),
    "504": (StubReply(status=504), "HTTP 504", 4),
    "malformed JSON": (StubReply(raw=b'{"candidates": [{"content": '), "malformed JSON", 4),
    "empty candidates": (StubReply(empty=True), "empty response", 4),
    "400": (StubReply(status=400), "HTTP 400", 1),
    "403": (StubReply(status=403), "HTTP 403", 1),
}


@pytest.mark.parametrize("kind", list(FAILURES))
def test_each_failure_ends_offline_with_a_warning_and_bounded_waits(stub, corpus, kind):
    reply, reason, requests = FAILURES[kind]
    stub.push(*[reply] * 4)  # enough for the first try and its three retries
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert "$5.2 million" in result.answer and NOT_FOUND not in result.answer
    assert len(result.warnings) == 1 and reason in result.warnings[0]
    if kind == "malformed JSON":  # the service answers, only not in the shape asked: the rules plan, Gemini answers
        assert result.mode == "gemini" and "rules" in result.warnings[0] and result.trace[0]["mode"] == "rules"
        assert len(stub.requests) == requests + 2  # the answer and its check
    else:
        assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
        assert OFFLINE_LABEL in result.warnings[0]
        assert len(stub.requests) == requests  # the plan failed; nothing more was asked of Gemini
    assert len(sleeps) == requests - 1 and sum(sleeps) <= MAX_BACKOFF_SECONDS * 3
    if kind.isdigit():  # HTTP errors back off, doubling from about a second
        assert [round(s / BACKOFF_BASE_SECONDS) <= 2 ** i and s >= 2 ** i / 2 for i, s in enumerate(sleeps)] \
            == [True] * len(sleeps)
    else:  # a bad reply is asked again at once
        assert sleeps == [0.0] * (requests - 1)
    assert KEY not in json.dumps(result.to_dict())


def test_an_uncited_claim_is_unsupported_not_partly_supported(corpus):
    """Gemini adds a sentence from its own knowledge; the stub's verifier calls every claim supported. A claim
    that cites no passage is still unsupported, and flagged as such."""
    def answer(request):
        return StubReply(text=f"Acme was founded in 1887 in Ohio. Revenue in 2023 was $5.2 million [{label_of(request.prompt)}].")

    with GeminiStub(responder=on_answer(answer, answer)) as stub:  # the revision writes it again
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    verdicts = {c.text.split(" in ")[0]: c.verdict for c in result.claims}
    assert verdicts == {"Acme was founded": "unsupported", "Revenue": "supported"}, verdicts
    assert "founded in 1887 in Ohio. ⚠ (not supported by the cited passages)" in result.answer
    assert "partly" not in result.answer


def test_a_timeout_is_retried_at_once_within_the_window(stub, corpus):
    stub.push(StubReply(sleep=2.5), StubReply(sleep=2.5))
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, timeout=1.0, max_retries=1, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "offline" and "did not answer within 1 s" in result.warnings[0]
    assert len(stub.requests) == 2 and sleeps == [0.0]


def test_overloaded_twice_backs_off_and_gemini_still_answers(stub, corpus):
    overloaded = StubReply(status=503, message="The model is overloaded. Please try again later.")
    stub.push(overloaded, overloaded)
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "gemini" and result.warnings == ()
    assert result.trace[0]["llm_calls"] == 3 and result.usage.llm_calls == 5
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0


@pytest.mark.parametrize("reply", [StubReply(status=429, headers=(("Retry-After", "3"),)),
                                   StubReply(status=429, retry_delay="3s"),
                                   StubReply(status=503, headers=(("Retry-After", "3"),))])
def test_the_wait_the_service_asks_for_is_honoured(stub, corpus, reply):
    stub.push(reply)
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "gemini" and sleeps == [3.0]


def test_a_wait_longer_than_the_step_has_gives_up_at_once_saying_when(stub, corpus):
    stub.push(StubReply(status=429, retry_delay="120s", message="Quota exceeded for generate_content requests."))
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    assert "rate limited (HTTP 429)" in result.warnings[0] and "try again in about 120 s" in result.warnings[0]
    assert len(stub.requests) == 1 and sleeps == []


def test_a_retired_model_is_not_retried_and_says_how_to_change_it(stub, corpus):
    stub.push(StubReply(status=404, message="models/gemini-2.5-flash is not found for API version v1beta, or is "
                                            "not supported for generateContent."))
    result = agent_for(stub.base_url, corpus, model="gemini-2.5-flash").ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    warning = result.warnings[0]
    assert "model 'gemini-2.5-flash' was not found (HTTP 404" in warning
    assert "DOCAGENT_GEMINI_MODEL" in warning and "Settings" in warning
    assert len(stub.requests) == 1


def test_retries_count_against_the_question_call_budget(stub, corpus):
    stub.push(*[StubReply(status=503)] * 6)
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, budgets=Budgets(llm_calls=2), sleeps=sleeps).ask(QUESTION)
    assert result.mode == "offline" and len(stub.requests) == 2 and result.usage.llm_calls == 2


def test_streaming_failure_mid_question_finishes_offline(stub, corpus):
    stub.push(StubReply(text=json.dumps({"standalone_question": QUESTION, "sub_questions": [QUESTION]})),
              *[StubReply(status=503)] * 4)
    events = []
    result = agent_for(stub.base_url, corpus).ask(QUESTION, on_event=lambda s, e: events.append((s, e["status"])))
    assert result.mode == "offline" and "HTTP 503" in result.warnings[0]
    assert ("synthesize", "fallback") in events and result.usage.llm_calls == len(stub.requests)
    assert "Revenue in 2023 was $5.2 million." in result.answer


def test_errors_never_show_the_key(stub, corpus):
    stub.push(StubReply(status=400, message=f"API key {KEY} not valid. Please pass a valid API key."))
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and "HTTP 400" in result.warnings[0]
    assert len(stub.requests) == 1  # a bad request is not retried
    assert KEY not in json.dumps(result.to_dict()) and KEY not in repr(result)


def test_connection_refused_is_retried_at_once_then_goes_offline(corpus):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    sleeps = Sleeps()
    result = agent_for(f"http://127.0.0.1:{port}", corpus, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "offline" and "could not be reached" in result.warnings[0]
    assert "$5.2 million" in result.answer and sleeps == [0.0] * 3 and result.usage.llm_calls == 4


def test_the_retry_window_cuts_the_client_timeout(stub, corpus):
    stub.push(StubReply(sleep=6.0), StubReply(sleep=6.0))
    result = agent_for(stub.base_url, corpus, timeout=20.0, budgets=Budgets(retry_seconds=2.0)).ask(QUESTION)
    assert result.mode == "offline" and "did not answer within 2 s" in result.warnings[0]  # not 20 s
    assert len(stub.requests) == 1  # no time was left for a second try


def test_stub_counts_requests_and_tokens():
    with GeminiStub() as server:
        brain = make_gemini_brain(KEY, model=MODEL, base_url=server.base_url, timeout=5.0)
        message = brain.llm.invoke("Count these five words please")
        assert message.content == "OK" and len(server.requests) == 1
        assert server.input_tokens == 5 and message.usage_metadata["input_tokens"] == 5


def test_a_model_is_required_for_the_real_client():
    with pytest.raises(ValueError, match="model"):
        make_gemini_brain(KEY)


def test_models_list_keeps_the_text_gemini_models(stub):
    assert list_gemini_models(KEY, base_url=stub.base_url) == (
        "gemini-3.8-flash", "gemini-3.6-flash", "gemini-3.1-pro-preview")
    assert stub.list_requests == 1


def test_a_failed_model_list_says_why_without_the_key(stub):
    stub.list_status = 403
    with pytest.raises(ModelListError) as failed:
        list_gemini_models(KEY, base_url=stub.base_url)
    assert "HTTP 403" in failed.value.reason and KEY not in failed.value.reason


@pytest.mark.integration
def test_live_gemini_answers_with_citations(corpus):
    """Opt-in: needs GOOGLE_API_KEY (and the network); checks the real service end to end."""
    import os

    import wiring

    key = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")
    if not key:
        pytest.skip("no GOOGLE_API_KEY: the live Gemini test is opt-in")
    brain = make_gemini_brain(key, model=wiring.Config.from_env().gemini_model, timeout=30.0)
    result = build_agent(brain, corpus).ask(QUESTION)
    assert result.mode == "gemini", result.warnings
    assert "5.2" in result.answer and result.citations and result.citations[0].file == "acme_report.pdf"
    assert key not in json.dumps(result.to_dict())


def _in(seconds: float) -> float:
    import time

    return time.monotonic() + seconds
