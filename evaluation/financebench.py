"""FinanceBench (the dev set and the subset, one library) → our dataset format, for `cli.py eval financebench`.

    .venv/bin/python cli.py eval financebench [--quick] [--strategy S]... [--json]

Both sets are indexed together, as a user's library would hold them: financebench_dev (21 full
filings, 42 questions; the set retrieval is tuned on) and financebench_subset (11 filings, 29 questions; held
out). The converted questions are written to a temporary path and never committed: FinanceBench is CC BY-NC 4.0. Evidence pages in both sets are ZERO-based
(`evidence_page_num`; checked by finding each evidence text on that page index with pypdf: all 32 passages of
the subset, 58 of the dev set's 60 (two are not found on any nearby page), none one page off), so they are
shifted by one to our 1-based pages. FinanceBench
answers are free text; the key facts checked here are the figures and names those answers state (KEY_FACTS,
our annotation). Answers that need arithmetic the documents do not print are expected to fail offline.
"""

from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUICK_MAX_PAGES = 27  # --quick keeps the short filings: ~400 chunks to embed instead of ~2,300
BENCH = REPO.parent / "shared" / "data" / "bench"

# Key facts per FinanceBench id, as groups of accepted alternatives, taken from each reference answer.
KEY_FACTS: dict[str, list[list[str]]] = {
    "financebench_id_00438": [["34.6"], ["36.8"]],
    "financebench_id_00591": [["156"], ["143"]],
    "financebench_id_06655": [["93.86"]],
    "financebench_id_08135": [["30.8"]],
    "financebench_id_01928": [["2,018", "2.018 billion", "2.02 billion"]],
    "financebench_id_01930": [["flat", "unchanged"]],
    "financebench_id_00685": [["21.4"], ["22.5"]],
    "financebench_id_01077": [["Current Health"], ["Two Peaks", "Yardbird"]],
    "financebench_id_01275": [["operating"], ["1,824", "1.8 billion"]],
    "financebench_id_00288": [["42%", "1,093"]],
    "financebench_id_00460": [["969"], ["982"]],
    "financebench_id_01902": [["entertainment"]],
    "financebench_id_00651": [["3.5"], ["3.6"]],
    "financebench_id_01484": [["3.0%", "3%"], ["0.6"]],
    "financebench_id_01488": [["Consumer Health"]],
    "financebench_id_01490": [["20 billion"]],
    "financebench_id_01491": [["13.2"]],
    "financebench_id_00382": [["Las Vegas"]],
    "financebench_id_01911": [["negative", "zero"]],
    "financebench_id_01912": [["MGM China"]],
    "financebench_id_01474": [["strong start"]],
    "financebench_id_01476": [["1 percentage point", "one percentage point", "9 percent"]],
    "financebench_id_00283": [["77.78", "77.8"]],
    "financebench_id_00724": [["Developed Rest of World", "Developed Rest of the World"]],
    "financebench_id_02419": [["Upjohn"]],
    "financebench_id_00601": [["marketing"], ["incentive compensation"]],
    "financebench_id_00603": [["47"]],
    "financebench_id_00605": [["36"]],
    "financebench_id_00606": [["increased", "increase", "higher", "deleverage"]],
}


def convert_record(record: dict) -> dict:
    """One FinanceBench record → one line of our format (1-based pages, one gold file, key facts)."""
    doc = f"{record['doc_name']}.pdf"
    pages = sorted({int(e["evidence_page_num"]) + 1 for e in record.get("evidence") or []
                    if e.get("doc_name", record["doc_name"]) == record["doc_name"]})
    line = {"id": record["financebench_id"], "kind": record.get("question_type", ""),
            "question": record["question"].strip(), "doc": doc}
    if pages:
        line["pages"] = pages
    facts = KEY_FACTS.get(record["financebench_id"])
    if facts:
        line["answer"] = facts
    return line


def convert(sources: Path | list[Path], out: Path) -> int:
    """Write each source's questions.jsonl in our format to `out`, one file; returns the number of questions."""
    lines = [convert_record(json.loads(raw)) for source in ([sources] if isinstance(sources, Path) else sources)
             for raw in (source / "questions.jsonl").read_text().splitlines() if raw.strip()]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def _linked_pdfs(sources: list[Path], folder: Path) -> Path:
    """One folder of links to every source's PDFs (the library a user would build from both sets)."""
    folder.mkdir()
    for source in sources:
        for pdf in sorted((source / "pdfs").glob("*.pdf")):
            (folder / pdf.name).symlink_to(pdf)
    return folder


def prepare(scratch: Path, bench: Path = BENCH, *, quick: bool = False) -> tuple[Path, Path]:
    """(the converted questions, a folder of links to the PDFs of both sets), written under `scratch`.

    Raises:
        FileNotFoundError: a FinanceBench set folder is missing under `bench`.
    """
    sources = [bench / "financebench_dev", bench / "financebench_subset"]
    missing = [s for s in sources if not (s / "questions.jsonl").is_file()]
    if missing:
        raise FileNotFoundError(f"no FinanceBench set at {', '.join(map(str, missing))}")
    out = scratch / "financebench.jsonl"
    convert(sources, out)
    docs = _linked_pdfs(sources, scratch / "pdfs")
    if quick:
        out, docs = _quick_subset(out, docs, scratch)
    return out, docs


def _page_count(pdf: Path) -> int:
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    if reader.is_encrypted:
        reader.decrypt("")  # five 10-K/10-Q files carry an empty user password (see the subset's README)
    return len(reader.pages)


def _quick_subset(dataset: Path, pdfs: Path, scratch: Path) -> tuple[Path, Path]:
    """The questions on the short PDFs (the six earnings releases and 8-K), linked into a folder of their own."""
    short = [p for p in sorted(pdfs.glob("*.pdf")) if _page_count(p) <= QUICK_MAX_PAGES]
    folder = scratch / "quick-pdfs"
    folder.mkdir()
    for pdf in short:
        (folder / pdf.name).symlink_to(pdf)
    names = {p.name for p in short}
    lines = [raw for raw in dataset.read_text().splitlines() if json.loads(raw)["doc"] in names]
    subset = scratch / "financebench-quick.jsonl"
    subset.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return subset, folder

