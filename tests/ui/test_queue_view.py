"""ui.queue_view: the queue's lines, time left and the note under an answer given while files are indexing."""

from __future__ import annotations

from advanced_retrieval import IngestResult, QueueItem
from ui.queue_view import ROW_CHARS, item_line, one_line, pending_note, queue_lines, short_name, summary, time_left


def item(name, state="queued", seq=1, **changes) -> QueueItem:
    return QueueItem(f"id{seq}", seq, name, 100, "", 0.0, state=state, **changes)


def test_time_left_is_blank_without_an_estimate_and_never_says_zero_seconds():
    assert time_left(None) == "" and time_left(0.04) == "almost done"
    assert time_left(12.3) == "about 12 s left" and time_left(125) == "about 2 min 05 s left"


def test_each_state_has_its_line_and_a_bad_file_keeps_its_reason():
    assert item_line(item("a.pdf"), 1) == ("queued", "**a.pdf** — next in the queue")
    assert item_line(item("a.pdf", seconds_left=40.0), 3)[1] == "**a.pdf** — 3rd in line"  # the summary says when
    busy = item("b.pdf", "indexing", stage="embedding", done=40, total=120, seconds_left=32.0)
    assert item_line(busy)[1] == "**b.pdf** — embedding 40/120 · 32 s left"
    assert item_line(item("b.pdf", "indexing", stage="embedding", done=40, total=120, seconds_left=12.0))[1] == \
        "**b.pdf** — embedding 40/120"  # a few seconds: not worth the name's room
    assert item_line(item("b.pdf", "indexing", stage="indexing", seconds_left=0.2))[1] == \
        "**b.pdf** — saving to the library"
    assert item_line(item("b.pdf", "indexing", stage="reading"))[1] == "**b.pdf** — reading"  # no estimate yet
    failed = item("*x*.pdf", "failed", result=IngestResult("*x*.pdf", "failed", reason="the file is encrypted"))
    assert item_line(failed) == ("failed", "**\\*x\\*.pdf** — failed: the file is encrypted")
    cancelled = item("c.txt", "cancelled", note="cancelled before it was indexed")
    assert item_line(cancelled) == ("cancelled", "**c.txt** — cancelled before it was indexed")  # said once
    done = item("d.txt", "indexed", result=IngestResult("d.txt", "indexed", chunks=3, seconds=1.5))
    assert item_line(done)[1].startswith("**d.txt** — indexed (3 chunks")


def test_pending_files_come_first_in_queue_order_then_the_latest_results():
    items = [item("old.txt", "indexed", 1, finished_at=1.0, result=IngestResult("old.txt", "indexed")),
             item("new.txt", "failed", 2, finished_at=2.0, result=IngestResult("new.txt", "failed", reason="r")),
             item("now.txt", "indexing", 3, stage="reading"), item("next.txt", "queued", 4),
             item("later.txt", "queued", 5, seconds_left=90.0)]
    lines = queue_lines(items)
    assert [i.name for i, _s, _l in lines] == ["now.txt", "next.txt", "later.txt", "new.txt", "old.txt"]
    assert "next in the queue" in lines[1][2] and "2nd in line" in lines[2][2]
    assert summary(items) == "Indexing 3 files · about 1 min 30 s left"
    assert summary(items[:2]) == "1 indexed, 1 failed"  # the batch is over: what became of it, failures named


def test_a_failed_upload_stays_in_sight_however_many_came_after_it():
    from ui.queue_view import fold

    finished = [(None, "indexed", f"ok{n}") for n in range(6)] + [(None, "failed", "bad"), (None, "indexed", "old")]
    shown, folded = fold(finished, 5)
    assert [line for _i, _s, line in shown] == ["ok0", "ok1", "ok2", "ok3", "ok4", "bad"]
    assert [line for _i, _s, line in folded] == ["ok5", "old"]


