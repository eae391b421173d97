"""The real ChatOpenAI (langchain-openai + openai SDK) against a local OpenAI-compatible stub server, as Ollama,
llama-server, LM Studio or vLLM would answer it.

The same realistic outputs as test_gemini.py (finish reasons, chatty JSON, slow streams, errors, retries) in
the shapes these servers use, plus what small local models and their servers do: a missing model (Ollama's 404),
a server that is not running, a prompt longer than the context, a server without JSON schemas, <think> blocks,
odd citation forms, no usage in the stream. Nothing here measures time: waits are recorded through the brain's
sleep seam (bench/agent.py measures the seconds).
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace

import pytest

from agentic_rag import (
    LOCAL_BUDGETS,
    NOT_FOUND,
    OFFLINE_LABEL,
    Analysis,
    Budgets,
    ContextBlock,
    build_agent,
    list_local_models,
    make_local_brain,
)
from agentic_rag.brains.local import MAX_OUTPUT_TOKENS
from agentic_rag.brains.transport import BACKOFF_BASE_SECONDS, CONTINUE_NOTE, MAX_BACKOFF_SECONDS, ModelListError
from agentic_rag.language.text import estimate_tokens
from testing.openai_stub import STUB_MODELS, OpenAIReply, OpenAIStub, local_responder
from tests.helpers.agent import FakeRetriever, make_chunk
from tests.helpers.local_model import KEY, MODEL, MODEL_MODE, QUESTION

ANSWERING = "You answer questions using ONLY"


class Sleeps(list):
    """The brain's sleep seam: records each wait asked for, waits for none."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        yield server


# The plan call's wiring and failures are under test here, so every question gets one; the budgets as shipped
# (no plan call for a simple standalone question) and a capped answer prompt are tested at the end.
PLANNED = replace(LOCAL_BUDGETS, plan_call="always")


def agent_for(base_url: str, corpus, *, model=MODEL, timeout=5.0, budgets=None, max_retries=3, sleeps=None,
              structured=True):
    brain = make_local_brain(base_url, model, api_key=KEY, timeout=timeout, max_retries=max_retries,
                             structured=structured, sleep=sleeps if sleeps is not None else Sleeps())
    return build_agent(brain, corpus, budgets=budgets or PLANNED)


def on_answer(*replies):
    """A responder that gives the answer call the scripted replies in turn (fn(request) or OpenAIReply)."""
    queue = list(replies)

    def responder(request):
        if ANSWERING in request.system and queue:
            reply = queue.pop(0)
            return reply(request) if callable(reply) else reply
        return local_responder(request)

    return responder


def answers(stub) -> list:
    return [r for r in stub.requests if ANSWERING in r.system]


def test_request_wiring_json_schema_limits_streaming_and_tokens(stub, corpus):
    tokens = []
    result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.mode == MODEL_MODE and result.warnings == ()
    assert result.answer.startswith("Revenue in 2023 was $5.2 million") and len(tokens) >= 2
    assert "".join(tokens) == result.answer
    plan, answer, verify = stub.requests
    assert {r.path for r in stub.requests} == {"/v1/chat/completions"}
    assert {r.api_key for r in stub.requests} == {KEY} and {r.body["model"] for r in stub.requests} == {MODEL}
    assert [r.stream for r in stub.requests] == [False, True, False]  # the answer streams
    assert plan.wants_json and verify.wants_json and not answer.wants_json
    schema = plan.body["response_format"]["json_schema"]["schema"]
    assert "sub_questions" in schema["properties"] and "$ref" not in json.dumps(schema)
    limits = {name: (r.body["max_tokens"], r.body["max_completion_tokens"])
              for name, r in zip(("plan", "answer", "verify"), stub.requests, strict=True)}
    assert limits == {name: (MAX_OUTPUT_TOKENS[name],) * 2 for name in limits}  # Ollama reads only max_tokens
    assert answer.body["stream_options"] == {"include_usage": True} and plan.body["temperature"] == 0.2
    assert plan.roles[0] == "system" and "You plan how to answer" in plan.system and QUESTION in plan.prompt
    assert "[P1] acme_report.pdf, p. 3" in answer.prompt
    assert result.claims[0].verdict == "supported" and result.citations[0].file == "acme_report.pdf"
    assert result.analysis.source == "local model" and result.trace[0]["mode"] == MODEL_MODE
    assert result.usage.llm_calls == 3
    assert (result.usage.input_tokens, result.usage.output_tokens) == (stub.input_tokens, stub.output_tokens)


