"""Extractive answers: which sentences, windows or table rows of the passages answer a sub-question, if any.

Each passage is cut into units (sentences; table rows, which keep their header row) and windows of one or two
neighbouring units. A window scores by the weighted share of the question's concepts it holds itself (its
passage's names count in part), the share its whole passage holds, its cosine to the question (for the best
few, when an embedder is given), whether it states a number when one is asked for (best next to what is
asked for), and its passage's retrieval rank. Only windows that pass the relevance gate (`passes`) are
quoted; when none does, the sub-question is not answered: refusing beats quoting something beside the point.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from agentic_rag.language.concepts import MEASURES, Concept, coverage, forms_of, has_number, near, query_concepts
from agentic_rag.language.text import STOPWORDS, asked_years, numbers, sentences, unwrap, years_in
from agentic_rag.tables.plan import other_quarter, quarters_of
from agentic_rag.types import ContextBlock

MAX_UNIT_CHARS = 600  # a longer "sentence" (mostly a flattened table) is cut into clauses
PIECE_CHARS = 240
SHORT_WORDS = 3  # a quote this short (a label, a fragment) gets its preceding sentence for context
CONTEXT_WEIGHT = 0.5  # score = own coverage + this x coverage by the whole passage (file name, headings)
COSINE_WEIGHT = 0.6
NUMBER_BONUS = 0.25  # a question asking "how many / what value" wants a window stating a number
NEAR_BONUS = 0.2  # ... best right next to what is asked for ("N = 6 identical layers")
NO_NUMBER_PENALTY = 0.25
PAIR_PENALTY = 0.15  # two sentences must cover more than one to win
NAME_CREDIT = 0.75  # share of a name's weight a window gets when its passage, not the window, holds the name
UNNAMED_PENALTY = 0.4  # a window whose document's passages lack a name the question gives
RANK_PENALTY = 0.01  # per retrieval rank, to break ties in the retriever's favour
EMBED_TOP = 4  # windows whose cosine is computed (the best by words): embedding is the slow part
EMBED_CHARS = 400  # of a window, for its cosine
SECOND_QUOTE = 0.8  # a further quote must score at least this share of the best one
_NUMERIC_ASK = re.compile(rf"\b(?:how (?:{'|'.join(MEASURES)})|what (?:[\w-]+ ){{0,3}}?"
                          r"(?:value|number|percentage|percent|share|rate|ratio|score|size|amount|error|accuracy|"
                          r"price|cost|year|date)s?|when)\b", re.IGNORECASE)
_LEADS_ON = re.compile(r"^(?:it|its|this|that|these|those|they|their|such|however|thus|therefore|hence|"
                       r"he|she|which)\b", re.IGNORECASE)
_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}")


@dataclass(frozen=True)
class Gate:
    """The relevance gate a sub-question's best window must pass to be quoted (calibrated on eval/)."""

    min_own: float = 0.4  # of the concepts' weight, in the window itself
    min_context: float = 0.6  # in the window's whole passage, with its file name and headings
    min_cosine: float = 0.15  # to the question, when an embedder is given (unrelated text scores ~0-0.15) ...
    strong_own: float = 0.75  # ... unless the window holds this much of the question's words
    min_own_unnamed: float = 0.75  # in a document whose passages lack a name the question gives (found elsewhere)
    # A paraphrase: the document words the question differently ("gain" for "better off", "maintains" for
    # "still holds"), so fewer of its words match, but the meaning is close. Such a window passes with less of
    # the question's words when its cosine is high; what it says need not repeat the asked-for word.
    paraphrase_cosine: float = 0.5
    paraphrase_own: float = 0.3
    paraphrase_context: float = 0.45
    unfocused_cosine: float = 0.6


@dataclass(frozen=True)
class Unit:
    """A quotable piece of a passage: a sentence, a clause of a very long one, or a table row with its header."""

    text: str
    index: int
    header: str = ""
    cut_before: bool = False  # a clause of a longer sentence: quoted with "…" where it was cut
    cut_after: bool = False


