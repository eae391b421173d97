"""Evaluation questions: the JSONL format, its validation and loading.

One JSON object a line:
    {"question": "...", "doc": "paper.pdf", "pages": [3], "answer": [["8", "eight"], ["64"]], "kind": "precision"}

`doc` is a file name (or a list of them for a cross-document question); `pages` are 1-based, as a list when one
file is named, or as {"file": [pages]} for several; in a slide deck they are slide numbers. `sheets` names the gold
sheets of a workbook the same way. `answer` is a list of groups of accepted alternatives: an answer is right when it
contains one alternative of every group. `kind` is free text; "unanswerable" expects a refusal
and so takes no `doc`, `pages`, `sheets` or `answer`. `note` is free text for the annotator (where the gold was
read). Blank lines are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path, PurePath

UNANSWERABLE = "unanswerable"
FIELDS = ("question", "doc", "pages", "sheets", "answer", "kind", "id", "note", "value", "tolerance", "unit",
          "family", "gold_cells", "items", "sections", "points", "item_pages", "locator")


class DatasetError(ValueError):
    """A dataset that cannot be used, naming the file and line: "sample.jsonl line 3: reason"."""

    def __init__(self, source: str, line: int, reason: str):
        where = f"{source} line {line}" if line else source
        super().__init__(f"{where}: {reason}")
        self.source = source
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class GoldSource:
    """Where the answer lives: a file name and, for paged files, the 1-based pages or slides, for workbooks the
    sheet names (empty = anywhere in it)."""

    file: str
    pages: tuple[int, ...] = ()
    sheets: tuple[str, ...] = ()


@dataclass(frozen=True)
class EvalQuestion:
    """One question with its gold location(s), accepted answer groups and kind."""

    question: str
    gold: tuple[GoldSource, ...] = ()
    answer: tuple[tuple[str, ...], ...] = ()
    kind: str = ""
    id: str = ""
    line: int = 0
    value: float | None = None  # the gold figure, when the answer is one (as printed: 17606 for "$17,606 million")
    tolerance: float = 0.0  # how far a figure may be from `value` and still be it (its rounding as printed)
    family: str = ""  # paper | filing | office | scan | sheet | csv | ...: for per-family reports
    items: tuple[tuple[str, ...], ...] = ()  # a list question's complete gold items, each as alternatives
    sections: tuple[tuple[str, ...], ...] = ()  # the sections a whole-document or section answer must cover
    points: tuple[tuple[str, ...], ...] = ()  # the key points a summary must make

    @property
    def unanswerable(self) -> bool:
        return self.kind == UNANSWERABLE

    def to_dict(self) -> dict:
        """The question back in the dataset's JSON shape (plus its id and line)."""
        out: dict = {"id": self.id, "line": self.line, "question": self.question, "kind": self.kind}
        if self.gold:
            out["doc"] = [g.file for g in self.gold]
            out["pages"] = {g.file: list(g.pages) for g in self.gold if g.pages}
            if any(g.sheets for g in self.gold):
                out["sheets"] = {g.file: list(g.sheets) for g in self.gold if g.sheets}
        if self.answer:
            out["answer"] = [list(group) for group in self.answer]
        if self.family:
            out["family"] = self.family
        return out

    @property
    def document_family(self) -> str:
        """Its family of documents, for per-family reports (family_of its first gold file)."""
        return family_of(self.gold[0].file if self.gold else "", self.family)


_IMAGES = frozenset((".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp"))
_FILING = re.compile(r"^[A-Z0-9&]+(?:[A-Z0-9&-]*)_\d{4}")  # FinanceBench's COMPANY_YEAR_KIND.pdf


def family_of(file_name: str, family: str = "") -> str:
    """A question's family of documents: the set's own `family`, else read off its gold file: an image is a
    scan, a PDF named like a filing ("3M_2022_10K.pdf") a filing, any other PDF a paper, the rest office files;
    "" without a file."""
    if family or not file_name:
        return family
    suffix = Path(file_name).suffix.lower()
    if suffix in _IMAGES:
        return "scan"
    if suffix == ".pdf":
        return "filing" if _FILING.match(file_name) else "paper"
    return "office"