def test_the_model_list_comes_from_the_server(stub):
    assert list_local_models(stub.base_url) == STUB_MODELS and stub.list_requests == 1


@pytest.mark.parametrize("status", [401, 500])
def test_a_failed_model_list_says_why_without_the_key(stub, status):
    stub.list_status = status
    with pytest.raises(ModelListError) as failed:
        list_local_models(stub.base_url, api_key=KEY)
    assert f"HTTP {status}" in failed.value.reason and KEY not in failed.value.reason


def test_a_model_list_from_no_server_says_to_start_one():
    with pytest.raises(ModelListError) as failed:
        list_local_models(f"http://127.0.0.1:{_closed_port()}/v1")
    assert "could not be reached" in failed.value.reason and "ollama serve" in failed.value.reason


def test_bad_configuration_is_refused_at_construction():
    for args in (("", MODEL), ("http://127.0.0.1:11434/v1", "")):
        with pytest.raises(ValueError, match="DOCAGENT_LOCAL"):
            make_local_brain(*args)
    with pytest.raises(ValueError):
        make_local_brain("http://127.0.0.1:11434/v1", MODEL, timeout=0)


@pytest.mark.parametrize("reply", [
    '```json\n{"standalone_question": "%s", "sub_questions": ["%s"]}\n```\nNote: {"fields"} may vary.',
    'Sure! Here is the plan: {"standalone_question": "%s", "sub_questions": ["%s"]} Hope this helps {x}.',
    '<think>The user wants {"a": "plan"}. Let me think.</think>\n{"standalone_question": "%s", '
    '"sub_questions": ["%s"]}',
])
def test_chatty_fenced_or_thinking_plan_json_parses_on_the_first_call(stub, corpus, reply):
    stub.push(OpenAIReply(text=reply % (QUESTION, QUESTION)))
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == MODEL_MODE and result.warnings == () and result.trace[0]["llm_calls"] == 1
    assert result.sub_questions == (QUESTION,)


def test_a_garbled_plan_is_planned_by_the_rules_and_the_model_still_answers(stub, corpus):
    stub.push(*[OpenAIReply(text="I think the plan is: search for revenue.")] * 4)
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == MODEL_MODE and result.trace[0]["mode"] == "rules"
    assert "malformed JSON" in result.warnings[0] and "rules" in result.warnings[0]
    assert result.answer.startswith("Revenue in 2023 was $5.2 million") and len(answers(stub)) == 1


def test_a_server_without_json_schemas_is_asked_again_without_and_parsed_tolerantly(stub, corpus):
    stub.reject_response_format = True
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == MODEL_MODE and result.warnings == ()
    plan, retry = stub.requests[:2]
    assert plan.wants_json and "response_format" not in retry.body and result.trace[0]["llm_calls"] == 2


def test_structured_off_never_sends_response_format(stub, corpus):
    result = agent_for(stub.base_url, corpus, structured=False).ask(QUESTION)
    assert result.mode == MODEL_MODE and not any("response_format" in r.body for r in stub.requests)
    assert result.usage.llm_calls == 3


