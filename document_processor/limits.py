"""How much one file may cost to read: bytes, seconds, memory, zip expansion, and the chunk size."""

from __future__ import annotations

from dataclasses import dataclass

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Bounds for reading one file, and the chunk size.

    Bad values raise ValueError at construction, naming what is allowed.

    Args:
        max_bytes: files bigger than this are refused (kind "too_large").
        timeout_s: an isolated parse is killed after this many seconds (kind "timeout").
        max_memory_mb: address-space cap of the isolated parsing process.
        max_zip_ratio: an Office member that expands more than this many times is a zip bomb.
        max_zip_uncompressed: an Office package that declares more bytes than this in total is a zip bomb.
        chunk_chars: target chunk length in characters (the 256-token limit may make chunks shorter).
        overlap_chars: at most this many characters of a chunk's end are repeated at the next chunk's start.
        max_chunks: a file that chunks into more passages is refused (kind "too_large"): embedding runs at
            ~50 passages/s on a 2-core laptop, so 20,000 is already ~7 minutes of one upload holding the library.
    """

    max_bytes: int = 200 * MB
    timeout_s: float = 60.0
    max_memory_mb: int = 2048
    max_zip_ratio: float = 100.0
    max_zip_uncompressed: int = 1024 * MB
    chunk_chars: int = 1000
    overlap_chars: int = 200
    max_chunks: int = 20_000

    def __post_init__(self):
        positive = ("max_bytes", "timeout_s", "max_zip_ratio", "max_zip_uncompressed")
        for name in positive:
            if not _is_number(getattr(self, name)) or getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be a number > 0, got {getattr(self, name)!r}")
        if not isinstance(self.max_chunks, int) or isinstance(self.max_chunks, bool) or self.max_chunks < 1:
            raise ValueError(f"Limits.max_chunks must be an int >= 1, got {self.max_chunks!r}")
        if not _is_number(self.max_memory_mb) or self.max_memory_mb < 256:
            raise ValueError(f"Limits.max_memory_mb must be a number >= 256, got {self.max_memory_mb!r}")
        if not isinstance(self.chunk_chars, int) or not 100 <= self.chunk_chars <= 20000:
            raise ValueError(f"Limits.chunk_chars must be an int in 100..20000, got {self.chunk_chars!r}")
        if not isinstance(self.overlap_chars, int) or not 0 <= self.overlap_chars <= self.chunk_chars // 2:
            raise ValueError(
                f"Limits.overlap_chars must be an int in 0..chunk_chars/2 ({self.chunk_chars // 2}), "
                f"got {self.overlap_chars!r}"
            )


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
