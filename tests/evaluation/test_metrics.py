"""evaluation.metrics: answer matching, retrieval metrics, citations, percentiles and calibration on hand-made cases."""

from __future__ import annotations

import json

import pytest

from agentic_rag import Citation, Claim
from document_processor import Location
from evaluation import (
    GoldSource,
    alternative_in,
    check_citations,
    chunk_matches,
    citation_markers,
    first_hit_rank,
    has_key_facts,
    hit_at_k,
    missing_groups,
    mrr,
    numbers_in,
    percentile,
    supported_claims,
)
from tests.helpers.evaluation import chunk


@pytest.mark.parametrize(("alternative", "answer", "expected"), [
    ("8", "It uses 8 heads.", True),
    ("8", "It uses 18 heads.", False),
    ("8", "The value is 8.5.", False),
    ("8", "The value is 1.8 here.", False),
    ("8", "There are 8.", True),
    ("8", "eight heads (h=8)", True),
    ("8", "8.0 heads", True),
    ("1,000", "about 1000 units", True),
    ("1000", "about 1,000 units", True),
    ("1,000", "about 10,000 units", False),
    ("$1,577.00", "capex was $1577 million", True),
    ("36.8%", "margin fell from 36.8 % to 34.6%", True),
    ("0.999", "defaults 2=0.999and epsilon", True),
    ("6315", "Halden March 6315.0", True),
    ("eight", "It uses eight heads.", True),
    ("eight", "It uses eighteen heads.", False),
    ("Per Hansen", "The supervisor is PER  HANSEN.", True),
    ("14 weeks", "lead time: 14 weeks", True),
    ("14 weeks", "lead time: 114 weeks", False),
    ("4.2 mm/s", "vibration was 4.2 mm/s.", True),
    ("infinity norm", "based on the inﬁnity norm", True),  # the "fi" ligature PDF text often carries
    ("did not find", "The team did not find any corrosion.", True),
])
def test_alternative_in(alternative, answer, expected):
    assert alternative_in(alternative, answer) is expected


def test_numbers_in_reads_separators_and_ignores_glued_digits():
    assert numbers_in("Revenue 17,606 and 4.2 mm/s, FY2022, H-19") == [17606.0, 4.2, 2022.0, 19.0]
    assert numbers_in("") == []


def test_key_facts_need_one_alternative_of_every_group():
    groups = [["8", "eight"], ["64"]]
    assert has_key_facts("eight heads of size 64", groups)
    assert not has_key_facts("eight heads of size 640", groups)
    assert missing_groups("8 heads", groups) == [("64",)]
    assert has_key_facts("anything", [])


def test_chunk_matches_page_and_file_rules():
    gold = (GoldSource("report.pdf", (3, 4)),)
    assert chunk_matches(chunk("report.pdf", 3), gold)
    assert not chunk_matches(chunk("report.pdf", 5), gold)
    assert not chunk_matches(chunk("other.pdf", 3), gold)
    assert chunk_matches(chunk("REPORT.PDF", 4), gold)  # file names compare case-insensitively
    # A non-paged chunk (DOCX paragraph, sheet cells) matches at file level.
    assert chunk_matches(chunk("report.docx", None, paragraph=3), (GoldSource("report.docx", (1,)),))
    assert chunk_matches(chunk("deck.pptx", slide=2), (GoldSource("deck.pptx"),))
    assert chunk_matches(chunk("report.pdf", 9), (GoldSource("report.pdf"),))  # no gold pages: any page


def test_first_hit_rank_and_no_gold():
    gold = (GoldSource("a.pdf", (2,)), GoldSource("b.xlsx"))
    ranked = [chunk("a.pdf", 1), chunk("c.pdf", 2), chunk("b.xlsx", sheet="S", cells="A1:B2"), chunk("a.pdf", 2)]
    assert first_hit_rank(ranked, gold) == 3
    assert first_hit_rank(ranked[:2], gold) is None
    assert first_hit_rank(ranked, ()) is None
    assert first_hit_rank([], gold) is None


def test_hit_at_k_and_mrr_by_hand():
    ranks = [1, 3, None, 12]
    assert hit_at_k(ranks, 1) == 0.25
    assert hit_at_k(ranks, 3) == 0.5
    assert hit_at_k(ranks, 20) == 0.75
    assert mrr(ranks, 10) == pytest.approx((1 + 1 / 3) / 4)  # rank 12 is past the cutoff: 0
    assert mrr([3]) == pytest.approx(1 / 3)
    assert hit_at_k([], 5) is None and mrr([]) is None


def test_citation_markers_forms():
    assert citation_markers("a [1] b [3][1] c [2, 4] d [5-7] e [10]") == [1, 3, 2, 4, 5, 6, 7, 10]
    assert citation_markers("no markers (see Table 2)") == []
    assert citation_markers('"label smoothing of 0.1 [36]." [2] and “as in [7]” [3]') == [2, 3]


