"""document_processor.parsing: a file with too many passages is refused before embedding, and before chunking."""

from __future__ import annotations

import pytest

from document_processor import DocumentError, Limits, parse_bytes


def test_a_file_that_chunks_into_too_many_passages_is_refused_before_embedding():
    data = "\n\n".join(f"Paragraph {i}: " + "harbour crane logistics " * 40 for i in range(60)).encode()
    assert len(parse_bytes(data, "ok.txt", isolate=False).chunks) > 50
    with pytest.raises(DocumentError) as err:
        parse_bytes(data, "long.txt", limits=Limits(max_chunks=50), isolate=False)
    assert err.value.kind == "too_large"
    assert "passages, over the 50 limit" in err.value.reason and "split it into smaller files" in err.value.reason
    with pytest.raises(ValueError, match="max_chunks"):
        Limits(max_chunks=0)


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
