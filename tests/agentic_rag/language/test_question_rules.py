"""agentic_rag.language.question_rules: question types, negation, decomposition and follow-ups."""

from __future__ import annotations

import pytest

from agentic_rag.language.question_rules import (
    analyze_question,
    classify,
    decompose,
    negation_target,
    resolve_follow_up,
)


@pytest.mark.parametrize("question, qtype", [
    ("What was Acme's revenue in 2023?", "numeric"),
    ("Which documents don't mention GDPR?", "negation"),
    ("Which files discuss the wind turbine?", "exhaustive"),
    ("Compare the revenue of Acme and Globex", "comparison"),
    ("Summarize the annual report", "summary"),
    ("What is the AverageTaxRates workbook about?", "summary"),  # any kind of document, or its file name
    ("What is 60316.docx about?", "summary"),
    ("What is the deck about?", "summary"),
    ("List the pilot sites", "list"),
    ("Who chairs the steering committee?", "fact"),
])
def test_classify(question, qtype):
    assert classify(question) == qtype


def test_negation_target_and_decomposition():
    assert negation_target("Which documents don't mention the GDPR?") == "GDPR"
    assert negation_target("Which files discuss 'wind turbines'?") == "wind turbines"
    assert negation_target("What is GDPR?") is None
    assert decompose(analyze_question("How does Acme's revenue growth compare to Globex's?")) == (
        "Acme's revenue growth", "Globex's revenue growth")
    assert decompose(analyze_question("Who is the CEO? When was the company founded?")) == (
        "Who is the CEO?", "When was the company founded?")
    assert decompose(analyze_question("What is the budget and who approved it?")) == (
        "What is the budget?", "who approved it (budget)?")  # a part that refers back names what it means
    assert decompose(analyze_question("Which documents don't mention GDPR?")) == ("GDPR",)
    simple = analyze_question("What was Acme's revenue in 2023?")
    assert simple.complexity == "simple" and decompose(simple) == ("What was Acme's revenue in 2023?",)


def test_follow_ups_are_rewritten_from_history():
    sites = [("Which are the three pilot sites?", '"The three pilot sites are Aarhus, Bilbao and Cork." [1]')]
    assert resolve_follow_up("and the second one?", sites) == "What about Bilbao?"
    assert resolve_follow_up("And the last one?", sites) == "What about Cork?"
    numbered = [("List the products", "1. Rocket [1]\n2. Anvil [2]\n3. Magnet [2]")]
    assert resolve_follow_up("and the second one?", numbered) == "What about Anvil?"
    speakers = [("Who is the first speaker at the 2024 summit?", "Dr. Lee [1]")]
    assert resolve_follow_up("and the second one?", speakers) == "Who is the second speaker at the 2024 summit?"
    revenue = [("What was Acme's revenue in 2023?", "$5.2 million [1]")]
    assert resolve_follow_up("what about 2022?", revenue) == "What was Acme's revenue in 2022?"
    assert resolve_follow_up("and Globex?", revenue) == "What was Globex's revenue in 2023?"
    assert resolve_follow_up("What is the capital of Peru?", revenue) is None
    # the subject and the new term are kept: a sibling word swapped, a pronoun resolved, a name replaced
    layers = [("How many layers does the Transformer encoder have?", "N = 6 [1]")]
    assert resolve_follow_up("And the decoder?", layers) == "How many layers does the Transformer decoder have?"
    adam = [("What optimizer does the Adam paper propose?", "Adam [1]")]
    assert resolve_follow_up("Compare it with BERT", adam) == "Compare Adam with BERT"
    assert resolve_follow_up("And BERT?", adam) == "What optimizer does the BERT paper propose?"
    attention = [("What does the encoder-decoder attention do?", "x [1]")]
    assert resolve_follow_up("And the decoder?", attention) == "What does the encoder-decoder attention do — the decoder?"
    assert resolve_follow_up("and the second one?", []) is None
    a = analyze_question("and the second one?", sites)
    assert a.follow_up and a.standalone == "What about Bilbao?" and "Bilbao" in a.key_concepts


def test_decomposition_keeps_each_part_whole():
    def subs(q):
        return decompose(analyze_question(q))

    assert subs("How many layers, what hidden size and how many heads does BERT-LARGE have?") == (
        "How many layers, what hidden size does BERT-LARGE have?", "how many heads does BERT-LARGE have?")
    assert subs("How many layers do the base encoder and BERT-BASE each have?") == (
        "How many layers do the base encoder have?", "How many layers do BERT-BASE have?")
    assert subs("Over how many steps is the rate increased when training A and when pre-training B?") == (
        "Over how many steps is the rate increased when training A?",
        "Over how many steps is the rate increased when pre-training B?")
    assert subs("What is the FY2018 capex for 3M? Give a response by relying on the cash flow statement.") == (
        "What is the FY2018 capex for 3M?",)
    assert subs("Calculate the ratio. Round your answer to two decimals.") == (
        "Calculate the ratio. Round your answer to two decimals.",)


@pytest.mark.parametrize("question, sides", [
    ("By what percentage did Acme's net sales grow from 2020 to 2021?", ("Acme's net sales in 2020",
                                                                          "Acme's net sales in 2021")),
    ("By how much did operating income decline from fiscal 2022 to fiscal 2023?", ("operating income in fiscal 2022",
                                                                                  "operating income in fiscal 2023")),
    ("How did net income change from 2022 to 2023?", ("net income in 2022", "net income in 2023")),
])
def test_a_change_between_two_periods_is_searched_as_the_figure_in_each(question, sides):
    """"By what percentage did X grow from A to B": the figure in A and in B, not "By what percentage did X" in A
    (the question words and the verb left in searched for an effective tax rate's "percent")."""
    assert decompose(analyze_question(question)) == sides