@pytest.mark.parametrize("cites", ["[P1, P2]", "[Source 1]", "(P1)", "[P1][P1]", "[Passage 1]"])
def test_odd_citation_forms_still_cite_the_passages(corpus, cites):
    text = f"Revenue in 2023 was $5.2 million {cites}."
    with OpenAIStub(responder=on_answer(OpenAIReply(text=text))) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.answer.startswith("Revenue in 2023 was $5.2 million [1]")  # a passage ID it lacks is dropped
    assert result.citations[0].file == "acme_report.pdf" and result.claims[0].citations == (1,)


def test_a_bare_reference_number_is_not_a_citation(corpus):
    text = "Revenue in 2023 was $5.2 million [P1], as in earlier work [11]."
    with OpenAIStub(responder=on_answer(OpenAIReply(text=text))) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert "[11]" in result.answer and [c.n for c in result.citations] == [1]


@pytest.mark.parametrize("chunks", [1, 3, 12])
def test_a_leading_think_block_is_neither_streamed_nor_kept(corpus, chunks):
    text = "<think>\nThe passage [P1] says 5.2. {maybe}\n</think>\n\nRevenue in 2023 was $5.2 million [P1]."
    with OpenAIStub(responder=on_answer(OpenAIReply(text=text, chunks=chunks))) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.answer.startswith("Revenue in 2023 was $5.2 million [1].")
    assert "think" not in "".join(tokens) and "think" not in result.answer


@pytest.mark.parametrize("text", [
    "<think>\nP1 says 5.2.\n</think>\nRevenue in 2023 was $5.2 million [P1].\n<think>Check: fine.</think>",
    "The user asks about revenue; P1 has it.\n</think>\n\nRevenue in 2023 was $5.2 million [P1].",  # opened by the template
    "Revenue in 2023 was $5.2 million [P1].\n<think>Should I add the 2022 figure? The passage",  # cut while thinking again
])
def test_thinking_anywhere_in_a_reply_is_neither_streamed_nor_kept(corpus, text):
    with OpenAIStub(responder=on_answer(OpenAIReply(text=text, chunks=7))) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.answer.startswith("Revenue in 2023 was $5.2 million [1].")
    assert "think" not in result.answer and "Check: fine" not in result.answer and "2022 figure" not in result.answer
    if not text.startswith("The user"):  # a closing tag with no opening is known only when it comes
        assert "think" not in "".join(tokens) and "Check: fine" not in "".join(tokens)
    assert not any("claim" in w and "think" in w for w in result.warnings)


def test_a_reply_that_is_only_thinking_is_asked_again_once(corpus):
    never_closed = OpenAIReply(text="<think>\nThe question asks for revenue. Passage P1 says", chunks=4)
    with OpenAIStub(responder=on_answer(never_closed, OpenAIReply(text="Revenue in 2023 was $5.2 million [P1]."))) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == MODEL_MODE and result.answer.startswith("Revenue in 2023 was $5.2 million [1].")
    assert len(answers(stub)) == 2


@pytest.mark.parametrize("reply, requests", [
    (OpenAIReply(text="<think>\nLet me look at P1. It says", chunks=4), 2),
    # cut at the output limit while thinking: each attempt is continued once, then asked again once
    (OpenAIReply(text="<think>\nLet me look at P1 and then P2 and", chunks=4, finish="length"), 4),
])
def test_a_second_reply_without_an_answer_is_answered_offline_with_the_cause(corpus, reply, requests):
    with OpenAIStub(responder=on_answer(*[reply] * 6)) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and result.answer.strip()  # never blank
    assert any("only its reasoning (a <think> block never closed)" in w and "offline" in w
               for w in result.warnings), result.warnings
    assert len(answers(stub)) == requests


def test_a_refusal_claims_nothing(corpus):
    refusal = OpenAIReply(text="[[NOT FOUND]] I could not find this in the documents.", chunks=5)
    with OpenAIStub(responder=on_answer(refusal)) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask("Who founded Acme?", on_token=tokens.append)
    assert result.mode == MODEL_MODE and result.claims == () and "[[" not in "".join(tokens)
    assert result.usage.llm_calls == 3 and sum(bool(r.tools) for r in stub.requests) == 1  # plan, explore, answer