def load_dataset(path: str | Path) -> list[EvalQuestion]:
    """Read and validate a JSONL dataset.

    Raises:
        DatasetError: the file is missing or unreadable, or a line is not a valid question (its number is given).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(path.name, 0, f"cannot read the dataset ({exc})") from exc
    return parse_dataset(text, source=path.name)


def parse_dataset(text: str, source: str = "dataset") -> list[EvalQuestion]:
    """Validate JSONL text into questions; raises DatasetError naming the first bad line."""
    questions = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(source, number, f"not valid JSON ({exc.msg} at column {exc.colno})") from exc
        try:
            questions.append(parse_question(record, line=number))
        except ValueError as exc:
            raise DatasetError(source, number, str(exc)) from exc
    return questions


def parse_question(record: object, line: int = 0) -> EvalQuestion:
    """One decoded JSON line → EvalQuestion; raises ValueError with a human reason."""
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    unknown = sorted(set(record) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(FIELDS)}")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        raise ValueError("'question' must be a non-empty string")
    kind = record.get("kind", "")
    if not isinstance(kind, str):
        raise ValueError("'kind' must be a string")
    kind = kind.strip().lower()
    if kind == UNANSWERABLE and any(record.get(f) for f in ("answer", "value")):
        raise ValueError("an unanswerable question takes no 'answer' or 'value' (its 'doc' may name the file it "
                         "asks about)")
    return EvalQuestion(
        question=question.strip(),
        gold=_parse_gold(record.get("doc"), record.get("pages"), record.get("sheets")),
        answer=_parse_answer(record.get("answer")),
        kind=kind,
        id=str(record.get("id") or f"q{line}"),
        line=line,
        value=_parse_number(record.get("value"), "value"),
        tolerance=_parse_number(record.get("tolerance"), "tolerance") or 0.0,
        family=str(record.get("family") or "").strip().lower(),
        items=_parse_groups(record.get("items"), "items"),
        sections=_parse_groups(record.get("sections"), "sections"),
        points=_parse_groups(record.get("points"), "points"),
    )


def _parse_number(value: object, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"'{field}' must be a number")
    return float(value)


def _parse_groups(value: object, field: str) -> tuple[tuple[str, ...], ...]:
    """A list of groups of alternatives (strings); a bare string is a group of one."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"'{field}' must be a list of groups of alternatives")
    groups = []
    for group in value:
        alternatives = [group] if isinstance(group, str) else group
        if not isinstance(alternatives, list) or not all(isinstance(a, str) and a.strip() for a in alternatives):
            raise ValueError(f"every group in '{field}' must be a string or a list of strings")
        if alternatives:
            groups.append(tuple(a.strip() for a in alternatives))
    return tuple(groups)


def _parse_gold(doc: object, pages: object, sheets: object = None) -> tuple[GoldSource, ...]:
    files = _parse_files(doc)
    page_map = _per_file(files, pages, "pages", _parse_pages)
    sheet_map = _per_file(files, sheets, "sheets", _parse_sheets)
    return tuple(GoldSource(f, page_map.get(f, ()), sheet_map.get(f, ())) for f in files)


def _per_file(files: tuple[str, ...], value: object, field: str, parse) -> dict:
    """`pages` or `sheets` as {file: parsed}: a list belongs to the only file, a dict names its files."""
    if value is None:
        return {}
    if not files:
        raise ValueError(f"'{field}' needs a 'doc' to say which file they are in")
    if isinstance(value, list):
        if len(files) > 1:
            raise ValueError(f"'{field}' is a list but 'doc' names several files; use {{\"file\": [{field}]}}")
        return {files[0]: parse(value, field)}
    if isinstance(value, dict):
        extra = sorted(set(value) - set(files))
        if extra:
            raise ValueError(f"'{field}' names file(s) not in 'doc': {', '.join(extra)}")
        return {f: parse(value.get(f, []), f"{field}[{f!r}]") for f in files}
    what = "1-based page numbers" if field == "pages" else "sheet names"
    raise ValueError(f"'{field}' must be a list of {what} or {{\"file\": [{field}]}}")


def _parse_files(doc: object) -> tuple[str, ...]:
    if doc is None:
        return ()
    names = [doc] if isinstance(doc, str) else doc
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise ValueError("'doc' must be a file name or a non-empty list of file names")
    # The gold is a file name, so a path written in the dataset is reduced to its name.
    return tuple(dict.fromkeys(PurePath(n.strip()).name for n in names))


def _parse_pages(pages: object, field: str) -> tuple[int, ...]:
    if not isinstance(pages, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in pages):
        raise ValueError(f"'{field}' must be a list of integers")
    if any(p < 1 for p in pages):
        raise ValueError(f"'{field}' are 1-based page numbers; got {min(pages)}")
    return tuple(sorted(set(pages)))


def _parse_sheets(sheets: object, field: str) -> tuple[str, ...]:
    if not isinstance(sheets, list) or not all(isinstance(s, str) and s.strip() for s in sheets):
        raise ValueError(f"'{field}' must be a list of sheet names")
    return tuple(dict.fromkeys(s.strip() for s in sheets))


def _parse_answer(answer: object) -> tuple[tuple[str, ...], ...]:
    if answer is None:
        return ()
    shape = "'answer' must be a list of groups of alternatives, e.g. [[\"8\", \"eight\"], [\"64\"]]"
    if not isinstance(answer, list) or not answer:
        raise ValueError(shape)
    groups = []
    for group in answer:
        if not isinstance(group, list) or not group:
            raise ValueError(shape)
        if not all(isinstance(alt, str) and alt.strip() for alt in group):
            raise ValueError("every alternative in 'answer' must be a non-empty string")
        groups.append(tuple(alt.strip() for alt in group))
    return tuple(groups)
