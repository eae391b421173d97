"""The units that parsing produces: where a piece of text stands, the chunk, the parsed document."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


class DocumentError(Exception):
    """A file that cannot be read, with a one-line reason a person understands.

    `kind` is one of KINDS; str(error) is "NAME: reason".
    """

    KINDS = (
        "unsupported", "empty", "corrupt", "wrong_type", "encrypted",
        "no_text", "too_large", "zip_bomb", "timeout",
    )

    def __init__(self, file_name: str, kind: str, reason: str):
        if kind not in self.KINDS:
            raise ValueError(f"unknown DocumentError kind {kind!r}; allowed: {', '.join(self.KINDS)}")
        super().__init__(f"{file_name}: {reason}")
        self.file_name = file_name
        self.kind = kind
        self.reason = reason

    def __reduce__(self):  # survives the trip back from the parsing subprocess
        return (type(self), (self.file_name, self.kind, self.reason))


@dataclass(frozen=True)
class Location:
    """Exactly one kind of place in a document: page, slide, sheet+cells, paragraph or line range.

    Numbers are 1-based. `paragraph` is the body-order index of the first paragraph/table of a DOCX chunk;
    `lines` is an inclusive (first, last) line range of a text file.
    """

    page: int | None = None
    slide: int | None = None
    sheet: str | None = None
    cells: str | None = None
    paragraph: int | None = None
    lines: tuple[int, int] | None = None

    def label(self) -> str:
        """Short human label: 'p. 3', 'slide 4', 'Revenue!A1:F40', '¶ 12', 'lines 10-24'."""
        if self.page is not None:
            return f"p. {self.page}"
        if self.slide is not None:
            return f"slide {self.slide}"
        if self.sheet is not None:
            return f"{self.sheet}!{self.cells}" if self.cells else self.sheet
        if self.paragraph is not None:
            return f"¶ {self.paragraph}"
        if self.lines is not None:
            return f"lines {self.lines[0]}-{self.lines[1]}"
        return ""

    def to_dict(self) -> dict:
        """Only the fields that are set; `lines` as a two-item list."""
        out = {k: v for k, v in self.__dict__.items() if v is not None}
        if "lines" in out:
            out["lines"] = list(out["lines"])
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Location:
        data = dict(data)
        if data.get("lines") is not None:
            data["lines"] = tuple(data["lines"])
        return cls(**{k: data.get(k) for k in ("page", "slide", "sheet", "cells", "paragraph", "lines")})


def chunk_id(doc_id: str, location: Location, ordinal: int, text: str) -> str:
    """Content-derived id: the same document bytes always give the same ids, so writing twice is a no-op."""
    h = hashlib.sha256()
    for part in (doc_id, repr(sorted(location.to_dict().items())), str(ordinal), text):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()[:32]


@dataclass(frozen=True)
class Chunk:
    """A citable piece of a document. Re-scoring makes copies with dataclasses.replace, never mutates."""

    id: str
    doc_id: str
    file_name: str
    file_type: str
    text: str
    location: Location
    heading_path: tuple[str, ...] = ()
    ordinal: int = 0
    context: str = ""

    @property
    def index_text(self) -> str:
        """What retrieval indexes: the context header (title > headings) followed by the text."""
        return f"{self.context}\n{self.text}" if self.context else self.text

    def to_dict(self) -> dict:
        return {
            "id": self.id, "doc_id": self.doc_id, "file_name": self.file_name, "file_type": self.file_type,
            "text": self.text, "location": self.location.to_dict(), "heading_path": list(self.heading_path),
            "ordinal": self.ordinal, "context": self.context,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Chunk:
        return cls(
            id=data["id"], doc_id=data["doc_id"], file_name=data["file_name"], file_type=data["file_type"],
            text=data["text"], location=Location.from_dict(data.get("location") or {}),
            heading_path=tuple(data.get("heading_path") or ()), ordinal=int(data.get("ordinal", 0)),
            context=data.get("context", ""),
        )


@dataclass(frozen=True)
class DataTable:
    """A table of a document as data: its column names, its rows of cells as the document shows them, and where
    each row is (one Location per row: a sheet's cell range, else the page, slide or paragraph of the table).

    `name` is unique within its document ("Budget", "p. 47 table 1"); `title` is what heads it (the sheet, the
    statement's title, the heading it sits under); `note` is the text printed with it that may state units and
    scale ("(In millions, except per share amounts)"). `column_refs` are a sheet's column letters, one per column.
    """

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    location: Location
    row_locations: tuple[Location, ...] = ()
    column_refs: tuple[str, ...] = ()
    note: str = ""

    def cell_label(self, row: int, column: int) -> str:
        """Where one cell is, for a citation: 'Budget!C7', or 'p. 47, table 1, row 3 "Total revenue", column
        "2022"' (`row` and `column` 0-based into rows and columns)."""
        where = self.row_locations[row] if row < len(self.row_locations) else self.location
        if where.sheet is not None and column < len(self.column_refs) and where.cells:
            number = "".join(ch for ch in where.cells.split(":")[0] if ch.isdigit())
            return f"{where.sheet}!{self.column_refs[column]}{number}"
        label = self.rows[row][0] if row < len(self.rows) and self.rows[row] else ""
        head = self.columns[column] if column < len(self.columns) else ""
        return (f"{where.label()}, {self.name.split(' ', 2)[-1] if where.page else self.name}, row {row + 1}"
                + (f' "{label}"' if label else "") + (f', column "{head}"' if head else ""))


@dataclass(frozen=True)
class ParsedDocument:
    """One file, read and chunked. `units` counts pages, slides or sheets as `unit_name` says."""

    doc_id: str
    file_name: str
    file_type: str
    size_bytes: int
    title: str
    unit_name: str
    units: int
    chunks: tuple[Chunk, ...] = field(default_factory=tuple)
    seconds: float = 0.0
    warnings: tuple[str, ...] = ()  # parts that could not be read (e.g. "p. 7: ..."), the rest was kept
    tables: tuple[DataTable, ...] = ()  # every table the readers found, as data (document_processor.tables)
