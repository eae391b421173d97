"""What the engine needs from the packages below it and from a brain (typed seams, no attribute probing).

advanced_retrieval.HybridRetriever is the real Retriever; GeminiBrain, LocalBrain (both ModelBrain) and OfflineBrain
are the Brains. Tests pass their own retrievers that follow the same Protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from advanced_retrieval import Filters, Hit
from advanced_retrieval.library.outline import Outline
from advanced_retrieval.tables import QueryResult, TableInfo
from agentic_rag.types import Analysis, BrainReply, ContextBlock, Coverage
from document_processor import Chunk


class LibraryDocument(Protocol):
    """One indexed document as the retriever lists it (vector_db.DocumentRecord). `chunks` is a count, or a
    simple retriever's own list of chunks."""

    doc_id: str
    file_name: str
    file_type: str
    chunks: object


class Retriever(Protocol):
    """Searches the indexed documents and reads one document whole (for "which documents do NOT mention X")."""

    def retrieve(self, query: str, k: int = 8, strategy: str = "auto",
                 filters: Filters | None = None) -> list[Hit]: ...

    def documents(self) -> Sequence[LibraryDocument]: ...

    def document_chunks(self, doc_id: str) -> list[Chunk]: ...


class TableSource(Protocol):
    """The documents' tables as data (advanced_retrieval.tables.TableStore is the real one): what tables a
    document has, their first rows, and one read-only query with a time and a row limit."""

    def tables(self, doc_ids: Sequence[str] | None = None) -> list[TableInfo]: ...

    def rows(self, table: TableInfo, first: int = 1, count: int = 200) -> list[tuple]: ...

    def query(self, sql: str, *, seconds: float = 5.0, max_rows: int = 200) -> QueryResult: ...

    def reading(self) -> AbstractContextManager: ...  # one connection for the reads of one question


class OutlineSource(Protocol):
    """Documents' outlines (advanced_retrieval.KnowledgeBase is the real one): the tree of sections kept with a
    document, which the whole-document, section and list routes read."""

    def outline(self, doc_id: str) -> Outline: ...


class Brain(Protocol):
    """Plans, answers and checks one question; `mode` is "gemini", "local" or "offline"."""

    mode: str

    def plan(self, question: str, history: Sequence[tuple[str, str]] = (), *, deadline: float,
             documents_language: str = "") -> BrainReply: ...

    def answer(self, analysis: Analysis, sub_questions: Sequence[str], blocks: Sequence[ContextBlock],
               coverage: Sequence[Coverage] = (), on_token: Callable[[str], None] | None = None, *,
               deadline: float, focus: Sequence[str] = (), part: tuple[int, int] | None = None,
               reading: dict | None = None) -> BrainReply: ...

    def combine(self, analysis: Analysis, partials: Sequence[str], on_token: Callable[[str], None] | None = None,
                *, deadline: float) -> BrainReply: ...

    def table_sql(self, question: str, schemas: str, *, deadline: float) -> BrainReply: ...

    def verify(self, drafts: Sequence, blocks: Sequence[ContextBlock], *, question: str,
               deadline: float) -> BrainReply: ...
