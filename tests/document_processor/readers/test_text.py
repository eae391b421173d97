"""document_processor.readers.text: Markdown, encodings (UTF-16 without a BOM too), binary refused."""

from __future__ import annotations

import random
import re

import pytest

from document_processor import DocumentError, Location, parse_bytes
from tests.helpers.documents import chunk_with


def test_markdown_heading_paths_lines_and_fences():
    text = ("# Guide\n\nWelcome text.\n\n## Install\n\nRun the installer.\n\n```\n# not a heading\n```\n\n"
            "### Linux\n\nUse PLANTED-MD-1 on Linux.\n\nSetext Title\n============\n\nUnder setext.\n")
    doc = parse_bytes(text.encode(), "guide.md", isolate=False)
    assert doc.title == "Guide" and doc.unit_name == "lines"
    planted = chunk_with(doc, "PLANTED-MD-1")
    assert planted.heading_path == ("Guide", "Install", "Linux")
    assert planted.location.lines[0] <= 15 <= planted.location.lines[1]
    assert chunk_with(doc, "# not a heading").heading_path == ("Guide", "Install")
    assert chunk_with(doc, "Under setext").heading_path == ("Setext Title",)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "cp1252", "utf-8"])
def test_text_encodings(encoding):
    text = "Line one\nCafé crème at 5 €\n\nThird paragraph PLANTED-ENC\n"
    doc = parse_bytes(text.encode(encoding), "notes.txt", isolate=False)
    assert "Café crème at 5 €" in doc.chunks[0].text
    assert chunk_with(doc, "PLANTED-ENC").location == Location(lines=(1, 4))  # both paragraphs, one chunk


def test_undecodable_bytes_never_crash_and_binary_is_refused():
    assert parse_bytes(b"ok \x81\x8d text", "odd.txt", isolate=False).chunks[0].text.startswith("ok")
    with pytest.raises(DocumentError) as err:
        parse_bytes(bytes(range(256)) * 8, "blob.txt", isolate=False)
    assert err.value.kind == "wrong_type"


def test_markdown_pipe_table_rows_stay_whole_with_their_lines():
    rows = "\n".join(f"| k{i:03d} | {'value ' * 12}{i} |" for i in range(120))
    text = f"# Table\n\n| Key | Value |\n|-----|-------|\n{rows}\n"
    doc = parse_bytes(text.encode(), "table.md", isolate=False)
    keys = []
    for chunk in doc.chunks:  # the bare "# Table" heading lives on in every chunk's context, not as a chunk
        lines = chunk.text.split("\n")
        assert lines[0] == "| Key | Value |" and all(re.fullmatch(r"\| k\d{3} \| (value ){12}\d+ \|", x) for x in lines[2:])
        first_key = int(lines[2][3:6])
        assert chunk.location.lines[0] in (3, first_key + 5) and chunk.location.lines[1] == int(lines[-1][3:6]) + 5
        keys += [int(x[3:6]) for x in lines[2:]]
    assert keys == list(range(120))


def test_whitespace_only_text_is_an_empty_document():
    doc = parse_bytes(b"   \n\n  \n", "blank.txt", isolate=False)
    assert doc.chunks == () and doc.units == 4


TEXTS = {
    "english": "The quarterly report is due on Friday.\nPlease send the figures to the finance team.\n\n"
               "Second paragraph PLANTED-EN with numbers 1234.\n",
    "russian": "Квартальный отчёт нужно сдать в пятницу.\nПожалуйста, отправьте цифры в финансовый отдел.\n\n"
               "Второй абзац ПЛАНТ-РУ с числами 1234.\n",
    "chinese": "季度报告必须在星期五之前提交。\n请把数字发给财务部门。\n\n第二段落包含数字一二三四。\n",
    "chinese, one line": "季度报告必须在星期五之前提交请把数字发给财务部门第二段落包含数字一二三四",
}


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("language", sorted(TEXTS))
def test_utf16_without_a_bom_is_read_as_text(language, encoding):
    text = TEXTS[language]
    doc = parse_bytes(text.encode(encoding), "notes.txt", isolate=False)
    assert "\n\n".join(c.text for c in doc.chunks) == text.strip()


@pytest.mark.parametrize("data", [
    "Plain English in cp1252 with one café.\nNothing else here at all.\n".encode("cp1252"),
    "Короткий текст в cp1251, не UTF-16.\n".encode("cp1251"),
    "Texte français en UTF-8 : déjà vu.\n".encode(),
])
def test_eight_bit_text_is_not_mistaken_for_utf16(data):
    text = parse_bytes(data, "eight_bit.txt", isolate=False).chunks[0].text
    assert text.isascii() or any(ch in text for ch in "éàКТ")  # Latin or Cyrillic, never CJK soup
    assert not any("\u3400" <= ch <= "\u9fff" for ch in text)


def test_binary_is_still_refused_in_either_byte_order():
    rng = random.Random(5)
    for data in (bytes(rng.randrange(256) for _ in range(8192)), b"\x00\x00\x01\x00" * 2048):
        with pytest.raises(DocumentError) as err:
            parse_bytes(data, "blob.txt", isolate=False)
        assert err.value.kind == "wrong_type" and err.value.file_name == "blob.txt"
