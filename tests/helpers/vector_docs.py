"""Parsed documents and embedders for the vector store tests."""

from __future__ import annotations

from document_processor import Chunk, Location, ParsedDocument, chunk_id


def make_doc(name: str, texts: list[str], file_type: str = "pdf", doc_id: str | None = None,
             locations: list[Location] | None = None) -> ParsedDocument:
    """A ParsedDocument whose chunk i has texts[i], page i//2+1 unless `locations` says otherwise."""
    doc_id = doc_id or f"id-{name}"
    chunks = []
    for i, text in enumerate(texts):
        loc = locations[i] if locations else Location(page=i // 2 + 1)
        chunks.append(Chunk(chunk_id(doc_id, loc, i, text), doc_id, name, file_type, text, loc,
                            ("Intro", f"Part {i}"), i, f"{name} > Intro"))
    return ParsedDocument(doc_id, name, file_type, 1234, name.title(), "pages", len(texts) // 2 + 1, tuple(chunks))


def words_doc(name: str, n: int, topic: str, file_type: str = "pdf") -> ParsedDocument:
    return make_doc(name, [f"{topic} note {i} {topic} w{i % 5}" for i in range(n)], file_type)


class FailingEmbedder:
    """The fake embedder, raising `error` on call number `fail_on` (1-based)."""

    def __init__(self, inner, fail_on: int, error: BaseException):
        self.inner, self.fail_on, self.error, self.calls = inner, fail_on, error, 0
        self.dim, self.name = inner.dim, inner.name

    def embed(self, texts, progress=None):
        self.calls += 1
        if self.calls == self.fail_on:
            raise self.error
        return self.inner.embed(texts, progress)

    def embed_query(self, text):
        return self.inner.embed_query(text)
