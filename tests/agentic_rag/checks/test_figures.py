"""agentic_rag.checks.figures: a figure is grounded by construction, stated by its passage (rescaled only by a
scale the passage states) or recomputed from a calculation the claim writes out; never by a search over the
passage's numbers; and a figure of another period than the question's is caught."""

from __future__ import annotations

import pytest

from agentic_rag.checks.claims import split_claims
from agentic_rag.checks.figures import arithmetic_errors, figures, other_periods, other_rows, unexplained
from agentic_rag.checks.verdicts import check_claim
from agentic_rag.types import ContextBlock, Verdict
from tests.helpers.agent import Q, _hit, make_chunk

STATEMENT = ("CONSOLIDATED STATEMENTS OF INCOME (In millions)\n| | 2022 | 2021 |\n| --- | --- | --- |\n"
             "| Subscription | $ 16,388 | $ 14,573 |\n| Product | 532 | 555 |\n| Services and other | 686 | 657 |\n"
             "| Total revenue | 17,606 | 15,785 |")


def _check(claim: str, *texts: str, question: str = Q, page: int = 41):
    blocks = {i: ContextBlock(i, _hit(make_chunk("10k", "10k.pdf", text, ordinal=i, page=page)))
              for i, text in enumerate(texts, start=1)}
    return check_claim(split_claims(claim)[0], Verdict(0, "supported", 1), blocks, question=question)


@pytest.mark.parametrize("claim", [
    "Adjusted EBITDA was $2,018 million vs $2,117 million in fiscal 2022 [P1].",  # the scale the table states
    "Adjusted EBITDA was about $2.1 billion in 2023 [P1].",  # rounded and rescaled by the stated scale
    "(2,117 - 2,018) / 2,018 = 4.9% [P1].",  # a calculation written out, recomputed
    "Adjusted EBITDA rose 4.9% from $2,018 million to $2,117 million [P1].",  # operands given in words
    "The margin was 20.2% (2,117 / 10,500 = 20.2%) [P1].",
])
def test_stated_rescaled_and_recomputed_figures_are_supported(filing, claim):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    checked = check_claim(split_claims(claim)[0], Verdict(0, "supported", 1), blocks, question=Q)
    assert checked.verdict == "supported", checked.reason


@pytest.mark.parametrize("claim", [
    "Adjusted EBITDA rose 4.9% from 2022 to 2023 [P1].",  # a change whose operands it does not give
    "Adjusted EBITDA grew by $99 million [P1].",
    "The Adjusted EBITDA margin was 20.2% in 2023 [P1].",
])
def test_a_figure_worked_out_without_showing_how_is_unsupported_not_refuted(filing, claim):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    checked = check_claim(split_claims(claim)[0], Verdict(0, "supported", 1), blocks, question=Q)
    assert checked.verdict == "unsupported" and not checked.refuted, checked.reason
    assert "does not show the calculation" in checked.reason


def test_a_number_nobody_stated_or_wrong_arithmetic_is_caught(filing):
    blocks = {1: ContextBlock(1, _hit(filing.chunks[0]))}
    made_up = check_claim(split_claims("Adjusted EBITDA was 2,311 in 2023 [P1].")[0], Verdict(0, "supported", 1),
                          blocks, question=Q)
    assert made_up.verdict == "unsupported" and made_up.refuted and "2,311" in made_up.reason
    wrong = check_claim(split_claims("EBITDA rose 2,117 - 2,018 = 89 million [P1].")[0],
                        Verdict(0, "supported", 1), blocks, question=Q)
    assert wrong.verdict == "unsupported" and "recomputed: 99" in wrong.reason
    assert arithmetic_errors("99 / 2,018 = 4.9%") == []
    assert unexplained("It has six layers", "The encoder has 6 layers.") == []
    assert unexplained("It has 6 layers", "The encoder has six layers.") == []
    assert unexplained("It has 7 heads", "8 heads, 6 layers, 512 dimensions, 10,500 and 9,800") == ["7"]
    # the message names the figure, not the operator written before it
    assert unexplained("The total is 12.5 + 99.1 = 111.6", "Revenue 12.5, other 98.1") == ["99.1", "111.6"]
    assert unexplained("The change was -4.5%", "It fell 3.5%") == ["-4.5%"]  # a sign written with its digits stays


