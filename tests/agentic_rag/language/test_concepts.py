"""agentic_rag.language.concepts: a question's concepts and the ways documents spell them."""

from __future__ import annotations

import pytest

from agentic_rag.language.concepts import coverage, forms_of, near, query_concepts


def _concept(question, word):
    return next(c for c in query_concepts(question) if c.text == word)


@pytest.mark.parametrize("question, word, passage", [
    ("What are the default values of beta1 and beta2?", "beta1", "defaults are α = 0.001, β1 = 0.9, β2 = 0.999"),
    ("How many layers does BERT-LARGE have?", "LARGE", "BERTLARGE (L=24, H=1024, A=16)"),
    ("Which corpora were used to pre-train BERT?", "corpora", "For the pre-training corpus we use books"),
    ("Which corpora were used to pre-train BERT?", "pre", "BERT is pretrained on books"),
    ("What was JnJ's revenue?", "JnJ", "Johnson & Johnson reported sales of $94.9 billion"),
    ("What was the FY2022 revenue?", "FY2022", "Sales in fiscal 2022 rose"),
    ("What was the FY22 revenue?", "FY22", "Sales in 2022 rose"),
    ("What was Q22023 revenue?", "Q22023", "In the second quarter of 2023"),
    ("How many units in the US?", "US", "sold in the U.S. market"),
    ("What were the 10,000 steps for?", "10,000", "for the first 10000 steps"),
    ("What was Best Buy's revenue?", "Best", "BESTBUY 2023 10K"),
    ("Which corpora were used?", "corpora", "we use the BooksCorpus and Wikipedia"),
    ("What was J&J's revenue?", "J", "Johnson & Johnson reported sales"),
    ("What was the revenue in 2023?", "revenue", "Net sales in 2023 were $4.2 billion"),
    ("What was the COGS in 2023?", "COGS", "Cost of goods sold rose in 2023"),
    ("What percentage of tokens are masked?", "percentage", "we mask 15% of all tokens"),
    ("Who supplies the heat pumps?", "supplies", "The heat pump supplier is Nordvarme AS"),
    ("Who produces the turbines?", "produces", "Its producer, Vestas, ships them"),
    ("Who is the supplier of the pumps?", "supplier", "Nordvarme AS supplies the pumps"),
])
def test_a_concept_matches_the_ways_documents_spell_it(question, word, passage):
    assert _concept(question, word).met(forms_of(passage)), (word, sorted(forms_of(passage)))


@pytest.mark.parametrize("question, word, passage", [
    ("What was JnJ's revenue?", "JnJ", "Jones reported sales"),
    ("What was the FY2022 revenue?", "FY2022", "Sales in fiscal 2021 rose"),
    ("What was the COGS in 2023?", "COGS", "Cost of sales rose"[:4] + " of goods"),
    ("What top-1 accuracy does it reach?", "1", "a top-5 error of 3.57%"),
    ("Which fact was checked?", "fact", "one factor was checked"),
    ("How many were numb?", "numb", "the number of patients"),
])
def test_a_concept_does_not_match_what_merely_looks_alike(question, word, passage):
    assert not _concept(question, word).met(forms_of(passage))


def test_question_concepts_weigh_names_focus_and_light_words():
    concepts = {c.text: c for c in query_concepts("How many identical layers make up the Transformer's encoder?")}
    assert "How" not in concepts and "many" not in concepts
    assert concepts["Transformer"].specific and not concepts["encoder"].specific
    assert concepts["layers"].focus and concepts["identical"].focus and not concepts["encoder"].focus
    assert concepts["make"].weight < concepts["encoder"].weight < concepts["layers"].weight
    # Capitals that start a sentence, or fill a Title Case question, are not names; acronyms and digits are.
    assert not _concept("Which port? Round your answer.", "Round").specific
    title = {c.text: c.specific for c in query_concepts("What Is The Highest Real Growth Of Revenue In 2019?")}
    assert title == {"Highest": False, "Real": False, "Growth": False, "Revenue": False, "2019": True}
    assert not _concept("What was Q2 revenue?", "Q2").specific  # a period may be "three months ended ..."
    assert query_concepts("") == () and forms_of("") == frozenset()
    assert coverage(query_concepts("the of and"), forms_of("anything")) == 0.0


def test_a_number_must_stand_next_to_what_is_counted():
    layers = query_concepts("How many layers?")
    assert near(layers, "The encoder is composed of a stack of N = 6 identical layers.")
    assert not near(layers, "a multi-layer encoder described in Vaswani et al. (2017) and in a library")
    assert not near(layers, "step_num · warmup_steps−1.5 ) (3) for all layers")  # formula and equation numbers
    assert not near(layers, "12 layers", exclude=frozenset({"12"}))  # a number the question gives
    heads = [c for c in query_concepts("How many attention heads?") if c.focus]
    for count in ("In this work we employ h = 8 parallel attention layers, or heads.", "attention heads: 8"):
        assert near(heads, count, counting=True)
    measure = "While single-head attention is 0.9 BLEU worse than the best setting"
    assert near(heads, measure) and not near(heads, measure, counting=True)  # a measure, not a count of heads


def test_a_list_of_names_offers_the_initials_of_each_name_and_of_a_hyphenated_names_parts():
    from agentic_rag.language.concepts import abbreviated, forms_of

    forms = forms_of("(Frito-Lay North America, Quaker Foods North America and PepsiCo Beverages North America)")
    assert {"flna", "fna", "qfna", "pbna"} <= forms
    assert "jj" in forms_of("Johnson & Johnson")  # the whole run's initials, as before
    held = forms_of("FLNA QFNA Europe")
    assert abbreviated("Frito-Lay North America and Quaker Foods North America grew", held) == \
        {"frito", "lay", "north", "america", "quaker", "foods"}
    assert abbreviated("PepsiCo Beverages North America", held) == frozenset()