@dataclass(frozen=True)
class Window:
    """One or two neighbouring units of one passage, and how well they answer the sub-question."""

    block: ContextBlock
    units: tuple[Unit, ...]
    own: float = 0.0
    context: float = 0.0
    cosine: float | None = None  # to the question; None when not computed
    number: bool = False
    focused: bool = True  # holds (or its headings do) one of the words saying what is asked for, if any
    near: bool = False  # states a number right next to what is asked for
    named: bool = True  # its document's passages hold every name and number of the question
    sibling: bool = False  # names a sibling of a name the question gives ("chief executive" for "chief financial")
    worded: bool = True  # holds a word of the question besides its names and numbers
    names: frozenset[str] = frozenset()  # the question's names and numbers the window itself holds
    score: float = 0.0

    @property
    def text(self) -> str:
        """The window's words as they stand in the passage (after unwrapping)."""
        return " ".join(u.text for u in self.units)

    @property
    def span(self) -> range:
        """Indexes of its units in the passage."""
        return range(self.units[0].index, self.units[-1].index + 1)


@dataclass(frozen=True)
class Ask:
    """A sub-question as the scorer sees it."""

    text: str
    concepts: tuple[Concept, ...]
    wants_number: bool
    given_numbers: frozenset[str]

    @property
    def focus(self) -> tuple[Concept, ...]:
        """The concepts saying what is asked for ("what [share price]")."""
        return tuple(c for c in self.concepts if c.focus)

    @property
    def counts(self) -> bool:
        """'How many / how much': an answer without a number cannot be one."""
        return bool(re.search(r"\bhow (?:many|much)\b", self.text, re.IGNORECASE))

    @classmethod
    def of(cls, question: str, qtype: str = "fact") -> Ask:
        """The concepts, numbers and number-wanting of `question` (`qtype` one of QUESTION_TYPES)."""
        wants = qtype == "numeric" or bool(_NUMERIC_ASK.search(question))
        return cls(question, query_concepts(question), wants, frozenset(numbers(question)))


def units_of(text: str) -> list[Unit]:
    """The quotable units of a passage, in order; table rows carry their header row, separator lines none."""
    out: list[Unit] = []
    lines = unwrap(text).splitlines()
    header = ""
    for i, line in enumerate(lines):
        line = line.strip()
        if not _is_row(line):
            header = ""
            for sentence in sentences(line):
                out.extend(_clauses(sentence, len(out)))
            continue
        if _SEPARATOR.match(line):
            continue
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not header and (_SEPARATOR.match(following) or _is_row(following)):
            header = line  # the first row of a table, or the row a separator line follows
            continue
        out.append(Unit(line, len(out), header))
    return _tidy(out)


def _tidy(units: list[Unit]) -> list[Unit]:
    """Without stray footnote marks ("3") and headings; a lead-in ("... two model sizes:") joined to what it
    leads to."""
    out: list[Unit] = []
    for i, u in enumerate(units):
        text = u.text.strip()
        heading = len(text.split()) <= SHORT_WORDS and not text.endswith((".", "!", "?", ":"))
        if not u.header and ((len(text) <= 3 and not text.isalpha()) or (heading and i + 1 < len(units))):
            continue  # a footnote mark, or a heading ("7.1 AdaMax"): the passage's label already names it
        prev = out[-1] if out else None
        if prev and not prev.header and not u.header and not prev.cut_after and prev.text.endswith(":"):
            out[-1] = replace(prev, text=f"{prev.text} {u.text}", cut_after=u.cut_after)
            continue
        out.append(replace(u, index=len(out)))
    return out


def windows_of(block: ContextBlock, units: Sequence[Unit]) -> list[Window]:
    """Every unit alone, and every two neighbouring sentences (rows stand alone: their header is their context)."""
    out = [Window(block, (u,)) for u in units]
    out += [Window(block, (a, b)) for a, b in zip(units, units[1:], strict=False) if not a.header and not b.header]
    return out


def score_windows(ask: Ask, windows: Sequence[Window], passages) -> list[Window]:
    """Words and numbers of every window and of its whole passage (best first); `add_cosine` adds the cosine.

    `passages` has, per block number, `forms` (of its text and label) and `labels` (of its file name and
    headings), and per document id, `named` (its passages hold every name and number of the question).
    """
    scored = []
    for w in windows:
        own_forms = forms_of(w.text + " " + w.units[0].header)
        label, around = passages.labels[w.block.n], passages.forms[w.block.n]
        # A sentence's passage says what it is about; a table row's siblings do not name the row.
        names = label if w.units[0].header else around
        number = has_number(w.text, ask.given_numbers)
        w = replace(w, own=coverage(ask.concepts, own_forms, names, NAME_CREDIT),
                    context=coverage(ask.concepts, own_forms | around), number=number,
                    focused=not ask.focus or any(c.met(own_forms | label) for c in ask.focus),
                    sibling=_sibling(ask.text, w.text),
                    worded=any(c.met(own_forms) for c in ask.concepts if not c.specific),
                    near=number and _near(ask, w), named=passages.named(ask, w.block.chunk.doc_id),
                    names=frozenset(c.text for c in ask.concepts if c.specific and c.met(own_forms)))
        scored.append(replace(w, score=_score(ask, w)))
    return sorted(scored, key=lambda w: -w.score)


