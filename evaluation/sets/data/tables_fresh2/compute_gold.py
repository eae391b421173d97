"""Recompute every gold value of tables_fresh2.jsonl from the documents themselves.

    python compute_gold.py            # print each record's recomputed gold
    python compute_gold.py --check    # also compare with tables_fresh2.jsonl; exit 1 on any mismatch

Needs pandas, openpyxl, pdfplumber (which brings pypdfium2), python-docx, python-pptx. The filings and office
files are read from the shared data folder (SHARED_DATA, default ../shared/data next to the repository); the two
CSVs sit next to this script.

PDF cells come from pdfplumber page text: the k-th line that starts with the row label, numbers parsed with
parentheses as negatives, '$', '%' and footnote markers like '(a)' dropped, then the column position.
Absence checks (unanswerable records) scan whole documents with pypdfium2, which is much faster than pdfplumber
on 200-400 page filings.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = HERE.parents[1]
REPO = SETS.parents[1]
SHARED = Path(os.environ.get("SHARED_DATA", REPO.parent / "shared" / "data"))
DEV = SHARED / "bench" / "financebench_dev" / "pdfs"
SUB = SHARED / "bench" / "financebench_subset" / "pdfs"
PATHS = {
    "CVSHEALTH_2018_10K.pdf": DEV / "CVSHEALTH_2018_10K.pdf",
    "JPMORGAN_2023Q2_10Q.pdf": DEV / "JPMORGAN_2023Q2_10Q.pdf",
    "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf": SUB / "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf",
    "AMAZON_2017_10K.pdf": SUB / "AMAZON_2017_10K.pdf",
    "macrodata.csv": HERE / "macrodata.csv",
    "longley.csv": HERE / "longley.csv",
    "AverageTaxRates.xlsx": SHARED / "office" / "xlsx" / "AverageTaxRates.xlsx",
    "aascu.org_workarea_downloadasset.aspx_id=5864.pptx":
        SHARED / "office" / "pptx" / "aascu.org_workarea_downloadasset.aspx_id=5864.pptx",
    "WordWithAttachments.docx": SHARED / "office" / "docx" / "WordWithAttachments.docx",
    "with_japanese.pptx": SHARED / "office" / "pptx" / "with_japanese.pptx",
}
CVS, JPM, JNJ, AMZN = ("CVSHEALTH_2018_10K.pdf", "JPMORGAN_2023Q2_10Q.pdf",
                       "JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf", "AMAZON_2017_10K.pdf")


# ---------------------------------------------------------------- PDF helpers
@lru_cache(maxsize=None)
def page_text(doc: str, page: int) -> str:
    """pdfplumber text of a 1-based page."""
    import pdfplumber

    with pdfplumber.open(PATHS[doc]) as pdf:
        return pdf.pages[page - 1].extract_text() or ""


@lru_cache(maxsize=None)
def all_pages(doc: str) -> tuple[str, ...]:
    """pypdfium2 text of every page (whitespace collapsed), for whole-document searches."""
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(PATHS[doc]))
    out = tuple(re.sub(r"\s+", " ", pdf[i].get_textpage().get_text_range()) for i in range(len(pdf)))
    pdf.close()
    return out


def parse_num(tok: str) -> float | None:
    tok = tok.strip()
    if tok in ("—", "-", "–"):
        return 0.0
    if tok == "NM":
        return None
    neg = tok.startswith("(") and tok.endswith(")")
    tok = tok.strip("()").replace(",", "")
    v = float(tok)
    return -v if neg else v


def row(doc: str, page: int, label: str, k: int = 1) -> list[float | None]:
    """Numbers of the k-th line on the page that starts with `label` (footnote markers dropped)."""
    hits = [ln for ln in page_text(doc, page).splitlines() if ln.startswith(label)]
    assert len(hits) >= k, f"{doc} p{page}: only {len(hits)} line(s) start with {label!r}"
    rest = hits[k - 1][len(label):]
    rest = re.sub(r"^\s*(\(\d\))+", " ", rest)          # leading footnote markers (4)(5)
    rest = rest.replace("(a)", " ").replace("$", " ").replace("%", " ")
    toks = rest.split()
    return [parse_num(t) for t in toks]


def growth(new: float, old: float) -> float:
    return (new / old - 1) * 100


# ---------------------------------------------------------------- gold functions (id -> dict)
def f01():
    rev = row(CVS, 302, "Total revenues")
    return {"value": growth(rev[0], rev[1])}


def f02():
    tax = row(CVS, 302, "Income tax provision")[0]
    pre = row(CVS, 302, "Income before income tax provision")[0]
    return {"value": tax / pre * 100}


def f03():
    assert "2018:" in page_text(CVS, 371)
    segs = ["Pharmacy Services", "Retail/LTC", "Health Care Benefits", "Corporate/Other"]
    oi = dict(zip(segs, row(CVS, 371, "Operating income (loss)", 1)[:4]))   # first block = 2018
    oi17 = dict(zip(segs, row(CVS, 371, "Operating income (loss)", 2)[:4]))
    assert max(oi17, key=oi17.get) == "Retail/LTC"                              # the trap: 2017 leader differs
    top = max(oi, key=oi.get)
    assert sorted(oi.values())[-2] < oi[top]
    return {"value": oi[top], "entity": top}


def f04():
    regions = ["Northeast", "Southeast", "Mid-America", "West", "Other"]
    tot = {r: row(CVS, 11, r)[2] for r in regions}
    assert sum(tot.values()) == row(CVS, 11, "Total medical membership")[2]
    top = max(tot, key=tot.get)
    assert sorted(tot.values())[-2] < tot[top]
    return {"value": tot[top], "entity": top}


def f05():
    pages = all_pages(CVS)
    hits = [i + 1 for i, t in enumerate(pages) if "Southeast" in t]
    assert hits == [11], hits
    t = pages[10]
    assert "geographic region and funding arrangement at December 31, 2018" in t
    table = t[t.index("In thousands"):t.index("Total medical membership")]
    assert "2017" not in table
    return {"absent": True}


def _jpm_block(label: str, k: int) -> dict:
    """k-th occurrence of a row on p23: blocks 1/3 = CCB, CIB, CB; blocks 2/4 = AWM, Corporate, Total.
    Each segment has 3 columns (2023, 2022, change)."""
    nums = row(JPM, 23, label, k)
    names = ["CCB", "CIB", "CB"] if k in (1, 3) else ["AWM", "Corporate", "Total"]
    return {n: (nums[3 * i], nums[3 * i + 1]) for i, n in enumerate(names)}


def f06():
    t = page_text(JPM, 23)
    assert t.count("Three months ended June 30") == 2 and t.count("Six months ended June 30") == 2
    prov = {**_jpm_block("Provision for credit losses", 1), **_jpm_block("Provision for credit losses", 2)}
    total = prov.pop("Total")[0]
    cur = {k: v[0] for k, v in prov.items()}
    assert abs(sum(cur.values()) - total) < 0.5
    top = max(cur, key=cur.get)
    assert sorted(cur.values())[-2] < cur[top]
    return {"value": cur[top], "entity": {"CCB": "Consumer & Community Banking"}.get(top, top)}


def f07():
    return {"value": _jpm_block("Net income/(loss)", 3)["CB"][0]}


def f08():
    new, old = _jpm_block("Total net revenue", 3)["CIB"]
    return {"value": new - old}


def f09():
    exp = _jpm_block("Total noninterest expense", 1)["CCB"][0]
    rev = _jpm_block("Total net revenue", 1)["CCB"][0]
    return {"value": exp / rev * 100}


def f10():
    pages = all_pages(JPM)
    t = pages[22]
    assert "Six months ended June 30" in t and "Corporate & Investment Bank" in t
    bad = [i + 1 for i, p in enumerate(pages)
           if re.search(r"(?i)(year|twelve months) ended December 31, 2023", p)]
    assert not bad, bad
    outlook = pages[7]
    assert "Full-year 2023" in outlook
    seg = outlook[outlook.index("Full-year 2023"):]
    assert not re.search(r"(?i)Corporate & Investment Bank[^.]*net income", seg)
    return {"absent": True}


def f11():
    return {"value": row(JNJ, 2, "U.S.", 1)[0]}


def f12():
    segs = {"Pharmaceutical": "Pharmaceutical4", "Consumer Health": "Consumer Health4", "MedTech": "MedTech"}
    rep, calc = {}, {}
    for name, label in segs.items():
        r = row(JNJ, 3, label, 1)       # p3 holds only the full-year segment table
        rep[name] = r[2]
        calc[name] = growth(r[0], r[1])
        assert abs(round(calc[name], 1) - rep[name]) < 1e-9
    top = max(rep, key=rep.get)
    assert sorted(rep.values())[-2] < rep[top]
    return {"value": rep[top], "entity": top, "computed": calc[top]}


def f13():
    return {"value": row(JNJ, 2, "Consumer Health4", 1)[0] + row(JNJ, 2, "MedTech", 1)[0]}


def f14():
    t = page_text(AMZN, 69)
    blk = t[t.index("\nAWS"):]
    sales = row_from_text(blk, "Net sales")[2]
    oi = row_from_text(blk, "Operating income")[2]
    return {"value": oi / sales * 100}


def row_from_text(text: str, label: str) -> list[float | None]:
    ln = next(x for x in text.splitlines() if x.startswith(label))
    return [parse_num(t) for t in ln[len(label):].replace("$", " ").split()]


@lru_cache(maxsize=None)
def macro():
    import pandas as pd

    return pd.read_csv(PATHS["macrodata.csv"])


@lru_cache(maxsize=None)
def longley():
    import pandas as pd

    return pd.read_csv(PATHS["longley.csv"])


def f15():
    m = macro()
    r = m[(m.year == 1982) & (m.quarter == 3)]
    assert len(r) == 1
    return {"value": float(r.unemp.iloc[0])}


def f16():
    m = macro()
    r = m[m.year == 1981]
    assert sorted(r.quarter) == [1, 2, 3, 4]
    return {"value": float(r.tbilrate.mean())}


def f17():
    m = macro()
    top = m.unemp.max()
    r = m[m.unemp == top]
    assert len(r) == 1
    return {"value": float(top), "entity": f"{int(r.year.iloc[0])} Q{int(r.quarter.iloc[0])}"}


def f18():
    return {"value": float((macro().unemp >= 9.0).sum())}


def f19():
    g = macro().set_index(["year", "quarter"]).realgdp
    return {"value": growth(g[(2008, 4)], g[(2007, 4)])}


def f20():
    m = macro()
    last = m.sort_values(["year", "quarter"]).iloc[-1]
    assert (int(last.year), int(last.quarter)) == (2009, 3)
    assert m[(m.year == 2009) & (m.quarter == 4)].empty
    return {"absent": True}


def f21():
    l = longley().set_index("YEAR").TOTEMP
    return {"value": float(l[1962] - l[1947])}


def f22():
    l = longley()
    top = l.UNEMP.max()
    r = l[l.UNEMP == top]
    assert len(r) == 1
    return {"value": float(top), "entity": str(int(r.YEAR.iloc[0]))}


@lru_cache(maxsize=None)
def avgtxmod():
    import openpyxl

    return openpyxl.load_workbook(PATHS["AverageTaxRates.xlsx"], data_only=True)["Avgtxmod"]


def f23():
    ws = avgtxmod()
    assert "MARRIED ONE INCOME" in ws["C18"].value and ws["K19"].value == 2005 and ws["A25"].value == 40000
    return {"value": ws["K25"].value * 100}


def f24():
    ws = avgtxmod()
    assert ws["C4"].value == "SINGLE" and ws["C5"].value == 1997 and ws["M5"].value == 2007
    assert ws["A12"].value == 60000
    return {"value": (ws["M12"].value - ws["C12"].value) * 100}


@lru_cache(maxsize=None)
def aascu_blocks():
    import pptx

    prs = pptx.Presentation(PATHS["aascu.org_workarea_downloadasset.aspx_id=5864.pptx"])
    tables = [sh.table for sh in prs.slides[22].shapes if sh.has_table]
    assert len(tables) == 1
    rows = [[c.text.strip() for c in r.cells] for r in tables[0].rows]
    assert rows[0][0].startswith("School One") and rows[16][0].startswith("School Two")
    header = rows[1]
    return header, rows[2:16], rows[17:]


def f25():
    header, _, two = aascu_blocks()
    assert [r[0] for r in two] == list("ABCDEFGHIJKL")
    means = {header[j]: sum(int(r[j]) for r in two) / len(two) for j in range(1, 8)}
    top = max(means, key=means.get)
    assert sorted(means.values())[-2] < means[top]
    return {"value": means[top], "entity": top}


def f26():
    header, one, _ = aascu_blocks()
    assert header[8] == "RowMean" and [r[0] for r in one] == list("ABCDEFGHIJKLMN")
    return {"value": float(sum(float(r[8]) < 2.0 for r in one))}


def f27():
    import docx

    tables = docx.Document(PATHS["WordWithAttachments.docx"]).tables
    assert len(tables) == 1
    cells = [c.text.strip() for c in tables[0].rows[1].cells]
    assert cells[0] == "Table"
    return {"value": float(sum(int(c) for c in cells if c.isdigit()))}


def f28():
    import pptx

    prs = pptx.Presentation(PATHS["with_japanese.pptx"])
    tables = [sh.table for s in prs.slides for sh in s.shapes if sh.has_table]
    assert len(tables) == 1
    return {"text": tables[0].cell(1, 2).text.strip()}


# ---------------------------------------------------------------- checking
def _decimals(s: str) -> int:
    return len(s.split(".")[1]) if "." in s else 0


def check(rec: dict, got: dict) -> list[str]:
    errs = []
    if rec["kind"] == "unanswerable":
        if not got.get("absent"):
            errs.append("absence not confirmed")
        if any(k in rec for k in ("answer", "value", "tolerance", "unit")):
            errs.append("unanswerable record carries an answer")
        return errs
    if "text" in got:
        if rec["value"] is not None:
            errs.append("text lookup must have value null")
        if not any(a.lower() in got["text"].lower() for a in rec["answer"][0]):
            errs.append(f"text {got['text']!r} not in {rec['answer'][0]}")
        return errs
    v = got["value"]
    # the stored value is the computed one rounded to the stored precision
    dec = _decimals(repr(float(rec["value"])))
    if abs(round(v, dec) - rec["value"]) > 1e-9 and abs(v - rec["value"]) > 1e-9:
        errs.append(f"value {v} != {rec['value']}")
    # the first alternative of the number group is the value (unsigned), rounded to its own decimals
    alt = rec["answer"][-1][0].replace(",", "")
    try:
        num = float(alt)
        if abs(round(abs(v), _decimals(alt)) - num) > 1e-9:
            errs.append(f"first alternative {alt!r} does not match {v}")
    except ValueError:
        pass
    if "entity" in got:
        ent = got["entity"].lower()
        groups = rec["answer"][:-1]
        if not all(any(a.lower() in ent or ent in a.lower() for a in g) or
                   any(a.lower() in ent for a in g) for g in groups):
            errs.append(f"entity {got['entity']!r} not matched by {groups}")
    return errs


def main(argv: list[str]) -> int:
    recs = [json.loads(l) for l in open(SETS / "tables_fresh2.jsonl", encoding="utf-8") if l.strip()]
    funcs = {k: v for k, v in globals().items() if re.fullmatch(r"f\d\d", k)}
    assert sorted(funcs) == [r["id"] for r in recs], "records and gold functions differ"
    failed = 0
    for rec in recs:
        got = funcs[rec["id"]]()
        errs = check(rec, got) if "--check" in argv else []
        shown = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in got.items()}
        print(f"{rec['id']} {rec['doc'][:40]:40s} {rec['kind']:12s} {shown}" + (f"  FAIL {errs}" if errs else ""))
        failed += bool(errs)
    if "--check" in argv:
        print(f"{len(recs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
