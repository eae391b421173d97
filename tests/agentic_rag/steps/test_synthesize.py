"""Step 4, synthesize: the context budget, the answer's language, and the page region a model reads."""

from __future__ import annotations

import json

from advanced_retrieval import Hit
from agentic_rag import Budgets
from tests.helpers.agent import FakeRetriever, gemini_agent, make_chunk, plan_json, verify_json
from tests.helpers.page_region import HEADER, ROWS


def test_context_is_trimmed_to_the_token_budget_and_says_so(fake_embedder):
    long = [make_chunk(f"d{i}", f"report{i}.txt", f"Revenue section {i}. " + "Revenue grew again. " * 150,
                       lines=(1, 40)) for i in range(6)]
    q = "How did revenue develop?"
    agent, chat = gemini_agent(FakeRetriever(long, fake_embedder),
                               [plan_json(q), "Revenue grew again [P1].", verify_json([("supported", 1)])],
                               budgets=Budgets(context_tokens=1500))
    result = agent.ask(q)
    answer_prompt = chat.prompts[1]
    assert len(answer_prompt) / 4 <= 1500
    assert any("Context budget (1500 tokens) reached" in w for w in result.warnings)
    assert result.trace[3]["input_tokens"] <= 1500


def test_answer_language_follows_the_question(retriever):
    q = "Wie hoch war der Umsatz von Acme im Jahr 2023?"
    plan = json.loads(plan_json(q))
    plan["language"] = "de"
    agent, chat = gemini_agent(retriever, [json.dumps(plan), "Der Umsatz betrug 2023 $5.2 million [P1].",
                                           verify_json([("supported", 1)])])
    result = agent.ask(q)
    assert result.analysis.language == "de" and "Answer in German" in chat.prompts[1]


class PageRetriever:
    """One hit: the rows of a statement, its header chunk riding along as a page chunk."""

    def __init__(self):
        self.calls = []

    def retrieve(self, query, k=8, strategy="auto", filters=None):
        self.calls.append(query)
        return [Hit(ROWS, 0.9, 1, vector_score=0.8, bm25_score=3.0, page_chunks=(HEADER,))]

    def documents(self):
        return []


def test_a_model_reads_the_page_region_the_offline_brain_the_found_chunk():
    from agentic_rag import OfflineBrain, build_agent
    from tests.helpers.agent import gemini_agent, plan_json, verify_json

    question = "What was net cash provided by operating activities in 2023?"
    agent, chat = gemini_agent(PageRetriever(), [plan_json(question), "It was 812 [P1].",
                                                 verify_json([("supported", 1)])])
    agent.ask(question)
    assert HEADER.text in chat.prompts[1] and ROWS.text in chat.prompts[1]  # the header reached the model
    offline = build_agent(OfflineBrain(), PageRetriever()).ask(question)
    assert HEADER.text not in offline.answer
