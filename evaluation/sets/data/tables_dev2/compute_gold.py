#!/usr/bin/env python
"""Recompute the gold of tables_dev2.jsonl from the files in the set's documents.

    python compute_gold.py          # print every recomputed gold value
    python compute_gold.py --check  # compare with tables_dev2.jsonl, exit 1 on mismatch

Needs pandas, openpyxl, pdfplumber (and its pypdfium2 dependency), python-docx, python-pptx.
Whole-document absence checks use pypdfium2 (installed with pdfplumber) because pdfplumber is slow
on 200-page filings.
PDF cells are read by pdfplumber text extraction of the given 1-based page: the row is the
line that starts with the row label (k-th occurrence on the page when the label repeats), and
the column is the position among the numbers that follow the label ("—" counts as 0,
"(1,234)" as -1234). Unanswerable items are checked for the ABSENCE of what they ask.
"""
import json
import os
import re
import sys

import openpyxl
import pandas as pd
import pdfplumber
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE
import docx
import pypdfium2

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SHARED_DATA", os.path.join(HERE, "..", "..", "..", "..", "..", "shared", "data"))
_FOLDERS = (HERE, "office/xlsx", "office/docx", "office/pptx", "bench/financebench_dev/pdfs",
            "bench/financebench_subset/pdfs")



def _find(name):
    """A document of the set: the CSVs beside this script, the rest in the shared data (SHARED_DATA)."""
    for folder in _FOLDERS:
        path = os.path.join(folder if os.path.isabs(folder) else os.path.join(SHARED, folder), name)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(f"{name}: not beside this script nor under {SHARED} (set SHARED_DATA)")
JSONL = os.path.join(HERE, "..", "..", "tables_dev2.jsonl")

# ---------------------------------------------------------------- PDF helpers
_pages = {}


def page_text(doc, page):
    key = (doc, page)
    if key not in _pages:
        with pdfplumber.open(_find(doc)) as pdf:
            _pages[key] = pdf.pages[page - 1].extract_text() or ""
    return _pages[key]


_NUM = re.compile(r"\(?(\d[\d,]*(?:\.\d+)?)\)?%?")


def _nums(rest):
    out = []
    for t in rest.replace("$", " ").split():
        if t in ("—", "–"):
            out.append(0.0)
            continue
        m = _NUM.fullmatch(t)
        if m:
            v = float(m.group(1).replace(",", ""))
            out.append(-v if t.startswith("(") else v)
    return out


def row(doc, page, label, occ=0):
    """Numbers of the occ-th line on the page that starts with label followed by a figure."""
    hits = []
    for line in page_text(doc, page).splitlines():
        if line.startswith(label):
            rest = line[len(label):].strip()
            if rest and (rest[0] in "$(—–" or rest[0].isdigit()):
                hits.append(_nums(rest))
    if len(hits) <= occ:
        raise ValueError(f"{doc} p{page}: row {label!r} occurrence {occ} not found")
    return hits[occ]


def cell(doc, page, label, col, occ=0):
    return row(doc, page, label, occ)[col]


def pct(new, old):
    return (new / old - 1.0) * 100.0


def argbest(d, fn=max):
    k = fn(d, key=d.get)
    return k, d[k]


# ---------------------------------------------------------------- other helpers
def csv(name):
    return pd.read_csv(_find(name))


def wb(name):
    return openpyxl.load_workbook(_find(name), data_only=True)


def pptx_table(name, slide_no):
    """Rows (list of cell texts) of every table on a 1-based slide, group shapes included."""
    prs = Presentation(_find(name))
    slide = prs.slides[slide_no - 1]

    def walk(shapes):
        for sh in shapes:
            if sh.shape_type == MSO_SHAPE_TYPE.GROUP:
                yield from walk(sh.shapes)
            else:
                yield sh

    rows = []
    for sh in walk(slide.shapes):
        if getattr(sh, "has_table", False) and sh.has_table:
            for r in sh.table.rows:
                rows.append([c.text.strip() for c in r.cells])
    return rows


def kv(rows):
    return {r[0]: r[1] for r in rows if len(r) >= 2}



