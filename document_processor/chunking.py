"""Blocks -> chunks: recursive separators, overlap, one location per chunk, and the embedder's 256-token limit.

A section is a run of blocks with the same page/slide/sheet and heading path; chunks never cross sections.
Text blocks are cut into atoms at the coarsest separator that makes them fit (paragraph, line, sentence,
word, and characters as a last resort); atoms are packed greedily up to `chunk_chars` characters and the
token budget, and the next chunk starts with the previous chunk's last atoms up to `overlap_chars`.
Tables are chunked on their own, by whole rows, each piece repeating the header row. A chunk that is only
a heading is dropped when chunks under that heading exist (their context header already names it).

Every step is linear in the text's length (bench/chunking.py): only text short enough to fit is tokenized,
huge unpunctuated text becomes runs of words, not single words, and line numbers and chunk sizes are
running counts. The tokenizer never sees more than MAX_TOKENIZE_CHARS at once (a 50 MB line made it abort).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby

from document_processor import model_files
from document_processor.blocks import Block, Progress, Table, one_line, span
from document_processor.types import Location

MAX_TOKENS = model_files.MAX_TOKENS
SPECIAL_TOKENS = 2  # [CLS] and [SEP]
MAX_CONTEXT_CHARS = 150
MAX_CONTEXT_TOKENS = 40
MAX_TOKENIZE_CHARS = 50_000  # longest text handed to the tokenizer at once; longer text is counted in pieces
BATCH_CHARS = 1_000_000  # text per tokenizer call: bounds the memory its Encoding objects take at once
_SEPARATORS = (re.compile(r"\n[ \t]*\n\s*"), re.compile(r"\n\s*"), re.compile(r"(?<=[.!?;:…。！？])\s+"), re.compile(r"\s+"))
_WORD_LEVEL = 3
_CHAR_LEVEL = len(_SEPARATORS)
_LAST_SPACE = re.compile(r"\s+(?=\S*\Z)")  # the last whitespace run before the search's end position
_WHITESPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Atom:
    """A piece of text that is never cut further; `sep` joins it to the atom before it in a chunk."""

    text: str
    location: Location
    tokens: int
    sep: str = ""
    is_table: bool = False


@dataclass(frozen=True)
class Piece:
    """A chunk before it gets its id: text, where it is, its heading path and its context header."""

    text: str
    location: Location
    heading_path: tuple[str, ...]
    context: str

    @property
    def index_text(self) -> str:
        return f"{self.context}\n{self.text}" if self.context else self.text


class TokenCounter:
    """Counts the embedder's word pieces; the tokenizer is passed in so tests can use any Tokenizer."""

    def __init__(self, tokenizer=None):
        self._tokenizer = tokenizer or model_files.tokenizer()

    def counts(self, texts: Sequence[str], special: bool = False) -> list[int]:
        """Word pieces per text (without [CLS]/[SEP] unless `special`).

        Texts go to the tokenizer in calls of about BATCH_CHARS characters, and a text longer than
        MAX_TOKENIZE_CHARS in pieces cut at whitespace (exact for this tokenizer, which never joins word
        pieces across whitespace): one 50 MB string made it allocate past the parser's memory cap and abort.
        """
        totals = [SPECIAL_TOKENS if special else 0] * len(texts)
        batch: list[str] = []
        owners: list[int] = []
        size = 0
        for k, text in enumerate(texts):
            for segment in _segments(text, MAX_TOKENIZE_CHARS):
                batch.append(segment)
                owners.append(k)
                size += len(segment)
                if size >= BATCH_CHARS:
                    self._add_counts(batch, owners, totals)
                    batch, owners, size = [], [], 0
        self._add_counts(batch, owners, totals)
        return totals

    def _add_counts(self, batch: list[str], owners: list[int], totals: list[int]) -> None:
        if batch:
            encodings = self._tokenizer.encode_batch(batch, add_special_tokens=False)
            for owner, encoding in zip(owners, encodings, strict=True):
                totals[owner] += len(encoding.ids)