def test_a_server_that_sends_no_usage_still_counts_calls(corpus):
    def responder(request):
        reply = local_responder(request)
        return OpenAIReply(text=reply.text, chunks=reply.chunks, usage=False)

    with OpenAIStub(responder=responder) as stub:
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == MODEL_MODE and result.usage.llm_calls == 3 and result.usage.output_tokens == 0


def test_an_answer_cut_at_length_is_continued_once_and_streams_whole(corpus):
    def rest(request):
        assert CONTINUE_NOTE in request.prompt and request.roles[-2:] == ["assistant", "user"]
        return OpenAIReply(text=" costs were flat.", chunks=2)

    cut = OpenAIReply(text="Revenue in 2023 was $5.2 million [P1], while", finish="length", chunks=3)
    with OpenAIStub(responder=on_answer(cut, rest)) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus).ask(QUESTION, on_token=tokens.append)
    assert result.mode == MODEL_MODE and result.warnings == ()
    assert "while costs were flat." in result.answer and "".join(tokens).endswith(", while costs were flat.")
    assert len(answers(stub)) == 2 and result.usage.llm_calls == len(stub.requests) == 4


def test_an_answer_cut_at_length_without_a_call_left_is_marked_truncated(stub, corpus):
    stub.responder = on_answer(OpenAIReply(text="Revenue in 2023 was $5.2 million [P1] and the", finish="length"))
    brain = make_local_brain(stub.base_url, MODEL, max_retries=0, sleep=Sleeps())
    blocks = tuple(ContextBlock(n, hit) for n, hit in enumerate(corpus.retrieve(QUESTION, k=2), start=1))
    reply = brain.answer(Analysis(standalone=QUESTION), [QUESTION], blocks, deadline=_in(10))
    assert reply.value.truncated and reply.value.text == "Revenue in 2023 was $5.2 million [P1] and the"
    assert reply.calls == 1 == len(stub.requests)


def test_a_plan_cut_at_length_says_so_and_goes_offline(stub, corpus):
    stub.push(OpenAIReply(text='{"standalone_question": "What', finish="length"))
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    assert "output limit (768 tokens) in the middle of its structured reply" in result.warnings[0]
    assert len(stub.requests) == 1


@pytest.mark.parametrize("step", ["plan", "answer"])  # a parsed JSON call, and a streamed one
def test_a_content_filter_stop_is_not_retried_and_says_why(corpus, step):
    filtered = OpenAIReply(text="", finish="content_filter")
    with OpenAIStub(responder=on_answer(filtered, filtered)) as stub:
        if step == "plan":
            stub.push(filtered, filtered)
        result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
    assert result.warnings[0].startswith(f"The local model '{MODEL}' at 127.0.0.1:")
    assert "declined to answer (content filter)" in result.warnings[0]
    assert len(stub.requests) == (1 if step == "plan" else 2)


def test_a_slow_stream_within_the_read_timeout_is_not_a_timeout(corpus):
    slow = OpenAIReply(text="Revenue in 2023 was $5.2 million [P1]. Costs were flat [P1].", chunks=4,
                       chunk_delay=0.4)
    with OpenAIStub(responder=on_answer(slow)) as stub:
        tokens = []
        result = agent_for(stub.base_url, corpus, timeout=1.0).ask(QUESTION, on_token=tokens.append)
    assert result.mode == MODEL_MODE and len(tokens) == 4 and len(answers(stub)) == 1


FAILURES = {
    "429": (OpenAIReply(status=429), "busy (HTTP 429", 4),
    "500": (OpenAIReply(status=500), "HTTP 500", 4),
    "503": (OpenAIReply(status=503, message="loading model"), "loading the model or overloaded (HTTP 503", 4),
    "504": (OpenAIReply(status=504), "HTTP 504", 4),
    "malformed JSON": (OpenAIReply(raw=b'{"choices": [{"message": '), "malformed JSON", 4),
    "empty reply": (OpenAIReply(text=""), "empty response", 4),
    "400": (OpenAIReply(status=400, message="invalid message role"), "HTTP 400", 1),
    "401": (OpenAIReply(status=401, message="invalid api key"), "DOCAGENT_LOCAL_API_KEY", 1),
}