def all_text(doc):
    """Whole-document text (pypdfium2), for the absence checks of unanswerable items."""
    pdf = pypdfium2.PdfDocument(_find(doc))
    try:
        return "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    finally:
        pdf.close()


def docx_tables(name):
    return [[[c.text.strip() for c in r.cells] for r in t.rows] for t in docx.Document(_find(name)).tables]


# ---------------------------------------------------------------- gold computations
# Each returns a number, a string (text lookup), (entity, number) for superlatives, or True for
# an unanswerable item whose absence check passes.
JPM21, JPM22 = "JPMORGAN_2021Q1_10Q.pdf", "JPMORGAN_2022Q2_10Q.pdf"
JNJ = "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf"
AWK, MGM, WMT = "AMERICANWATERWORKS_2021_10K.pdf", "MGMRESORTS_2022_10K.pdf", "WALMART_2018_10K.pdf"
Q21 = ("1Q21", "4Q20", "3Q20", "2Q20", "1Q20")          # JPM21 p3 columns
Q22 = ("2Q22", "1Q22", "4Q21", "3Q21", "2Q21", "6M22", "6M21")  # JPM22 p3 columns


def e01():  # JPM headcount end of 1Q21
    return cell(JPM21, 3, "Headcount", 0)


def e02():  # JPM quarter with highest total net revenue among the five shown
    return argbest(dict(zip(Q21, row(JPM21, 3, "Total net revenue")[:5])))


def e03():  # JPM net income summed 2Q20..1Q21
    return sum(row(JPM21, 3, "Net income")[:4])


def e04():  # JPM 1Q22 provision for credit losses
    return cell(JPM22, 3, "Provision for credit losses", 1)


def e05():  # JPM 2Q22 effective tax rate = income tax expense / income before tax
    return cell(JPM22, 3, "Income tax expense", 0) / cell(JPM22, 3, "Income before income tax expense", 0) * 100


def e06():  # JPM noninterest expense growth, six months 2022 vs 2021
    r = row(JPM22, 3, "Total noninterest expense")
    return pct(r[5], r[6])


def e07():  # JPM full-year 2022 total net revenue -> absent from a Q2 2022 10-Q
    hdr = [l for l in page_text(JPM22, 3).splitlines() if "2Q22" in l][0]
    ok = hdr.split()[-7:] == ["2Q22", "1Q22", "4Q21", "3Q21", "2Q21", "2022", "2021"]
    ok = ok and "Six months ended June 30" in page_text(JPM22, 3)
    t = all_text(JPM22)
    # the only full-year 2022 figures are the outlook on p8: NII ex Markets, adjusted expense, Card NCO rate
    outlook = t.split("Full-year 2022", 1)[1].split("Net interest income excluding Markets and adjusted", 1)[0]
    ok = ok and t.count("Full-year 2022") == 1 and "revenue" not in outlook.lower() and "$58 billion" in outlook
    return True if ok and "December 31, 2022" not in t else False


def e08():  # J&J Europe sales Q1 2023 (first 'Europe' row on p9)
    return cell(JNJ, 9, "Europe", 0, occ=0)


def e09():  # J&J Q2 2023 (SM&A + R&D) / sales
    sales = cell(JNJ, 12, "Sales to customers", 2)  # cols: Q1 amt, Q1 %, Q2 amt, ...
    sga = cell(JNJ, 12, "Selling, marketing and administrative expenses", 2)
    rnd = cell(JNJ, 12, "Research and development expense", 2)
    return (sga + rnd) / sales * 100


def e10():  # J&J region with highest total (reported) sales growth Q1 2023, p9 first block
    regs = {}
    for lab in ("U.S.", "Europe", "Western Hemisphere excluding U.S.", "Asia-Pacific, Africa"):
        regs[lab] = cell(JNJ, 9, lab, 2, occ=0)  # cols: 2023, 2022, Total %, Operations, Currency
    return argbest(regs)


def e11():  # J&J H1 2023 operating cash flow -> absent
    t = all_text(JNJ).lower()
    return True if "operating activities" not in t and "cash flow" not in t else False


def e12():  # American Water cash dividends declared per share 2019
    return cell(AWK, 55, "Cash dividends declared per common share", 2)


