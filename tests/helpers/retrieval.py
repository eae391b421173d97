"""Chunks and parsed documents for the retrieval tests, and the small corpora they search."""

from __future__ import annotations

from document_processor import Chunk, Location, ParsedDocument, chunk_id


def make_chunks(texts, doc_id="doc-a", file_type="txt", file_name=None, context=""):
    return [
        Chunk(id=chunk_id(doc_id, Location(page=i + 1), i, t), doc_id=doc_id, file_name=file_name or f"{doc_id}.txt",
              file_type=file_type, text=t, location=Location(page=i + 1), ordinal=i, context=context)
        for i, t in enumerate(texts)
    ]


def make_doc(texts, doc_id="doc-a", file_type="txt", file_name=None) -> ParsedDocument:
    chunks = make_chunks(texts, doc_id, file_type, file_name)
    return ParsedDocument(doc_id=doc_id, file_name=chunks[0].file_name, file_type=file_type, size_bytes=100,
                          title=doc_id, unit_name="pages", units=len(texts), chunks=tuple(chunks))


CORPUS = [
    "the cat sat on the mat near the door",
    "dogs and cats living together in a small house",
    "revenue grew 28.4% to $4,000 million in fiscal 2022",
    "the annual report on form 10-K describes revenue and risks",
    "cat cat cat and one dog",
    "nothing to see here, just a long sentence about weather and clouds and rain",
    "steel mats are finished by rolling; net income fell",
    "income before taxes, net of the adjustments, was stable",
]


def chunk(text: str, page: int, ordinal: int, doc_id: str = "filing") -> Chunk:
    loc = Location(page=page)
    return Chunk(id=chunk_id(doc_id, loc, ordinal, text), doc_id=doc_id, file_name=f"{doc_id}.pdf", file_type="pdf",
                 text=text, location=loc, ordinal=ordinal)


def doc(chunks: list[Chunk], doc_id: str = "filing") -> ParsedDocument:
    return ParsedDocument(doc_id=doc_id, file_name=f"{doc_id}.pdf", file_type="pdf", size_bytes=100, title=doc_id,
                          unit_name="pages", units=max(c.location.page for c in chunks), chunks=tuple(chunks))


STATEMENTS = [
    "free cash flow is a non-GAAP measure we discuss with investors",  # the user's words
    "purchases of property and equipment, capital expenditures and other investing activities",  # the document's
    "the weather was fine and nobody talked about money",
]


class CountingStore:
    """A store that records each read a retrieval makes of it: ("vectors", ids), ("chunks", ids), ("pages", doc_id)
    and ("search", n); everything else passes through."""

    def __init__(self, inner):
        self._inner, self.reads = inner, []

    def vectors(self, ids):
        self.reads.append(("vectors", tuple(ids)))
        return self._inner.vectors(ids)

    def get_chunks(self, ids):
        self.reads.append(("chunks", tuple(ids)))
        return self._inner.get_chunks(ids)

    def document_chunks(self, doc_id):
        self.reads.append(("pages", doc_id))
        return self._inner.document_chunks(doc_id)

    def query(self, vector, n, filters=None):
        self.reads.append(("search", n))
        return self._inner.query(vector, n, filters)

    def __getattr__(self, name):
        return getattr(self._inner, name)