def add_cosine(ask: Ask, windows: list[Window], embedder) -> list[Window]:
    """The EMBED_TOP best windows re-scored with their cosine to the question; best first.

    When a number is asked for, up to EMBED_TOP more among the next best that state one right next to what is
    asked for are embedded too: "we employ h = 8 parallel attention layers, or heads" lacks the question's other
    words ("base Transformer use") and would otherwise never get the cosine that wordier windows get.
    """
    if embedder is None or not windows:
        return windows
    top = windows[:EMBED_TOP]
    if ask.wants_number:
        top += [w for w in windows[EMBED_TOP:EMBED_TOP * 4] if w.near][:EMBED_TOP]
    chosen = {id(w) for w in top}
    rest = [w for w in windows if id(w) not in chosen]
    vectors = np.asarray(embedder.embed([render(w)[:EMBED_CHARS] for w in top]))
    cos = vectors @ np.asarray(embedder.embed_query(ask.text))
    top = [replace(w, cosine=float(c)) for w, c in zip(top, cos, strict=True)]
    top = [replace(w, score=_score(ask, w)) for w in top]
    return sorted(top, key=lambda w: -w.score) + rest


def passes(gate: Gate, ask: Ask, window: Window) -> bool:
    """Whether `window` answers enough of the sub-question to be quoted at all.

    It must hold one of the words saying what is asked for (if the question has any: "what [share price]"),
    and be close to the question in meaning (cosine) unless its words leave no doubt (gate.strong_own); or,
    worded differently, be closer still in meaning (gate.paraphrase_*);
    a window whose document does not hold every name of the question (they are found in other documents) must
    itself hold gate.min_own_unnamed of the question; "how many / how much" wants a number; a window naming a
    sibling of a name the question gives ("chief executive officer" for "chief financial officer") never passes.
    """
    if not (window.number or not ask.counts) or window.sibling:
        return False
    own = gate.min_own if window.named else gate.min_own_unnamed
    if (window.focused and window.own >= own and window.context >= gate.min_context
            and (window.cosine is None or window.cosine >= gate.min_cosine or window.own >= gate.strong_own)):
        return True
    cosine = window.cosine or 0.0
    # a paraphrase says what is asked in other words, but some of its own: a sentence holding only the names the
    # question gives ("Ulta Beauty's annual revenue ..." for "Who is Ulta Beauty's chief financial officer?") is
    # close to any question about them
    return (window.named and window.worded and cosine >= gate.paraphrase_cosine and window.own >= gate.paraphrase_own
            and window.context >= gate.paraphrase_context and (window.focused or cosine >= gate.unfocused_cosine))


def _words(text: str) -> list[str]:
    return [w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w
            for w in re.findall(r"[a-z]+", text.lower())]


def _sibling(question: str, text: str) -> bool:
    """Whether `text` names a sibling of a three-word name the question gives: its first and last words with
    another word between them, in one phrase (no comma or other mark between), and the question's middle word
    nowhere in it ("chief executive officer" for "chief financial officer"; "national, evolving program" lists,
    it names no sibling of "national disability program"). Such a passage is about something else, however many
    of the question's words it holds."""
    asked = _words(question)
    held = forms_of(text)
    for a, b, c in zip(asked, asked[1:], asked[2:], strict=False):
        if min(len(a), len(b), len(c)) < 3 or {a, b, c} & STOPWORDS or forms_of(b) & held:
            continue
        for phrase in re.split(r"[^\w\s'’]+", text):
            said = _words(phrase)
            if any(x == a and z == c and y != b and y not in STOPWORDS
                   for x, y, z in zip(said, said[1:], said[2:], strict=False)):
                return True
    return False


def _near(ask: Ask, w: Window) -> bool:
    """A number next to what is asked for; a table row's header names its columns, so any number in it counts."""
    focus = ask.focus or ask.concepts
    if w.units[0].header:
        return any(c.met(forms_of(w.units[0].header + " " + w.text)) for c in focus)
    return near(focus, w.text, ask.given_numbers, counting=ask.counts)