def e13():  # American Water operating margin 2021
    return cell(AWK, 63, "Operating income", 0) / cell(AWK, 63, "Operating revenues", 0) * 100


def e14():  # American Water year with the largest investing outflow 2017-2021
    yrs = ("2021", "2020", "2019", "2018", "2017")
    k, v = argbest(dict(zip(yrs, row(AWK, 55, "Net cash used in investing activities"))), min)
    return k, -v


def e15():  # MGM Las Vegas Strip biggest revenue line 2022 (first block on p38)
    labs = ("Casino", "Rooms", "Food and beverage", "Entertainment, retail and other")
    return argbest({l: cell(MGM, 38, l, 0, occ=0) for l in labs})


def e16():  # MGM China casino revenue change 2022 vs 2021 (third 'Casino' row on p38)
    r = row(MGM, 38, "Casino", occ=2)
    return pct(r[0], r[1])


def e17():  # Walmart: Sam's Club units FY2018 minus FY2017 (a fall)
    r = row(WMT, 35, "Sam's Club segment")
    return r[0] - r[1]


def e18():  # Walmart inventories FY2016
    return cell(WMT, 35, "Inventories", 2)


# ---- CSV
def e19():  # gapminder: Japan life expectancy 1982
    g = csv("gapminder.csv")
    r = g[(g.country == "Japan") & (g.year == 1982)]
    assert len(r) == 1
    return float(r.lifeExp.iloc[0])


def e20():  # gapminder: Nigeria population growth 1952 -> 2007
    g = csv("gapminder.csv")
    s = g[g.country == "Nigeria"].set_index("year")["pop"]
    return pct(s[2007], s[1952])


def e21():  # gapminder: richest European country 2007 by GDP per capita
    g = csv("gapminder.csv")
    e = g[(g.continent == "Europe") & (g.year == 2007)].set_index("country").gdpPercap
    return e.idxmax(), float(e.max())


def e22():  # gapminder: mean life expectancy of African countries 2007
    g = csv("gapminder.csv")
    return float(g[(g.continent == "Africa") & (g.year == 2007)].lifeExp.mean())


def e23():  # gapminder: Germany 2010 -> absent (data stops at 2007, 5-year steps)
    g = csv("gapminder.csv")
    return True if g.year.max() == 2007 and 2010 not in set(g.year) and "Germany" in set(g.country) else False


def e24():  # penguins: Adelie count on Biscoe
    p = csv("penguins.csv")
    return float(((p.species == "Adelie") & (p.island == "Biscoe")).sum())


def e25():  # penguins: mean body mass of female Gentoo
    p = csv("penguins.csv")
    return float(p[(p.species == "Gentoo") & (p.sex == "female")].body_mass_g.mean())


def e26():  # penguins: species of the longest-flippered bird
    p = csv("penguins.csv")
    assert (p.flipper_length_mm == p.flipper_length_mm.max()).sum() == 1
    i = p.flipper_length_mm.idxmax()
    return p.species[i], float(p.flipper_length_mm[i])


def e27():  # statecrime: Texas murder rate
    s = csv("statecrime.csv").set_index("state")
    return float(s.loc["Texas", "murder"])


def e28():  # statecrime: Florida minus New York violent crime rate
    s = csv("statecrime.csv").set_index("state")
    return float(s.loc["Florida", "violent"] - s.loc["New York", "violent"])


def e29():  # grunfeld: largest 1954 investment excluding General Motors
    f = csv("grunfeld.csv")
    y = f[(f.year == 1954) & (f.firm != "General Motors")].set_index("firm").invest
    return y.idxmax(), float(y.max())


def e30():  # grunfeld: Westinghouse firm value 1954
    f = csv("grunfeld.csv")
    r = f[(f.firm == "Westinghouse") & (f.year == 1954)]
    assert len(r) == 1
    return float(r["value"].iloc[0])


# ---- workbooks
def e31():  # charts.xlsx Letters: number next to G
    ws = wb("charts.xlsx")["Letters"]
    r = [x for x in ws.iter_rows(values_only=True) if x[0] == "G"][0]
    assert r[1] == r[2]
    return float(r[1])


