"""Plain text and Markdown: decoding without ever crashing, paragraphs with line ranges, heading paths."""

from __future__ import annotations

import codecs
import re
import unicodedata

from document_processor.blocks import Block, Reading, Table, clean_text, markdown_table
from document_processor.types import DocumentError, Location

_BOMS = (  # longest first: the UTF-32 LE BOM starts with the UTF-16 LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_BINARY_SHARE = 0.05  # more control characters than this in the first 4 KB means "not text"
_UTF16_BAD_SHARE = 0.02  # a UTF-16 reading with more impossible characters than this is not text


def decode_text(data: bytes, name: str) -> str:
    """Decode text: a BOM decides, else strict UTF-8, else BOM-less UTF-16, else cp1252 (never fails).

    Raises DocumentError("wrong_type") when the decoded text is mostly control characters (a binary file).
    """
    text = _decode(data)
    if _looks_binary(text):
        raise DocumentError(name, "wrong_type", "binary content, not a text file")
    return text


def _looks_binary(text: str) -> bool:
    sample = text[:4096]
    controls = sum(1 for ch in sample if ord(ch) < 32 and ch not in "\t\n\r\f")
    return bool(sample) and controls > _BINARY_SHARE * len(sample)


def _decode(data: bytes) -> str:
    """UTF-16 is tried when UTF-8 fails and also when UTF-8 "succeeds" with control characters everywhere:
    BOM-less UTF-16 English is valid UTF-8 with a NUL after each letter, Russian with a \x04."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None  # not UTF-8: UTF-16, else cp1252 below
    if text is not None and not _looks_binary(text):
        return text
    encoding = _utf16_encoding(data[:4096])
    if encoding is not None:
        return data.decode(encoding, errors="replace")
    # cp1252 leaves five bytes undefined; "replace" turns them into U+FFFD instead of failing.
    return text if text is not None else data.decode("cp1252", errors="replace")


def _utf16_encoding(sample: bytes) -> str | None:
    """'utf-16-le' or 'utf-16-be' when the sample reads as text in one byte order, else None.

    Read in the right order, text has (almost) no unassigned, private-use, surrogate or control characters.
    Which order, and whether it is UTF-16 at all, needs evidence: ASCII characters (a zero high byte,
    which 8-bit text never has), or the other order reading clearly worse (byte-swapped CJK lands in
    unassigned code points and surrogates). 8-bit text is ruled out first: two ASCII bytes read as one CJK
    character, so English in cp1252 would otherwise pass as Chinese.
    """
    sample = sample[: len(sample) // 2 * 2]
    pairs = len(sample) // 2
    if pairs < 2 or sum(1 for i in range(0, len(sample), 2) if _printable(sample[i]) and _printable(sample[i + 1])) > pairs / 2:
        return None
    (bad, ascii_, encoding), (other_bad, _, _) = sorted(
        (_oddities(sample.decode(enc, errors="surrogatepass")) + (enc,) for enc in ("utf-16-le", "utf-16-be")),
        key=lambda c: (c[0], -c[1]))
    chars = max(1, len(sample) // 2)
    if bad > _UTF16_BAD_SHARE * chars:
        return None
    return encoding if ascii_ >= 0.05 * chars or other_bad >= bad + 0.05 * chars else None


def _printable(byte: int) -> bool:
    return 0x20 <= byte <= 0x7E or byte in (0x09, 0x0A, 0x0D)


def _oddities(text: str) -> tuple[int, int]:
    """(characters no text has: controls, unassigned, private use, surrogates; ASCII characters)."""
    bad = sum(1 for ch in text if ch not in "\t\n\r\f" and unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs"))
    return bad, sum(1 for ch in text if ch < "\x80")


def read_txt(data: bytes, name: str, progress=None) -> Reading:
    """A plain text file: one block per paragraph (blank-line separated), Location.lines = (first, last)."""
    lines = decode_text(data, name).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = tuple(_paragraph_blocks(lines, markdown=False))
    return Reading(blocks=blocks, unit_name="lines", units=len(lines))


def read_markdown(data: bytes, name: str, progress=None) -> Reading:
    """A Markdown file: paragraphs and pipe tables with line ranges; '#' and setext headings give the path."""
    lines = decode_text(data, name).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks = tuple(_paragraph_blocks(lines, markdown=True))
    headings = [b for b in blocks if b.heading_path and b.text == b.heading_path[-1]]
    first_h1 = next((b.text for b in headings if len(b.heading_path) == 1), "")
    title = first_h1 or (headings[0].text if headings else "")
    return Reading(blocks=blocks, unit_name="lines", units=len(lines), title=title)


def _paragraph_blocks(lines: list[str], markdown: bool):
    """Yield a Block per paragraph, heading or pipe table; paragraphs end at blank lines and headings."""
    path: list[tuple[int, str]] = []
    para: list[tuple[int, str]] = []  # (1-based line number, text)
    fence = ""
    for number, line in enumerate(lines, start=1):
        if markdown:
            fence = _fence_state(line, fence)
        heading = _heading(line, para) if markdown and not fence else None
        if heading is not None:
            level, title, used = heading
            yield from _flush(para[: len(para) - used], path)
            first = para[-1][0] if used else number
            para = []
            while path and path[-1][0] >= level:
                path.pop()
            if title:
                path.append((level, title))
                yield Block(title, Location(lines=(first, number)), tuple(t for _, t in path))
        elif line.strip() or fence:
            para.append((number, line))
        else:
            yield from _flush(para, path)
            para = []
    yield from _flush(para, path)


def _fence_state(line: str, fence: str) -> str:
    """The open code fence after this line ('' when outside a fence); headings inside fences are code."""
    match = _FENCE.match(line)
    if not match:
        return fence
    marker = match.group(1)
    if not fence:
        return marker
    return "" if marker[0] == fence[0] and len(marker) >= len(fence) else fence


def _heading(line: str, para: list[tuple[int, str]]):
    """(level, title, paragraph lines consumed) for an ATX heading or a one-line setext heading, else None."""
    match = _ATX.match(line)
    if match:
        return len(match.group(1)), clean_text(match.group(2) or ""), 0
    match = _SETEXT.match(line)
    if match and len(para) == 1 and not para[0][1].lstrip().startswith(("|", "-", "*", ">")):
        return (1 if match.group(1)[0] == "=" else 2), clean_text(para[0][1]), 1
    return None


def _flush(para: list[tuple[int, str]], path: list[tuple[int, str]]):
    if not para:
        return
    heading_path = tuple(t for _, t in path)
    first, last = para[0][0], para[-1][0]
    table = _pipe_table(para)
    if table is not None:
        yield Block("\n".join((table.header, *table.rows)), Location(lines=(first, last)), heading_path, table)
        return
    text = clean_text("\n".join(t for _, t in para))
    if text:
        yield Block(text, Location(lines=(first, last)), heading_path)


def _pipe_table(para: list[tuple[int, str]]) -> Table | None:
    """A Markdown pipe table (header, separator, rows) as a Table whose rows know their line numbers."""
    if len(para) < 3 or not _TABLE_SEPARATOR.match(para[1][1]) or "|" not in para[0][1]:
        return None
    cells = [_pipe_cells(t) for _, t in para]
    rows = [c for c in cells[2:]]
    locations = [Location(lines=(n, n)) for n, _ in para[2:]]
    return markdown_table(cells[0], rows, locations)


def _pipe_cells(line: str) -> list[str]:
    line = line.strip()
    line = line[1:] if line.startswith("|") else line
    line = line[:-1] if line.endswith("|") and not line.endswith("\\|") else line
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)]