@pytest.mark.parametrize("claim, source", [
    ("Total revenue grew by $1,921 million, from $15,785 million to $17,606 million.", STATEMENT),  # 1,821
    ("Adobe's total revenue in fiscal 2022 was $18,606 million.", STATEMENT),  # one digit off
    ("The warmup uses warmup_steps = 8000.", "We used warmup_steps = 4000 and 8 heads."),  # no 10^3 rescaling
    ("BERT masks 20% of the tokens.", "We mask 15% of all WordPiece tokens, 2 of 10 at random."),  # 20 = 2/10
    ("The model stacks up to 202 layers.", "We train networks of up to 152 layers in 2015."),  # "up to" is no period
    ("The team grew to 19 engineers.", "The team hired 9 engineers in 2019."),  # "to 19" is a value
    ("Total revenue was $17,606 billion.", STATEMENT),  # a scale the table does not state
])
def test_wrong_figures_models_write_are_never_grounded(claim, source):
    assert unexplained(claim, source), claim


@pytest.mark.parametrize("claim, source", [
    ("The five regions sum to 15,400 + 12,150 + 18,320 + 10,975 + 8,410 = 65,255.",
     "| Region | Units |\n| --- | --- |\n| North | 15,400 |\n| South | 12,150 |\n| East | 18,320 |\n"
     "| West | 10,975 |\n| Central | 8,410 |"),  # a column total
    ("Revenue grew 11.5% from $15,785 million to $17,606 million.", STATEMENT),
    ("(17,606 - 15,785) / 15,785 = 11.5%", STATEMENT),
    ("Total revenue was $17.6 billion.", STATEMENT),
    ("The team grew to 19 engineers.", "The team hired 19 engineers."),
])
def test_right_figures_and_calculations_are_grounded(claim, source):
    assert unexplained(claim, source) == [] and arithmetic_errors(claim) == []


def test_a_wrong_column_total_is_refuted_and_a_right_one_supported():
    rows = "| Region | Units |\n| --- | --- |\n| A | 15,400 |\n| B | 12,150 |\n| C | 18,320 |\n| D | 10,975 |\n| E | 8,410 |"
    right = _check("The total is 15,400 + 12,150 + 18,320 + 10,975 + 8,410 = 65,255 [P1].", rows)
    wrong = _check("The total is 15,400 + 12,150 + 18,320 + 10,975 + 8,410 = 66,255 [P1].", rows)
    assert right.verdict == "supported" and not right.refuted, right.reason
    assert wrong.verdict == "unsupported" and wrong.refuted and "recomputed: 65,255" in wrong.reason


def test_operands_in_another_chunk_of_the_same_page_count():
    # the margin's two operands sit in two chunks of one statement page; the claim cites only the first
    first = "CONSOLIDATED STATEMENTS OF INCOME (In millions)\n| | 2022 |\n| --- | --- |\n| Total revenue | 17,606 |"
    second = "| | 2022 |\n| --- | --- |\n| Operating income | 6,098 |"
    checked = _check("The operating margin was 6,098 / 17,606 = 34.6% [P1].", first, second,
                     question="What was the operating margin in 2022?")
    assert checked.verdict == "supported", checked.reason
    elsewhere = {1: ContextBlock(1, _hit(make_chunk("10k", "10k.pdf", first, page=41))),
                 2: ContextBlock(2, _hit(make_chunk("10k", "10k.pdf", second, ordinal=1, page=77)))}
    other = check_claim(split_claims("The operating margin was 6,098 / 17,606 = 34.6% [P1].")[0],
                        Verdict(0, "supported", 1), elsewhere, question="What was the operating margin in 2022?")
    assert other.verdict == "unsupported"  # an operand on another page is no operand of this passage


def test_a_figure_of_another_period_than_the_question_asks_is_refuted():
    asked = "What was Adobe's total revenue in fiscal 2022?"
    assert other_periods("Total revenue was $15,785 million.", STATEMENT, ["2022"]) == [("$15,785 million", "2021")]
    assert other_periods("Total revenue was $17,606 million.", STATEMENT, ["2022"]) == []
    assert other_periods("In 2021 it was $15,785 million.", STATEMENT, ["2022"]) == []  # it says which year
    checked = _check("Total revenue was $15,785 million [P1].", STATEMENT, question=asked)
    assert checked.verdict == "unsupported" and checked.refuted and "2021" in checked.reason
    assert _check("Total revenue was $17,606 million [P1].", STATEMENT, question=asked).verdict == "supported"


FLATTENED = ("CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)\nYears Ended December 31, 2022 2021 % Change\n"
             "Net sales $ 34,229 $ 35,355 (3)%\nOperating income 6,539 7,369 (11)%\nOther income, net 41 52")