def _segments(text: str, limit: int):
    """text in pieces of at most `limit` characters, cut after the last whitespace of each window when it has one."""
    start = 0
    while len(text) - start > limit:
        space = _LAST_SPACE.search(text, start, start + limit)
        end = space.end() if space is not None and space.end() > start else start + limit
        yield text[start:end]
        start = end
    yield text[start:]


def chunk_blocks(blocks: Iterable[Block], title: str, *, chunk_chars: int = 1000, overlap_chars: int = 200,
                 counter: TokenCounter | None = None, progress: Progress | None = None) -> list[Piece]:
    """Chunk a document's blocks in reading order; every piece's index_text fits in MAX_TOKENS word pieces."""
    counter = counter or TokenCounter()
    sections = [list(g) for _, g in groupby(blocks, key=_section_key)]
    pieces: list[Piece] = []
    for done, section in enumerate(sections, start=1):
        context = context_header(title, section[0].heading_path, counter)
        budget = MAX_TOKENS - SPECIAL_TOKENS - (counter.counts([context])[0] if context else 0)
        atoms = section_atoms(section, chunk_chars, budget, counter)
        for text, location in pack(atoms, chunk_chars, budget, overlap_chars):
            pieces.append(Piece(text, location, section[0].heading_path, context))
        if progress is not None and (done == len(sections) or done % 20 == 0):
            progress("chunking", done, len(sections))
    return enforce_token_limit(drop_bare_headings(pieces), counter)


