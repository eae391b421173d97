"""Step 5, verify: its rounds (back to retrieval for what is missing, a revision of what did not check out, within the
call budget), and verification turned off."""

from __future__ import annotations

from agentic_rag import NOT_FOUND, Budgets, OfflineBrain, build_agent
from tests.helpers.agent import (
    STEPS,
    TABLE_ANSWER,
    FakeRetriever,
    Q,
    _hit,
    _is_refusal_estimate,
    gemini_agent,
    make_chunk,
    plan_json,
    verify_json,
)


def test_without_verification_confidence_comes_from_retrieval_and_says_so(offline_agent):
    result = offline_agent.ask("What was Acme's revenue in 2023?", verify=False)
    assert result.claims == () and 0 < result.confidence <= 1
    assert result.confidence_basis == "retrieval scores (not verified)"
    assert any("estimated from retrieval scores" in w for w in result.warnings)
    assert result.trace[-1]["summary"].startswith("skipped")


def test_incomplete_answers_loop_back_to_retrieval_at_most_twice(chunks, fake_embedder):
    retriever = FakeRetriever(chunks, fake_embedder)
    agent = build_agent(OfflineBrain(), retriever)
    result = agent.ask("What was Acme's revenue in 2023? Who is the mayor of Atlantis?")
    steps = [t["step"] for t in result.trace]
    assert steps[:5] == STEPS and steps.count("retrieve") == 2  # the second round found nothing new
    assert retriever.calls[-1][0] == "Who is the mayor of Atlantis?" and retriever.calls[-1][1] == 16
    assert "$5.2 million" in result.answer and NOT_FOUND in result.answer
    assert result.confidence_features["support"] == 0.5  # one supported claim, one part missing
    assert result.confidence < 0.5
    assert steps.count("verify") <= 3


