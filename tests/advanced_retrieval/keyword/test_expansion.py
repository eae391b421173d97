"""advanced_retrieval.keyword.expansion: queries in the documents' words (line items, statements, periods)."""

from __future__ import annotations

from advanced_retrieval.keyword.expansion import expansion_phrases, expansion_query, heading_phrases


def test_metrics_and_abbreviations_expand_to_line_items_and_statements():
    assert "net cash provided by operating activities" in expansion_phrases("What was free cash flow in 2022?")
    assert "statements of cash flows" in expansion_phrases("Free-cash-flow of the group")
    assert expansion_phrases("SG&A as a share of sales")[0] == "selling general and administrative expenses"
    assert "depreciation and amortization" in expansion_phrases("How large was D&A?")
    assert "operating income" in expansion_phrases("What is the operating margin?")
    assert "term and termination" in expansion_phrases("Can the customer terminate early?")


def test_multiword_forms_match_after_stemming_one_word_forms_only_as_written():
    assert "capital expenditures" in expansion_phrases("the capital expenditure of the year")
    assert expansion_phrases("How is the BLEU score computed?") == ()  # "compute" is a form, "computed" is not
    assert expansion_phrases("") == expansion_phrases("   ") == ()
    assert expansion_query("the weather in Paris") == ""


def test_compounds_written_as_one_word_match_their_forms():
    assert "statements of cash flows" in expansion_phrases("Does Adobe have an improving Free cashflow conversion?")
    assert "statements of cash flows" in expansion_phrases("the freecashflow of the group")
    assert "net cash provided by operating activities" in expansion_phrases("operating cashflow in 2022")
    assert expansion_phrases("cash flowers") == ()  # whole words only, joined or not


def test_a_period_word_written_against_its_year_is_read_apart():
    assert "twelve months ended" in expansion_phrases("What was adjusted EBITDA for FY2023?")
    assert "twelve months ended" in expansion_phrases("What was adjusted EBITDA for FY 2023?")
    assert "three months ended" in expansion_phrases("Which region dropped most in Q22023?")
    assert expansion_phrases("the fyi and q9 notes") == ()


def test_heading_phrases_name_a_statement_by_all_its_titles():
    margin = heading_phrases("What drove Best Buy's gross margin in FY2023?")
    assert {"statements of income", "statements of earnings", "statements of operations"} <= set(margin)
    assert "net sales" not in margin  # a line item heads no page
    assert {"balance sheets", "statements of cash flows"} <= set(heading_phrases("Is 3M capital-intensive?"))
    turnover = heading_phrases("What is the FY2019 inventory turnover ratio?")  # COGS / average inventory
    assert {"balance sheets", "statements of income"} <= set(turnover)
    assert heading_phrases("What drove the increase in inventory?") == ()
    assert heading_phrases("the weather in Paris") == heading_phrases("") == ()
    assert len(margin) == len(set(margin))


def test_each_phrase_once_in_vocabulary_order():
    phrases = expansion_phrases("free cash flow and capex")
    assert len(phrases) == len(set(phrases))
    assert phrases.index("net cash provided by operating activities") < phrases.index("additions to property and "
                                                                                      "equipment")


def test_the_quick_refusal_by_first_words_gives_what_the_full_scan_gives():
    """expansion_phrases refuses a form when none of the ways it may be written starts at a word of the query
    (set lookups, ~400 forms a query); on every form of the vocabulary, written plainly, as a compound, in
    another inflection or not at all, the answer is the full scan's."""
    from advanced_retrieval.keyword import expansion as ex
    from advanced_retrieval.keyword.tokens import tokenize
    from advanced_retrieval.keyword.vocabulary import ENTRIES

    forms = [form for entry_forms, _ in ENTRIES for form in entry_forms]
    queries = [f"What was the {form} in FY2022?" for form in forms[::3]]
    queries += [f"the {form.replace(' ', '')}s of the group" for form in forms[1::5]]
    queries += ["the capital expenditure of the year", "operating cashflow in 2022", "", "cash flowers", "Q22023 SG&A"]
    checked = 0
    for query in queries:
        surface, tokens = ex._surface(query), tokenize(query)
        words, stemmed = frozenset(surface.split()), frozenset(tokens)
        for form in forms:
            assert ex._matches(form, surface, tokens, words, stemmed) == ex._matches(form, surface, tokens), (query, form)
            checked += ex._matches(form, surface, tokens)
    assert checked > len(queries) // 2  # most queries hold a form: the comparison is not between two refusals
