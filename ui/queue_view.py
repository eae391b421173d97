"""What the page says about the ingestion queue: one line per file, the time left, and the note under an answer
given while files are still being indexed.

No streamlit here, so all of it is tested without a browser. File names and reasons come from outside and are
shown literally (ui.helpers.md_text).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ui import helpers as ui

if TYPE_CHECKING:  # the page draws before advanced_retrieval (and chromadb) is imported
    from advanced_retrieval import QueueItem
    from advanced_retrieval.ingest import Pause, SetAside

STAGE_WORDS = {"reading": "reading", "ocr": "reading (OCR)", "chunking": "splitting into passages",
               "embedding": "embedding", "indexing": "saving to the library"}


def time_left(seconds: float | None) -> str:
    """ui.helpers.time_left, or '' while there is no estimate yet."""
    return "" if seconds is None else ui.time_left(seconds)


ROW_CHARS = 40  # what one line of the sidebar's queue holds (at its width, SIDEBAR_PX in ui.page)
ICON_CHARS = 3  # the room a waiting file's clock icon takes on that line
OWN_TIME_S = 20.0  # a file being indexed shows its own time left from this on (the summary line has the batch's)


def item_line(item: QueueItem, position: int = 0) -> tuple[str, str]:
    """(state, Markdown line) for one queue entry; `position` is its place among the files still waiting (1 = next).

    A file still to do gets one short line (the sidebar shows it on one line, ROW_CHARS): its status first in
    importance, its name shortened in the middle when both would not fit (the whole name is on its Cancel
    button's tooltip and, once indexed, in the library); the batch's time left is on the summary line above. A
    finished file reads as the library's result line (ui.helpers.result_line), so a bad file keeps its reason
    wherever it is shown.
    """
    if item.state == "queued":  # when the batch will be done is the summary line's to say
        waiting = "next in the queue" if position <= 1 else f"{_ordinal(position)} in line"
        return item.state, _row(item.name, waiting, ICON_CHARS)
    if item.state == "indexing":
        stage = STAGE_WORDS.get(item.stage, item.stage or "starting")
        if item.stage == "embedding" and item.total:
            stage += f" {item.done}/{item.total}"
        elif item.stage == "ocr" and item.total:
            stage += f" page {item.done}/{item.total}"
        left = item.seconds_left  # a file's own time left when it is worth the room its name gives up
        return item.state, _row(item.name, stage + (f" · {_short_time(left)} left" if left is not None
                                                     and left >= OWN_TIME_S else ""))
    if item.state == "cancelled" or item.result is None:
        reason = item.reason or "no reason given"
        said = reason if reason.startswith(item.state) else f"{item.state}: {reason}"  # not "cancelled: cancelled"
        return item.state, f"**{ui.md_text(item.name)}** — {ui.md_text(said)}"
    return ui.result_line(item.result)


def _short_time(seconds: float) -> str:
    """A row's estimate: '12 s', then whole minutes ('3 min'): a queue row has no room for '3 min 05 s'."""
    return f"{seconds:.0f} s" if seconds < 59.5 else f"{round(seconds / 60)} min"


def _row(name: str, status: str, icon: int = 0) -> str:
    """'**name** — status' in ROW_CHARS characters (less `icon`, the room the row's icon takes) where it can be:
    the name gives way, never the status."""
    room = max(ROW_CHARS - icon - len(status) - 3, 10)
    return f"**{ui.md_text(short_name(name, room))}** — {status}"


def short_name(name: str, limit: int) -> str:
    """`name` cut in the middle to `limit` characters, its end and extension kept ('FinanceBench…10K.pdf')."""
    if len(name) <= limit:
        return name
    stem, dot, ext = name.rpartition(".")
    base, tail = (stem, dot + ext) if stem and len(ext) <= 5 else (name, "")
    keep = max(limit - 1 - len(tail), 2)
    end = keep // 3
    return f"{base[:keep - end]}…{base[len(base) - end:] if end else ''}{tail}"


def one_line(item: QueueItem, state: str) -> bool:
    """Whether a row is shown on one line (cut short at the sidebar's edge if it must): every file still to do,
    and finished ones with nothing to warn about; a failure or a warning keeps its whole reason in sight."""
    if not item.finished:
        return True
    return state != "failed" and not (item.result is not None and item.result.warnings)


def queue_lines(items: Sequence[QueueItem]) -> list[tuple[QueueItem, str, str]]:
    """(item, state, Markdown) for each entry: files still to do first (in queue order), then finished ones, the
    most recent first."""
    pending = [i for i in items if not i.finished]
    finished = sorted((i for i in items if i.finished), key=lambda i: i.finished_at or 0.0, reverse=True)
    out = []
    waiting = 0
    for item in pending:
        waiting += item.state == "queued"
        out.append((item, *item_line(item, waiting)))
    return out + [(item, *item_line(item)) for item in finished]


OUTCOMES = ("indexed", "replaced", "duplicate", "failed", "cancelled")


def summary(items: Sequence[QueueItem], pause: Pause | None = None) -> str:
    """'Indexing 3 files · about 1 min 20 s left' for the files still to do ('Paused: the disk is full · 3 files
    wait' while paused); once none are left, what became of the uploads listed ('8 indexed, 1 failed'), so a
    failure is never only inside a folded list."""
    pending = [i for i in items if not i.finished]
    if pause is not None:
        return f"Paused: {_disk_words(pause)} · {ui.plural(len(pending), 'file')} wait{'s' if len(pending) == 1 else ''}"
    if not pending:
        counts = {state: sum(i.state == state for i in items) for state in OUTCOMES}
        return ", ".join(f"{n} {state}" for state, n in counts.items() if n)
    left = time_left(pending[-1].seconds_left)  # the last file's estimate counts the ones before it
    return f"Indexing {ui.plural(len(pending), 'file')}" + (f" · {left}" if left else "")


def pause_line(pause: Pause, waiting: int) -> str:
    """What the page says while a full disk holds the queue (Markdown): how many files wait, that their uploads
    are kept, and what brings them back."""
    them = "it resumes" if waiting == 1 else "they resume"
    return (f"**{_disk_words(pause).capitalize()}**: {ui.plural(waiting, 'file')} "
            f"{'waits' if waiting == 1 else 'wait'}, {'its upload' if waiting == 1 else 'their uploads'} kept. "
            f"Free some disk space and start the program again; {them} then. "
            f"(The write that failed: {ui.md_text(pause.cause)})")


def set_aside_line(entry: SetAside) -> str:
    """One queue file the queue did not write, set aside at open (Markdown)."""
    kept = f"; its upload is kept as {ui.md_text(entry.upload)}" if entry.upload else ""
    return (f"A queue entry was set aside as **{ui.md_text(entry.file_name)}** in the queue folder: "
            f"{ui.md_text(entry.reason)}{kept}. It was not indexed; upload the file again if it is yours.")


def _disk_words(pause: Pause) -> str:
    return "the disk is full" if pause.disk_full else "the disk refused a write"


def fold(finished: Sequence, recent: int) -> tuple[list, list]:
    """(shown, folded) of the finished entries (most recent first, each an (item, state, line)): the `recent`
    latest, and every failed one however old, are shown; the rest fold under "Earlier uploads"."""
    shown = [e for n, e in enumerate(finished) if n < recent or e[1] == "failed"]
    return shown, [e for e in finished if e not in shown]


def pending_note(names: Sequence[str], limit: int = 5) -> str:
    """The note under an answer given while files were still being indexed ('' when none were)."""
    if not names:
        return ""
    shown = ", ".join(ui.md_text(n) for n in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    verb = "was" if len(names) == 1 else "were"
    return f"Not searched for this answer: {shown}{more} {verb} still being indexed. Ask again once done."


def _ordinal(n: int) -> str:
    """'2nd', '3rd', '11th', '22nd'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
