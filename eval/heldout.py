"""The held-out question set (eval/heldout.jsonl): documents the offline extractor was not tuned on.

    .venv/bin/python eval/heldout.py [--shared DIR] [--data-dir DIR] [--strategy S]... [--gemini] [--json]

The 37 questions (facts, numbers from tables, lists, comparisons, slide and sheet locations, 6 refusals) ask about
12 files of ../shared/data that this repository does not ship:
- office/{docx,pptx,xlsx}: test files of Apache POI (Apache-2.0), real-world documents (Irish budget cases and tax
  tables, conference and HR decks, workbooks); licence per file in each folder's MANIFEST.tsv;
- bench/financebench_subset/pdfs and bench/financebench_dev/pdfs: public SEC filings and earnings releases from the
  FinanceBench snapshot (dataset CC BY-NC 4.0: internal evaluation only). The questions are ours, not FinanceBench's.
Gold files and pages/slides/sheets were checked by reading the parsed chunks (`cli.py parse FILE --json`).
The files are linked into a temporary docs folder, indexed into a temporary (or given) data dir, and evaluated;
without ../shared the script says so and exits 0 (nothing to measure on a user's clone).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import linked_set  # noqa: E402

REPO = linked_set.REPO
DATASET = REPO / "eval" / "heldout.jsonl"
SHARED = linked_set.SHARED

# Where each document of the dataset lives under ../shared/data.
DOCUMENTS = {
    "IllustrativeCases.docx": "office/docx",
    "2411-Performance_Up.pptx": "office/pptx",
    "60810.pptx": "office/pptx",
    "au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx": "office/pptx",
    "aascu.org_workarea_downloadasset.aspx_id=5864.pptx": "office/pptx",
    "DataTableCities.xlsx": "office/xlsx",
    "simple-monthly-budget.xlsx": "office/xlsx",
    "AverageTaxRates.xlsx": "office/xlsx",
    "ULTABEAUTY_2023Q4_EARNINGS.pdf": "bench/financebench_subset/pdfs",
    "AMCOR_2023Q4_EARNINGS.pdf": "bench/financebench_subset/pdfs",
    "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf": "bench/financebench_subset/pdfs",
    "3M_2022_10K.pdf": "bench/financebench_dev/pdfs",
}


def document_paths(shared: Path) -> list[Path]:
    """The held-out documents under `shared` (the ../shared/data folder), in a stable order."""
    return linked_set.document_paths(DOCUMENTS, shared)


def link_documents(shared: Path, folder: Path) -> Path:
    """Symlink every held-out document into `folder` (one flat docs folder for `eval --docs`); returns it."""
    return linked_set.link_documents(DOCUMENTS, shared, folder)


def main(argv: list[str] | None = None) -> int:
    """Link the documents, index them, run the held-out set, print the report; the exit code of eval_command."""
    return linked_set.run("held-out", DATASET, DOCUMENTS, __doc__.split("\n\n")[0], argv)


if __name__ == "__main__":
    raise SystemExit(main())
