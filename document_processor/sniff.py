"""Checks made on a file's name and bytes before any parser sees them.

Each check raises DocumentError with a one-line reason: unsupported suffix, empty, too large, content that
does not match the extension (sniffed from magic bytes), encrypted or legacy Office, damaged zip, zip bomb.
"""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
import zlib
from pathlib import PurePosixPath

from document_processor.limits import MB, Limits
from document_processor.types import DocumentError

FILE_TYPES = {
    ".pdf": "pdf", ".docx": "docx", ".pptx": "pptx", ".xlsx": "xlsx", ".xlsm": "xlsx",
    ".csv": "csv", ".txt": "txt", ".md": "md", ".markdown": "md",
    ".png": "image", ".jpg": "image", ".jpeg": "image", ".tif": "image", ".tiff": "image", ".webp": "image",
}
SUPPORTED_SUFFIXES = tuple(FILE_TYPES)
TYPE_NAMES = {
    "pdf": "a PDF", "docx": "a Word document", "pptx": "a PowerPoint presentation", "xlsx": "an Excel workbook",
    "csv": "a CSV file", "txt": "a text file", "md": "a Markdown file", "zip": "a plain zip archive",
    "image": "an image (PNG, JPEG, TIFF or WebP)",
}
MAX_NAME_CHARS = 200
_OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
_TEXT_TYPES = ("csv", "txt", "md")
_IMAGE_KINDS = ("a PNG image", "a JPEG image", "a TIFF image", "a WebP image")  # any of them reads as "image"
_OTHER_MAGIC = (  # (magic, what it is, binary: also wrong for a text file)
    (b"\x89PNG", "a PNG image", True), (b"\xff\xd8\xff", "a JPEG image", True), (b"GIF8", "a GIF image", True),
    (b"II*\x00", "a TIFF image", True), (b"MM\x00*", "a TIFF image", True),
    (b"\x1f\x8b", "a gzip archive", True), (b"Rar!", "a RAR archive", True), (b"7z\xbc\xaf", "a 7-Zip archive", True),
    (b"{\\rtf", "an RTF document", False), (b"<!DOCTYPE html", "an HTML page", False), (b"<html", "an HTML page", False),
)
_LEGACY = (("WordDocument", ".doc", ".docx"), ("PowerPoint Document", ".ppt", ".pptx"),
           ("Workbook", ".xls", ".xlsx"), ("Book", ".xls", ".xlsx"))
_MAIN_PART = {  # content type of the package's main part -> our file type
    "docx": re.compile(r"wordprocessingml\.(document|template)\.main\+xml|ms-word\.(document|template)\.macroEnabled"),
    "pptx": re.compile(r"presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.\w+\.macroEnabled"),
    "xlsx": re.compile(r"spreadsheetml\.(sheet|template)\.main\+xml|ms-excel\.(sheet|template)\.macroEnabled"),
}
_MAIN_NAME = {"word/document.xml": "docx", "ppt/presentation.xml": "pptx", "xl/workbook.xml": "xlsx"}
_RATIO_CHECK_FROM = 1 * MB  # smaller members cannot hurt, and tiny XML parts compress unusually well
_MAX_MEMBERS = 100_000
_STREAM_START = re.compile(rb"stream\r?\n")
_INFLATE_STEP = 16 * MB  # output per decompress call, so checking a bomb never holds more than this