@pytest.mark.parametrize("kind", list(FAILURES))
def test_each_failure_ends_offline_with_a_warning_and_bounded_waits(stub, corpus, kind):
    reply, reason, requests = FAILURES[kind]
    stub.push(*[reply] * 4)  # enough for the first try and its three retries
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert "$5.2 million" in result.answer and NOT_FOUND not in result.answer
    assert len(result.warnings) == 1 and reason in result.warnings[0] and "\n" not in result.warnings[0]
    if kind == "malformed JSON":  # the server answers, only not in the shape asked: rules plan, the model answers
        assert result.mode == MODEL_MODE and "rules" in result.warnings[0]
        assert len(stub.requests) == requests + 2
    else:
        assert result.mode == "offline" and result.answer.startswith(OFFLINE_LABEL)
        assert OFFLINE_LABEL in result.warnings[0] and len(stub.requests) == requests
    assert len(sleeps) == requests - 1 and sum(sleeps) <= MAX_BACKOFF_SECONDS * 3
    if kind.isdigit():
        assert all(2 ** i / 2 * BACKOFF_BASE_SECONDS <= s <= 2 ** i * BACKOFF_BASE_SECONDS
                   for i, s in enumerate(sleeps))
    else:
        assert sleeps == [0.0] * (requests - 1)
    assert KEY not in json.dumps(result.to_dict())


def test_a_model_not_pulled_is_not_retried_and_names_ollama_pull(stub, corpus):
    result = agent_for(stub.base_url, corpus, model="mistral-nemo").ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    warning = result.warnings[0]
    assert warning.startswith("The local model 'mistral-nemo' at 127.0.0.1:") and "HTTP 404" in warning
    assert "`ollama pull mistral-nemo`" in warning and "DOCAGENT_LOCAL_MODEL" in warning
    assert len(stub.requests) == 1


def test_a_wrong_address_says_the_url_should_end_in_v1(stub, corpus):
    result = agent_for(stub.base_url.removesuffix("/v1"), corpus).ask(QUESTION)
    assert result.mode == "offline" and "should end in /v1" in result.warnings[0] and len(stub.requests) == 0


def test_a_prompt_longer_than_the_context_names_the_fix(stub, corpus):
    stub.push(OpenAIReply(status=400, error_type="exceed_context_size_error",
                          message="the request exceeds the available context size, try increasing it"))
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    assert "exceed its context window (HTTP 400" in result.warnings[0] and "Sources per question" in result.warnings[0]
    assert len(stub.requests) == 1


def test_a_server_that_is_down_is_retried_at_once_then_goes_offline(corpus):
    sleeps = Sleeps()
    base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    result = agent_for(base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "offline" and "$5.2 million" in result.answer
    assert "could not be reached" in result.warnings[0] and "`ollama serve`" in result.warnings[0]
    assert sleeps == [0.0] * 3 and result.usage.llm_calls == 4


def test_a_stall_is_a_timeout_retried_at_once_within_the_window(stub, corpus):
    stub.push(OpenAIReply(sleep=2.5), OpenAIReply(sleep=2.5))
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, timeout=1.0, max_retries=1, sleeps=sleeps).ask(QUESTION)
    assert result.mode == "offline" and "did not answer within 1 s" in result.warnings[0]
    assert len(stub.requests) == 2 and sleeps == [0.0]


def test_the_wait_the_server_asks_for_is_honoured(stub, corpus):
    stub.push(OpenAIReply(status=429, headers=(("Retry-After", "3"),)))
    sleeps = Sleeps()
    result = agent_for(stub.base_url, corpus, sleeps=sleeps).ask(QUESTION)
    assert result.mode == MODEL_MODE and sleeps == [3.0]