def test_verifier_feedback_sends_the_agent_back_to_retrieval_within_the_call_budget(retriever):
    q = "What was Acme's revenue in 2023 and how many people work there?"
    script = [plan_json(q, subs=["Acme revenue 2023"], complexity="complex"),
              "Acme's revenue in 2023 was $5.2 million [P1].",
              verify_json([("supported", 1)], missing=["number of Acme employees"]),
              "Acme's revenue in 2023 was $5.2 million [P1]. Acme employs 140 people [P1].",
              verify_json([("supported", 1), ("supported", 1)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask(q)
    assert [t["step"] for t in result.trace] == STEPS + ["retrieve", "synthesize", "verify"]
    assert result.trace[5]["details"]["received"]["queries"] == ["number of Acme employees"]
    # The search for what was missing found no passage the answer had not seen: no second answer call.
    assert result.usage.llm_calls == 3 and result.mode == "gemini"
    assert "*Not found in the documents:* number of Acme employees." in result.answer


def test_call_budget_ends_the_loop_and_says_so(retriever):
    q = "What was Acme's revenue in 2023?"
    missing = verify_json([("partial", 1)], missing=["the profit"])
    script = [plan_json(q), "Acme earned $5.2 million in 2023 [P1].", missing,
              "Acme earned $5.2 million in 2023 [P1]. The profit is not given [P2].", missing]
    agent, chat = gemini_agent(retriever, script, budgets=Budgets(llm_calls=4))
    result = agent.ask(q)
    # Another round is an answer and its check: with one call left it is not started, so the answer Gemini
    # wrote is the one Gemini checked (never an answer checked offline because the budget ran out).
    assert result.usage.llm_calls == 3 == len(chat.prompts)
    assert result.trace[-1]["step"] == "verify" and result.trace[-1]["mode"] == "gemini"
    assert "searching again" not in result.trace[-1]["summary"]
    assert result.mode == "gemini" and result.answer.startswith("Acme earned")
    assert "*Not found in the documents:* the profit." in result.answer  # the partial answer says what is missing


def test_a_gemini_refusal_is_not_retried_without_new_passages(retriever):
    q = "Who is the mayor of Atlantis?"
    agent, chat = gemini_agent(retriever, [plan_json(q), f"{NOT_FOUND} The passages cover Acme's finances."])
    result = agent.ask(q)
    assert NOT_FOUND in result.answer and _is_refusal_estimate(result)
    assert len(chat.prompts) == 2 and result.usage.llm_calls == 2  # no verify call: nothing was claimed
    assert [t["step"] for t in result.trace].count("synthesize") == 1  # a refusal misses nothing to search for


def test_unverified_refusal_has_zero_confidence(offline_agent):
    result = offline_agent.ask("What is the boiling point of mercury on Mars?", verify=False)
    assert NOT_FOUND in result.answer and result.confidence == 0.0


def test_a_retry_round_looks_deeper_and_fills_the_missing_part(chunks, fake_embedder):
    noise = [make_chunk(f"n{i}", f"noise{i}.txt", f"When does it start? When does it end? Does it? When? ({i})",
                        lines=(1, 1)) for i in range(10)]
    retriever = FakeRetriever(chunks + noise, fake_embedder)
    agent = build_agent(OfflineBrain(), retriever)
    result = agent.ask("What was Acme's revenue in 2023? When does the steering committee meet?")
    rounds = [t for t in result.trace if t["step"] == "retrieve"]
    assert len(rounds) == 2 and rounds[1]["details"]["received"]["queries"] == [
        "When does the steering committee meet?"] and rounds[1]["details"]["received"]["k"] == 16
    assert NOT_FOUND not in result.answer
    assert "every Monday at 9:00" in result.answer.split("**When does the steering committee meet**")[1]
    # every part answered and checked (the level of the confidence also weighs the cosine of a hashing embedder
    # here, whose scale is not the app's model's)
    assert result.confidence_features["support"] == 1.0 and result.confidence_features["answered"] == 1.0


def test_an_unsupported_claim_goes_back_to_be_corrected_or_removed_and_the_fix_is_checked(filing):
    script = [plan_json(Q),
              "Adjusted EBITDA was 2,117 in 2023 [P1] and 2,311 in 2022 [P1].",
              verify_json([("unsupported", 1)]),
              "Adjusted EBITDA was 2,117 in 2023 and 2,018 in 2022 [P1].",
              verify_json([("supported", 1)])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    revise = chat.prompts[3]
    assert "correct it from the passages or remove it" in revise and "missed" not in revise
    assert "2,311" in revise
    assert len(chat.prompts) == 5 and result.usage.llm_calls == 5  # the revision was checked by the same model
    assert result.answer == "Adjusted EBITDA was 2,117 in 2023 and 2,018 in 2022 [1]."
    assert result.confidence > 0.5 and result.trace[-1]["mode"] == "gemini"


def test_missing_without_new_passages_asks_nothing_again(filing):
    script = [plan_json(Q), "Adjusted EBITDA was 2,117 in 2023 and 2,018 in 2022 [P1].",
              verify_json([("supported", 1)], missing=["the 2021 figure"])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert len(chat.prompts) == 3  # the search found nothing new: no second identical answer call
    assert "*Not found in the documents:* the 2021 figure." in result.answer
    assert result.trace[-1]["summary"].startswith("nothing new")


def test_a_revision_that_checks_out_worse_is_dropped(filing):
    script = [plan_json(Q),
              "Adjusted EBITDA was 2,117 in 2023 [P1]. Net sales were 10,500 in 2023 [P1]. It grew fast [P1].",
              verify_json([("supported", 1), ("supported", 1), ("unsupported", 1)]),
              "Adjusted EBITDA was 2,117 [P1]. It was the best year ever [P1].",
              verify_json([("supported", 1), ("unsupported", 1)])]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert len(chat.prompts) == 5
    assert result.answer.startswith("Adjusted EBITDA was 2,117 in 2023 [1]. Net sales were 10,500")
    assert "kept the checked answer" in result.trace[-1]["summary"]


def test_a_failing_revision_keeps_the_checked_gemini_answer(filing):
    script = [plan_json(Q), "Adjusted EBITDA was 2,117 in 2023 [P1]. Adjusted EBITDA doubled in 2023 [P1].",
              verify_json([("supported", 1), ("unsupported", 1)]),
              ConnectionError("connection refused"), ConnectionError("connection refused")]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert result.mode == "gemini" and result.answer.startswith("Adjusted EBITDA was 2,117 in 2023 [1].")
    assert "⚠" in result.answer and result.claims[0].verdict == "supported"
    assert not any(t["mode"] == "offline (extractive)" for t in result.trace)


class _PerQuery(FakeRetriever):
    """Finds the headcount passage only when asked for it, so a second round has something new."""

    def retrieve(self, query, k=8, strategy="auto", filters=None):
        wanted = [c for c in self.chunks if ("employ" in query.lower()) == ("employ" in c.text)]
        return [_hit(c, i + 1) for i, c in enumerate(wanted[:k])]


def test_something_missing_with_new_passages_gets_a_second_answer_checked_by_the_same_model(fake_embedder):
    retriever = _PerQuery([make_chunk("a", "acme.pdf", "Revenue in 2023 was $5.2 million.", page=1),
                           make_chunk("a", "acme.pdf", "Acme employs 140 people.", 1, page=7)], fake_embedder)
    q = "What was Acme's revenue in 2023 and how many people work there?"
    script = [plan_json(q, subs=["Acme revenue 2023"]), "Acme's revenue in 2023 was $5.2 million [P1].",
              verify_json([("supported", 1)], missing=["number of Acme employees"]),
              "Acme's revenue in 2023 was $5.2 million [P1]. Acme employs 140 people [P2].",
              verify_json([("supported", 1), ("supported", 2)])]
    agent, chat = gemini_agent(retriever, script)
    result = agent.ask(q)
    assert len(chat.prompts) == 5 and "Not covered: number of Acme employees" in chat.prompts[3]
    assert "[P2] acme.pdf, p. 7" in chat.prompts[3] and "[P1] acme.pdf, p. 1" in chat.prompts[3]
    assert result.answer == "Acme's revenue in 2023 was $5.2 million [1]. Acme employs 140 people [2]."
    assert [c.location.page for c in result.citations] == [1, 7] and result.trace[-1]["mode"] == "gemini"


def test_a_refuted_figure_caps_confidence_and_the_same_answer_again_ends_the_loop(filing):
    script = [plan_json(Q), TABLE_ANSWER, verify_json([("supported", 1)] * 3), TABLE_ANSWER]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(Q)
    assert len(chat.prompts) == 4  # the rewrite came back unchanged: nothing new to check, no further round
    assert "the same answer again" in [t for t in result.trace if t["step"] == "synthesize"][-1]["summary"]
    assert any(c.refuted for c in result.claims) and result.confidence <= 0.5
    assert result.to_dict()["claims"][1]["refuted"] is True


def test_offline_quotes_it_is_unsure_of_are_labelled_as_closest_passages():
    from agentic_rag.confidence import Evidence
    from agentic_rag.steps.verify import _unsure

    quoted = 'offline (extractive) — quoted from the documents, not generated.\n\n"Travel costs rose." [P1]'
    unsure = _unsure(quoted, {"answer_mode": "offline"}, Evidence(support=0.5), 0.41)
    assert unsure.splitlines()[2] == "*Unsure (41%): these are the closest passages found, not a confirmed answer.*"
    assert unsure.endswith('"Travel costs rose." [P1]')
    assert _unsure(quoted, {"answer_mode": "offline"}, Evidence(support=1.0), 0.72) == quoted  # sure enough
    assert _unsure(quoted, {"answer_mode": "gemini"}, Evidence(), 0.3) == quoted  # a model's answer is flagged
    assert _unsure(quoted, {"answer_mode": "offline"}, Evidence(refused=True), 0.3) == quoted  # a refusal


def test_a_rewrite_that_claims_nothing_never_replaces_an_answer(filing):
    q = "How many layers does the residual network have?"
    script = [plan_json(q), "The residual network has 152 layers [P1]. It was the deepest on ImageNet [P9].",
              verify_json([("supported", 1), ("supported", 1)]), "{}"]
    agent, chat = gemini_agent(filing, script)
    result = agent.ask(q)
    assert len(chat.prompts) == 4 and result.answer.startswith("The residual network has 152 layers [1].")
    assert "the rewrite claims nothing" in result.trace[-1]["summary"]
