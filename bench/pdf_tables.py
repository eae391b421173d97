"""PDF tables (issue 14): what reading tables costs at ingest, and how the candidates find statement tables.

    .venv/bin/python bench/pdf_tables.py                      # ingest before/after + our finder on evidence pages
    .venv/bin/python bench/pdf_tables.py --plumber /tmp/tables-cand   # also pdfplumber, installed there with
        # pip install --no-deps --target /tmp/tables-cand pdfplumber pdfminer.six  (not a project dependency)
    .venv/bin/python bench/pdf_tables.py --quick              # 4 filings + the papers, 40 evidence pages
    .venv/bin/python bench/pdf_tables.py --smoke              # generated statements in a temp dir (seconds)

1. Ingest, side by side in one run: every PDF parsed in this process (read + chunk, no embedding) with the
   table pass off (today's reader) and on, alternating per file; pages/s and the overhead ratio per corpus.
2. Finders on the FinanceBench evidence pages that carry figures (a statement, a schedule): the share of
   pages where a table is found whose header names a period (a year) and whose rows have a label and a
   figure, and the finder's pages/s on those pages.
3. Malformed PDFs (shared/data/pdf_hard): files a finder raised on or took over 20 s for.
--smoke runs the same three steps on a few PDFs written into a temporary folder (statement tables, prose, a
truncated and a garbled file) instead of ../shared/data, to check that the bench runs at all.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import DATA  # noqa: E402

from document_processor.limits import Limits  # noqa: E402
from document_processor.parsing import parse_in_process  # noqa: E402
from document_processor.readers import pdf as reader  # noqa: E402
from document_processor.readers.pdf_tables import find_tables, looks_tabular  # noqa: E402

CORPORA = {"financebench_dev": DATA / "bench/financebench_dev/pdfs",
           "financebench_subset": DATA / "bench/financebench_subset/pdfs", "papers": DATA / "papers"}
EVIDENCE = (DATA / "bench/financebench_dev", DATA / "bench/financebench_subset")  # questions.jsonl + pdfs/
HARD = DATA / "pdf_hard"
_PERIOD = re.compile(r"\b(19|20)\d\d\b")
_FIGURE = re.compile(r"\d")


def ingest(paths: list[Path]) -> dict:
    """Seconds, pages and chunks with the table pass off and on, files alternating between the two."""
    totals = {"off": [0.0, 0, 0], "on": [0.0, 0, 0]}
    real = reader.looks_tabular
    for path in paths:
        data = path.read_bytes()
        for mode in ("off", "on"):
            reader.looks_tabular = real if mode == "on" else (lambda text: False)
            try:
                start = time.perf_counter()
                doc = parse_in_process(data, path.name, Limits(max_chunks=10**6))
                took = time.perf_counter() - start
            finally:
                reader.looks_tabular = real
            totals[mode][0] += took
            totals[mode][1] += doc.units
            totals[mode][2] += len(doc.chunks)
    off, on = totals["off"], totals["on"]
    return {"files": len(paths), "pages": on[1], "chunks_off": off[2], "chunks_on": on[2],
            "pages_per_s_off": round(off[1] / off[0], 1), "pages_per_s_on": round(on[1] / on[0], 1),
            "overhead": round(on[0] / off[0], 2)}


def evidence_pages(limit: int, folders=EVIDENCE) -> list[tuple[Path, int]]:
    """(pdf, 0-based page) of FinanceBench evidence pages whose text has many figures, de-duplicated."""
    seen: dict[tuple[Path, int], None] = {}
    for folder in folders:
        for line in (folder / "questions.jsonl").read_text().splitlines():
            for ev in json.loads(line).get("evidence") or []:
                path = folder / "pdfs" / f"{ev['doc_name']}.pdf"
                if path.exists():
                    seen.setdefault((path, int(ev["evidence_page_num"])), None)
    return [(path, index) for path, index in seen if looks_tabular(_page_text(path, index))][:limit]


def _page_text(path: Path, index: int) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    try:
        return document[index].get_textpage().get_text_range() if index < len(document) else ""
    finally:
        document.close()


def good(header: list[str], rows: list[list[str]]) -> bool:
    """A header that names a period, and three rows or more with a label and a figure."""
    labelled = sum(1 for r in rows if r and r[0] and any(_FIGURE.search(c or "") for c in r[1:]))
    return bool(_PERIOD.search(" ".join(c or "" for c in header))) and labelled >= 3


def ours(path: Path, index: int) -> list[tuple[list[str], list[list[str]]]]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path)
    try:
        textpage = document[index].get_textpage()
        return [(list(t.header), [list(r) for r in t.rows]) for t in find_tables(textpage)]
    finally:
        document.close()


def plumber(strategy: str):
    def find(path: Path, index: int):
        import pdfplumber

        settings = {"vertical_strategy": strategy, "horizontal_strategy": strategy}
        with pdfplumber.open(path) as pdf:
            found = []
            for table in pdf.pages[index].extract_tables(settings):
                rows = [[c or "" for c in row] for row in table if any(row)]
                header = next((r for r in rows if _PERIOD.search(" ".join(r))), rows[0] if rows else [])
                found.append((header, rows))
            return found
    return find


def score(name: str, finder, pages: list[tuple[Path, int]]) -> dict:
    hits = tables = 0
    start = time.perf_counter()
    for path, index in pages:
        found = finder(path, index)
        tables += len(found)
        hits += any(good(h, r) for h, r in found)
    took = time.perf_counter() - start
    return {"finder": name, "pages": len(pages), "found_with_period_header": round(hits / max(len(pages), 1), 3),
            "tables": tables, "pages_per_s": round(len(pages) / took, 1)}


def malformed(name: str, finder, folder: Path = HARD) -> dict:
    """Per pdf_hard file: every page through the finder; files that raised or ran past 20 s."""
    failed, slow, pages = [], [], 0

    def alarm(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, alarm)
    for path in sorted(folder.glob("*.pdf")):
        try:
            import pypdfium2 as pdfium

            count = len(pdfium.PdfDocument(path))
        except Exception:  # pdfium cannot open it; the reader hands such files to pypdf, which has no boxes
            continue
        signal.alarm(20)
        try:
            for index in range(min(count, 50)):
                finder(path, index)
                pages += 1
        except TimeoutError:
            slow.append(path.name)
        except Exception as exc:  # counted and named: what the comparison is about
            failed.append(f"{path.name}: {type(exc).__name__}")
        finally:
            signal.alarm(0)
    return {"finder": name, "pages": pages, "raised": failed, "over_20s": slow}


# ---- --smoke: a few generated PDFs instead of ../shared/data ---------------------------------------------------

_WIDTH = {**dict.fromkeys("0123456789$", 0.556), ",": 0.278, ".": 0.278, "(": 0.333, ")": 0.333}


def _placed(items: list[tuple[float, float, str]], size: int = 10) -> str:
    """A content stream drawing each (x, y, text); a negative x right-aligns a figure at -x, as in a filing."""
    ops = []
    for x, y, text in items:
        if x < 0:
            x = -x - size * sum(_WIDTH.get(ch, 0.5) for ch in text)
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"BT /F1 {size} Tf {x:.2f} {y:.2f} Td ({escaped}) Tj ET")
    return "\n".join(ops)


def _statement(company: str, rows: int, years: tuple[int, int]) -> str:
    """A statement of operations page: title, units, a header naming two years, `rows` labelled figures."""
    items = [(50, 750, company.upper()), (50, 736, "CONSOLIDATED STATEMENTS OF OPERATIONS"),
             (50, 722, "(In millions, except per share data)"), (-400, 694, str(years[0])), (-480, 694, str(years[1]))]
    y = 674.0
    for k in range(rows):
        label = "Total revenue" if k == 0 else f"Line item number {k} for products and services"
        items += [(50, y, label), (-400, y, f"{1000 + 7 * k:,}"), (-480, y, f"({900 + 5 * k:,})")]
        y -= 14
    return _placed(items)


def _prose(company: str) -> str:
    words = ("revenue", "grew", "in", "every", "region", "as", "customers", "adopted", "the", "platform")
    lines = [f"{company} management discussion and analysis."]
    lines += [" ".join(words[(k + j) % len(words)] for j in range(12)) for k in range(24)]
    return _placed([(50, 750 - 14 * k, line) for k, line in enumerate(lines)])


def smoke_data(root: Path) -> tuple[dict[str, Path], tuple[Path, ...], Path]:
    """(corpora, evidence folders, malformed folder) written under `root`: two small filings with statement
    tables, a FinanceBench-shaped questions.jsonl whose evidence pages hold the answers, and malformed PDFs."""
    from tests.helpers.documents import make_pdf

    folder = root / "bench" / "financebench_smoke"
    (folder / "pdfs").mkdir(parents=True)
    filings = {"ACME_2023_10K": [_prose("Acme"), _statement("Acme Corporation", 30, (2023, 2022)), _prose("Acme")],
               "BETA_2022_10K": [_statement("Beta Industries", 12, (2022, 2021)), _prose("Beta")]}
    for name, pages in filings.items():
        (folder / "pdfs" / f"{name}.pdf").write_bytes(make_pdf([page.encode("latin-1") for page in pages]))
    questions = [("ACME_2023_10K", "What was Acme's total revenue in 2023?", "1,000", [1]),
                 ("BETA_2022_10K", "What was Beta's total revenue in 2021?", "900", [0]),
                 ("ACME_2023_10K", "What did Acme's management discuss?", "revenue grew in every region", [0]),
                 ("GONE_2020_10K", "A filing that is not in the folder", "", [3])]
    with open(folder / "questions.jsonl", "w", encoding="utf-8") as out:
        for doc, question, answer, pages in questions:
            out.write(json.dumps({"doc_name": doc, "question": question, "answer": answer,
                                  "evidence": [{"doc_name": doc, "evidence_page_num": p} for p in pages]}) + "\n")
    hard = root / "pdf_hard"
    hard.mkdir()
    whole = (folder / "pdfs" / "ACME_2023_10K.pdf").read_bytes()
    (hard / "truncated.pdf").write_bytes(whole[: len(whole) // 2])
    garbled = ("BT /F1 10 Tf 50 700 Td (unclosed Tj ET q 1 0 0 cm Q Q Q BT /F9 Tf ) Tj", _statement("Odd", 6, (2020, 2019)))
    (hard / "garbled.pdf").write_bytes(make_pdf([page.encode("latin-1") for page in garbled] + [b"\x00\xff" * 40]))
    (hard / "not_a_pdf.pdf").write_bytes(b"this is not a PDF at all\n" * 20)
    return {"smoke_filings": folder / "pdfs"}, (folder,), hard


def run(corpora: dict[str, Path], folders, hard: Path, *, limit: int | None, evidence: int, plumbing: bool) -> dict:
    """The three steps over `corpora` (ingest), the evidence pages of `folders`, and the malformed PDFs in `hard`."""
    out = {"ingest": {}, "finders": [], "malformed": []}
    for corpus, folder in corpora.items():
        paths = sorted(folder.glob("*.pdf"))[: limit if corpus != "papers" else None]
        out["ingest"][corpus] = ingest(paths)
        print(corpus, out["ingest"][corpus], flush=True)
    pages = evidence_pages(evidence, folders)
    finders = [("pypdfium2 boxes + layout pass (ours)", ours)]
    if plumbing:
        finders += [("pdfplumber lines", plumber("lines")), ("pdfplumber text", plumber("text"))]
    for name, finder in finders:
        out["finders"].append(score(name, finder, pages))
        print(out["finders"][-1], flush=True)
        out["malformed"].append(malformed(name, finder, hard))
        print(out["malformed"][-1], flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plumber", help="a folder where pdfplumber is installed (pip --target)")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true",
                        help="a few generated PDFs in a temporary folder instead of ../shared/data (seconds)")
    args = parser.parse_args()
    if args.plumber:
        sys.path.append(args.plumber)
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="bench-pdf-tables-") as tmp:
            corpora, folders, hard = smoke_data(Path(tmp))
            out = run(corpora, folders, hard, limit=None, evidence=10, plumbing=bool(args.plumber))
    else:
        out = run(CORPORA, EVIDENCE, HARD, limit=4 if args.quick else None, evidence=40 if args.quick else 400,
                  plumbing=bool(args.plumber))
    out.update(bench="pdf_tables", size="smoke" if args.smoke else "quick" if args.quick else "full")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
