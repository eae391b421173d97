"""Documents written for the parser tests: minimal PDFs, dense technical text, and lookups in a parsed document."""

from __future__ import annotations

import io
import random
from pathlib import Path

from document_processor import model_files

MAX = model_files.MAX_TOKENS


def make_pdf(pages: list[str | bytes]) -> bytes:
    """A minimal valid PDF, one Helvetica text page per str item (lines split on \\n); bytes are a raw
    content stream (an image-only page, say)."""
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for i, text in enumerate(pages):
        page_no, content_no = 4 + 2 * i, 5 + 2 * i
        kids.append(f"{page_no} 0 R")
        if isinstance(text, bytes):
            stream = text.decode("latin-1")
        else:
            escaped = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in text.split("\n")]
            stream = "BT /F1 10 Tf 14 TL 40 760 Td " + " ".join(f"({line}) Tj T*" for line in escaped) + " ET"
        objects[page_no] = (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content_no} 0 R >>").encode()
        objects[content_no] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream".encode("latin-1")
    objects[2] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>".encode()
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += f"xref\n0 {size}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offsets[n]:010d} 00000 n \n".encode() for n in range(1, size))
    out += f"trailer\n<< /Size {size} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def technical_text(paragraphs: int, seed: int = 0) -> str:
    """Dense technical English with symbols, numbers and identifiers: many word pieces per character."""
    rng = random.Random(seed)
    words = ("the", "attention", "softmax(QK^T/sqrt(d_k))V", "encoder", "0x7f3a9c", "σ(W_h·h_{t-1})", "layer",
             "normalisation", "ε=1e-6", "https://example.org/a/b?c=d", "gradient", "BERT-base", "F1=91.3%",
             "tokenizer", "ResNet-152", "ℓ2-regularised", "mini-batch", "β1=0.9,", "CUDA_VISIBLE_DEVICES",
             "throughput", "(Table 3)", "3.14159", "convolution", "self-attention", "O(n²·d)")
    out = []
    for _ in range(paragraphs):
        sentences = []
        for _ in range(rng.randint(3, 7)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 22)))
            sentences.append(sentence[0].upper() + sentence[1:] + ".")
        out.append(" ".join(sentences))
    return "\n\n".join(out)


def save_docx(document, path: Path) -> Path:
    document.save(str(path))
    return path


def chunk_with(doc, needle: str):
    found = [c for c in doc.chunks if needle in c.text]
    assert found, f"{needle!r} not in any chunk"
    return found[0]


def tokens(text: str) -> int:
    return model_files.count_tokens(text)


def write_pdf(path, pages: list[list[str]]) -> None:
    """A real PDF with Helvetica text lines per page (the bytes pypdf and pdfium both read)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        ops = ["BT", "/F1 12 Tf", "72 740 Td", "16 TL"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode('latin-1')}\nendstream")
        content = len(objects)
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content} 0 R "
                       "/Resources << /Font << /F1 3 0 R >> >> >>")
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    path.write_bytes(out.getvalue())
