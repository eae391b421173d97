"""A document's outline: its tree of sections, each with its title, level, page/slide/sheet span and chunk range.

Built at ingest from what the parsers already know, in this order:
1. the heading paths chunks carry (PDF bookmarks, Word heading styles, slide titles, sheets): each path prefix is
   a section; a table's own title at the end of a path is the table's, not a section;
2. else headings detected in the text: numbered ones ("3.1. Residual Learning"), a filing's parts and items
   ("PART II", "Item 1A. Risk Factors") and the usual unnumbered ones of papers ("Abstract", "References");
3. else a flat outline by pages, slides or sheets, said as such (`flat`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from document_processor import Chunk

MAX_TITLE = 90
MAX_ITEM_TITLE = 160  # a 10-K item's title is fixed and long ("Item 7. Management's Discussion and Analysis of …")
MIN_SECTIONS = 2  # fewer detected sections than this are no outline: the document is read by pages
CONTENTS_ENTRIES = 2  # heading lines ending in a page number that make a chunk a table of contents
NUMBERED_IN_FILING = 3  # levels added to a numbered heading inside a filing's items: below its notes (level 3)
MIN_DETECTED_PDF = 4  # a PDF's headings found in its text are its outline when there are at least this many
_NUMBERED = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+(?P<title>[A-Z][^.!?:;]{2,70})$")
_ITEM = re.compile(r"^(?P<num>item\s+\d{1,2}[a-c]?)\.?\s*(?P<title>[A-Z][^!?]{2,150})?$", re.IGNORECASE)
_NOTE = re.compile(r"^note\s+\d{1,2}[.:]?\s+(?P<title>[A-Z][^!?]{2,90})$", re.IGNORECASE)  # a filing's notes
_PART = re.compile(r"^part\s+(?P<num>[ivx]{1,4})\b\.?\s*(?P<title>.{0,60})$", re.IGNORECASE)
_CONTENTS = re.compile(r"(?:\s|\.{2,})\d{1,3}$")
_UNFINISHED = frozenset(  # a line ending in one of these runs on: a wrapped sentence (a footnote), never a heading
    ["a", "an", "and", "are", "as", "at", "by", "due", "for", "from", "in", "is", "of", "on", "or", "not", "than", "that", "the", "to", "was", "were", "which", "with"])
_NAMED = re.compile(r"^(?P<title>abstract|introduction|background|related work|conclusions?|discussion|"
                    r"references|bibliography|acknowledge?ments?|appendix(?: [a-z])?|summary)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Section:
    """One node of the outline: `first`..`last` are chunk ordinals; `pages` (or slides, sheets) its span."""

    title: str
    level: int
    first: int
    last: int
    start: str = ""  # where it begins: 'p. 3', 'slide 4', 'Budget'
    end: str = ""
    children: tuple[Section, ...] = ()

    def to_dict(self) -> dict:
        return {"title": self.title, "level": self.level, "chunks": [self.first, self.last], "start": self.start,
                "end": self.end, "children": [c.to_dict() for c in self.children]}

    @classmethod
    def from_dict(cls, data: dict) -> Section:
        first, last = data.get("chunks") or (0, 0)
        return cls(data["title"], int(data["level"]), int(first), int(last), data.get("start", ""),
                   data.get("end", ""), tuple(cls.from_dict(c) for c in data.get("children", ())))

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class Outline:
    """The sections of one document, top level first; `flat` when it had no usable headings (by pages)."""

    sections: tuple[Section, ...] = ()
    flat: bool = False
    source: str = ""  # "headings" | "detected" | "pages" | "slides" | "sheets"
    chunks: int = 0

    def to_dict(self) -> dict:
        return {"flat": self.flat, "source": self.source, "chunks": self.chunks,
                "sections": [s.to_dict() for s in self.sections]}

    @classmethod
    def from_dict(cls, data: dict | None) -> Outline:
        if not data:
            return cls()
        return cls(tuple(Section.from_dict(s) for s in data.get("sections", ())), bool(data.get("flat")),
                   data.get("source", ""), int(data.get("chunks", 0)))

    def all(self) -> list[Section]:
        """Every section, in document order (parents before their children)."""
        return [s for top in self.sections for s in top.walk()]

    def find(self, title: str) -> Section | None:
        """The section with this title (case and spacing ignored), or None."""
        wanted = " ".join(title.split()).casefold()
        return next((s for s in self.all() if " ".join(s.title.split()).casefold() == wanted), None)


def build_outline(chunks: Sequence[Chunk]) -> Outline:
    """The outline of a document from its chunks (any order; they are read by ordinal)."""
    ordered = sorted(chunks, key=lambda c: c.ordinal)
    if not ordered:
        return Outline()
    paths = _from_paths(ordered)
    tries = [("headings", paths), ("detected", _detected(ordered))]
    if ordered[0].file_type == "pdf" and not _nested(paths):
        # A PDF's heading paths nest when they come from its bookmarks; flat ones come from the first lines of
        # pages (running heads, statement titles), and its numbered headings and items say more when it has some.
        tries.reverse()
        tries[0] = (tries[0][0], tries[0][1] if len(tries[0][1]) >= MIN_DETECTED_PDF else [])
    for source, entries in tries:
        if len(entries) >= MIN_SECTIONS:
            return Outline(_tree(entries, ordered), False, source, len(ordered))
    return _flat(ordered)


def _from_paths(chunks: list[Chunk]) -> list[tuple[tuple[str, ...], int]]:
    """(heading path, first chunk ordinal) for each path as it first appears; a table's title is left off."""
    seen: dict[tuple[str, ...], int] = {}
    for c in chunks:
        path = tuple(p for p in c.heading_path if p)
        if c.text.lstrip().startswith("|") and len(path) > 1:
            path = path[:-1]  # the PDF table pass appends the table's title to the heading path
        path = tuple(" ".join(p.split())[:MAX_TITLE] for p in path if len(p) <= 2 * MAX_TITLE)
        for depth in range(1, len(path) + 1):
            seen.setdefault(path[:depth], c.ordinal)
    return sorted(seen.items(), key=lambda kv: (kv[1], len(kv[0])))