def pick(windows: Sequence[Window], limit: int) -> list[Window]:
    """The best of `windows` (best first, all acceptable) and up to limit-1 more that score nearly as well, hold
    the names the best one holds and do not overlap the ones chosen."""
    if not windows:
        return []
    best = windows[0]
    chosen = [best]
    for w in windows[1:]:
        if len(chosen) >= limit or w.score < SECOND_QUOTE * best.score:
            break
        # The Halden row is no second answer to a question about Smola that the Smola row answers.
        if w.names >= best.names and not any(_overlaps(w, c) for c in chosen):
            chosen.append(w)
    return chosen


def with_context(window: Window, units: Sequence[Unit]) -> Window:
    """A short window, or one that leans on what came before ("It ...", "This ..."), with its previous sentence
    (a short one at the start of its passage, with the next)."""
    first = window.units[0]
    short = len(window.text.split()) <= SHORT_WORDS
    if first.header or len(window.units) > 1 or not (short or _LEADS_ON.match(first.text)):
        return window
    if first.index > 0 and not units[first.index - 1].header:
        return replace(window, units=(units[first.index - 1], first))
    if short and first.index + 1 < len(units) and not units[first.index + 1].header:
        return replace(window, units=(first, units[first.index + 1]))  # a title: what follows says more
    return window


def render(window: Window) -> str:
    """The quote as it appears in the answer: a table row after its header, a cut clause marked with '…'."""
    first, last = window.units[0], window.units[-1]
    # Double quotes inside would end the quotation early; the verifier reads every kind of quote mark as "'".
    text = re.sub(r'["“”]', "'", " ".join(" ".join(u.text.split()) for u in window.units))
    if first.header:
        text = f"{' '.join(first.header.split())} … {text}"
    return ("… " if first.cut_before else "") + text + (" …" if last.cut_after else "")


def _score(ask: Ask, w: Window) -> float:
    numeric = 0.0
    if ask.wants_number:
        numeric = NUMBER_BONUS if w.number else -NO_NUMBER_PENALTY
        numeric += NEAR_BONUS if w.near else 0.0
    pair = PAIR_PENALTY if len(w.units) > 1 else 0.0
    unnamed = 0.0 if w.named else UNNAMED_PENALTY
    return (w.own + CONTEXT_WEIGHT * w.context + COSINE_WEIGHT * (w.cosine or 0.0) + numeric - pair - unnamed
            - RANK_PENALTY * w.block.hit.rank)


def _overlaps(a: Window, b: Window) -> bool:
    if a.block.chunk.doc_id != b.block.chunk.doc_id:
        return False
    same_text = a.text in b.text or b.text in a.text
    return same_text or (a.block.n == b.block.n and bool(set(a.span) & set(b.span)))


def _is_row(line: str) -> bool:
    return line.startswith("|") or line.count(" | ") >= 1


def _clauses(sentence: str, start: int) -> list[Unit]:
    """A sentence as one unit, or, when it is very long, its clauses grouped up to PIECE_CHARS each."""
    if len(sentence) <= MAX_UNIT_CHARS:
        return [Unit(sentence, start)]
    parts = [p for part in re.split(r"(?<=[;,:)])\s+|\s+(?=\()", sentence) for p in _hard_split(part)]
    pieces, current = [], ""
    for part in parts:
        if current and len(current) + len(part) > PIECE_CHARS:
            pieces.append(current)
            current = part
        else:
            current = f"{current} {part}".strip()
    pieces.append(current)
    last = len(pieces) - 1
    return [Unit(p, start + i, cut_before=i > 0, cut_after=i < last) for i, p in enumerate(pieces)]


def _hard_split(part: str) -> list[str]:
    """A clause without punctuation (a flattened table) in pieces of about PIECE_CHARS, at spaces."""
    out = []
    while len(part) > PIECE_CHARS:
        cut = part.rfind(" ", 0, PIECE_CHARS)
        cut = cut if cut > 0 else PIECE_CHARS
        out.append(part[:cut])
        part = part[cut:].strip()
    return out + [part] if part else out


