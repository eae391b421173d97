"""Step 1, analyze: a follow-up resolved from the history; a plan malformed twice falls back to the rules."""

from __future__ import annotations

import pytest

from agentic_rag import Budgets
from tests.helpers.agent import gemini_agent, plan_json, verify_json


def test_follow_up_is_resolved_from_history(offline_agent):
    first = offline_agent.ask("Which are the three pilot sites?")
    second = offline_agent.ask("and the second one?", history=[("Which are the three pilot sites?", first.answer)])
    assert second.analysis.follow_up and second.analysis.standalone == "What about Bilbao?"
    assert '"Bilbao hosts the wind-turbine test bench." [1]' in second.answer


def test_a_plan_malformed_twice_falls_back_to_the_rules_and_the_model_still_answers(retriever):
    history = [(f"question {i}?", f"answer {i}") for i in range(5)]
    script = ["not json", 'Sure! {"intent": "x", "sub_questions": [} and more prose }',
              "Acme earned $5.2 million in 2023 [P1].", verify_json([("supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask("What was Acme's revenue in 2023?", history=history)
    assert any("malformed JSON" in w and "rules" in w for w in result.warnings)
    assert result.mode == "gemini" and result.answer == "Acme earned $5.2 million in 2023 [1]."
    assert result.trace[0]["mode"] == "rules" and result.analysis.source == "rules"
    assert "question 1?" not in chat.prompts[0] and all(f"question {i}?" in chat.prompts[0] for i in (2, 3, 4))


ONLY_WHEN_NEEDED = Budgets(plan_call="when-needed")


def test_a_simple_standalone_question_is_planned_by_the_rules_when_the_budgets_say_so(retriever):
    script = ["Acme earned $5.2 million in 2023 [P1].", verify_json([("supported", 1)])]
    agent, chat = gemini_agent(retriever, script, budgets=ONLY_WHEN_NEEDED)
    result = agent.ask("What was Acme's revenue in 2023?")
    assert len(chat.prompts) == 2 and "You answer questions" in chat.prompts[0]  # the answer is the first call
    analyze = result.trace[0]
    assert analyze["mode"] == "rules" and analyze["llm_calls"] == 0 and "without a model call" in analyze["summary"]
    assert result.mode == "gemini" and result.answer == "Acme earned $5.2 million in 2023 [1]."
    assert result.analysis.source == "rules" and result.warnings == ()


@pytest.mark.parametrize(("question", "history"), [
    ("Compare the revenue of Acme and Globex in 2023", ()),  # two sides: the model decomposes
    ("and the second one?", (("Which are the three pilot sites?", "Aarhus, Bilbao and Cork [1]."),)),
    ("Summarise the Acme annual report", ()),  # a whole document
    ("¿Cuáles fueron los ingresos de Acme en 2023?", ()),  # the rules read English questions only
])
def test_questions_the_rules_do_not_serve_still_get_the_models_plan(retriever, question, history):
    script = [plan_json(question), "Acme earned $5.2 million in 2023 [P1].", verify_json([("supported", 1)])]
    agent, chat = gemini_agent(retriever, script, budgets=ONLY_WHEN_NEEDED)
    result = agent.ask(question, history=list(history))
    assert "You plan how to answer" in chat.prompts[0] and result.trace[0]["llm_calls"] == 1


def test_every_question_gets_the_models_plan_by_default(retriever):
    script = [plan_json("What was Acme's revenue in 2023?"), "Acme earned $5.2 million in 2023 [P1].",
              verify_json([("supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    agent.ask("What was Acme's revenue in 2023?")
    assert "You plan how to answer" in chat.prompts[0]