def test_a_flattened_rows_figures_take_their_periods_from_the_years_line_by_position():
    # the statement reached the text layer as lines: its years line names each row's columns in order
    assert other_periods("Net sales were $35,355 million.", FLATTENED, ["2022"]) == [("$35,355 million", "2021")]
    assert other_periods("Net sales were $34,229 million.", FLATTENED, ["2022"]) == []
    assert other_periods("Other income was $52 million.", FLATTENED, ["2022"]) == [("$52 million", "2021")]
    assert other_periods("Net sales fell 3%.", FLATTENED, ["2022"]) == []  # the change column names no year
    checked = _check("Operating income was $7,369 million [P1].", FLATTENED,
                     question="What was the operating income in 2022?")
    assert checked.verdict == "unsupported" and checked.refuted and "2021" in checked.reason
    assert _check("Operating income was $6,539 million [P1].", FLATTENED,
                  question="What was the operating income in 2022?").verdict == "supported"
    # a row with more figures than the years line has columns is read by no position: grounded, no period
    ragged = "2022 2021\nSegment sales 1,200 1,100 900 800"
    assert other_periods("Segment sales were 1,100.", ragged, ["2022"]) == []
    # prose naming years is no years line
    prose = "We were founded in 1998 and listed in 2004\nHeadcount 4,100 3,900"
    assert other_periods("Headcount was 3,900.", prose, ["1998"]) == []


def test_a_years_line_in_another_passage_of_the_same_page_names_a_flattened_rows_columns():
    header = "CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)\n2022 2021 2020\nNet sales 34,229 35,355 30,001"
    rows = "Operating income 6,539 7,369 5,100\nNet income 4,000 4,500 3,900"
    asked = "What was the operating income in 2022?"
    checked = _check("Operating income was 7,369 [P2].", header, rows, question=asked)
    assert checked.verdict == "unsupported" and "2021" in checked.reason
    assert _check("Operating income was 6,539 [P2].", header, rows, question=asked).verdict == "supported"
    blocks = {1: ContextBlock(1, _hit(make_chunk("10k", "10k.pdf", header, ordinal=1, page=40))),
              2: ContextBlock(2, _hit(make_chunk("10k", "10k.pdf", rows, ordinal=2, page=77)))}
    elsewhere = check_claim(split_claims("Operating income was 7,369 [P2].")[0], Verdict(0, "supported", 1),
                            blocks, question=asked)
    assert not elsewhere.refuted  # another page's years line names nothing here
    # two pages' passages whose years lines disagree lend none: each row keeps what its own passage prints
    assert other_periods("Operating income was 7,369.", [header, "2023 2022 2021", rows], ["2022"],
                         [1, 1, 1]) == []


def test_a_table_found_without_its_header_takes_its_columns_periods_from_the_years_line_of_its_page():
    # the table pass found the rows, not the header: the years stayed in the page's text, in another passage
    text = "CONSOLIDATED STATEMENTS OF OPERATIONS\nYears Ended December 31,\n2022 2021\n(In millions)"
    headless = "| (In millions) |  |  |\n| --- | --- | --- |\n| Total revenue | 17,606 | 15,785 |"
    asked = "What was total revenue in 2022?"
    checked = _check("Total revenue was $15,785 million [P1].", headless, text, question=asked)
    assert checked.verdict == "unsupported" and checked.refuted and "2021" in checked.reason
    assert _check("Total revenue was $17,606 million [P1].", headless, text, question=asked).verdict == "supported"
    # columns with headers of their own are what their headers say, whatever years the page prints
    headed = "| Segment | Revenue | Cost |\n| --- | --- | --- |\n| Total | 17,606 | 15,785 |"
    assert other_periods("The cost was 15,785.", [headed, text], ["2022"], [1, 1]) == []


def test_rows_of_a_passage_without_a_units_line_take_the_one_of_their_page():
    # a statement cut into two chunks states "(In millions)" once, above the first chunk's rows
    first = "CONSOLIDATED STATEMENTS OF OPERATIONS (In millions)\n2022 2021\nNet sales 34,229 35,355"
    rows = "Operating income 6,539 7,369\nNet income 4,000 4,500"
    asked = "What was the operating income in 2022?"
    right = _check("Operating income was $6,539 million [P2].", first, rows, question=asked)
    assert right.verdict == "supported", right.reason
    assert _check("Operating income was $6,539 billion [P2].", first, rows, question=asked).verdict == "unsupported"
    wrong = _check("Operating income was $7,369 million [P2].", first, rows, question=asked)
    assert wrong.refuted and "2021" in wrong.reason
    # pages whose units lines disagree lend none; a passage with a units line of its own keeps it
    thousands = "Selected data (In thousands)\nHeadcount 12 14"
    assert unexplained("Operating income was $6,539 million.", [rows, first, thousands], places=[1, 1, 1]) == \
        ["$6,539 million"]
    assert unexplained("Headcount was 12 million.", [thousands, first], places=[1, 1]) == ["12 million"]


