"""advanced_retrieval.keyword.tokens: the tokenizer."""

from __future__ import annotations

import pytest

from advanced_retrieval import tokenize


def test_words_are_lowercased_stemmed_and_stopwords_dropped():
    assert tokenize("The Companies were Running their reports") == ["compani", "run", "report"]
    assert tokenize("What did Adobe report?") == ["adob", "report"]  # question words are stopwords too


@pytest.mark.parametrize(("text", "whole"), [
    ("grew 28.4% last year", "28.4"),
    ("paid $4,000 in fees", "4000"),
    ("the vote was 10-9", "10-9"),
    ("see the Form 10-K", "10-k"),
    ("GPT-4 outperforms", "gpt-4"),
    ("certified ISO-9001", "iso-9001"),
    ("cells A1:F40 hold totals", "a1:f40"),
    ("version 3.11.2 ships", "3.11.2"),
    ("set max_tokens to 256", "max_tokens"),
])
def test_numbers_and_codes_stay_whole_and_unstemmed(text, whole):
    assert whole in tokenize(text)


def test_codes_also_give_their_parts_but_decimals_do_not_split():
    assert tokenize("ISO-9001") == ["iso-9001", "iso", "9001"]
    assert tokenize("28.4") == ["28.4"]
    assert tokenize("2023-12-31") == ["2023-12-31", "2023", "12", "31"]
    assert tokenize("FY2022") == ["fy2022", "fy", "2022"]  # documents say "fiscal 2022"
    assert tokenize("A1 x86") == ["a1", "x86"]  # short codes are not split
    assert tokenize("$4,000 and 4000") == ["4000", "4000"]


def test_punctuation_ligatures_and_possessives():
    assert tokenize("Sales rose in 2022.") == ["sale", "rose", "2022"]
    assert tokenize("ﬁnancial") == tokenize("financial")  # PDF ligature
    assert tokenize("the company's state-of-the-art plant") == ["compani", "state", "art", "plant"]


def test_typographic_hyphens_and_dashes_read_as_hyphens():
    assert tokenize("Form 10\u2011K") == tokenize("Form 10-K") == ["form", "10-k", "10"]  # non-breaking hyphen
    assert tokenize("COVID\u201019 cases") == tokenize("COVID-19 cases")
    assert "2023" in tokenize("from 2019\u20132023")  # en dash range still finds its years
    assert tokenize("revenue\u2014which grew") == tokenize("revenue - which grew") == ["revenu", "grew"]
    assert tokenize("\u22125.2 percent") == tokenize("-5.2 percent")


@pytest.mark.parametrize("text", ["", "   ", "the of and to", "a", "!!! ???"])
def test_empty_or_stopword_only_text_has_no_tokens(text):
    assert tokenize(text) == []
