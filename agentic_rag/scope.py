"""Routes by scope: a question about one passage, a whole document, a section of one, or everything of a kind.

- passage: the top passages retrieval finds (the usual route);
- document ("summarise X", "what is X about", "main points"): the opening passages of each main section of the
  document's outline, within the context budget;
- section ("what does the risk factors section say"): the section the question names, read in order;
- list ("list every dataset", "all the risk factors"): passages gathered across the document's sections, not
  only the top k, one section's best passages after another.
Whatever could not be read is said: `Reading.coverage` ("Read the opening passages of 9 of 11 sections; not read:
References, Appendix A"), and the answer carries that line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from advanced_retrieval import Filters, Hit
from advanced_retrieval.library.outline import Outline, Section, build_outline
from agentic_rag.language.question_rules import classify
from agentic_rag.language.text import estimate_tokens
from agentic_rag.tables.plan import TableAsk
from document_processor import Chunk

MAX_SECTIONS = 14  # main sections read for a summary; the rest are named as not read
DESCEND_BELOW = 8  # a level with fewer sections than this is read one level deeper
MIN_SECTION_TOKENS = 120  # each section read gets at least this much of the budget
HEADER_TOKENS = 24  # a passage header in the context: "[P12] file.pdf, p. 3 (Results > Revenue)"
SKIPPED = re.compile(r"^(?:\d[\d.]*\s+)?(?:references|bibliography|acknowledge?ments?|table of contents|contents|"
                     r"cover page|index)\b", re.IGNORECASE)
_SECTION = re.compile(r"\b(?:section|chapter|item\s+\d{1,2}[a-c]?|part\s+[ivx]{1,4}|appendix)\b", re.IGNORECASE)
_TELLS = re.compile(r"\b(?:say|says|said|cover|covers|discuss\w*|about|summari[sz]\w*|describe\w*|explain\w*|"
                    r"contain\w*|tell\w*|state\w*|mention\w*|list\w*|overview)\b", re.IGNORECASE)
_EVERY = re.compile(r"\b(?:list|enumerate|name)\s+(?:all|every|each)\b|(?<!\bon\s)(?<!\bin\s)(?<!\bat\s)(?<!\bfor\s)(?<!\bper\s)"
                    r"(?<!\bby\s)(?<!\bduring\s)(?<!\bafter\s)(?<!\bbefore\s)(?<!\bfrom\s)(?<!\bwith\s)(?<!\bacross\s)"
                    r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?"
                    r"(?!documents?\b|files?\b)[a-z]+|\bwhat are all\b|\bfull list\b|\bcomplete list\b", re.IGNORECASE)
_EACH_DOCUMENT = re.compile(r"\b(?:each|every|all(?: of)?(?: the| my)?|these|the)\s+(?:documents|files|papers|reports)\b|"
                            r"\b(?:each|every)\s+(?:document|file|paper|report)\b", re.IGNORECASE)
_NAMED_NUMBER = re.compile(r"\b(?:item\s+\d{1,2}[a-c]?|part\s+[ivx]{1,4}|appendix\s+[a-z]|(?:section|chapter|§)\s*\d{1,2}(?:\.\d{1,2}){0,2})"
                           r"(?=[\s.,:;?)]|$)", re.IGNORECASE)
_OBJECT = re.compile(r"\b(?:all|every|each|complete list of|full list of)\s+(?:of\s+)?(?:the\s+)?(?P<rest>.+)$",
                     re.IGNORECASE)
_OBJECT_STOP = frozenset(["in", "of", "that", "which", "from", "on", "at", "by", "for", "with", "mentioned", "named", "listed", "used", "the", "a", "an", "is", "are", "was", "were", "does", "do", "did", "has", "have", "and", "or", "to"])
_FIGURES = ("numeric", "comparison")
_HOW_MUCH = re.compile(r"\bhow (?:much|many)\b|\bby what (?:percentage|percent|factor|amount)\b", re.IGNORECASE)
_AGGREGATES = ("sum", "avg", "max", "min", "count")  # TableAsk operations over the items a question names
_GENERIC = frozenset({"section", "part", "chapter", "item", "note", "the", "and", "of", "for", "in", "on", "to", "our"})
SCOPES = ("passage", "document", "section", "list", "library")


def scope_of(question: str, question_type: str) -> str:
    """One of SCOPES: what part of a document the question is about ("library": a summary of every document)."""
    if question_type in ("negation", "exhaustive"):
        return "passage"  # they check every document already (retrieve's coverage)
    if classify(question) == "summary":  # the rules' word, whatever type a model's plan gave
        question_type = "summary"
    if question_type == "summary" and _EACH_DOCUMENT.search(question):
        return "library"
    if _SECTION.search(question) and _TELLS.search(question):
        return "section"
    if question_type == "summary":
        return "document"
    if _EVERY.search(question) and question_type not in _FIGURES and classify(question) not in _FIGURES \
            and not _figure_over_items(question):
        # "how many units did all the regions sell", "the combined yield of all varieties at Waseca": a figure
        # over the items, for the tables
        return "list"
    return "passage"


def _figure_over_items(question: str) -> bool:
    """A figure worked out over the items the question names: an aggregate of them, or how much one total differs
    from another ("how much higher was the total yield in 1932 than in 1931, summed over all varieties")."""
    op = TableAsk.of(question).op
    return op in _AGGREGATES or (op in ("change", "ratio") and bool(_HOW_MUCH.search(question)))


@dataclass(frozen=True)
class Reading:
    """What a scoped route read of one document: the passages (in reading order), the sections read and those
    left out. `kind` is the scope; `how` says how much of each section was read ("the opening passages of")."""

    kind: str
    file_name: str
    hits: tuple[Hit, ...]
    read: tuple[Section, ...]
    left: tuple[Section, ...] = ()
    outline: Outline = field(default_factory=Outline)
    how: str = ""
    searched: int = 0  # list: the sections searched (all of them: BM25 scores every passage)

    @property
    def coverage(self) -> str:
        """One line saying what was read, and what was not."""
        if self.kind == "list":
            where = ", ".join(s.title for s in self.read[:6]) + (f" and {len(self.read) - 6} more"
                                                                 if len(self.read) > 6 else "")
            said = (f"Searched all {self.searched} {self._unit()} of {self.file_name} and read the best "
                    f"{len(self.hits)} passages, found in {len(self.read)} of them" + (f" ({where})" if where else ""))
            return said + "; the list may be incomplete."
        total = len(self.read) + len(self.left)
        if self.kind == "section" and self.read:
            said = f"Read {self.how or 'all of '}the section \"{self.read[0].title}\" of {self.file_name}"
            if len(self.read) > 1:
                said += f", and \"{self.read[1].title}\", which it refers to"
        else:
            said = f"Read {self.how}{len(self.read)} of {total} {self._unit()} of {self.file_name}"
        if self.left and self.kind == "document" and self.outline.flat and len(self.read) > 1:
            said += f", evenly spaced from {self.read[0].title} to {self.read[-1].title}"
        elif self.left:
            said += "; not read: " + _names(self.left)
        return said + "."

    def _unit(self) -> str:
        return (self.outline.source or "pages") if self.outline.flat else "sections"

    def section_of(self, ordinal: int) -> str:
        """The title of the section read that holds a passage ('' when none does)."""
        for section in sorted(self.read, key=lambda s: s.last - s.first):
            if section.first <= ordinal <= section.last:
                return section.title
        return ""

    def to_dict(self) -> dict:
        said = {"kind": self.kind, "file": self.file_name, "coverage": self.coverage, "flat": self.outline.flat,
                "passages": len(self.hits), "read": [_brief(s) for s in self.read],
                "left": [s.title for s in self.left]}
        if self.kind == "section" and self.read:  # its sub-sections: a list question's items, when it has them
            said["parts"] = [_brief(s) for s in self.read[0].children]
        return said


def _brief(section: Section) -> dict:
    return {"title": section.title, "first": section.first, "last": section.last, "start": section.start,
            "end": section.end}


def _names(sections: Sequence[Section], most: int = 6) -> str:
    names = ", ".join(s.title for s in sections[:most])
    return names + (f" and {len(sections) - most} more" if len(sections) > most else "")


def section_titles(reading: dict | None, ordinal: int) -> str:
    """From Reading.to_dict(): the title of the section read that holds a passage ('' when none does)."""
    spans = sorted((reading or {}).get("read", ()), key=lambda s: s["last"] - s["first"])
    return next((s["title"] for s in spans if s["first"] <= ordinal <= s["last"]), "")


def target_document(hits: Sequence[Hit], filters: Filters | None) -> str | None:
    """The document a whole-document question is about: the only one the user's filter allows, else the one
    most of the best passages come from."""
    if filters is not None and filters.doc_ids and len(filters.doc_ids) == 1:
        return filters.doc_ids[0]
    counts: dict[str, float] = {}
    for rank, hit in enumerate(hits[:8], start=1):
        counts[hit.chunk.doc_id] = counts.get(hit.chunk.doc_id, 0.0) + 1.0 / rank
    return max(counts, key=counts.get) if counts else None


def read_document(chunks: Sequence[Chunk], budget: int, outline: Outline | None = None) -> Reading:
    """The opening passages of each main section, sharing `budget` tokens: at least MIN_SECTION_TOKENS each,
    at most MAX_SECTIONS sections (the rest named as not read)."""
    ordered = sorted(chunks, key=lambda c: c.ordinal)
    if not ordered:
        return Reading("document", "", (), ())
    outline = outline if outline is not None and outline.sections else build_outline(ordered)
    sections = _main_sections(outline)
    main = [s for s in sections if not SKIPPED.match(s.title)]
    count = max(1, min(len(main), MAX_SECTIONS, budget // MIN_SECTION_TOKENS))
    if outline.flat and len(main) > count:
        # Pages, slides or paragraphs without headings: evenly spaced through the document, first and last included
        picked = {round(i * (len(main) - 1) / max(1, count - 1)) for i in range(count)}
    else:
        # Too many to read: the largest, in the document's order (a filing's one-line items are the ones left out).
        picked = set(sorted(range(len(main)), key=lambda i: (-(main[i].last - main[i].first), i))[:count])
    chosen = [s for i, s in enumerate(main) if i in picked]
    left = [s for s in sections if s not in chosen]
    share = budget // max(1, len(chosen))
    by_ordinal = {c.ordinal: c for c in ordered}
    hits: list[Hit] = []
    for section in chosen:
        hits += _lead(section, by_ordinal, share, len(hits))
    return Reading("document", ordered[0].file_name, tuple(hits), tuple(chosen), tuple(left), outline,
                   "the opening passages of ")


def read_section(chunks: Sequence[Chunk], question: str, budget: int, outline: Outline | None = None, *,
                 named: str = "") -> Reading | None:
    """The section the question names (or, given, the one `named` names: a list question's object), read in
    order within `budget`; None when no section title matches."""
    ordered = sorted(chunks, key=lambda c: c.ordinal)
    if not ordered:
        return None
    outline = outline if outline is not None and outline.sections else build_outline(ordered)
    section = named_section(outline, named or question, ordered[0].file_name, whole=bool(named))
    if section is None:
        return None
    by_ordinal = {c.ordinal: c for c in ordered}
    inner = {id(s) for s in section.walk()}
    following = [s.title for s in outline.all() if s.first == section.last and id(s) not in inner]
    if section.last in by_ordinal and following:  # the next section's heading is written inside the last chunk
        by_ordinal[section.last] = _before_heading(by_ordinal[section.last], following[0])
    hits = _lead(section, by_ordinal, budget, 0)
    total = sum(1 for o in range(section.first, section.last + 1) if o in by_ordinal)
    read_all = len(hits) >= total
    left = () if read_all else tuple(s for s in section.children if s.first > max(h.chunk.ordinal for h in hits))
    read = (section,)
    referred = _referred(hits, ordered, outline, section) if read_all else None
    if referred is not None:  # "incorporated by reference from Note 16": that note is what the section says
        used = sum(estimate_tokens(h.chunk.text) + HEADER_TOKENS for h in hits)
        more = _lead(referred, by_ordinal, budget - used, len(hits))
        if more:
            hits += more
            shown = sum(1 for o in range(referred.first, referred.last + 1) if o in by_ordinal)
            read += (replace(referred, title=referred.title + (f" (the first {len(more)} of its {shown} passages)"
                                                              if len(more) < shown else "")),)
    return Reading("section", ordered[0].file_name, tuple(hits), read, left, outline,
                   "" if read_all else f"the first {len(hits)} of {total} passages of ")


_REFERENCE = re.compile(r"\b(?:incorporated\s+(?:herein\s+)?by\s+reference|(?:see|refer\s+to|included\s+in|"
                        r"discussed\s+in)\b)(?P<rest>[^.;]{0,240})", re.IGNORECASE)
_NOTE = re.compile(r"\bnote\s+(?P<num>\d{1,2})\b", re.IGNORECASE)
_QUOTED = re.compile(r"[“\"](?P<title>[A-Z][^”\"]{2,80}?)[,.]?[”\"]")
MAX_REFERRING_WORDS = 150  # a section this short that points elsewhere is read with what it points to


def _referred(hits: Sequence[Hit], chunks: Sequence[Chunk], outline: Outline, section: Section) -> Section | None:
    """The part of the document a short section hands its subject to ("Discussion of legal matters is
    incorporated by reference from Part II, Item 8, Note 16, “Commitments and Contingencies”"): the note (by its
    number and title, found as a heading line) or the section (by its quoted title) it names; None when the section
    says more than MAX_REFERRING_WORDS words itself or names nothing found."""
    text = "\n".join(h.chunk.text for h in hits)
    if len(text.split()) > MAX_REFERRING_WORDS:
        return None
    for m in _REFERENCE.finditer(" ".join(text.split())):
        note, quoted = _NOTE.search(m.group("rest")), _QUOTED.search(m.group("rest"))
        title = quoted.group("title").strip() if quoted else ""
        if note is not None:
            found = _heading_line(chunks, section, rf"(?:note\s+)?{note.group('num')}[.:]?\s+" +
                                  (re.escape(title) if title else r"\S"), rf"(?:note\s+)?{int(note.group('num')) + 1}[.:]?\s+\S")
            if found is not None:
                return found
        if title:
            named = next((s for s in outline.all() if _words(s.title) == _words(title) and s is not section), None)
            if named is not None:
                return named
    return None


def _heading_line(chunks: Sequence[Chunk], section: Section, start: str, stop: str) -> Section | None:
    """A span of chunks from the first heading line matching `start` (outside `section`; not a table row or a
    contents line ending in a page number) to the chunk before the next line matching `stop` (or the end)."""
    begin = re.compile(rf"^{start}", re.IGNORECASE)
    end = re.compile(rf"^{stop}", re.IGNORECASE)
    first = title = None
    for chunk in chunks:
        if section.first <= chunk.ordinal <= section.last:
            continue
        for line in chunk.text.splitlines():
            line = " ".join(line.split())
            if first is None and begin.match(line) and "|" not in line and not re.search(r"\s\d{1,3}$", line) \
                    and len(line) <= 120:
                first, title = chunk.ordinal, line
            elif first is not None and chunk.ordinal > first and end.match(line):
                return Section(title, 1, first, chunk.ordinal - 1, _page(chunks, first), _page(chunks, chunk.ordinal - 1))
    if first is None:
        return None
    return Section(title, 1, first, chunks[-1].ordinal, _page(chunks, first), _page(chunks, chunks[-1].ordinal))


def _page(chunks: Sequence[Chunk], ordinal: int) -> str:
    chunk = next((c for c in chunks if c.ordinal == ordinal), None)
    return chunk.location.label() if chunk is not None else ""


def named_section(outline: Outline, question: str, file_name: str = "", *, whole: bool = False) -> Section | None:
    """The section whose title the question names: by its number ("Item 1A", "section 3.2", "Appendix B"),
    else by most of its words, ignoring the words of the file's name ("3 BERT" is not named by "the BERT
    paper"); `whole`: every word of `question` must be in the title (a list's object: "risk factors")."""
    numbered = _NAMED_NUMBER.search(question)
    if numbered:
        wanted = re.sub(r"^(?:section|chapter|§)\s*", "", " ".join(numbered.group(0).lower().split()))
        for section in outline.all():
            title = " ".join(section.title.lower().split())
            if title == wanted or title.startswith((wanted + ".", wanted + " ", wanted + ":")):
                return section
    asked = _words(question)
    named_by_file = _words(re.sub(r"[_\-.]", " ", file_name))
    best, best_share = None, 0.0
    for section in outline.all():
        words = _words(re.sub(r"^(?:item|part)\s+\S+\s*|^\d[\d.]*\s*", "", section.title, flags=re.IGNORECASE))
        words -= named_by_file | _GENERIC
        if not words or (whole and not asked <= words):
            continue
        share = len(words & asked) / len(words)
        if share > best_share or (share == best_share and best is not None and section.level < best.level):
            best, best_share = section, share
    return best if best_share >= 0.6 else None


def _words(text: str) -> frozenset[str]:
    """Lower-case words of two letters or more, a plural's s dropped (titles and questions compared plainly)."""
    return frozenset(w.lower()[:-1] if len(w) > 3 and w.lower().endswith("s") and not w.lower().endswith("ss")
                     else w.lower() for w in re.findall(r"[A-Za-z]{2,}", text))


def list_object(question: str) -> str:
    """What a list question asks for every one of: "risk factors" in "What are all the risk factors in the
    10-K?", "dataset" in "List every dataset BERT is evaluated on" ('' when it cannot be told)."""
    m = _OBJECT.search(question)
    if not m:
        return ""
    words = []
    for word in re.findall(r"[\w\-']+", m.group("rest"))[:4]:
        if word.casefold() in _OBJECT_STOP or (words and word[:1].isupper()):
            break
        words.append(word)
    return " ".join(words)


def read_list(hits: Sequence[Hit], outline: Outline, file_name: str, budget: int) -> Reading:
    """Passages for a list question: the document's passages retrieval ranked (`hits`, best first, many more
    than the usual top k), taken one section at a time, round-robin by rank, within `budget`, so that every
    section where candidates were found contributes before any gives a second; returned in reading order."""
    sections = [s for s in _main_sections(outline)] or list(outline.sections)
    by_section: dict[int, list[Hit]] = {}
    for hit in hits:
        i = next((i for i, s in enumerate(sections) if s.first <= hit.chunk.ordinal <= s.last), -1)
        by_section.setdefault(i, []).append(hit)
    taken: list[Hit] = []
    used, seen = 0, set()
    depth = max((len(h) for h in by_section.values()), default=0)
    order = sorted(by_section, key=lambda i: by_section[i][0].rank)
    full = False
    for rank in range(depth):
        for i in order:
            found = by_section[i]
            if rank >= len(found) or found[rank].chunk.id in seen:
                continue
            cost = estimate_tokens(found[rank].chunk.text) + HEADER_TOKENS
            if taken and used + cost > budget:
                full = True
                break
            seen.add(found[rank].chunk.id)
            taken.append(found[rank])
            used += cost
        if full:
            break
    kept = {i for i in by_section if any(h.chunk.id in seen for h in by_section[i])}
    read = tuple(sections[i] for i in sorted(kept) if i >= 0)
    ordered = sorted(taken, key=lambda h: h.chunk.ordinal)
    hits_out = tuple(Hit(chunk=h.chunk, score=h.score, rank=n, strategy=h.strategy)
                     for n, h in enumerate(ordered, start=1))
    return Reading("list", file_name, hits_out, read, (), outline, searched=len(sections))


def _main_sections(outline: Outline) -> list[Section]:
    """The sections a summary reads one by one: the top level, or the level below while the top has few
    sections (a paper's numbered sections and their subsections, a filing's parts and their items) and the level
    below is not too many to name."""
    sections = list(outline.sections)
    while True:
        deeper = [c for s in sections for c in (s.children or (s,))]
        few = len([s for s in sections if not SKIPPED.match(s.title)]) < DESCEND_BELOW
        if len(deeper) == len(sections) or not few or len(deeper) > 2 * MAX_SECTIONS:
            return sections
        sections = deeper


def _title_line(chunk: Chunk, title: str, *, after_first: bool) -> tuple[list[str], int]:
    """(the chunk's lines, the index of the first line that begins with `title`, 0 when none does); with
    `after_first`, the first line is not looked at."""
    wanted = " ".join(title.split()).casefold()
    lines = chunk.text.splitlines()
    at = next((i for i, line in enumerate(lines) if wanted and (i or not after_first)
               and " ".join(line.split()).casefold().startswith(wanted)), 0)
    return lines, at


def _from_heading(chunk: Chunk, title: str) -> Chunk:
    """The chunk from the line that holds `title` on (unchanged when no line does, or it is the first)."""
    lines, at = _title_line(chunk, title, after_first=False)
    return replace(chunk, text="\n".join(lines[at:])) if at else chunk


def _before_heading(chunk: Chunk, title: str) -> Chunk:
    """The chunk up to the line that holds `title` (unchanged when no line after its first does)."""
    lines, at = _title_line(chunk, title, after_first=True)
    return replace(chunk, text="\n".join(lines[:at])) if at else chunk


def _lead(section: Section, by_ordinal: dict[int, Chunk], budget: int, start_rank: int) -> list[Hit]:
    """The section's chunks from its first, in order, while they fit `budget` (the first always); the first is
    cut to begin at the section's heading when the previous section's end shares its chunk."""
    hits, used = [], 0
    for ordinal in range(section.first, section.last + 1):
        chunk = by_ordinal.get(ordinal)
        if chunk is None:
            continue
        if not hits:
            chunk = _from_heading(chunk, section.title)
        cost = estimate_tokens(chunk.text) + HEADER_TOKENS
        if hits and used + cost > budget:
            break
        hits.append(Hit(chunk=chunk, score=1.0, rank=start_rank + len(hits) + 1, strategy="outline"))
        used += cost
    return hits
