"""The bundled question sets and the documents each asks about, ready to run with `cli.py eval NAME`.

    prepared = SETS["heldout"].prepare(scratch)    # -> Prepared(dataset=..., docs=...), or raises SetUnavailable

A set is a JSONL file of this folder (the format: evaluation.dataset) and its documents: files of ../shared/data
(public documents this repository does not ship: office test files, papers, SEC filings; licences in each
folder's MANIFEST.tsv), linked into one temporary docs folder; the sample's documents are written by code.
Without ../shared a set that needs it raises SetUnavailable (nothing to measure on a user's clone).

- papers (20 questions, the four papers in papers/): the offline extractor and the confidence were tuned on it.
- heldout (37 questions, 12 office files and filings): documents the offline extractor was not tuned on;
  gold files and pages/slides/sheets checked by reading the parsed chunks (`cli.py parse FILE --json`).
- sealed (35 questions, 11 other files): written by another engineer and never read by whoever changed the
  engine; report its aggregates only (it is spent for the confidence work: its aggregates were looked at).
- sealed25 (54 questions, 19 files: papers, filings, office files, scans): written before issue 25's confidence
  work by a helper who saw none of the tuning (see sets/SEALED25.md); aggregates only.
- tables (42 questions, 17 files: workbooks, filings, Word and PowerPoint tables, three public-domain CSVs shipped in
  sets/data/tables with their MANIFEST.tsv): written by another engineer for the tables-as-data work, gold
  computed with pandas (see sets/TABLES.md); held out from tuning.
- tables-dev (45 questions, 17 files: filings, four public-domain CSVs shipped in sets/data/tables_dev, sheets, decks):
  written by a helper for tuning the table rules and fitting the confidence (see sets/TABLES_DEV.md); tuned on.
- tables-dev2 (40 questions, 14 files: six filings not in the held-out sets, four public-domain CSVs shipped in
  sets/data/tables_dev2, two workbooks, a Word and a PowerPoint table): written by a helper before the thirteenth
  pass of the table rules, then tuned on (see sets/TABLES_DEV2.md); gold recomputed by its compute_gold.py.
- tables-fresh (32 questions, 19 files: other filings and earnings releases, six CSVs in sets/data/tables_fresh, a
  workbook, a Word file, a deck): written by a helper who saw none of the tuning (sets/TABLES_FRESH.md); aggregates
  only. It shares one CSV (iowa-electricity) with tables-dev.
- tables-fresh2 (28 questions, 10 files: CVS Health's 2018 10-K, which no other set uses, filings and office files
  of the held-out sets at other pages and sheets, two public-domain CSVs shipped in sets/data/tables_fresh2): written by
  a helper who saw none of the tuning, during the fourteenth pass of the table rules, and run once on its final code
  (sets/TABLES_FRESH2.md); aggregates only.
- csv-dev (30 questions on five public-domain CSVs shipped in sets/data/csv_dev: iris, ohlc, anscombe, hourly
  temperatures of Seattle and San Francisco): written and tuned on by the engineer changing the table rules
  (see sets/CSV_DEV.md); its first 18 questions were written before the eleventh pass, the other 12 after part of
  it; gold recomputed by sets/data/csv_dev/compute_gold.py.
- wholedoc (29 questions, 20 files: papers, filings, office files, a book): whole-document summaries, named
  sections and complete lists, each with gold items, points or sections (see sets/WHOLEDOC.md); written by another
  engineer, held out from tuning; scored by item recall, point recall and sections covered.
- sample (14 questions over five generated documents with planted facts): what the app's Evaluate page runs.
- financebench (FinanceBench's dev set and subset, 71 questions over 32 filings; evaluation.financebench).
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.financebench import prepare

SETS_DIR = Path(__file__).resolve().parent
REPO = SETS_DIR.parents[1]
SHARED = REPO.parent / "shared" / "data"


class SetUnavailable(Exception):
    """A set's documents are not on this machine (../shared is absent); the message names what is missing."""


@dataclass(frozen=True)
class Prepared:
    """A set ready to run: its questions and the folder of its documents."""

    dataset: Path
    docs: Path