def test_the_note_names_the_files_an_answer_could_not_search():
    assert pending_note(()) == ""
    assert pending_note(("a.pdf",)) == "Not searched for this answer: a.pdf was still being indexed. Ask again once done."
    many = pending_note(tuple(f"f{n}.pdf" for n in range(7)), limit=3)
    assert "f0.pdf, f1.pdf, f2.pdf and 4 more were still being indexed" in many


def test_a_paused_queue_says_the_disk_is_full_how_many_wait_and_what_brings_them_back():
    from advanced_retrieval.ingest import Pause
    from ui.queue_view import pause_line

    full = Pause("Chroma at x failed: database or disk is full")
    waiting = [item(f"f{n}.txt", seq=n, seconds_left=30.0 * n) for n in range(1, 30)]
    assert summary(waiting, full) == "Paused: the disk is full · 29 files wait"
    assert pause_line(full, 29) == ("**The disk is full**: 29 files wait, their uploads kept. Free some disk space and "
                                    "start the program again; they resume then. (The write that failed: Chroma at x "
                                    "failed\\: database or disk is full)")  # shown literally (md_text)
    assert pause_line(Pause("disk I/O error"), 1).startswith("**The disk refused a write**: 1 file waits, its upload kept")


def test_a_queue_file_set_aside_is_named_with_why_and_where_its_bytes_are():
    from advanced_retrieval.ingest import SetAside
    from ui.queue_view import set_aside_line

    line = set_aside_line(SetAside("0001-ab.json.damaged", "seq is \"2\", not a whole number", "0001-ab.upload"))
    assert line == ("A queue entry was set aside as **0001-ab.json.damaged** in the queue folder: seq is \"2\", not a "
                    "whole number; its upload is kept as 0001-ab.upload. It was not indexed; upload the file again if "
                    "it is yours.")


def test_a_file_still_to_do_fits_one_sidebar_line_its_name_giving_way_never_its_status():
    long = "FinanceBench_AMD_2015_annual_report_10K_final.pdf"
    busy = item(long, "indexing", stage="embedding", done=400, total=1200, seconds_left=125.0)
    state, line = item_line(busy)
    shown = line.replace("**", "")
    assert shown.startswith("Fina") and shown.endswith("l.pdf — embedding 400/1200 · 2 min left")  # not 2 min 05 s
    assert len(shown.split(" — ")[0]) == 10  # the name gives way down to 10 characters, the status never
    short = item_line(item(long, "indexing", stage="embedding", done=4, total=35, seconds_left=25.0))[1]
    assert len(short.replace("**", "")) == ROW_CHARS and short.endswith(" — embedding 4/35 · 25 s left")
    later = item_line(item(long, seconds_left=40.0), 2)[1].replace("**", "").replace("\\", "")
    assert len(later) <= ROW_CHARS - 3 and later.endswith(".pdf — 2nd in line")  # 3: the clock icon's room
    assert item_line(item("AverageTaxRates.xlsx", "indexing", stage="embedding", done=13, total=45,
                          seconds_left=1.0))[1] == "**AverageTaxRates.xlsx** — embedding 13/45"
    assert short_name("a.pdf", 20) == "a.pdf" and short_name("quarterly-operations-review.txt", 20) == \
        "quarterly-…eview.txt" and len(short_name("x" * 90, 20)) == 20


def test_failures_and_warnings_keep_their_whole_reason_in_sight():
    done = item("d.txt", "indexed", result=IngestResult("d.txt", "indexed", chunks=3))
    warned = item("w.pdf", "indexed", result=IngestResult("w.pdf", "indexed", chunks=3, warnings=["page 2 is blank"]))
    failed = item("f.pdf", "failed", result=IngestResult("f.pdf", "failed", reason="the file is damaged"))
    assert one_line(item("q.txt"), "queued") and one_line(done, "indexed")
    assert not one_line(warned, "indexed") and not one_line(failed, "failed")