def test_references_to_a_documents_parts_are_not_quantities():
    assert [f.raw for f in figures("See Table 2 and Section 3.1 on page 47 of the 10-K [11].")] == []
    assert [f.raw for f in figures("Revenue was 17,606 in 2022.")] == ["17,606", "2022"]


def test_a_balance_sheet_date_names_its_year_and_an_early_date_the_fiscal_year_it_closes():
    balance = ("| (in millions) | December 28, 2019 | December 29, 2018 |\n| --- | --- | --- |\n"
               "| TOTAL ASSETS | 101,450 | 103,461 |")
    assert other_periods("Total assets were $103,461 million.", balance, ["2019"]) == [("$103,461 million", "2018")]
    assert other_periods("Total assets were $101,450 million.", balance, ["2019"]) == []
    retail = ("| (in millions) | January 31, 2018 | January 31, 2017 |\n| --- | --- | --- |\n"
              "| Total revenues | 500,343 | 485,873 |")
    assert other_periods("Total revenues were $500,343 million.", retail, ["2017"]) == []  # closes fiscal 2017 too
    assert other_periods("Total revenues were $485,873 million.", retail, ["2018"]) == [("$485,873 million", "2016")]


CARS = ("| Name | Miles_per_Gallon | Cylinders | Horsepower | Origin |\n| --- | --- | --- | --- | --- |\n"
        "| datsun 1200 | 35.0 | 4 | 69.0 | Japan |\n| volkswagen model 111 | 27.0 | 4 | 60.0 | Europe |\n"
        "| plymouth cricket | 26.0 | 4 | 70.0 | USA |")


def test_a_figure_given_to_a_row_that_does_not_state_it_is_refuted():
    # one digit changed: 69.0 written 60.0, which is the Volkswagen's figure two rows down
    wrong = _check("The datsun 1200 has 60.0 horsepower [P1].", CARS, question="How powerful is the datsun 1200?")
    assert wrong.verdict == "unsupported" and wrong.refuted
    assert "volkswagen model 111" in wrong.reason and "datsun 1200" in wrong.reason
    assert _check("The datsun 1200 has 69.0 horsepower [P1].", CARS,
                  question="How powerful is the datsun 1200?").verdict == "supported"
    # each figure is read after the rows named just before it; the digits of a label are no figure of a claim
    assert other_rows("The volkswagen model 111 and the datsun 1200 have 60.0 and 69.0 horsepower.", CARS) == []
    assert other_rows("The datsun 1200 does 35.0 mpg; the plymouth cricket has 70.0 hp.", CARS) == []
    assert other_rows("The plymouth cricket has 69.0 hp.", CARS) == [("69.0", "datsun 1200", "plymouth cricket")]
    # a flattened statement's rows are rows too; a figure written after no label is not caught
    assert other_rows("Net sales were $6,539 million.", FLATTENED) == [("$6,539 million", "operating income",
                                                                      "net sales")]
    assert other_rows("It came to $6,539 million.", FLATTENED) == []
    # a figure the running text also states is grounded there
    assert other_rows("The datsun 1200 has 60.0 hp.", CARS + "\nThe engines range from 60.0 to 70.0 hp.") == []
    # a label inside a longer one: the longer row states it
    statement = "| (In millions) | 2022 |\n| --- | --- |\n| Services | 1,000 |\n| Services and licensing | 686 |"
    assert other_rows("Services and licensing revenue was 686.", statement) == []
    assert other_rows("Services revenue was 686.", statement) == [("686", "services and licensing", "services")]
    # a section's row named beside its line's row written in other forms: the line's row is named too
    resorts = "| (In millions) | 2022 |\n| --- | --- |\n| Las Vegas Strip Resorts | 8,400 |\n| Casino | 2,000 |"
    assert other_rows("Las Vegas Strip Resorts revenue from casinos was 2,000.", resorts) == []
    assert other_rows("Las Vegas Strip Resorts revenue was 2,000.", resorts) == [("2,000", "casino",
                                                                                 "las vegas strip resorts")]
