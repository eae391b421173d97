"""How a question's words meet a table's names: identifiers, initials, and words derived from a value."""

from __future__ import annotations

import pytest

from agentic_rag.language.concepts import forms_of
from agentic_rag.tables.words import contracted, derived, meets, name_forms, named_by


@pytest.mark.parametrize("a, b, same", [
    ("japan", "japanese", True), ("europe", "european", True), ("canada", "canadian", True),
    ("germany", "german", True), ("renewables", "renewable", True),
    ("state", "statement", False), ("net", "network", False), ("operating", "operations", False),
])
def test_a_word_derived_from_another_by_its_ending(a, b, same):
    assert derived(a, b) is same


def test_a_header_written_as_an_identifier_offers_its_words_and_initials():
    assert {"mpg", "gallon"} <= name_forms("Miles_per_Gallon")
    assert "generation" in name_forms("netGeneration")


def test_a_value_is_named_when_every_word_of_it_is():
    asked = forms_of("How many European cars have 4 cylinders?")
    assert named_by(asked, "Europe") and not named_by(asked, "USA")
    assert not named_by(forms_of("cars from north america"), "South America")


@pytest.mark.parametrize("text, value, named", [
    ("How did Microsoft's price change?", "MSFT", True), ("When did Amazon peak?", "AMZN", True),
    ("What did Apple close at?", "AAPL", True), ("What was Google's price?", "GOOG", True),
    ("Which of IBM or Apple rose?", "IBM", False),  # written as it is: no contraction to look for
    ("What is the usage in Japan?", "USA", False),  # a word not written as a name
    ("Usage in Japan?", "USA", False),  # the capital of a sentence's first word makes no name
    ("What did Amazon sell?", "AMZN.", False), ("What did Amazon sell?", "Amzn", False),  # not a printed code
    ("What did Microsoft sell?", "MS", False),  # two letters are too few to tell
])
def test_a_code_printed_as_a_contraction_of_a_name_the_question_writes(text, value, named):
    assert contracted(text, value) is named


def test_a_short_word_of_an_identifier_header_is_met_by_the_word_it_was_cut_from():
    from agentic_rag.tables.words import meets

    assert meets(forms_of("Nigeria's population in 2007"), name_forms("pop"))
    assert meets(forms_of("life expectancy in Japan"), name_forms("lifeExp"))
    # a header printed as words is not an identifier, and "per" is never a cut word
    assert not meets(forms_of("the agency's revenue"), name_forms("Age"))
    assert not meets(forms_of("the percent of sales"), name_forms("Miles_per_Gallon"))
    assert not meets(forms_of("the expo"), name_forms("lifeExp"))  # cut by three letters at least


def test_a_name_s_demonym_gives_the_name_it_derives_from():
    from agentic_rag.tables.words import bases

    assert "europe" in bases("european") and "canada" in bases("canadian") and "japan" in bases("japanese")
    assert bases("apple") == ("apple",)


@pytest.mark.parametrize("header, question, met", [
    ("realgdp", "What was real GDP in 1970?", True),
    ("tbilrate", "What was the Treasury bill rate in 1980?", True),
    ("TOTEMP", "What was total employment in 1950?", True),
    ("GNPDEFL", "What was the GNP deflator in 1955?", True),
    ("AIRFLOW", "When was the air flow highest?", True),
    ("WATERTEMP", "What was the average cooling water temperature?", True),
    ("realdpi", "What was real disposable personal income?", True),
    ("realcons", "What was real GDP in 1970?", False),  # "real" alone spells no more than its first piece
    ("statement", "What is the state of the art?", False),
    ("salesman", "What were the sales by month?", False),
    ("people", "What was the population of Peru in 2001?", False),
    ("AVSALK", "What is the average teacher salary?", True),  # AV-erage SAL-ary, in thousands (k)
    ("PERSPENK", "What is the per-pupil spending?", True),
    ("BILLS104", "How many bills in the 104th Congress?", True),
    ("AVGEXP", "What is the average monthly expenditure?", True),
    # "se" of setosa and "pal" of petal do not spell "sepal"; "per" and "pen" are both of "percentage"
    ("sepal", "How much longer are virginica petals than setosa petals?", False),
    ("PERSPENK", "What is the largest percentage of low-income students?", False),
])
def test_a_header_of_words_run_together_is_met_by_those_words(header, question, met):
    assert bool(meets(forms_of(question), name_forms(header))) is met
