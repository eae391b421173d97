"""Pure scoring functions: answer matching, refusals, retrieval ranks, citations, claims, percentiles, calibration."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath

from agentic_rag import Citation, Claim, is_refusal
from document_processor import Chunk
from evaluation.dataset import GoldSource

# A number as people write it: thousands separators, decimals. Not part of a longer number ("8" is not read out of
# "18", "1.8" or "8.5"); letters may touch it, because PDF extraction glues words ("=0.999and"). Signs are ignored:
# "-5" and "(5)" are both 5, as the key facts we check are magnitudes.
_NUMBER = re.compile(r"(?<![\d.])(?<!\d,)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d)(?![.,]\d)")
_PLAIN_NUMBER = re.compile(r"^[$€£]?\s*[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*%?$")
_MARKER = re.compile(r"\[(\d+(?:\s*[,;–-]\s*\d+)*)\]")
# A passage quoted in the answer keeps its own reference marks ("... label smoothing [36]"); they are the
# source's, not the answer's citations.
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”')

# Phrases that say "the documents do not answer this". They talk about finding, information or the documents,
# never about the subject, so a negation answer ("the model does not use recurrence") is not a refusal.


def normalize(text: str) -> str:
    """Lower case, unicode-compatible forms, one space, thousands separators dropped ("1,000" → "1000")."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = text.replace("\u2212", "-").replace("\u2013", "-").replace("\u2014", "-").replace("\u2019", "'")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return re.sub(r"\s+", " ", text).strip()


def numbers_in(text: str) -> list[float]:
    """Every number written in `text`, thousands separators allowed ("1,000.5" → 1000.5)."""
    text = unicodedata.normalize("NFKC", text)
    return [float(m.group(0).replace(",", "")) for m in _NUMBER.finditer(text)]


def alternative_in(alternative: str, answer: str) -> bool:
    """True when `alternative` occurs in `answer`: as the same number, or as whole words, case-insensitively.

    A plain number ("8", "1,000", "$1,577.00", "36.8%") matches an equal number in the answer, never a part of
    another number ("8" is not in "18" nor in "8.5"). Other text matches on word boundaries ("eight" is not in
    "eighteen").
    """
    if _PLAIN_NUMBER.match(alternative.strip()):
        wanted = float(re.sub(r"[^\d.]", "", alternative))
        return any(math.isclose(found, wanted, rel_tol=1e-9, abs_tol=1e-12) for found in numbers_in(answer))
    needle = normalize(alternative)
    if not needle:
        return False
    pattern = re.escape(needle).replace(r"\ ", r"\s*")
    left = r"(?<![\w])" if needle[0].isalnum() else ""
    right = r"(?![\w])" if needle[-1].isalnum() else ""
    if needle[0].isdigit():
        left += r"(?<!\d[.,])"
    if needle[-1].isdigit():
        right += r"(?![.,]\d)"
    return re.search(left + pattern + right, normalize(answer)) is not None


