"""The sealed question set (eval/sealed.jsonl): for the final report only, never looked at while tuning.

    .venv/bin/python eval/sealed.py [--shared DIR] [--data-dir DIR] [--strategy S]... [--gemini] [--json]

The developers who improve the offline extractor do not read these questions, their answers or their per-question
results: only the aggregate figures are reported, so the set measures an engine nobody tuned on it. Its 35
questions (numbers from tables and financial statements, facts from prose, lists, comparisons, slide and sheet
lookups, 6 refusals) ask about 11 files of ../shared/data that no other question set here uses and that this
repository does not ship:
- office/{docx,pptx,xlsx}: test files of Apache POI (Apache-2.0): an essay assignment, a page with tracked
  changes, a conference deck, a chart deck, a sales workbook with pivots and a KYC file-format workbook; licence per
  file in each folder's MANIFEST.tsv;
- pdf_hard: the TraceMonkey paper (PLDI 2009) and Lessig's Free Culture (CC BY-NC 1.0) from pdf.js's test files,
  and a Canadian data-model specification from pypdf's (see that folder's MANIFEST.tsv);
- bench/financebench_dev/pdfs: two public SEC 10-K filings from the FinanceBench snapshot (dataset CC BY-NC 4.0:
  internal evaluation only). The questions are ours, not FinanceBench's.
Gold files and pages/slides/sheets were checked by reading the parsed chunks (`cli.py parse FILE --json`), and the
refusals by searching the parsed text of all 11 files. The files are linked into a temporary docs folder, indexed
into a temporary (or given) data dir, and evaluated; without ../shared the script says so and exits 0 (nothing to
measure on a user's clone).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import linked_set  # noqa: E402

REPO = linked_set.REPO
DATASET = REPO / "eval" / "sealed.jsonl"
SHARED = linked_set.SHARED

# Where each document of the dataset lives under ../shared/data.
DOCUMENTS = {
    "61787.docx": "office/docx",
    "delins.docx": "office/docx",
    "45545_Comment.pptx": "office/pptx",
    "bar-chart.pptx": "office/pptx",
    "WithChartSheet.xlsx": "office/xlsx",
    "CVLKRA-KYC_Download_File_Structure_V3.1.xlsx": "office/xlsx",
    "tracemonkey.pdf": "pdf_hard",
    "freeculture.pdf": "pdf_hard",
    "GeoBase_NHNC1_Data_Model_UML_EN.pdf": "pdf_hard",
    "NIKE_2023_10K.pdf": "bench/financebench_dev/pdfs",
    "GENERALMILLS_2020_10K.pdf": "bench/financebench_dev/pdfs",
}


def document_paths(shared: Path) -> list[Path]:
    """The sealed documents under `shared` (the ../shared/data folder), in a stable order."""
    return linked_set.document_paths(DOCUMENTS, shared)


def link_documents(shared: Path, folder: Path) -> Path:
    """Symlink every sealed document into `folder` (one flat docs folder for `eval --docs`); returns it."""
    return linked_set.link_documents(DOCUMENTS, shared, folder)


def main(argv: list[str] | None = None) -> int:
    """Link the documents, index them, run the sealed set, print the report; the exit code of eval_command."""
    return linked_set.run("sealed", DATASET, DOCUMENTS, __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