def _nested(paths: list[tuple[tuple[str, ...], int]]) -> bool:
    """Whether heading paths form a tree (a third of them below a parent), as bookmarks do."""
    return bool(paths) and sum(len(p) > 1 for p, _ in paths) * 3 >= len(paths)


def _detected(chunks: list[Chunk]) -> list[tuple[tuple[str, ...], int]]:
    """Headings found in the text lines, as paths by their numbering ("3.1" under "3"; an item under its part).

    A title is placed where it first appears, except in a table of contents: a chunk holding CONTENTS_ENTRIES or
    more heading lines that end in a page number is a contents page, and a heading line there ("PART II" between
    "ITEM 4 Mine Safety Disclosures 17" and "ITEM 5 … 18") is placed at its next appearance when it has one (by
    its title, or for a filing's item by its part and number)."""
    lines: list[tuple[int, int, str, str, str, bool]] = []  # (ordinal, level, title, key, item key, on contents)
    part = ""
    for c in chunks:
        here, entries = [], 0
        for line in c.text.splitlines():
            line = " ".join(line.split())
            heading = _heading(line)
            if heading is None:
                entries += _contents_entry(line)
            else:
                here.append(heading)
        contents = entries >= CONTENTS_ENTRIES
        for level, title in here:
            if m := _PART.match(title):
                part = f"part {m.group('num').casefold()}"
            lines.append((c.ordinal, level, title, _key(title), _item_key(title, part), contents))
    elsewhere = {k for _, _, _, key, item, contents in lines if not contents for k in (key, item) if k}
    found: list[tuple[tuple[str, ...], int]] = []
    titles: set[str] = set()
    parents: dict[int, str] = {}
    filing = False  # once a part or item is seen, numbered headings are inside them (a list, a note's parts)
    for ordinal, level, title, key, item, contents in lines:
        if key in titles or (contents and (key in elsewhere or item in elsewhere)):
            continue
        if _ITEM.match(title) or _PART.match(title):
            filing = True
        elif filing and _NUMBERED.match(title):
            level += NUMBERED_IN_FILING
        titles.add(key)
        parents = {k: v for k, v in parents.items() if k < level}
        found.append((tuple(parents[k] for k in sorted(parents)) + (title,), ordinal))
        parents[level] = title
    return found


