"""Input that should work (issue 16, items 10-12): long blocks, huge single lines, BOM-less UTF-16.

No test here times anything: the scaling is measured by bench/chunking.py. What is tested is the structure
that makes chunking linear (Python work per character, what the tokenizer is handed) and the output.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from document_processor import DocumentError, Limits, model_files, parse_bytes
from document_processor.blocks import Block
from document_processor.chunking import (
    MAX_CONTEXT_CHARS,
    MAX_TOKENIZE_CHARS,
    TokenCounter,
    chunk_blocks,
    least_pieces,
)
from document_processor.parsing import parse_in_process
from document_processor.types import Location

CHUNKING = str(Path(__file__).resolve().parents[1] / "document_processor" / "chunking.py")
WORDS = ("harbour", "crane", "ledger", "tariff", "vessel", "manifest", "berth", "pilot", "tug", "quay")


def unpunctuated(chars: int, seed: int = 0) -> str:
    """Whole words and single spaces, no sentence ends and no line breaks, about `chars` long."""
    rng = random.Random(seed)
    text = " ".join(rng.choice(WORDS) for _ in range(chars // 5))
    return text[:text.rfind(" ", 0, chars + 1)]


def log_lines(count: int) -> list[str]:
    return [f"2024-05-01T12:{i % 60:02d}:07 INFO worker-{i % 7} request {i} served in {i % 97} ms" for i in range(count)]


class RecordingTokenizer:
    """The real tokenizer, remembering the length of every text it was handed."""

    def __init__(self):
        self.real = model_files.tokenizer()
        self.lengths: list[int] = []

    def encode_batch(self, texts, add_special_tokens=True):
        self.lengths += [len(t) for t in texts]
        return self.real.encode_batch(texts, add_special_tokens=add_special_tokens)


def python_lines_in_chunking(blocks: list[Block]) -> int:
    """How many lines of chunking.py run while chunking `blocks` (a count of work, not a duration)."""
    counter = TokenCounter()
    counter.counts(["warm up"])
    executed = 0

    def local(frame, event, arg):
        nonlocal executed
        if event == "line":
            executed += 1
        return local

    def scope(frame, event, arg):
        return local if frame.f_code.co_filename == CHUNKING else None

    sys.settrace(scope)
    try:
        chunk_blocks(blocks, "t", counter=counter)
    finally:
        sys.settrace(None)
    return executed


# ---------------------------------------------------------------- item 10: linear chunking

@pytest.mark.parametrize("shape", ["unpunctuated words", "log lines"])
def test_chunking_does_a_bounded_amount_of_python_work_per_character(shape):
    """Packing used to re-add the whole chunk for every word (hundreds of steps per word of a long block)."""
    text = unpunctuated(40_000) if shape == "unpunctuated words" else "\n".join(log_lines(600))
    lines = python_lines_in_chunking([Block(text, Location(lines=(1, text.count("\n") + 1)))])
    assert lines / len(text) < 2.0, f"{lines} lines of chunking.py for {len(text)} characters"


def test_a_long_block_without_blank_lines_keeps_every_line_with_its_number():
    lines = log_lines(4000)  # ~300 KB in one block: the shape of a log file
    doc = parse_bytes("\n".join(lines).encode(), "server.log.txt", isolate=False)
    seen = set()
    for chunk in doc.chunks:
        first, last = chunk.location.lines
        assert chunk.text == "\n".join(lines[first - 1:last])  # whole lines, exactly the ones it says
        seen.update(range(first, last + 1))
    assert seen == set(range(1, len(lines) + 1))
    assert all(a.location.lines[0] < b.location.lines[0] for a, b in zip(doc.chunks, doc.chunks[1:], strict=False))


def test_a_long_unpunctuated_block_is_cut_between_words_and_loses_nothing():
    text = unpunctuated(200_000, seed=4)
    doc = parse_bytes(text.encode(), "transcript.txt", isolate=False)
    assert all(len(c.text) <= 1000 and model_files.count_tokens(c.index_text) <= model_files.MAX_TOKENS
               for c in doc.chunks)
    assert sum(len(c.text) for c in doc.chunks) / len(doc.chunks) > 700  # chunks are not needlessly small
    words = set(WORDS)
    assert all(set(c.text.split()) <= words for c in doc.chunks)  # no word was cut in two
    cursor = 0
    for chunk in doc.chunks:  # in order, each starting inside or right after the one before
        at = text.find(chunk.text, max(0, cursor - 1000))
        assert 0 <= at <= cursor + 1
        cursor = at + len(chunk.text)
    assert cursor == len(text)


# ---------------------------------------------------------------- item 11: a huge single line

@pytest.mark.parametrize("line", ["words", "no spaces"])
def test_the_tokenizer_never_gets_more_than_a_chunk_of_a_huge_single_line(line):
    """A 50 MB line handed to the tokenizer whole made it allocate past the parser's memory cap and abort."""
    text = unpunctuated(2_000_000, seed=1) if line == "words" else "QmFzZTY0" * 250_000
    tokenizer = RecordingTokenizer()
    doc = parse_in_process(text.encode(), "one_line.txt", Limits(), counter=TokenCounter(tokenizer))
    assert max(tokenizer.lengths) <= 1000 + MAX_CONTEXT_CHARS + 1
    assert "".join(c.text for c in doc.chunks).replace(" ", "") == text.replace(" ", "") or line == "words"
    assert len(doc.chunks) >= least_pieces([Block(text, Location(lines=(1, 1)))], 1000)