@dataclass(frozen=True)
class Passages:
    """The numbered passages, cut into units, with the word forms of their labels and of their documents."""

    blocks: tuple[ContextBlock, ...]
    units: dict = field(default_factory=dict)  # block number -> units
    forms: dict = field(default_factory=dict)  # block number -> forms of its text, file name and headings
    labels: dict = field(default_factory=dict)  # block number -> forms of its file name and headings
    documents: dict = field(default_factory=dict)  # doc id -> forms of every passage of it

    @classmethod
    def of(cls, blocks: Sequence[ContextBlock]) -> Passages:
        """Units and word forms of every block, read once for all the sub-questions."""
        labels = {b.n: forms_of(_label(b)) for b in blocks}
        forms = {b.n: labels[b.n] | forms_of(b.chunk.text) for b in blocks}
        documents: dict[str, set[str]] = {}
        for b in blocks:
            documents.setdefault(b.chunk.doc_id, set()).update(forms[b.n])
        return cls(tuple(blocks), {b.n: units_of(b.chunk.text) for b in blocks}, forms, labels,
                   {d: frozenset(f) for d, f in documents.items()})

    def named(self, ask: Ask, doc_id: str) -> bool:
        """Whether the retrieved passages of `doc_id` hold every name and number of the question."""
        return _names_ok(ask, self.documents.get(doc_id, frozenset()))




def find_quotes(question: str, qtype: str, blocks: Sequence[ContextBlock], embedder=None, *, gate: Gate = Gate(),
                limit: int = 2, passages: Passages | None = None) -> list[tuple[int, str]]:
    """(passage number, quote) pairs that answer `question` from `blocks`, best first, at most `limit`; [] when
    no window passes the relevance gate (refusing beats quoting something beside the point).

    `passages` (Passages.of(blocks)) may be given when several sub-questions read the same blocks.
    """
    ask = Ask.of(question, qtype)
    passages = passages or Passages.of(blocks)
    blocks = list(blocks)
    if not _names_ok(ask, frozenset().union(*passages.documents.values())):
        return []  # a name or number no retrieved passage holds: the documents do not know it
    # When some document holds every name of the question, the question is about what it names: a passage
    # of another document ("3M's sales" for "Diageo's sales") answers something else, however well worded.
    named = [b for b in blocks if passages.named(ask, b.chunk.doc_id)]
    if any(c.specific for c in ask.concepts) and named:
        blocks = named
    windows = _unique(w for b in blocks for w in windows_of(b, passages.units[b.n]))
    if not windows:
        return []
    scored = add_cosine(ask, score_windows(ask, windows, passages), embedder)
    ok = _acceptable(gate, ask, summary=qtype == "summary")
    acceptable = [w for w in scored if ok(w)]
    if ask.counts and any(w.near for w in acceptable):
        # "How many layers": a figure right next to what is counted ("N = 6 identical layers") answers; a sentence
        # about layers whose only figures are a section number or a citation [10] does not, however well it scores
        acceptable = [w for w in acceptable if w.near]
    chosen = pick(acceptable, limit)
    chosen = [with_context(w, passages.units[w.block.n]) for w in chosen]
    quotes = {render(w): w.block.n for w in reversed(chosen)}  # the same words from two passages: cite the first
    return [(quotes[q], q) for q in dict.fromkeys(render(w) for w in chosen)]


def _acceptable(gate: Gate, ask: Ask, *, summary: bool) -> Callable[[Window], bool]:
    """The test every quoted window must pass; a summary quotes the best-matching passages, whatever they hold."""
    asked = asked_years(ask.text)
    quarters = quarters_of(ask.text)

    def ok(window: Window) -> bool:
        if summary:
            return True
        # "the budget in 2021": a sentence about the 2020 budget states another period, however well it matches;
        # so does one about the first quarter for a question about the second
        named = years_in(window.text)
        if asked and named and not named & asked or other_quarter(quarters, quarters_of(window.text)):
            return False
        return passes(gate, ask, window)

    return ok


def _names_ok(ask: Ask, document_forms: frozenset[str]) -> bool:
    """Every name and number of the question is somewhere in what was retrieved of the document."""
    return all(c.met(document_forms) for c in ask.concepts if c.specific)


def _unique(windows) -> list[Window]:
    """One window per text: overlapping chunks repeat sentences; the earliest passage keeps them."""
    seen: dict[str, Window] = {}
    for w in windows:
        seen.setdefault(w.text, w)
    return list(seen.values())


def _label(block: ContextBlock) -> str:
    c = block.chunk
    return f"{re.sub(r'[_.-]', ' ', c.file_name)} {' '.join(c.heading_path)} {c.context}"
