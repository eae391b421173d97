"""document_processor.chunking: every chunk fits the embedder, overlaps, and the structure that makes chunking linear
(issue 16, items 10-11: Python work per character, what the tokenizer is handed). No test here times anything: the
scaling is measured by bench/chunking.py."""

from __future__ import annotations

import random
import sys

import pytest

from document_processor import Limits, Location, model_files, parse_bytes
from document_processor.blocks import Block
from document_processor.chunking import MAX_CONTEXT_CHARS, MAX_TOKENIZE_CHARS, TokenCounter, chunk_blocks, least_pieces
from document_processor.parsing import parse_in_process
from tests.helpers.documents import MAX, technical_text, tokens
from tests.helpers.paths import REPO


def test_every_chunk_fits_the_embedder_on_long_technical_text():
    text = technical_text(120) + "\n\n" + "x" * 5000 + "\n\n" + "漢字仮名交じり文" * 400 + "\n\n" + technical_text(20, 1)
    doc = parse_bytes(text.encode(), "dense.md", isolate=False)
    counts = [tokens(c.index_text) for c in doc.chunks]
    assert max(counts) <= MAX
    assert sum(counts) / len(counts) > 150  # chunks are not needlessly tiny
    assert all(len(c.text) <= 1000 for c in doc.chunks)
    assert "x" * 5000 in "".join(c.text for c in doc.chunks)  # cut by characters, nothing lost


def test_chunks_overlap_within_limits_and_lines_are_exact():
    text = technical_text(40, seed=3)
    doc = parse_bytes(text.encode(), "long.txt", isolate=False)
    lines = text.split("\n")
    overlaps = []
    for a, b in zip(doc.chunks, doc.chunks[1:], strict=False):
        shared = max((n for n in range(1, min(len(a.text), len(b.text)) + 1) if a.text.endswith(b.text[:n])), default=0)
        overlaps.append(shared)
    assert max(overlaps) <= 200 and sum(1 for o in overlaps if o >= 20) >= len(overlaps) // 2
    for chunk in doc.chunks:
        first, last = chunk.location.lines
        assert chunk.text.split("\n")[0] in lines[first - 1] and chunk.text.split("\n")[-1] in lines[last - 1]


CHUNKING = str(REPO / "document_processor" / "chunking.py")


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