def test_token_counts_of_text_longer_than_the_tokenizer_limit_are_exact_and_in_pieces():
    text = unpunctuated(3 * MAX_TOKENIZE_CHARS + 123, seed=2)
    tokenizer = RecordingTokenizer()
    counted = TokenCounter(tokenizer).counts([text, "short text", ""], special=True)
    expected = [len(e.ids) for e in tokenizer.real.encode_batch([text, "short text", ""])]
    assert counted == expected
    assert max(tokenizer.lengths) <= MAX_TOKENIZE_CHARS


def test_least_pieces_is_a_lower_bound_known_without_tokenizing():
    blocks = [Block("Title", Location(lines=(1, 1)), ("Title",)),
              Block(unpunctuated(30_000, seed=3), Location(lines=(3, 3)), ("Title",)),
              Block("\n".join(log_lines(300)), Location(lines=(5, 304)), ("Title",))]
    assert least_pieces(blocks, 1000) <= len(chunk_blocks(blocks, "t"))
    assert least_pieces([Block("x" * 50_000_000, Location(lines=(1, 1)))], 1000) == 50_000
    assert least_pieces([], 1000) == 0


# ---------------------------------------------------------------- item 12: UTF-16 without a BOM

TEXTS = {
    "english": "The quarterly report is due on Friday.\nPlease send the figures to the finance team.\n\n"
               "Second paragraph PLANTED-EN with numbers 1234.\n",
    "russian": "Квартальный отчёт нужно сдать в пятницу.\nПожалуйста, отправьте цифры в финансовый отдел.\n\n"
               "Второй абзац ПЛАНТ-РУ с числами 1234.\n",
    "chinese": "季度报告必须在星期五之前提交。\n请把数字发给财务部门。\n\n第二段落包含数字一二三四。\n",
    "chinese, one line": "季度报告必须在星期五之前提交请把数字发给财务部门第二段落包含数字一二三四",
}


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("language", sorted(TEXTS))
def test_utf16_without_a_bom_is_read_as_text(language, encoding):
    text = TEXTS[language]
    doc = parse_bytes(text.encode(encoding), "notes.txt", isolate=False)
    assert "\n\n".join(c.text for c in doc.chunks) == text.strip()


@pytest.mark.parametrize("data", [
    "Plain English in cp1252 with one café.\nNothing else here at all.\n".encode("cp1252"),
    "Короткий текст в cp1251, не UTF-16.\n".encode("cp1251"),
    "Texte français en UTF-8 : déjà vu.\n".encode(),
])
def test_eight_bit_text_is_not_mistaken_for_utf16(data):
    text = parse_bytes(data, "eight_bit.txt", isolate=False).chunks[0].text
    assert text.isascii() or any(ch in text for ch in "éàКТ")  # Latin or Cyrillic, never CJK soup
    assert not any("\u3400" <= ch <= "\u9fff" for ch in text)


def test_binary_is_still_refused_in_either_byte_order():
    rng = random.Random(5)
    for data in (bytes(rng.randrange(256) for _ in range(8192)), b"\x00\x00\x01\x00" * 2048):
        with pytest.raises(DocumentError) as err:
            parse_bytes(data, "blob.txt", isolate=False)
        assert err.value.kind == "wrong_type" and err.value.file_name == "blob.txt"


def test_a_file_with_more_passages_than_the_limit_is_refused_before_chunking(monkeypatch):
    """The passage count is bounded from below without tokenizing, so a huge single line is refused for its
    size at once, with that reason, instead of after minutes of chunking (or a time-out)."""
    from document_processor import DocumentError, Limits, parsing

    def never(*args, **kwargs):
        raise AssertionError("chunking should not start")

    monkeypatch.setattr(parsing, "chunk_blocks", never)
    line = ("word " * 400_000).encode()  # 2 MB on one line: at least 1,600,000 / 1,000 passages
    with pytest.raises(DocumentError) as refused:
        parsing.parse_in_process(line, "one_line.txt", Limits(max_chunks=500))
    assert refused.value.kind == "too_large" and "at least" in str(refused.value)