def least_pieces(blocks: Iterable[Block], chunk_chars: int) -> int:
    """A lower bound on the pieces chunk_blocks makes, known without tokenizing anything.

    Every non-space character of a block lands in some piece and a piece holds at most chunk_chars
    characters (headings are left out: a bare heading's piece may be dropped). A caller can refuse a
    file for its passage count at once instead of after chunking all of it (a 50 MB line: minutes).
    """
    chars = sum(len(_WHITESPACE.sub("", b.text)) for b in blocks
                if not (b.heading_path and b.text == b.heading_path[-1]))
    return -(-chars // chunk_chars)


def drop_bare_headings(pieces: list[Piece]) -> list[Piece]:
    """Remove chunks that are only a heading whose section has content elsewhere (the heading already
    heads those chunks' context); a heading with nothing under it, like a title-only slide, stays."""
    def bare(piece: Piece) -> bool:
        return bool(piece.heading_path) and piece.text == piece.heading_path[-1]

    covered = {p.heading_path[:n] for p in pieces if not bare(p) for n in range(1, len(p.heading_path) + 1)}
    return [p for p in pieces if not (bare(p) and p.heading_path in covered)]


def _section_key(block: Block):
    loc = block.location
    return (loc.page, loc.slide, loc.sheet, block.heading_path)


def context_header(title: str, heading_path: Sequence[str], counter: TokenCounter) -> str:
    """'title > heading > subheading', short: long parts are cut and middle headings elided."""
    parts = [one_line(p, 80) for p in (title, *heading_path) if p and p.strip()]
    text = " > ".join(parts)
    if len(text) > MAX_CONTEXT_CHARS and len(parts) > 2:
        text = " > ".join((parts[0], "…", parts[-1]))
    text = one_line(text, MAX_CONTEXT_CHARS)
    while text and counter.counts([text])[0] > MAX_CONTEXT_TOKENS:
        text = one_line(text, int(len(text) * 0.8))
    return text


def section_atoms(section: Sequence[Block], max_chars: int, budget: int, counter: TokenCounter) -> list[Atom]:
    """All atoms of a section in reading order, each within max_chars and the token budget."""
    texts = [b.text for b in section if b.table is None]
    splits = iter(split_texts(texts, max_chars, budget, counter))
    atoms: list[Atom] = []
    for block in section:
        if block.table is not None:
            atoms.extend(table_atoms(block, block.table, max_chars, budget, counter))
            continue
        parts = next(splits)
        for i, ((_, text, sep, tokens), location) in enumerate(zip(parts, _locations(block, parts), strict=True)):
            atoms.append(Atom(text, location, tokens, sep if i else "\n\n"))
    return atoms


def split_text(text: str, max_chars: int, budget: int, counter: TokenCounter) -> list[tuple[int, str, str, int]]:
    """Cut text at the coarsest separators that make every part fit: [(offset, text, sep_before, tokens)]."""
    return split_texts([text], max_chars, budget, counter)[0]


def split_texts(texts: Sequence[str], max_chars: int, budget: int, counter: TokenCounter):
    """split_text for many texts at once (one tokenizer pass per round).

    A part longer than max_chars cannot fit whatever its tokens, so it is split without being tokenized.
    """
    done: list[list[tuple[int, str, str, int]]] = [[] for _ in texts]
    pending = [(k, 0, t, "", 0) for k, t in enumerate(texts)]  # (text no., offset, part, sep before, next level)
    while pending:
        counts = iter(counter.counts([p[2] for p in pending if len(p[2]) <= max_chars]))
        next_round = []
        for k, offset, part, sep, level in pending:
            tokens = next(counts) if len(part) <= max_chars else None
            if tokens is not None and tokens <= budget:
                done[k].append((offset, part, sep, tokens))
            else:
                next_round.extend((k, *p) for p in _split_once(offset, part, sep, level, max_chars, budget, tokens))
        pending = next_round
    return [[a for a in sorted(parts, key=lambda item: item[0]) if a[1].strip()] for parts in done]


def _split_once(offset: int, text: str, sep: str, level: int, max_chars: int, budget: int, tokens: int | None):
    """Split at the first separator level (from `level` on) that occurs in text; else cut characters.

    At the word level, text longer than max_chars (so never tokenized: `tokens` is None) becomes runs of
    words of about max_chars/16 characters, fine enough for packing and overlap: one atom per word made a
    50 MB line ten million atoms. Shorter text still splits into single words.
    """
    run = max(16, min(max_chars // 16, 64))
    for lvl in range(level, _CHAR_LEVEL):
        if lvl == _WORD_LEVEL and tokens is None:
            parts, next_level = _word_runs(text, run), _WORD_LEVEL
        else:
            parts, next_level = _split_at(_SEPARATORS[lvl], text), lvl + 1
        if len(parts) > 1:
            return [(offset + o, t, sep if i == 0 else s, next_level) for i, (o, t, s) in enumerate(parts)]
    # One unbreakable run (a URL, base64, unspaced CJK): cut by characters, in proportion to the token count.
    size = max_chars if tokens is None else max(1, min(max_chars, int(len(text) * budget / max(tokens, 1) * 0.9)))
    return [(offset + i, text[i:i + size], sep if i == 0 else "", _CHAR_LEVEL) for i in range(0, len(text), size)]


def _word_runs(text: str, size: int) -> list[tuple[int, str, str]]:
    """[(offset, run, separator before it)]: whole words, up to `size` characters a run (a longer word alone)."""
    parts, start, sep = [], 0, ""
    while start < len(text):
        space = _LAST_SPACE.search(text, start, start + size + 1) if len(text) - start > size else None
        if space is not None:
            space = _WHITESPACE.match(text, space.start())  # the whole run, also past the window's end
        elif len(text) - start > size:
            space = _WHITESPACE.search(text, start + size)  # a word longer than a run: it ends at the next space
        end, next_start = (space.start(), space.end()) if space is not None else (len(text), len(text))
        if end > start:
            parts.append((start, text[start:end], sep))
        sep = space.group(0) if space is not None else ""
        start = next_start
    return parts


def _split_at(pattern: re.Pattern, text: str) -> list[tuple[int, str, str]]:
    """[(offset, part, separator before it)] for non-empty parts of text split at pattern."""
    parts, start, sep = [], 0, ""
    for match in pattern.finditer(text):
        if match.start() > start:
            parts.append((start, text[start:match.start()], sep))
        sep, start = match.group(0), match.end()
    if start < len(text):
        parts.append((start, text[start:], sep))
    return parts


def _locations(block: Block, parts: Sequence[tuple[int, str, str, int]]) -> list[Location]:
    """Each part's Location: in a text file its own line range, counted in one pass over the block (parts are
    in offset order); elsewhere the block's. Counting from the block's start for every part was quadratic."""
    loc = block.location
    if loc.lines is None:
        return [loc] * len(parts)
    out, line, pos = [], loc.lines[0], 0
    for offset, text, _, _ in parts:
        line += block.text.count("\n", pos, offset)
        pos = offset
        out.append(Location(lines=(line, line + text.count("\n"))))
    return out


def table_atoms(block: Block, table: Table, max_chars: int, budget: int, counter: TokenCounter) -> list[Atom]:
    """A whole table as one atom when it fits, else groups of whole rows each led by the header row."""
    whole = "\n".join((table.header, *table.rows))
    header_tokens, *row_tokens = counter.counts([table.header, *table.rows])
    total = header_tokens + sum(row_tokens)
    if total <= budget and len(whole) <= max_chars:
        return [Atom(whole, block.location, total, "\n\n", True)]
    header, rows = table.header, list(table.rows)
    if header_tokens > budget // 2 or len(header) > max_chars // 2:
        # A header this wide would crowd out the rows; it is kept once, as the first row.
        header, rows, row_tokens = "", [table.header, *rows], [header_tokens, *row_tokens]
    locs = list(table.row_locations) or [block.location] * len(table.rows)
    locs = locs if len(locs) == len(rows) else [block.location] * (len(rows) - len(locs)) + locs
    groups = _row_groups(rows, row_tokens, header, max_chars, budget, counter)
    atoms = []
    for first, last, text, tokens in groups:
        start = block.location if first == 0 else locs[first]
        atoms.append(Atom(text, span(start, locs[last]), tokens, "\n\n", True))
    return atoms


def _row_groups(rows, row_tokens, header, max_chars, budget, counter):
    """[(first row, last row, text, tokens)]: greedy runs of whole rows; a row too big alone is cut by words."""
    head_tokens = counter.counts([header])[0] if header else 0
    head_chars = len(header) + 1 if header else 0
    groups, start, chars, tokens = [], 0, head_chars, head_tokens

    def close(end):
        if end >= start:
            body = "\n".join(rows[start:end + 1])
            groups.append((start, end, f"{header}\n{body}" if header else body, tokens))

    for i, (row, n) in enumerate(zip(rows, row_tokens, strict=True)):
        if head_tokens + n > budget or head_chars + len(row) > max_chars:
            close(i - 1)
            for part, part_tokens in _fit(row, max_chars - head_chars, budget - head_tokens, counter):
                groups.append((i, i, f"{header}\n{part}" if header else part, head_tokens + part_tokens))
            start, chars, tokens = i + 1, head_chars, head_tokens
            continue
        if i > start and (tokens + n > budget or chars + len(row) + 1 > max_chars):
            close(i - 1)
            start, chars, tokens = i, head_chars, head_tokens
        chars, tokens = chars + len(row) + 1, tokens + n
    close(len(rows) - 1)
    return groups


def _fit(text: str, max_chars: int, budget: int, counter: TokenCounter) -> list[tuple[str, int]]:
    """Text cut into as few pieces as fit (split, then packed without overlap): [(piece, tokens)]."""
    packed: list[_Run] = []
    run = _Run()
    for _, part, sep, tokens in split_text(text, max_chars, budget, counter):
        atom = Atom(part, Location(), tokens, sep)
        if run.atoms and not run.fits(atom, max_chars, budget):
            packed.append(run)
            run = _Run()
        run.add(atom)
    packed.extend([run] if run.atoms else [])
    return [(r.text().strip(), r.tokens) for r in packed]


class _Run:
    """The atoms of one chunk being packed, with their joined length and tokens kept as running sums,
    so adding an atom costs the same however long the chunk already is."""

    __slots__ = ("atoms", "chars", "tokens")

    def __init__(self, atoms: Iterable[Atom] = ()):
        self.atoms: list[Atom] = []
        self.chars = self.tokens = 0
        for atom in atoms:
            self.add(atom)

    def add(self, atom: Atom) -> None:
        self.chars += len(atom.text) + (len(atom.sep) if self.atoms else 0)
        self.tokens += atom.tokens
        self.atoms.append(atom)

    def fits(self, atom: Atom, max_chars: int, budget: int) -> bool:
        """Whether `atom` joined after these atoms stays within max_chars and the token budget."""
        return self.chars + len(atom.sep) + len(atom.text) <= max_chars and self.tokens + atom.tokens <= budget

    def text(self) -> str:
        return self.atoms[0].text + "".join(a.sep + a.text for a in self.atoms[1:]) if self.atoms else ""


def pack(atoms: Sequence[Atom], max_chars: int, budget: int, overlap_chars: int) -> list[tuple[str, Location]]:
    """Greedy packing of atoms into (text, location); tables stand alone; overlap carries trailing text atoms."""
    out: list[tuple[str, Location]] = []
    run = _Run()
    for atom in atoms:
        if atom.is_table:
            _emit(run, out)
            run = _Run()
            _emit(_Run([atom]), out)
            continue
        if run.atoms and not run.fits(atom, max_chars, budget):
            _emit(run, out)
            run = _overlap_tail(run.atoms, atom, max_chars, budget, overlap_chars)
        run.add(atom)
    _emit(run, out)
    return out


def _overlap_tail(atoms: list[Atom], atom: Atom, max_chars: int, budget: int, overlap_chars: int) -> _Run:
    """The last atoms of the chunk just emitted that fit in overlap_chars and still leave room for `atom`."""
    tail: list[Atom] = []  # newest first
    chars = tokens = 0
    for candidate in reversed(atoms[1:]):  # never the whole chunk again
        trial_chars = len(candidate.text) + (len(tail[-1].sep) + chars if tail else 0)
        trial_tokens = tokens + candidate.tokens
        if (trial_chars > overlap_chars or trial_chars + len(atom.sep) + len(atom.text) > max_chars
                or trial_tokens + atom.tokens > budget):
            break
        tail.append(candidate)
        chars, tokens = trial_chars, trial_tokens
    return _Run(reversed(tail))


def _emit(run: _Run, out: list[tuple[str, Location]]) -> None:
    text = run.text().strip()
    if text:
        out.append((text, span(run.atoms[0].location, run.atoms[-1].location)))


def enforce_token_limit(pieces: list[Piece], counter: TokenCounter) -> list[Piece]:
    """Check every piece with the real tokenizer and halve any that exceed MAX_TOKENS (character cuts can
    tokenize differently once joined); returns pieces in the same order."""
    result = list(pieces)
    for _ in range(20):  # each round halves the offenders, so a handful of rounds always suffices
        counts = counter.counts([p.index_text for p in result], special=True)
        over = {i for i, n in enumerate(counts) if n > MAX_TOKENS}
        if not over:
            return result
        result = [half for i, p in enumerate(result) for half in (_halves(p) if i in over else (p,))]
    raise RuntimeError("could not bring every chunk under the token limit")


def _halves(piece: Piece) -> tuple[Piece, ...]:
    text = piece.text
    middle = len(text) // 2
    cut = text.rfind(" ", 0, middle)
    cut = cut if cut > len(text) // 4 else middle
    return tuple(Piece(part.strip(), piece.location, piece.heading_path, piece.context)
                 for part in (text[:cut], text[cut:]) if part.strip())
