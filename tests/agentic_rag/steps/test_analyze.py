"""Step 1, analyze: a follow-up resolved from the history; a plan malformed twice falls back to the rules."""

from __future__ import annotations

from tests.helpers.agent import gemini_agent, verify_json


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