def missing_groups(answer: str, groups: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
    """The answer groups of which `answer` contains no alternative (empty = every key fact present)."""
    return [tuple(group) for group in groups if not any(alternative_in(alt, answer) for alt in group)]


def has_key_facts(answer: str, groups: Sequence[Sequence[str]]) -> bool:
    """True when `answer` contains one alternative of every group (no groups: True)."""
    return not missing_groups(answer, groups)


def chunk_matches(chunk: Chunk, gold: Iterable[GoldSource]) -> bool:
    """True when the chunk is from a gold file and, where both sides name them, on a gold page (or slide, for a
    slide deck) and on a gold sheet (for a workbook; sheet names compared case-insensitively)."""
    name = PurePath(chunk.file_name).name.casefold()
    where = chunk.location
    unit = where.page if where.page is not None else where.slide
    for source in gold:
        if source.file.casefold() != name:
            continue
        on_page = not source.pages or unit is None or unit in source.pages
        on_sheet = not source.sheets or where.sheet is None or \
            where.sheet.casefold() in {s.casefold() for s in source.sheets}
        if on_page and on_sheet:
            return True
    return False


def first_hit_rank(chunks: Sequence[Chunk], gold: Sequence[GoldSource]) -> int | None:
    """1-based position of the first chunk that matches the gold, or None (also when there is no gold)."""
    if not gold:
        return None
    return next((rank for rank, chunk in enumerate(chunks, start=1) if chunk_matches(chunk, gold)), None)


def hit_at_k(ranks: Sequence[int | None], k: int) -> float | None:
    """Share of questions whose first hit is within the top k (None when there are no questions)."""
    if not ranks:
        return None
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr(ranks: Sequence[int | None], cutoff: int = 10) -> float | None:
    """Mean reciprocal rank: a first hit at rank 3 scores 1/3, none within `cutoff` scores 0."""
    if not ranks:
        return None
    return sum(1.0 / r for r in ranks if r is not None and r <= cutoff) / len(ranks)


def citation_markers(answer: str) -> list[int]:
    """The citation numbers written in the answer, in order, without repeats: "[1][3]", "[1, 2]", "[2-4]".

    Marks inside a double-quoted passage are the quoted source's own references and are skipped.
    """
    seen: dict[int, None] = {}
    for match in _MARKER.finditer(_QUOTED.sub(" ", answer)):
        for part in re.split(r"\s*[,;]\s*", match.group(1)):
            bounds = [int(x) for x in re.split(r"\s*[–-]\s*", part)]
            lo, hi = bounds[0], bounds[-1]
            # "[1-3]" is a range; a reversed or absurd one is read as its two ends only.
            numbers = range(lo, hi + 1) if 0 <= hi - lo <= 20 else (lo, hi)
            seen.update(dict.fromkeys(numbers))
    return list(seen)


def check_citations(answer: str, citations: Sequence[Citation], gold_files: Sequence[str] = ()) -> tuple[bool | None, str]:
    """Whether every [n] in the answer is a listed citation from a gold file (when gold files are given).

    Returns (valid, reason). A refusal without markers is not scored (None); any other answer without markers
    is invalid, because an answer from documents must say where it came from.
    """
    markers = citation_markers(answer)
    if not markers:
        return (None, "refusal, nothing to cite") if is_refusal(answer) else (False, "no citation markers")
    by_number = {c.n: c for c in citations}
    gold = {f.casefold() for f in gold_files}
    for n in markers:
        cited = by_number.get(n)
        if cited is None:
            return False, f"[{n}] is not among the {len(citations)} citations"
        name = PurePath(cited.file).name
        if gold and name.casefold() not in gold:
            return False, f"[{n}] cites {name}, not the gold file {' or '.join(sorted(gold_files))}"
    return True, f"{len(markers)} citation(s) valid"


def supported_claims(claims: Sequence[Claim]) -> tuple[int, int]:
    """(claims whose verdict is "supported", all claims)."""
    return sum(1 for c in claims if c.verdict.lower() == "supported"), len(claims)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between closest ranks; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, or None for no values."""
    return sum(values) / len(values) if values else None


# Confidence bands of the reliability table: [0, .2), [.2, .5), [.5, .8), [.8, 1]; the last band includes 1.
CONFIDENCE_EDGES = (0.0, 0.2, 0.5, 0.8, 1.0)
HIGH_CONFIDENCE = 0.8  # answers shown at or above it should be right at least 90% of the time
LOW_CONFIDENCE = 0.5  # most wrong answers should show less than this


@dataclass(frozen=True)
class ConfidenceBand:
    """One row of a reliability table: answers whose confidence is in [low, high) (the last band: [low, high])."""

    low: float
    high: float
    count: int
    correct: int
    mean_confidence: float | None

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.count if self.count else None

    def to_dict(self) -> dict:
        return {"low": self.low, "high": self.high, "count": self.count, "correct": self.correct,
                "accuracy": self.accuracy, "mean_confidence": self.mean_confidence}


@dataclass(frozen=True)
class Calibration:
    """How well confidence predicts correctness, over (confidence, correct) pairs.

    bands: the reliability table; auroc: the chance a random right answer shows more confidence than a random wrong
    one (ties count half; None without both kinds); precision_high: share right of the answers at >= HIGH_CONFIDENCE;
    wrong_low: share of the wrong answers below LOW_CONFIDENCE.
    """

    pairs: int
    correct: int
    bands: tuple[ConfidenceBand, ...]
    auroc: float | None
    precision_high: float | None
    high: int
    wrong_low: float | None
    wrong: int

    def to_dict(self) -> dict:
        out = dict(self.__dict__)
        out["bands"] = [b.to_dict() for b in self.bands]
        out["high_threshold"], out["low_threshold"] = HIGH_CONFIDENCE, LOW_CONFIDENCE
        return out


def reliability_table(pairs: Sequence[tuple[float, bool]],
                      edges: Sequence[float] = CONFIDENCE_EDGES) -> tuple[ConfidenceBand, ...]:
    """Count and accuracy per confidence band; a confidence outside [edges[0], edges[-1]] is clipped into it."""
    bands = []
    for i, (low, high) in enumerate(zip(edges, edges[1:], strict=False)):
        last = i == len(edges) - 2
        inside = [(c, ok) for c, ok in pairs
                  if low <= _clip(c, edges) < high or (last and _clip(c, edges) == high)]
        bands.append(ConfidenceBand(low=low, high=high, count=len(inside), correct=sum(ok for _, ok in inside),
                                    mean_confidence=mean([c for c, _ in inside])))
    return tuple(bands)


def _clip(value: float, edges: Sequence[float]) -> float:
    return min(max(value, edges[0]), edges[-1])


def auroc(pairs: Sequence[tuple[float, bool]]) -> float | None:
    """Area under the ROC curve of confidence against correctness, by the rank (Mann-Whitney U) formula.

    Confidences are ranked from 1 with ties given their average rank; AUROC = (R+ - n+(n+ + 1)/2) / (n+ n-),
    where R+ is the rank sum of the right answers. 0.5 is chance, 1.0 every right answer above every wrong one.
    None when the pairs are not both right and wrong.
    """
    positives = sum(1 for _, ok in pairs if ok)
    negatives = len(pairs) - positives
    if not positives or not negatives:
        return None
    ordered = sorted(range(len(pairs)), key=lambda i: pairs[i][0])
    ranks = [0.0] * len(pairs)
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and pairs[ordered[end + 1]][0] == pairs[ordered[start]][0]:
            end += 1
        for i in ordered[start:end + 1]:
            ranks[i] = (start + end) / 2 + 1  # the average of the 1-based ranks start+1 .. end+1
        start = end + 1
    rank_sum = sum(rank for rank, (_, ok) in zip(ranks, pairs, strict=True) if ok)
    return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives)


def calibration(pairs: Sequence[tuple[float, bool]]) -> Calibration | None:
    """Reliability table, AUROC and the two target shares for (confidence, correct) pairs; None for no pairs."""
    if not pairs:
        return None
    pairs = [(float(c), bool(ok)) for c, ok in pairs]
    high = [ok for c, ok in pairs if c >= HIGH_CONFIDENCE]
    wrong = [c for c, ok in pairs if not ok]
    return Calibration(
        pairs=len(pairs), correct=sum(ok for _, ok in pairs), bands=reliability_table(pairs), auroc=auroc(pairs),
        precision_high=sum(high) / len(high) if high else None, high=len(high),
        wrong_low=sum(1 for c in wrong if c < LOW_CONFIDENCE) / len(wrong) if wrong else None, wrong=len(wrong),
    )
