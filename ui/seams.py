"""What the UI needs from the library and the engine (advanced_retrieval.KnowledgeBase and agentic_rag.Agent are
the real ones): the pages are written against these, not against attributes found by probing. Importing this
module is cheap."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the page draws before the engines are imported: these names are for readers and type checkers
    from advanced_retrieval import Filters, Hit, IngestResult, QueueItem
    from advanced_retrieval.ingest import Pause, SetAside
    from advanced_retrieval.library.outline import Outline
    from advanced_retrieval.tables import TableStore
    from agentic_rag import AnswerResult
    from document_processor import Chunk
    from vector_db import DocumentRecord


class LibraryRetriever(Protocol):
    """The library's search side, as the source viewer reads it."""

    def retrieve(self, query: str, k: int = 8, strategy: str = "auto",
                 filters: Filters | None = None) -> list[Hit]: ...

    def document_chunks(self, doc_id: str) -> list[Chunk]: ...


class Library(Protocol):
    """The document library the sidebar lists and changes, and the source viewer reads."""

    read_only_reason: str  # "" when this process may write
    rebuilt: list[IngestResult]  # what the last opening with rebuild=True indexed again
    tables: TableStore | None  # the documents' tables as data (None: not kept)

    @property
    def retriever(self) -> LibraryRetriever: ...

    def documents(self) -> list[DocumentRecord]: ...

    def delete(self, name_or_id: str) -> DocumentRecord | None: ...

    def clear(self) -> None: ...

    def original_path(self, doc_id: str) -> Path | None: ...

    def outline(self, doc_id: str) -> Outline: ...  # the document's sections (advanced_retrieval.library.outline)


class Uploads(Protocol):
    """The server's ingestion queue (advanced_retrieval.IngestQueue): the only way a tab adds documents."""

    busy_reason: str  # "" unless another program indexes this data directory's uploads

    @property
    def indexed_count(self) -> int: ...

    @property
    def pause(self) -> Pause | None: ...  # set while a full disk holds the queue until the next start

    @property
    def set_aside(self) -> tuple[SetAside, ...]: ...  # queue files found at open that the queue did not write

    def items(self) -> tuple[QueueItem, ...]: ...

    def pending_names(self) -> tuple[str, ...]: ...

    def enqueue(self, data: bytes, name: str) -> QueueItem: ...

    def cancel(self, entry_id: str) -> str: ...

    def forget_finished(self) -> int: ...

    def wait(self, predicate: Callable[[tuple[QueueItem, ...]], bool], timeout: float) -> bool: ...


class Engine(Protocol):
    """Answers one question about the library (agentic_rag.Agent)."""

    def ask(self, question: str, *, history: Sequence[tuple] = (), filters: Filters | None = None,
            strategy: str = "auto", k: int = 8, verify: bool = True,
            on_event: Callable[[str, dict], None] | None = None,
            on_token: Callable[[str], None] | None = None) -> AnswerResult: ...