def _contents_entry(line: str) -> bool:
    """Whether a line is a heading followed by its page number ("ITEM 7 Management's Discussion … 19")."""
    m = _CONTENTS.search(line)
    return bool(m) and _heading(line[: m.start()].rstrip(" .")) is not None


def _item_key(title: str, part: str) -> str:
    """A filing item by its part and number ("part ii item 5"), however its title is worded or wrapped (a contents
    page may give "Item 12." alone, its title on the lines below); "" for any other heading."""
    m = _ITEM.match(title)
    return f"{part} {' '.join(m.group('num').casefold().split())}".strip() if m else ""


def _key(title: str) -> str:
    return " ".join(re.sub(r"[^\w ]", " ", title).split()).casefold()


def _heading(line: str) -> tuple[int, str] | None:
    """(level, title) when a line is a section heading, else None (a contents line ends with its page number)."""
    if not line or len(line) > MAX_ITEM_TITLE or line.endswith((",", ";")) or _CONTENTS.search(line):
        return None
    if m := _ITEM.match(line):
        return 2, line if m.group("title") else m.group("num").title()
    if len(line) > MAX_TITLE:
        return None
    if m := _PART.match(line):
        return 1, line
    if _NOTE.match(line):
        return 3, line
    if m := _NUMBERED.match(line):
        words = m.group("title").split()
        if len(words) > 9 or words[-1].casefold() in _UNFINISHED:
            return None
        return m.group("num").count(".") + 1, line
    if m := _NAMED.match(line):
        return 1, m.group("title").title() if m.group("title").islower() or m.group("title").isupper() else \
            m.group("title")
    return None


def _tree(entries: list[tuple[tuple[str, ...], int]], chunks: list[Chunk]) -> tuple[Section, ...]:
    """Sections from (path, first ordinal) entries: each runs to the chunk before the next entry that is not its
    descendant (to that chunk, when the next heading is written inside it); children nest under the path they
    extend."""
    last_ordinal = chunks[-1].ordinal
    where = {c.ordinal: c for c in chunks}
    spans = []
    for i, (path, first) in enumerate(entries):
        end = next((f - (not _inside(where.get(f), p[-1])) for p, f in entries[i + 1:] if p[:len(path)] != path),
                   last_ordinal)
        spans.append((path, first, max(first, end)))

    def build(prefix: tuple[str, ...]) -> tuple[Section, ...]:
        return tuple(Section(path[-1], len(path), first, last, _place(where, first), _place(where, last),
                             build(path))
                     for path, first, last in spans if len(path) == len(prefix) + 1 and path[:-1] == prefix)

    return build(())


def _inside(chunk: Chunk | None, title: str) -> bool:
    """Whether a heading is a line inside `chunk` rather than its first: the chunk then ends the section before
    it too (a PDF's "Item 1B." written below the last lines of Item 1A)."""
    if chunk is None:
        return False
    lines = [_key(line) for line in chunk.text.splitlines() if line.strip()]
    return _key(title) in lines[1:]


def _flat(chunks: list[Chunk]) -> Outline:
    """One section per page, slide or sheet (said as such)."""
    groups: dict[str, list[int]] = {}
    for c in chunks:
        groups.setdefault(_place({c.ordinal: c}, c.ordinal) or "the document", []).append(c.ordinal)
    kind = "pages" if chunks[0].location.page is not None else "slides" if chunks[0].location.slide is not None \
        else "sheets" if chunks[0].location.sheet is not None else "parts"
    return Outline(tuple(Section(name, 1, min(o), max(o), name, name) for name, o in groups.items()), True, kind,
                   len(chunks))


def _place(where: dict[int, Chunk], ordinal: int) -> str:
    chunk = where.get(ordinal)
    if chunk is None:
        return ""
    loc = chunk.location
    if loc.page is not None:
        return f"p. {loc.page}"
    if loc.slide is not None:
        return f"slide {loc.slide}"
    if loc.sheet is not None:
        return loc.sheet
    return loc.label()

