"""PDF tables (issue 14): what reading tables costs at ingest, and how the candidates find statement tables.

    .venv/bin/python bench/pdf_tables.py                      # ingest before/after + our finder on evidence pages
    .venv/bin/python bench/pdf_tables.py --plumber /tmp/tables-cand   # also pdfplumber, installed there with
        # pip install --no-deps --target /tmp/tables-cand pdfplumber pdfminer.six  (not a project dependency)
    .venv/bin/python bench/pdf_tables.py --quick              # 4 filings + the papers, 40 evidence pages

1. Ingest, side by side in one run: every PDF parsed in this process (read + chunk, no embedding) with the
   table pass off (today's reader) and on, alternating per file; pages/s and the overhead ratio per corpus.
2. Finders on the FinanceBench evidence pages that carry figures (a statement, a schedule): the share of
   pages where a table is found whose header names a period (a year) and whose rows have a label and a
   figure, and the finder's pages/s on those pages.
3. Malformed PDFs (shared/data/pdf_hard): files a finder raised on or took over 20 s for.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
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


def evidence_pages(limit: int) -> list[tuple[Path, int]]:
    """(pdf, 0-based page) of FinanceBench evidence pages whose text has many figures, de-duplicated."""
    seen: dict[tuple[Path, int], None] = {}
    for corpus in ("financebench_dev", "financebench_subset"):
        folder = DATA / "bench" / corpus
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


def malformed(name: str, finder) -> dict:
    """Per pdf_hard file: every page through the finder; files that raised or ran past 20 s."""
    failed, slow, pages = [], [], 0

    def alarm(*_):
        raise TimeoutError

    signal.signal(signal.SIGALRM, alarm)
    for path in sorted((DATA / "pdf_hard").glob("*.pdf")):
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plumber", help="a folder where pdfplumber is installed (pip --target)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.plumber:
        sys.path.append(args.plumber)
    out = {"ingest": {}, "finders": [], "malformed": []}
    for corpus, folder in CORPORA.items():
        paths = sorted(folder.glob("*.pdf"))[: 4 if args.quick and corpus != "papers" else None]
        out["ingest"][corpus] = ingest(paths)
        print(corpus, out["ingest"][corpus], flush=True)
    pages = evidence_pages(40 if args.quick else 400)
    finders = [("pypdfium2 boxes + layout pass (ours)", ours)]
    if args.plumber:
        finders += [("pdfplumber lines", plumber("lines")), ("pdfplumber text", plumber("text"))]
    for name, finder in finders:
        out["finders"].append(score(name, finder, pages))
        print(out["finders"][-1], flush=True)
        out["malformed"].append(malformed(name, finder))
        print(out["malformed"][-1], flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
