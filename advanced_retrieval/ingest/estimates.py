"""How far a file's indexing is and how long it has left, from the knowledge base's progress callbacks.

Pure and clock-injected, so tests need no sleeping. The ingestion queue keeps one FileEstimate for the file it is
indexing and a Throughput over the files it finished, to say when a queued file will be done.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Share of a file's total work each stage covers; embedding dominates on CPU. OCR shares the reading span: a
# scan's pages report "ocr" page by page while it is being read.
STAGE_SPAN = {"reading": (0.0, 0.15), "ocr": (0.0, 0.15), "chunking": (0.15, 0.25), "embedding": (0.25, 0.92),
              "indexing": (0.92, 1.0)}
MIN_SECONDS_LEFT = 1.0  # below this an estimate says nothing useful ("about 0.0 s left"): None instead
# Saving to the library after the last passage is embedded (the store's upsert, the keyword index, the tables):
# 4.5-8 % of the embedding time on four 10-Ks (bench/estimates.py --batch), taken as a share of the whole
# file's embedding; as a share of what was left (the old "+10 %") it vanished near the end, where estimates ran
# 37-61 % short.
SAVING_SHARE = 0.1


class FileEstimate:
    """The fraction done and the seconds left of one file being indexed.

    The time left comes from the embedding rate once passages are being embedded (the long part). While a file
    is read and cut there is none: the share of the work those stages stand for differs by file (extrapolating
    a fixed share said 54-71 % too little on 10-Ks), and so does the queue's bytes-per-second (a 3.4 MB filing
    took 18 s, a 2.5 MB one 38 s; as a guess for the next file it was within 30 % for 59 % of the estimates
    where the embedding rate alone was for 91 %: bench/estimates.py --batch). A scan's OCR goes page by page and
    is extrapolated from the pages done. None too when under MIN_SECONDS_LEFT.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started = self.stage_started = self.last = clock()
        self.stage, self.done, self.total = "reading", 0, 0
        self.fraction = 0.0

    def update(self, stage: str, done: int, total: int) -> float:
        """Record one callback; returns the fraction done (0..1, never going back)."""
        now = self.clock()
        if stage != self.stage:
            # A stage whose first report already counts work done began at the previous report, not now: else
            # the rate leaves out the first batch ("8/600 passages · about 13 s left", then 2 min 43 s).
            self.stage, self.stage_started = stage, (self.last if done > 0 else now)
        self.last = now
        self.done, self.total = done, total
        low, high = STAGE_SPAN.get(stage, (self.fraction, self.fraction))
        part = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
        self.fraction = max(self.fraction, low + (high - low) * part)
        return self.fraction

    def seconds_left(self) -> float | None:
        """Estimated seconds to finish this file, or None (see the class docstring)."""
        now = self.clock()
        elapsed = now - self.started
        if self.stage == "embedding" and 0 < self.done < self.total:
            per_item = (now - self.stage_started) / self.done
            left = per_item * (self.total - self.done) + SAVING_SHARE * per_item * self.total
        elif self.stage in ("reading", "chunking"):
            return None
        else:
            if self.fraction < 0.05 or elapsed < 0.5 or self.fraction >= 1.0:
                return None
            left = elapsed * (1 - self.fraction) / self.fraction
        return left if left >= MIN_SECONDS_LEFT else None


class Throughput:
    """Bytes indexed per second over the files finished so far (an exponential average, so it follows a change of
    load), to estimate how long queued files will take."""

    def __init__(self, weight: float = 0.3):
        self.weight = weight
        self.rate: float | None = None

    def add(self, size: int, seconds: float) -> None:
        if size <= 0 or seconds <= 0:
            return
        rate = size / seconds
        self.rate = rate if self.rate is None else self.weight * rate + (1 - self.weight) * self.rate

    def seconds_for(self, size: int) -> float | None:
        return size / self.rate if self.rate else None