@dataclass(frozen=True)
class LinkedSet:
    """Questions about files of ../shared/data (`documents`: file name -> its folder under the shared data)."""

    dataset: str
    documents: Mapping[str, str] = field(default_factory=dict)
    about: str = ""

    def paths(self, shared: Path | None = None) -> list[Path]:
        """The set's documents under `shared` (default SHARED), in a stable order; a folder written "sets:DIR"
        is one of this repository's (evaluation/sets/DIR: small public data files shipped with the set)."""
        shared = shared or SHARED
        return [(SETS_DIR / folder.removeprefix("sets:") if folder.startswith("sets:") else shared / folder) / name
                for name, folder in self.documents.items()]

    def prepare(self, scratch: Path, *, shared: Path | None = None, quick: bool = False) -> Prepared:
        """Link every document into scratch/docs (one flat folder for the eval to index).

        Raises:
            SetUnavailable: a document is missing under `shared`.
        """
        missing = [p for p in self.paths(shared) if not p.is_file()]
        if missing:
            raise SetUnavailable(f"{len(missing)} document(s) of {self.dataset} not found under {shared or SHARED} "
                                 f"(e.g. {missing[0]})")
        docs = Path(scratch) / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        for path in self.paths(shared):
            link = docs / path.name
            if not link.exists():
                link.symlink_to(path)
        return Prepared(SETS_DIR / self.dataset, docs)


@dataclass(frozen=True)
class SampleSet:
    """The sample: its documents are written by code (evaluation.sample), so it runs anywhere."""

    dataset: str = "sample.jsonl"
    about: str = "14 questions over five generated documents"

    def prepare(self, scratch: Path, *, shared: Path | None = None, quick: bool = False) -> Prepared:
        from evaluation.sample import make_sample_corpus

        docs = Path(scratch) / "docs"
        make_sample_corpus(docs)
        return Prepared(SETS_DIR / self.dataset, docs)


@dataclass(frozen=True)
class FinanceBenchSet:
    """FinanceBench converted to our format (never committed: CC BY-NC 4.0); `quick` keeps the short filings."""

    about: str = "FinanceBench dev set and subset, one library"

    def prepare(self, scratch: Path, *, shared: Path | None = None, quick: bool = False) -> Prepared:
        try:
            dataset, docs = prepare(Path(scratch), (shared or SHARED) / "bench", quick=quick)
        except FileNotFoundError as e:
            raise SetUnavailable(str(e)) from e
        return Prepared(dataset, docs)


PAPERS = {name: "papers" for name in ("adam_1412.6980.pdf", "attention_is_all_you_need.pdf",
                                      "bert_1810.04805.pdf", "resnet_1512.03385.pdf")}