def sanitize_name(name: str) -> str:
    """A display file name: basename only, no control characters, at most ~200 characters, extension kept."""
    base = re.split(r"[\\/]", str(name or ""))[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C").strip()
    if not base or base in (".", ".."):
        return "unnamed"
    if len(base) > MAX_NAME_CHARS:
        suffix = PurePosixPath(base).suffix
        suffix = suffix if len(suffix) <= 16 else ""
        base = base[: MAX_NAME_CHARS - len(suffix) - 1] + "…" + suffix
    return base


def suffix_of(name: str) -> str:
    """Lower-case extension including the dot ('' when none)."""
    return PurePosixPath(name).suffix.lower()


def is_supported(name: str) -> bool:
    """True when the file name's extension is one we can read."""
    return suffix_of(sanitize_name(name)) in FILE_TYPES


def file_type_for(name: str) -> str:
    """Our file type ('pdf', 'docx', ...) for a sanitised name, or DocumentError 'unsupported'."""
    suffix = suffix_of(name)
    if suffix not in FILE_TYPES:
        shown = f"'{suffix}'" if suffix else "without an extension"
        raise DocumentError(name, "unsupported", f"unsupported file type {shown} (supported: {' '.join(SUPPORTED_SUFFIXES)})")
    return FILE_TYPES[suffix]


def check_size(name: str, size: int, limits: Limits) -> None:
    """Refuse empty files and files over the byte limit."""
    if size == 0:
        raise DocumentError(name, "empty", "the file is empty (0 bytes)")
    if size > limits.max_bytes:
        raise DocumentError(name, "too_large", f"the file is {size / MB:.1f} MB, over the {limits.max_bytes / MB:.0f} MB limit")


def check_content(name: str, file_type: str, data: bytes, limits: Limits) -> None:
    """Raise DocumentError when the bytes are not what the extension says, encrypted, damaged or a zip bomb."""
    head = data[:1024]
    if head.startswith(_OLE2_MAGIC):
        _refuse_ole2(name, data)
    found = _sniff_magic(head, text_expected=file_type in _TEXT_TYPES)
    if found is None and head[:4] in _ZIP_MAGIC:
        found = _office_type(name, data, limits)
    if found in _IMAGE_KINDS and file_type == "image":  # Pillow reads a JPEG named .png as well as a .jpg
        found = "image"
    if found is not None and found != file_type:
        advice = "; rename it with the right extension" if found in FILE_TYPES.values() else ""
        raise DocumentError(name, "wrong_type", f"the file is {TYPE_NAMES.get(found, found)}, "
                            f"not {TYPE_NAMES[file_type]}{advice}")
    if found is None and file_type in ("docx", "pptx", "xlsx"):
        raise DocumentError(name, "corrupt", f"not {TYPE_NAMES[file_type]}: the file is not an Office (zip) package")
    if found is None and file_type == "pdf" and _looks_like_text(head):
        raise DocumentError(name, "wrong_type", "the file is plain text, not a PDF (it has no PDF header); "
                            "rename it with the right extension (.txt or .md)")


def _looks_like_text(head: bytes) -> bool:
    """UTF-8 (or ASCII) text with no control characters besides tab, newline and carriage return."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:  # the 1024-byte cut may split a character
            text = head[:-3].decode("utf-8")
        except UnicodeDecodeError:
            return False
    return bool(text.strip()) and not any(ord(c) < 32 and c not in "\t\r\n\f" for c in text)


def _sniff_magic(head: bytes, text_expected: bool) -> str | None:
    """The format the first bytes announce, or None. Text files may legitimately start with HTML or
    mention '%PDF-', so for them only a header at the very start counts, and markup is not judged."""
    if head.startswith(b"%PDF-") or (not text_expected and b"%PDF-" in head):
        return "pdf"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "a WebP image"
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    for magic, what, binary in _OTHER_MAGIC:
        if (binary or not text_expected) and stripped[: len(magic)].lower() == magic.lower():
            return what
    return None


def _refuse_ole2(name: str, data: bytes) -> None:
    """OLE2 containers are either encrypted OOXML or pre-2007 binary Office files; we read neither."""
    if "EncryptionInfo".encode("utf-16-le") in data:
        raise DocumentError(name, "encrypted", "encrypted: needs a password (remove the password in Office and retry)")
    for stream, old, new in _LEGACY:
        if stream.encode("utf-16-le") + b"\x00\x00" in data:
            raise DocumentError(name, "wrong_type", f"legacy Office format ({old}), save as {new}")
    raise DocumentError(name, "wrong_type", "legacy Office (OLE2) file, save it in a current format (.docx, .xlsx, .pptx)")


def _office_type(name: str, data: bytes, limits: Limits) -> str:
    """'docx' | 'pptx' | 'xlsx' | 'zip' for a zip package, after the zip-bomb check on its directory."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise DocumentError(name, "corrupt", f"damaged or truncated zip package ({_first_line(exc)})") from None
    check_zip_bomb(name, infos, limits)
    names = {info.filename.replace("\\", "/").lower(): info for info in infos}
    types_info = names.get("[content_types].xml")
    if types_info is not None:
        try:
            types_xml = archive.read(types_info).decode("utf-8", "replace")
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise DocumentError(name, "corrupt", f"damaged zip package ({_first_line(exc)})") from None
        for kind, pattern in _MAIN_PART.items():
            if pattern.search(types_xml):
                return kind
    return next((kind for part, kind in _MAIN_NAME.items() if part in names), "zip")


def check_zip_bomb(name: str, infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    """Refuse a package whose directory declares absurd sizes, before anything is decompressed."""
    if len(infos) > _MAX_MEMBERS:
        raise DocumentError(name, "zip_bomb", f"zip bomb: the package holds {len(infos)} files")
    total = sum(info.file_size for info in infos)
    if total > limits.max_zip_uncompressed:
        raise DocumentError(name, "zip_bomb", f"zip bomb: would expand to {total / MB:,.0f} MB "
                            f"(limit {limits.max_zip_uncompressed / MB:,.0f} MB)")
    for info in infos:
        if info.file_size >= _RATIO_CHECK_FROM and info.file_size > limits.max_zip_ratio * max(info.compress_size, 1):
            ratio = info.file_size / max(info.compress_size, 1)
            raise DocumentError(name, "zip_bomb", f"zip bomb: part {info.filename} expands {ratio:,.0f} times "
                                f"(limit {limits.max_zip_ratio:g})")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else type(exc).__name__


def flate_bomb(data: bytes, limit: int) -> str | None:
    """Describe the first Flate stream of a PDF that expands past `limit` bytes, or None when none does.

    Inflates each stream in bounded steps and throws the output away, so the check costs time (about 1 s
    per GB of output), never memory. Streams that are not zlib data stop at their first bytes.
    """
    for match in _STREAM_START.finditer(data):
        expanded = _inflated_size(data, match.end(), limit)
        if expanded > limit:
            return f"a compressed stream at byte {match.end():,} expands to more than {limit / MB:,.0f} MB"
    return None


def _inflated_size(data: bytes, start: int, limit: int) -> int:
    """Bytes the zlib stream at data[start:] inflates to, counting stops just past `limit`; 0 for non-zlib data."""
    inflater = zlib.decompressobj()
    produced, position = 0, start
    try:
        while position < len(data) and not inflater.eof and produced <= limit:
            produced += len(inflater.decompress(data[position:position + MB], _INFLATE_STEP))
            position += MB
            while inflater.unconsumed_tail and not inflater.eof and produced <= limit:
                produced += len(inflater.decompress(inflater.unconsumed_tail, _INFLATE_STEP))
    except zlib.error:
        return produced  # not (or no longer) zlib data: what came out so far is all it expands to
    return produced