def test_check_citations():
    cites = [Citation(1, "a.pdf", "d1", Location(page=1), ""), Citation(2, "b.docx", "d2", Location(paragraph=1), "")]
    assert check_citations("x [1] y [2]", cites)[0] is True
    assert check_citations("x [1] y [2]", cites, ["a.pdf", "b.docx"])[0] is True
    valid, reason = check_citations("x [1] y [2]", cites, ["a.pdf"])
    assert valid is False and "b.docx" in reason
    valid, reason = check_citations("x [3]", cites)
    assert valid is False and "[3]" in reason
    assert check_citations("An uncited claim.", cites) == (False, "no citation markers")
    assert check_citations("I could not find this in the documents.", [])[0] is None


def test_supported_claims_and_percentile():
    claims = [Claim("a", "supported"), Claim("b", "partial"), Claim("c", "Supported"), Claim("d", "unsupported")]
    assert supported_claims(claims) == (2, 4)
    assert supported_claims([]) == (0, 0)
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5.0], 95) == 5.0
    assert percentile(list(range(101)), 95) == 95
    assert percentile([], 50) is None


def test_reliability_table_bands_by_hand():
    from evaluation.metrics import reliability_table

    pairs = [(0.0, False), (0.19, True), (0.2, False), (0.49, True), (0.5, True), (0.79, False), (0.8, True),
             (1.0, True), (1.3, True), (-0.1, False)]
    bands = reliability_table(pairs)
    assert [(b.low, b.high) for b in bands] == [(0.0, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 1.0)]
    assert [b.count for b in bands] == [3, 2, 2, 3]  # 1.0 and the clipped 1.3 fall in the closed last band
    assert [b.correct for b in bands] == [1, 1, 1, 3]
    assert [b.accuracy for b in bands] == [pytest.approx(1 / 3), 0.5, 0.5, 1.0]
    assert bands[1].mean_confidence == pytest.approx(0.345)
    empty = reliability_table([])
    assert all(b.count == 0 and b.accuracy is None and b.mean_confidence is None for b in empty)


def _auroc_by_pairs(pairs):
    """The definition: the chance a right answer outranks a wrong one, ties counting half."""
    right = [c for c, ok in pairs if ok]
    wrong = [c for c, ok in pairs if not ok]
    wins = sum(1.0 if r > w else 0.5 if r == w else 0.0 for r in right for w in wrong)
    return wins / (len(right) * len(wrong))


@pytest.mark.parametrize("pairs", [
    [(0.9, True), (0.8, True), (0.1, False), (0.2, False)],
    [(0.1, True), (0.9, False)],
    [(0.5, True), (0.5, False), (0.5, True)],
    [(0.3, True), (0.7, False), (0.7, True), (0.2, False), (1.0, True), (0.0, False), (0.7, True), (0.3, False)],
])
def test_auroc_rank_formula_matches_pairwise_definition(pairs):
    from evaluation.metrics import auroc

    assert auroc(pairs) == pytest.approx(_auroc_by_pairs(pairs))


def test_auroc_by_hand_and_undefined():
    from evaluation.metrics import auroc

    assert auroc([(0.9, True), (0.1, False)]) == 1.0
    assert auroc([(0.1, True), (0.9, False)]) == 0.0
    assert auroc([(0.5, True), (0.5, False)]) == 0.5
    # right at 0.9, 0.4; wrong at 0.6, 0.1: 0.9 beats both, 0.4 beats 0.1 only -> 3 of 4 pairs
    assert auroc([(0.9, True), (0.4, True), (0.6, False), (0.1, False)]) == 0.75
    assert auroc([]) is None and auroc([(0.9, True)]) is None and auroc([(0.2, False), (0.3, False)]) is None


def test_calibration_target_shares():
    from evaluation.metrics import calibration

    pairs = [(0.95, True), (0.85, True), (0.8, False), (0.6, False), (0.3, False), (0.1, False), (0.0, True)]
    cal = calibration(pairs)
    assert (cal.pairs, cal.correct) == (7, 3)
    assert (cal.precision_high, cal.high) == (pytest.approx(2 / 3), 3)  # 0.8 counts as shown at >= 0.8
    assert (cal.wrong_low, cal.wrong) == (0.5, 4)  # 0.3 and 0.1 of the wrong 0.8, 0.6, 0.3, 0.1
    assert cal.auroc == pytest.approx(_auroc_by_pairs(pairs))
    out = cal.to_dict()
    json.dumps(out)
    assert out["bands"][3] == {"low": 0.8, "high": 1.0, "count": 3, "correct": 2, "accuracy": pytest.approx(2 / 3),
                               "mean_confidence": pytest.approx(2.6 / 3)}
    assert calibration([]) is None
    only_right = calibration([(0.2, True)])
    assert only_right.auroc is None and only_right.wrong_low is None and only_right.precision_high is None
