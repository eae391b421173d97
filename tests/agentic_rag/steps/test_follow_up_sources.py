"""A follow-up comparison keeps the passages the answer it follows cited ("Compare it with BERT"), through the real
Gemini client against the stub; the UI's history carries them (ui.chat_history)."""

from __future__ import annotations

import json

from agentic_rag import build_agent, make_gemini_brain
from testing.gemini_stub import GeminiStub, StubReply, docagent_responder
from tests.helpers.agent import FakeRetriever, make_chunk

ADAM = "Adam keeps running averages of the gradient and its square; its decay rates are beta1 = 0.9 and beta2 = 0.999."
BERT = ["BERT fine-tuning runs for 3 epochs over the task data with a batch size of 32.",
        "BERT pre-training uses a linear warmup over 10,000 steps followed by linear decay of the learning rate.",
        "BERT is evaluated on GLUE, SQuAD v1.1, SQuAD v2.0 and SWAG."]
FOLLOW_UP = "Compare it with BERT"
STANDALONE = "How does BERT's training recipe compare with that?"


def _responder(request):
    if "You plan how to answer" in request.system and FOLLOW_UP in request.prompt:
        return StubReply(text=json.dumps({
            "intent": "compare", "complexity": "simple", "question_type": "comparison", "key_concepts": ["BERT"],
            "language": "en", "standalone_question": STANDALONE, "sub_questions": [STANDALONE]}))
    return docagent_responder(request)


def _ask_twice(fake_embedder, *, with_sources: bool):
    corpus = FakeRetriever([make_chunk("adam", "adam.pdf", ADAM, page=2),
                            *(make_chunk("bert", "bert.pdf", t, page=i + 5) for i, t in enumerate(BERT))],
                           fake_embedder)
    with GeminiStub(responder=_responder) as stub:
        agent = build_agent(make_gemini_brain("k", model="gemini-3-flash", base_url=stub.base_url, timeout=5.0),
                            corpus)
        first = agent.ask("What decay rates does Adam use?")
        exchange = ("What decay rates does Adam use?", first.answer, *((first.citations,) if with_sources else ()))
        second = agent.ask(FOLLOW_UP, history=[exchange])
        answer_prompts = [r.prompt for r in stub.requests if "You answer questions using ONLY" in r.system]
    return first, second, answer_prompts[-1]


def test_a_follow_up_comparison_keeps_the_passages_the_previous_answer_cited(fake_embedder):
    first, second, prompt = _ask_twice(fake_embedder, with_sources=True)
    assert [c.file for c in first.citations] == ["adam.pdf"]
    assert "beta1 = 0.9" in prompt and "warmup over 10,000 steps" in prompt  # both sides reach the model
    retrieve = [t for t in second.trace if t["step"] == "retrieve"][0]
    assert "the previous answer's sources" in json.dumps(retrieve["details"])


def test_without_the_previous_sources_the_comparison_has_only_the_new_side(fake_embedder):
    _, _, prompt = _ask_twice(fake_embedder, with_sources=False)
    assert "beta1 = 0.9" not in prompt  # what the test above guards: the fresh search alone misses Adam