HELDOUT = {
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
SEALED = {
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
TABLES = {
    "simple-monthly-budget.xlsx": "office/xlsx", "AverageTaxRates.xlsx": "office/xlsx",
    "CVLKRA-KYC_Download_File_Structure_V3.1.xlsx": "office/xlsx", "DataTableCities.xlsx": "office/xlsx",
    "WithChartSheet.xlsx": "office/xlsx", "IllustrativeCases.docx": "office/docx", "bar-chart.pptx": "office/pptx",
    "aascu.org_workarea_downloadasset.aspx_id=5864.pptx": "office/pptx",
    "airports.csv": "sets:data/tables", "seattle-weather.csv": "sets:data/tables", "us-employment.csv": "sets:data/tables",
    "NIKE_2023_10K.pdf": "bench/financebench_dev/pdfs", "GENERALMILLS_2020_10K.pdf": "bench/financebench_dev/pdfs",
    "3M_2022_10K.pdf": "bench/financebench_dev/pdfs", "AMD_2015_10K.pdf": "bench/financebench_dev/pdfs",
    "AMAZON_2017_10K.pdf": "bench/financebench_subset/pdfs", "ADOBE_2022_10K.pdf": "bench/financebench_subset/pdfs",
}
_DEV, _SUBSET = "bench/financebench_dev/pdfs", "bench/financebench_subset/pdfs"
TABLES_DEV = {
    **{f: "sets:data/tables_dev" for f in ("barley.csv", "cars.csv", "iowa-electricity.csv", "stocks.csv")},
    **{f: "office/xlsx" for f in ("ExcelPivotTableSample.xlsx", "charts.xlsx", "formulae.xlsx")},
    **{f: "office/pptx" for f in ("2411-Performance_Up.pptx", "table_test2.pptx")},
    **{f: _DEV for f in ("AMERICANEXPRESS_2022_10K.pdf", "COCACOLA_2017_10K.pdf", "PEPSICO_2022_10K.pdf",
                         "VERIZON_2022_10K.pdf", "WALMART_2018_10K.pdf")},
    **{f: _SUBSET for f in ("BESTBUY_2023_10K.pdf", "MGMRESORTS_2022Q4_EARNINGS.pdf",
                            "ULTABEAUTY_2023Q4_EARNINGS.pdf")},
}
TABLES_FRESH = {
    **{f: "sets:data/tables_fresh" for f in ("burtin.csv", "crimea.csv", "driving.csv", "iowa-electricity.csv",
                                              "la-riots.csv", "wheat.csv")},
    "49609.xlsx": "office/xlsx", "bug65649.docx": "office/docx",
    "au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx": "office/pptx",
    **{f: _DEV for f in ("AMERICANWATERWORKS_2022_10K.pdf", "CVSHEALTH_2022_10K.pdf", "JOHNSON_JOHNSON_2022_10K.pdf",
                         "KRAFTHEINZ_2019_10K.pdf", "PEPSICO_2021_10K.pdf", "VERIZON_2021_10K.pdf")},
    **{f: _SUBSET for f in ("AMCOR_2023Q4_EARNINGS.pdf", "BESTBUY_2024Q2_10Q.pdf", "PEPSICO_2023Q1_EARNINGS.pdf",
                            "Pfizer_2023Q2_10Q.pdf")},
}
TABLES_DEV2 = {
    **{f: "sets:data/tables_dev2" for f in ("gapminder.csv", "penguins.csv", "statecrime.csv", "grunfeld.csv")},
    **{f: "office/xlsx" for f in ("charts.xlsx", "ExcelPivotTableSample.xlsx")},
    "tbl-cell-access.docx": "office/docx", "table_test2.pptx": "office/pptx",
    **{f: _DEV for f in ("JPMORGAN_2021Q1_10Q.pdf", "JPMORGAN_2022Q2_10Q.pdf", "AMERICANWATERWORKS_2021_10K.pdf",
                         "MGMRESORTS_2022_10K.pdf", "WALMART_2018_10K.pdf")},
    "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf": _SUBSET,
}
TABLES_FRESH2 = {
    **{f: "sets:data/tables_fresh2" for f in ("longley.csv", "macrodata.csv")},
    "AverageTaxRates.xlsx": "office/xlsx", "WordWithAttachments.docx": "office/docx",
    **{f: "office/pptx" for f in ("aascu.org_workarea_downloadasset.aspx_id=5864.pptx", "with_japanese.pptx")},
    **{f: _DEV for f in ("CVSHEALTH_2018_10K.pdf", "JPMORGAN_2023Q2_10Q.pdf")},
    **{f: _SUBSET for f in ("AMAZON_2017_10K.pdf", "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf")},
}
CSV_DEV = {f: "sets:data/csv_dev" for f in ("iris.csv", "ohlc.csv", "anscombe.csv", "seattle-temps.csv", "sf-temps.csv")}
WHOLEDOC = {
    "attention_is_all_you_need.pdf": "papers", "adam_1412.6980.pdf": "papers", "resnet_1512.03385.pdf": "papers",
    "bert_1810.04805.pdf": "papers", "tracemonkey.pdf": "pdf_hard", "freeculture.pdf": "pdf_hard",
    "GeoBase_NHNC1_Data_Model_UML_EN.pdf": "pdf_hard", "NIKE_2023_10K.pdf": "bench/financebench_dev/pdfs",
    "VERIZON_2022_10K.pdf": "bench/financebench_dev/pdfs", "ADOBE_2022_10K.pdf": "bench/financebench_subset/pdfs",
    "AMCOR_2023Q4_EARNINGS.pdf": "bench/financebench_subset/pdfs",
    "PEPSICO_2023Q1_EARNINGS.pdf": "bench/financebench_subset/pdfs",
    "au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx": "office/pptx",
    "45545_Comment.pptx": "office/pptx", "60810.pptx": "office/pptx", "2411-Performance_Up.pptx": "office/pptx",
    "aascu.org_workarea_downloadasset.aspx_id=5864.pptx": "office/pptx", "61787.docx": "office/docx",
    "IllustrativeCases.docx": "office/docx", "simple-monthly-budget.xlsx": "office/xlsx",
}
SEALED25 = {
    "1412.6980_zeroed_header.pdf": "pdf_hard",
    "2411-Performance_Up.pptx": "office/pptx",
    "AMERICANWATERWORKS_2022_10K.pdf": "bench/financebench_dev/pdfs",
    "BESTBUY_2024Q2_10Q.pdf": "bench/financebench_subset/pdfs",
    "CVSHEALTH_2022_10K.pdf": "bench/financebench_dev/pdfs",
    "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf": "bench/financebench_subset/pdfs",
    "JPMORGAN_2023Q2_10Q.pdf": "bench/financebench_dev/pdfs",
    "SF424_page2.pdf": "pdf_hard",
    "SampleShow.pptx": "office/pptx",
    "Seige_of_Vicksburg_Sample_OCR.pdf": "pdf_hard",
    "SimpleWithComments.xlsx": "office/xlsx",
    "VERIZON_2021_10K.pdf": "bench/financebench_dev/pdfs",
    "adam_1412.6980.pdf": "papers",
    "attention_is_all_you_need.pdf": "papers",
    "bert_1810.04805.pdf": "papers",
    "bug65649.docx": "office/docx",
    "date_1904.xlsx": "office/xlsx",
    "indirect-rotation.pdf": "pdf_hard",
    "resnet_1512.03385.pdf": "papers",
}
SETS = {
    "papers": LinkedSet("papers.jsonl", PAPERS, "20 questions on four papers (tuned on)"),
    "heldout": LinkedSet("heldout.jsonl", HELDOUT, "37 questions on 12 office files and filings"),
    "sealed": LinkedSet("sealed.jsonl", SEALED, "35 questions nobody tuning the engine read (aggregates only)"),
    "sealed25": LinkedSet("sealed25.jsonl", SEALED25, "54 questions on 19 files (papers, filings, office files, "
                          "scans) written before the confidence work of issue 25 by a helper who saw none of the "
                          "tuning; aggregates only"),
    "tables": LinkedSet("tables.jsonl", TABLES, "42 table questions (lookups, aggregates, superlatives, "
                        "comparisons, refusals) on sheets, CSVs, filings, DOCX and PPTX tables; held out"),
    "tables-dev": LinkedSet("tables_dev.jsonl", TABLES_DEV, "45 table questions on filings, CSVs, sheets and decks "
                            "written for tuning the table rules and fitting the confidence (tuned on)"),
    "tables-dev2": LinkedSet("tables_dev2.jsonl", TABLES_DEV2, "40 table questions on other filings, four CSVs, "
                             "sheets, a Word and a PowerPoint table, written for tuning the thirteenth pass (tuned on)"),
    "tables-fresh": LinkedSet("tables_fresh.jsonl", TABLES_FRESH, "32 table questions on other filings, CSVs and "
                              "office files, written by a helper who saw none of the tuning; aggregates only"),
    "tables-fresh2": LinkedSet("tables_fresh2.jsonl", TABLES_FRESH2, "28 table questions on a filing no other set "
                               "uses, filings and office files of the held-out sets, two CSVs, written by a helper "
                               "who saw none of the tuning, after the fourteenth pass; aggregates only"),
    "csv-dev": LinkedSet("csv_dev.jsonl", CSV_DEV, "30 questions on five CSVs (lookups, counts, aggregates, "
                         "superlatives, date spans, a refusal) written for tuning the table rules (tuned on)"),
    "wholedoc": LinkedSet("wholedoc.jsonl", WHOLEDOC, "29 whole-document, section and list questions on papers, "
                          "filings, office files and a book; gold items, points and sections; held out"),
    "sample": SampleSet(),
    "financebench": FinanceBenchSet(),
}


def scratch_dir(name: str) -> tempfile.TemporaryDirectory:
    """A temporary folder for one run of set `name` (its linked documents and, unless given, its index)."""
    return tempfile.TemporaryDirectory(prefix=f"{name}-")