def test_streaming_failure_mid_question_finishes_offline(stub, corpus):
    stub.push(OpenAIReply(text=json.dumps({"standalone_question": QUESTION, "sub_questions": [QUESTION]})),
              *[OpenAIReply(status=503)] * 4)
    events = []
    result = agent_for(stub.base_url, corpus).ask(QUESTION, on_event=lambda s, e: events.append((s, e["status"])))
    assert result.mode == "offline" and "HTTP 503" in result.warnings[0]
    assert ("synthesize", "fallback") in events and result.usage.llm_calls == len(stub.requests)


def test_retries_count_against_the_question_call_budget(stub, corpus):
    stub.push(*[OpenAIReply(status=503)] * 6)
    result = agent_for(stub.base_url, corpus, budgets=Budgets(llm_calls=2)).ask(QUESTION)
    assert result.mode == "offline" and len(stub.requests) == 2 and result.usage.llm_calls == 2


def test_errors_never_show_the_key(stub, corpus):
    stub.push(OpenAIReply(status=401, message=f"Incorrect API key provided: {KEY}."))
    result = agent_for(stub.base_url, corpus).ask(QUESTION)
    assert result.mode == "offline" and "HTTP 401" in result.warnings[0] and "***" in result.warnings[0]
    assert KEY not in json.dumps(result.to_dict()) and KEY not in repr(result) and KEY not in repr(
        make_local_brain(stub.base_url, MODEL, api_key=KEY))


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on return: nothing listens there


def _in(seconds: float) -> float:
    import time

    return time.monotonic() + seconds


def test_as_shipped_a_simple_question_reaches_the_answer_call_first(stub, corpus):
    result = agent_for(stub.base_url, corpus, budgets=LOCAL_BUDGETS).ask(QUESTION)
    answer, verify = stub.requests  # no plan call
    assert ANSWERING in answer.system and "[P1] acme_report.pdf, p. 3\nRevenue in 2023 was $5.2 million." in answer.prompt
    assert result.mode == MODEL_MODE and result.trace[0]["mode"] == "rules" and result.trace[0]["llm_calls"] == 0


def test_a_capped_answer_prompt_cuts_passages_to_what_bears_on_the_question(stub, fake_embedder):
    """Budgets.answer_prompt_tokens: an answer prompt of at most that many tokens whose passages are cut to the
    sentences that bear on the question, the figure's kept."""
    budgets = replace(LOCAL_BUDGETS, answer_prompt_tokens=900)
    filler = " ".join(f"The board reviewed item {i} of the supplier schedule and the training plan." for i in range(40))
    said = {1: "Acme revenue in 2023 was $5.2 million."}  # the others: another year's plan, found by its "2023"
    chunks = [make_chunk(f"d{i}", f"report_{i}.pdf", f"{filler} {said.get(i, 'The 2023 plan was approved.')} {filler}",
                         page=i) for i in range(1, 7)]
    tokens = []
    stub.push(OpenAIReply(text="Acme's revenue in 2023 was $5.2 million [P1]."))  # the first call is the answer
    result = agent_for(stub.base_url, FakeRetriever(chunks, fake_embedder), budgets=budgets).ask(
        QUESTION, on_token=tokens.append)
    answer, verify = stub.requests  # no plan call
    assert ANSWERING in answer.system and answer.stream and tokens
    assert estimate_tokens(answer.system + answer.prompt) <= budgets.answer_prompt_tokens
    assert "Acme revenue in 2023 was $5.2 million." in answer.prompt and answer.prompt.count("[P") >= 4
    assert result.mode == MODEL_MODE and result.answer == "Acme's revenue in 2023 was $5.2 million [1]."
    assert result.trace[0]["mode"] == "rules" and result.claims[0].verdict == "supported"
