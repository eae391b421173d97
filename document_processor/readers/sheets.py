"""Spreadsheets (.xlsx/.xlsm with openpyxl) and CSV: every sheet as a table whose rows know their cells."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import PurePosixPath

import openpyxl

from document_processor.blocks import Block, Reading, format_value, markdown_table, one_line
from document_processor.readers.text import decode_text
from document_processor.types import DocumentError, Location

CSV_SNIFF_CHARS = 64 * 1024
FORMULA_CHECK_BYTES = 10 * 1024 * 1024
# The csv module refuses fields over 128 KiB by default; exported data has long text cells (descriptions, logs).
# The file's size limit (Limits.max_bytes) already bounds a field, and the chunker splits a long row.
csv.field_size_limit(max(csv.field_size_limit(), 1 << 30))


def read_xlsx(data: bytes, name: str, progress=None) -> Reading:
    """Every worksheet (chart sheets have no cells and are skipped); dates ISO, numbers as shown. Formulas whose
    results the file does not store (saved by a program that computes nothing) read as empty, with a warning. A
    package whose part names another program wrote loosely (backslashes, "[content_types].xml" in lower case;
    Excel opens those) is read with its names set right, and said so."""
    repaired: tuple[str, ...] = ()
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except KeyError:
        fixed = _normalised_package(data)
        if fixed is None:
            raise
        data, repaired = fixed, (f"{name}: its package names its parts loosely (as some programs write them); read "
                                 "with the names set right",)
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        sheets = list(workbook.worksheets)
        blocks: list[Block] = []
        for number, sheet in enumerate(sheets, start=1):
            # Many writers store a wrong <dimension>; without a reset, read-only mode would cut rows off.
            sheet.reset_dimensions()
            blocks.extend(sheet_blocks(sheet.title, _xlsx_rows(sheet)))
            if progress is not None:
                progress("reading", number, len(sheets))
        title = one_line(workbook.properties.title or "", 150) if workbook.properties else ""
    finally:
        workbook.close()
    return Reading(tuple(blocks), "sheets", len(sheets), title, repaired + _uncached_formulas(data, blocks))


def _normalised_package(data: bytes) -> bytes | None:
    """The zip package with its part names as the standard writes them (forward slashes, "[Content_Types].xml",
    and the spelling its content types and relationships use: "sharedStrings.xml" for "sharedstrings.xml"), or
    None when nothing needed renaming."""
    import re
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as package:
        infos = package.infolist()
        renamed = {i.filename: _part_name(i.filename) for i in infos}
        spelled: dict[str, str] = {}
        for old, new in renamed.items():
            if new == "[Content_Types].xml" or new.endswith(".rels"):
                text = package.read(old).decode("utf-8", "replace")
                base = str(PurePosixPath(new).parent.parent) if new.endswith(".rels") else ""
                for ref in re.findall(r'(?:PartName|Target)="([^"]+)"', text):
                    path = ref.lstrip("/") if ref.startswith("/") or not base or base == "." else f"{base}/{ref}"
                    spelled[path.lower()] = path
        renamed = {old: spelled.get(new.lower(), new) for old, new in renamed.items()}
        if all(old == new for old, new in renamed.items()):
            return None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as fixed:
            for info in infos:
                fixed.writestr(renamed[info.filename], package.read(info.filename))
    return out.getvalue()


def _part_name(name: str) -> str:
    name = name.replace("\\", "/").lstrip("/")
    return "[Content_Types].xml" if name.lower() == "[content_types].xml" else name


def _uncached_formulas(data: bytes, blocks: list[Block]) -> tuple[str, ...]:
    """A warning per sheet whose formulas have no stored result (read only for files of up to
    FORMULA_CHECK_BYTES: the check reads the workbook a second time)."""
    if len(data) > FORMULA_CHECK_BYTES:
        return ()
    warnings = []
    formulas = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=False)
    values = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        for sheet in formulas.worksheets:
            if sheet.title not in values.sheetnames:
                continue
            sheet.reset_dimensions()
            shown = values[sheet.title]
            shown.reset_dimensions()
            missing = sum(1 for row, cached in zip(sheet.iter_rows(), shown.iter_rows(), strict=False)
                          for cell, value in zip(row, cached, strict=False)
                          if isinstance(cell.value, str) and cell.value.startswith("=") and value.value is None)
            if missing:
                warnings.append(f"{sheet.title}: {missing} formula cell(s) have no stored result (the file was saved "
                                f"by a program that does not compute them): they read as empty; open and save it "
                                f"in a spreadsheet program to fill them")
    finally:
        formulas.close()
        values.close()
    return tuple(warnings)


def _xlsx_rows(sheet) -> Iterable[tuple[int, list[str]]]:
    for number, row in enumerate(sheet.iter_rows(), start=1):
        yield number, [format_value(cell.value, getattr(cell, "number_format", "")) for cell in row]


def read_csv(data: bytes, name: str, progress=None) -> Reading:
    """A CSV (delimiter sniffed, any text encoding) as one sheet named after the file."""
    text = decode_text(data, name)
    try:
        dialect = csv.Sniffer().sniff(text[:CSV_SNIFF_CHARS], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel  # the sniffer gives up on one-column files; a comma is the honest default
    try:
        rows = [(n, [" ".join(c.split()) for c in row]) for n, row in enumerate(csv.reader(io.StringIO(text), dialect), 1)]
    except csv.Error as exc:
        raise DocumentError(name, "corrupt", f"unreadable CSV: {one_line(exc, 150)}") from None
    sheet = PurePosixPath(name).stem or "Sheet1"
    return Reading(tuple(sheet_blocks(sheet, rows)), "sheets", 1)


def sheet_blocks(sheet: str, rows: Iterable[tuple[int, list[str]]]) -> list[Block]:
    """Blocks for one sheet: rows above the header as text, then a table with one cell range per row.

    Empty rows and columns are dropped. The header is the first row with two or more filled cells.
    """
    filled = [(n, cells) for n, cells in rows if any(cells)]
    if not filled:
        return []
    header_at = next((i for i, (_, cells) in enumerate(filled) if sum(1 for c in cells if c) >= 2), 0)
    path = (sheet,)
    blocks = []
    if header_at:
        preamble = filled[:header_at]
        first_col, last_col = _used_columns(preamble)
        lines = [" ".join(c for c in row if c) for _, row in preamble]
        location = Location(sheet=sheet, cells=f"{first_col}{preamble[0][0]}:{last_col}{preamble[-1][0]}")
        blocks.append(Block("\n".join(lines), location, path))
    table_rows = filled[header_at:]
    used = sorted({i for _, cells in table_rows for i, c in enumerate(cells) if c})
    first_col, last_col = column_letter(used[0] + 1), column_letter(used[-1] + 1)
    compact = [(n, [cells[i] if i < len(cells) else "" for i in used]) for n, cells in table_rows]
    (header_row, header), data = compact[0], compact[1:]
    row_cells = [Location(sheet=sheet, cells=f"{first_col}{n}:{last_col}{n}") for n, _ in data]
    table = markdown_table(header, [row for _, row in data], row_cells, [column_letter(i + 1) for i in used])
    whole = Location(sheet=sheet, cells=f"{first_col}{header_row}:{last_col}{compact[-1][0]}")
    blocks.append(Block("\n".join((table.header, *table.rows)), whole, path, table))
    return blocks


def _used_columns(rows: list[tuple[int, list[str]]]) -> tuple[str, str]:
    used = [i for _, cells in rows for i, c in enumerate(cells) if c]
    return column_letter(min(used) + 1), column_letter(max(used) + 1)


def column_letter(index: int) -> str:
    """1 -> 'A', 27 -> 'AA'."""
    letters = ""
    while index > 0:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters
