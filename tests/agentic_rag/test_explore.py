"""The explore route through the real clients: ChatGoogleGenerativeAI against the Gemini stub and ChatOpenAI
against the local-server stub, replaying the tool-call sequences models write (parallel calls, a document that
does not exist, malformed arguments, the same call twice, a loop until the budget is spent)."""

from __future__ import annotations

from agentic_rag import Budgets, build_agent, make_gemini_brain, make_local_brain
from testing.gemini_stub import GeminiStub, StubReply, docagent_responder
from testing.openai_stub import OpenAIReply, OpenAIStub, local_responder
from tests.helpers.agent import SECRET, FakeRetriever, make_chunk
from tests.helpers.local_model import MODEL

QUESTION = "List every site tested in the study"


def _study() -> list:
    texts = ["A Study of Wind Turbines\nAbstract\nWe measure how turbines age in salty air.",
             "1. Methods\nThe turbines were measured every month with the same sensors.",
             "2. Results\nThe sites tested were Aarhus and Cork in the first year.",
             "3. Limitations\nOnly two sites were tested at first; Bilbao joined in the second year.",
             "4. Outlook\nMore sites will follow in later studies."]
    return [make_chunk("s", "study.pdf", t, ordinal=i, page=i + 1) for i, t in enumerate(texts)]


def _gemini_agent(stub, retriever, budgets=None):
    brain = make_gemini_brain(SECRET, model="gemini-3.8-flash", base_url=stub.base_url, timeout=5.0, max_retries=0)
    return build_agent(brain, retriever, budgets=budgets or Budgets())


def _script(rounds):
    """A responder: the explore rounds in turn (by how many model turns the request already holds), the
    docagent replies for the plan, answer and check."""
    def responder(request):
        if request.tools:
            return rounds[min(request.turns, len(rounds) - 1)]
        return docagent_responder(request)
    return responder


def _explored(result) -> dict:
    return next(t for t in result.trace if t["step"] == "retrieve")["details"]["explore"]


def test_the_model_searches_and_reads_in_parallel_and_the_answer_reads_what_it_found(fake_embedder):
    rounds = [StubReply(calls=(("search", {"query": "sites tested", "document": "study.pdf"}),
                               ("outline", {"document": "study"}))),
              StubReply(calls=(("read", {"document": "study.pdf", "section": "Limitations"}),)),
              StubReply(text="The Results and Limitations sections name the sites.")]
    with GeminiStub(responder=_script(rounds)) as stub:
        result = _gemini_agent(stub, FakeRetriever(_study(), fake_embedder)).ask(QUESTION)
    explored = _explored(result)
    assert [len(s["calls"]) for s in explored["steps"]] == [2, 1] and explored["note"] == "the model had read enough"
    assert [s["left"]["rounds"] for s in explored["steps"]] == [3, 2]  # spent as it went: 4 rounds, then 3, 2
    assert explored["steps"][0]["calls"][1]["result"].startswith("study.pdf: sections")
    answering = next(r for r in stub.requests if "You answer questions using ONLY" in r.system)
    assert "Bilbao joined in the second year" in answering.prompt  # what the model read reaches the answer
    retrieve = next(t for t in result.trace if t["step"] == "retrieve")
    assert retrieve["llm_calls"] == 3 and "explored in 3 rounds, 3 tool calls" in retrieve["summary"]


def test_a_document_or_tool_that_does_not_exist_gets_one_correction_then_the_loop_stops(fake_embedder):
    rounds = [StubReply(calls=(("read", {"document": "report_2019.pdf", "section": "Results"}),)),
              StubReply(calls=(("search", {"query": "sites"}),)),
              StubReply(calls=(("browse_web", {"url": "https://example.org"}),)),
              StubReply(calls=(("search", {"query": "never reached"}),))]
    with GeminiStub(responder=_script(rounds)) as stub:
        result = _gemini_agent(stub, FakeRetriever(_study(), fake_embedder)).ask(QUESTION)
    explored = _explored(result)
    first, _, third = (s["calls"][0] for s in explored["steps"])
    assert "no document 'report_2019.pdf'" in first["result"] and "study.pdf" in first["result"]
    assert "Please correct the call" in first["result"]
    second_round = [r for r in stub.requests if r.tools][1]
    assert "Please correct the call" in second_round.prompt  # the model read the correction
    assert third["error"] == "unknown tool" and explored["note"] == "stopped after 2 mistaken calls"
    assert not any("never reached" in r.prompt for r in stub.requests)
    assert result.answer  # the engine answered from what it had


def test_the_same_call_twice_is_pointed_out(fake_embedder):
    search = ("search", {"query": "sites tested"})
    rounds = [StubReply(calls=(search,)), StubReply(calls=(search,)), StubReply(text="Done.")]
    with GeminiStub(responder=_script(rounds)) as stub:
        result = _gemini_agent(stub, FakeRetriever(_study(), fake_embedder)).ask(QUESTION)
    steps = _explored(result)["steps"]
    assert steps[1]["calls"][0]["error"] == "repeated call"


def test_a_model_that_keeps_calling_stops_at_the_round_budget(fake_embedder):
    def responder(request):
        if request.tools:
            return StubReply(calls=(("search", {"query": f"sites, attempt {request.turns}"}),))
        return docagent_responder(request)

    with GeminiStub(responder=responder) as stub:
        result = _gemini_agent(stub, FakeRetriever(_study(), fake_embedder)).ask(QUESTION)
    explored = _explored(result)
    assert explored["note"] == "its round budget (4) was spent" and len(explored["steps"]) == 4
    assert result.usage.llm_calls <= Budgets().llm_calls


def test_malformed_arguments_from_a_local_server_are_corrected_once(fake_embedder):
    def responder(request):
        if request.tools:
            if request.turns == 0:
                return OpenAIReply(calls=(("search", '{"query": "sites tested", '),))  # cut-off JSON
            if request.turns == 1:
                return OpenAIReply(calls=(("search", {"query": "sites tested"}),))
            return OpenAIReply(text="Found them.")
        return local_responder(request)

    with OpenAIStub(responder=responder) as stub:
        brain = make_local_brain(stub.base_url, MODEL, api_key=SECRET, timeout=5.0, max_retries=0)
        result = build_agent(brain, FakeRetriever(_study(), fake_embedder)).ask(QUESTION)
    steps = _explored(result)["steps"]
    assert steps[0]["calls"][0]["error"] == "bad arguments" and steps[1]["calls"][0]["error"] == ""
    assert steps[1]["calls"][0]["passages"] > 0


def test_a_low_cosine_is_not_thin_when_a_passage_holds_every_word_of_the_question():
    from advanced_retrieval import Hit
    from agentic_rag.steps.retrieve import _holds_every_term

    found = [Hit(make_chunk("n", "n.txt", "Northwind revenue in 2023 was 12.4 million euros."), 0.1, 1, vector_score=0.12)]
    assert _holds_every_term("What was Northwind's revenue in 2023?", found)
    assert not _holds_every_term("What was Contoso's revenue in 2023?", found)
    assert not _holds_every_term("What is it?", found)  # no content word: nothing to hold
