"""The realistic figure replies the replays are built from (testing.figure_replies)."""

from testing.figure_replies import figure_reply

PROMPT = """<passages>
[P1] acme-10k.pdf, p. 4
Acme holds a 9.5% stake in Widgetco, worth $1,214 million.

[P2] acme-8k.pdf, p. 2
Exhibit 99.1 Press release dated August 30, 2023
Dividends paid were 3,105 in the year.

[P3] acme-8k.pdf, p. 3
Item 7.01 Regulation FD Disclosure
</passages>"""


def test_a_calculation_across_chunks_adds_a_quantity_never_the_number_of_an_exhibit():
    reply = figure_reply("arithmetic across chunks", [["1,214"]], PROMPT)
    assert reply == "Together they come to $1,214 + 3,105 = 4,319 [P1][P2]."


def test_no_calculation_across_chunks_when_the_other_passages_only_number_their_parts():
    prompt = PROMPT.replace("Dividends paid were 3,105 in the year.", "See Note 12.5 and Exhibit 99.2.")
    assert figure_reply("arithmetic across chunks", [["1,214"]], prompt) is None


def test_the_right_figure_and_its_changed_digit_cite_the_passage_that_states_it():
    assert figure_reply("right figure", [["1,214"]], PROMPT) == "Acme holds a 9.5% stake in Widgetco, worth was $1,214 [P1]."
    assert figure_reply("changed digit", [["1,214"]], PROMPT).endswith("was $1,314 [P1].")