def e32():  # charts.xlsx Numbers: mean of A1:A10
    ws = wb("charts.xlsx")["Numbers"]
    v = [x[0] for x in ws.iter_rows(values_only=True) if x[0] is not None]
    return float(sum(v) / len(v))


def e33():  # charts.xlsx Pie: share of largest value in total
    ws = wb("charts.xlsx")["Pie"]
    v = [x[0] for x in ws.iter_rows(values_only=True) if x[0] is not None]
    return max(v) / sum(v) * 100


def e34():  # ExcelPivotTableSample Tabelle3 grand total
    ws = wb("ExcelPivotTableSample.xlsx")["Tabelle3"]
    assert ws["A6"].value == "Gesamtergebnis"
    return float(ws["B6"].value)


def e35():  # Tabelle1: mean Field2 of x, y, z (second table)
    ws = wb("ExcelPivotTableSample.xlsx")["Tabelle1"]
    assert [ws[f"E{r}"].value for r in (2, 3, 4)] == ["x", "y", "z"] and ws["F1"].value == "Field2"
    return float(sum(ws[f"F{r}"].value for r in (2, 3, 4)) / 3)


def e36():  # charts.xlsx Letters: letter K -> absent
    ws = wb("charts.xlsx")["Letters"]
    letters = [x[0] for x in ws.iter_rows(values_only=True) if x[0] is not None]
    return True if "K" not in letters and letters == list("ABCDEFGHIJ") else False


# ---- docx / pptx
def e37():  # tbl-cell-access.docx table 1 centre cell
    t = docx_tables("tbl-cell-access.docx")[0]
    return float(t[1][1])


def e38():  # tbl-cell-access.docx table 1 sum of all cells
    t = docx_tables("tbl-cell-access.docx")[0]
    return float(sum(int(c) for r in t for c in r))


def e39():  # table_test2.pptx: Header1 cell of the last row
    rows = pptx_table("table_test2.pptx", 1)
    return rows[-1][rows[0].index("Header1")]


def e40():  # table_test2.pptx: a price for 'Lorem' -> absent (no numbers in the table)
    rows = pptx_table("table_test2.pptx", 1)
    txt = " ".join(" ".join(r) for r in rows[1:])  # body rows (headers are Header1..Header3)
    return True if not re.search(r"\d", txt) and any(r[0] == "Lorem" for r in rows) else False


GOLD = {f"e{i:02d}": globals()[f"e{i:02d}"] for i in range(1, 41)}
def main():
    check = "--check" in sys.argv
    recs = {}
    if check:
        with open(JSONL) as fh:
            for line in fh:
                r = json.loads(line)
                recs[r["id"]] = r
        if set(recs) != set(GOLD):
            print("id sets differ:", sorted(set(recs) ^ set(GOLD)))
            sys.exit(1)
    bad = 0
    for k, fn in GOLD.items():
        try:
            got = fn()
        except Exception as e:  # noqa: BLE001
            got = f"ERROR {e!r}"
        if not check:
            print(k, got)
            continue
        r = recs[k]
        ok = True
        why = ""
        if r["kind"] == "unanswerable":
            ok = got is True and "answer" not in r
            why = "absence check"
        else:
            alts = r["answer"]
            entity, num = (got if isinstance(got, tuple) else (None, got))
            if isinstance(num, str):  # textual lookup
                ok = any(num.lower() in a.lower() or a.lower() in num.lower() for a in alts[0])
                why = f"text {num!r}"
            else:
                ok = abs(num - r["value"]) <= r["tolerance"] + 1e-9
                why = f"value {num} vs {r['value']}±{r['tolerance']}"
            if entity is not None:
                e_ok = any(entity.lower() in a.lower() or a.lower() in entity.lower() for a in alts[0])
                ok = ok and e_ok
                why += f"; entity {entity!r}"
        if not ok:
            bad += 1
        print(("OK  " if ok else "BAD ") + k + "  " + why)
    if check:
        print(f"{len(GOLD) - bad}/{len(GOLD)} gold values match" + ("" if bad == 0 else f", {bad} MISMATCH"))
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
