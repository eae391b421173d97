"""advanced_retrieval.ingest.estimates: a file's fraction done and time left, the queue's throughput (a fake clock)."""

from __future__ import annotations

import pytest

from advanced_retrieval.ingest.estimates import SAVING_SHARE, FileEstimate, Throughput


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_time_left_comes_from_the_embedding_rate():
    clock = FakeClock()
    est = FileEstimate(clock=clock)
    assert est.update("reading", 0, 1) == 0.0 and est.seconds_left() is None
    clock.now += 1
    est.update("chunking", 1, 1)
    clock.now += 1
    assert 0.25 <= est.update("embedding", 0, 40) < 0.3
    clock.now += 2  # 10 chunks in 2 s -> 30 left take 6 s, and saving the file a tenth of its 40 chunks' 8 s
    est.update("embedding", 10, 40)
    assert est.seconds_left() == pytest.approx(6.8)
    clock.now += 6
    assert est.update("indexing", 0, 1) >= 0.92
    assert est.update("indexing", 1, 1) == 1.0 and est.seconds_left() is None


def test_a_stage_first_reported_after_its_first_batch_counts_that_batch_s_time():
    clock = FakeClock()
    est = FileEstimate(clock=clock)
    est.update("chunking", 1, 1)
    clock.now += 10  # the first 8 of 600 passages took 10 s, and the first report of the stage says 8 done
    est.update("embedding", 8, 600)
    clock.now += 0.1
    per = 10.1 / 8  # not 0.1 / 8: "about 8 s left"
    assert est.seconds_left() == pytest.approx(per * 592 + SAVING_SHARE * per * 600)


def test_no_time_left_while_a_file_is_read_and_cut_only_once_its_passages_are_embedded():
    """The share of a file's work its reading stands for differs by file: extrapolating a fixed one said 54-71 %
    too little on 10-Ks (bench/estimates.py --batch), so there is no estimate until the embedding rate is known."""
    clock = FakeClock()
    est = FileEstimate(clock=clock)
    est.update("reading", 1, 2)
    clock.now += 3
    est.update("reading", 2, 2)
    clock.now += 1
    assert est.update("chunking", 1, 1) >= 0.15 and est.seconds_left() is None
    clock.now += 1
    est.update("embedding", 0, 100)
    clock.now += 2
    est.update("embedding", 20, 100)
    assert est.seconds_left() == pytest.approx(0.1 * 80 + SAVING_SHARE * 0.1 * 100)


def test_near_the_end_the_saving_still_counts():
    clock = FakeClock()
    est = FileEstimate(clock=clock)
    est.update("embedding", 0, 1000)
    clock.now += 95
    est.update("embedding", 950, 1000)  # 0.1 s a passage: 5 s of embedding left and ~10 s of saving
    assert est.seconds_left() == pytest.approx(5 + 10)


def test_under_a_second_left_is_no_estimate_never_about_zero_seconds():
    clock = FakeClock()
    est = FileEstimate(clock=clock)
    est.update("embedding", 1, 100)
    clock.now += 0.01
    est.update("embedding", 99, 100)
    assert est.seconds_left() is None


def test_the_fraction_never_goes_backwards_and_survives_zero_totals():
    est = FileEstimate(clock=FakeClock())
    est.update("embedding", 5, 10)
    before = est.fraction
    assert est.update("reading", 0, 0) == before


def test_a_scan_moves_through_the_reading_span_page_by_page():
    est = FileEstimate(clock=FakeClock())
    fraction = est.update("ocr", 3, 12)
    assert 0.0 < fraction <= 0.15 and est.update("chunking", 0, 1) >= fraction


def test_throughput_is_unknown_until_a_file_finished_then_follows_the_files():
    rate = Throughput()
    assert rate.seconds_for(1000) is None
    rate.add(1000, 2.0)
    assert rate.seconds_for(1000) == pytest.approx(2.0)
    rate.add(0, 5.0)  # an empty file or a duplicate says nothing about the rate
    assert rate.seconds_for(1000) == pytest.approx(2.0)
    rate.add(1000, 1.0)
    assert 1.0 < rate.seconds_for(1000) < 2.0
