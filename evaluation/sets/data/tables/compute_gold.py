#!/usr/bin/env python3
"""Recompute every gold value of the table question set from the source files.

Usage (from /work/sets/tables, with the scratch venv that has pandas, openpyxl,
pdfplumber, python-docx and lxml):

    .venv/bin/python compute_gold.py            # print every gold value
    .venv/bin/python compute_gold.py --check    # also compare with tables.jsonl

Nothing here reads the app under /work/main: the values come straight from the
files (openpyxl/pandas for workbooks and CSVs, pdfplumber page text for filings,
python-docx for Word tables, the chart XML inside the .pptx for slides).

Environment overrides: SHARED_DATA (default /work/shared/data) and SET_DATA
(default <this folder>/data).
"""
import json
import os
import re
import sys
import zipfile

import docx
import openpyxl
import pandas as pd
import pdfplumber
from lxml import etree

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SHARED_DATA", "/work/shared/data")
SETDATA = os.environ.get("SET_DATA", os.path.join(HERE, "data"))
XLSX = os.path.join(SHARED, "office/xlsx")
DOCX = os.path.join(SHARED, "office/docx")
PPTX = os.path.join(SHARED, "office/pptx")
FB = {
    "NIKE_2023_10K.pdf": "bench/financebench_dev/pdfs",
    "3M_2022_10K.pdf": "bench/financebench_dev/pdfs",
    "GENERALMILLS_2020_10K.pdf": "bench/financebench_dev/pdfs",
    "AMD_2015_10K.pdf": "bench/financebench_dev/pdfs",
    "ADOBE_2022_10K.pdf": "bench/financebench_subset/pdfs",
    "AMAZON_2017_10K.pdf": "bench/financebench_subset/pdfs",
}

GOLD = {}      # id -> gold value (float) or string
SHOW = {}      # id -> human-readable derivation


def put(qid, value, how):
    GOLD[qid] = value
    SHOW[qid] = how


# ----------------------------------------------------------------- helpers
def wb(name, data_only=True):
    return openpyxl.load_workbook(os.path.join(XLSX, name), data_only=data_only)


_PAGES = {}


def page_text(pdf, page):
    """Text of a 1-based page of a filing (pdfplumber)."""
    key = (pdf, page)
    if key not in _PAGES:
        path = os.path.join(SHARED, FB[pdf], pdf)
        with pdfplumber.open(path) as doc:
            _PAGES[key] = doc.pages[page - 1].extract_text() or ""
    return _PAGES[key]


NUM = re.compile(r"\(?-?[\d,]+(?:\.\d+)?\)?|—")


def to_num(tok):
    if tok == "—":
        return 0.0
    neg = tok.startswith("(") and tok.endswith(")")
    v = float(tok.strip("()").replace(",", ""))
    return -v if neg else v


def row(pdf, page, label, after=None):
    """Numbers on the statement line that starts with `label` (after the line
    that starts with `after`, if given). Returns (line, [numbers])."""
    lines = page_text(pdf, page).split("\n")
    start = 0
    if after:
        start = next(i for i, l in enumerate(lines) if l.strip().startswith(after))
    for l in lines[start:]:
        s = l.strip()
        if s.startswith(label):
            rest = s[len(label):].replace("$", " ")
            return s, [to_num(t) for t in NUM.findall(rest)]
    raise KeyError(f"{pdf} p.{page}: no line starting with {label!r}")


def docx_cases():
    """IllustrativeCases.docx: {case name: {row label: (2006 text, 2007 text)}}.
    Each table has one data row whose cells hold one figure per line."""
    d = docx.Document(os.path.join(DOCX, "IllustrativeCases.docx"))
    out, last_name, ti = {}, None, 0
    for el in d.element.body.iterchildren():
        tag = el.tag.split("}")[1]
        if tag == "p":
            t = "".join(x.text or "" for x in el.iter() if x.tag.endswith("}t")).strip()
            if t and len(t) < 40 and not t.startswith(("(", "*", "Note")):
                last_name = t
        elif tag == "tbl":
            t = d.tables[ti]
            ti += 1
            labels = t.rows[1].cells[0].text.split("\n")
            v06 = t.rows[1].cells[1].text.split("\n")
            v07 = t.rows[1].cells[2].text.split("\n")
            rows = {}
            for i, lab in enumerate(labels):
                lab = lab.strip()
                if lab and lab not in rows:
                    rows[lab] = (v06[i].strip() if i < len(v06) else "",
                                 v07[i].strip() if i < len(v07) else "")
            out[last_name] = rows
    return out


def dnum(s):
    return float(s.replace(",", "").replace("%", "").replace("*", "").strip())


CNS = {"c": "http://schemas.openxmlformats.org/drawingml/2006/chart",
       "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
       "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
       "p": "http://schemas.openxmlformats.org/presentationml/2006/main"}


def slide_charts(pptx, slide_no):
    """Chart series on a 1-based slide, read from the chart parts' cached values:
    list of charts, each a list of (series name, {category: value})."""
    z = zipfile.ZipFile(os.path.join(PPTX, pptx))
    pres = etree.fromstring(z.read("ppt/presentation.xml"))
    prels = etree.fromstring(z.read("ppt/_rels/presentation.xml.rels"))
    rid = {r.get("Id"): r.get("Target") for r in prels}
    sld = pres.find("p:sldIdLst", CNS)[slide_no - 1]
    target = "ppt/" + rid[sld.get("{%s}id" % CNS["r"])]
    rels = etree.fromstring(z.read(target.replace("slides/", "slides/_rels/") + ".rels"))
    charts = []
    for r in rels:
        if not r.get("Type").endswith("/chart"):
            continue
        x = etree.fromstring(z.read("ppt/" + r.get("Target").replace("../", "")))
        series = []
        for ser in x.xpath("//c:ser", namespaces=CNS):
            name = "".join(ser.xpath("c:tx//c:v/text()", namespaces=CNS))
            cats = {p.get("idx"): p.findtext("c:v", namespaces=CNS)
                    for p in ser.xpath("c:cat//c:pt", namespaces=CNS)}
            vals = {cats.get(p.get("idx")): float(p.findtext("c:v", namespaces=CNS))
                    for p in ser.xpath("c:val//c:pt", namespaces=CNS)}
            series.append((name, vals))
        charts.append(series)
    return charts


# ----------------------------------------------------------- workbooks (sheet)
def gold_sheets():
    # simple-monthly-budget.xlsx: income block header B4, expense block header B10
    ws = wb("simple-monthly-budget.xlsx")["Simple Monthly Budget"]
    exp = {ws.cell(r, 2).value: ws.cell(r, 3).value for r in range(11, 24)}
    put("t01", float(exp["Groceries"]), "Simple Monthly Budget!C15 (row 'Groceries')")
    car = [exp["Car payment"], exp["Auto expenses"], exp["Auto Insurance"]]
    put("t14", float(sum(car)), f"C16+C17+C20 = {car}")
    assert sum(exp.values()) == ws["F9"].value == 2336  # expense total = summary cell

    # AverageTaxRates.xlsx: year header rows are not the first row
    tw = wb("AverageTaxRates.xlsx")
    full = tw["Avgtxfull"]
    years = {full.cell(4, c).value: c for c in range(3, 14)}      # row 4: 1997..2007
    rowof = {full.cell(r, 1).value: r for r in range(5, 15)}       # SINGLE block
    v = full.cell(rowof[40000], years[2005]).value
    put("t02", round(v * 100, 4), f"Avgtxfull!{full.cell(rowof[40000], years[2005]).coordinate} = {v}")
    rowof_m1 = {full.cell(r, 1).value: r for r in range(19, 29)}   # MARRIED ONE INCOME 2 CHILDREN
    assert full["C17"].value.startswith("MARRIED ONE INCOME")
    a, b = full.cell(rowof_m1[60000], years[1997]).value, full.cell(rowof_m1[60000], years[2007]).value
    put("t34", round((b - a) * 100, 4), f"Avgtxfull!M26 - C26 = {b} - {a} (percentage points)")
    # unanswerable t38: no EUR 50,000 row anywhere
    for s in tw.worksheets:
        assert 50000 not in [s.cell(r, 1).value for r in range(1, s.max_row + 1)]
    put("t38", None, "no 50,000 row in any of the three sheets (rows: 6k,15k,20k,25k,30k,40k,60k,100k,120k)")

    se = tw["Avgselemp"]
    assert se["C4"].value == "SINGLE" and se["A8"].value == 20000
    rates = {se.cell(5, c).value: se.cell(8, c).value for c in range(3, 14)}
    best = max(rates, key=rates.get)
    put("t24", best, f"Avgselemp row 8 (EUR 20,000): max {rates[best]} in {best}; 1997={rates[1997]}")

    # CVLKRA workbook: codes are text with leading zeros
    kw = wb("CVLKRA-KYC_Download_File_Structure_V3.1.xlsx")
    st = kw["State Master"]
    code = next(st.cell(r, 1).value for r in range(2, st.max_row + 1)
                if st.cell(r, 2).value == "Maharashtra")
    assert isinstance(code, str)
    put("t03", code, "State Master, row 'Maharashtra', column 'Code' (text cell)")
    k = pd.read_excel(os.path.join(XLSX, "CVLKRA-KYC_Download_File_Structure_V3.1.xlsx"),
                      sheet_name="KYC", header=0)
    k = k[pd.to_numeric(k["S.No"], errors="coerce").notna()]
    put("t18", float((k["Field Type"].str.strip() == "DATE").sum()),
        f"KYC!C3:C91 == 'DATE' over {len(k)} numbered fields")

    # DataTableCities.xlsx, sheet Table: row 15 is labelled 'Total' (its
    # Latitude/Longitude cells are AVERAGEs, its Population cell is a SUM)
    cw = wb("DataTableCities.xlsx")["Table"]
    big = {cw.cell(r, 3).value: cw.cell(r, 6).value for r in range(3, 15)}
    small = {cw.cell(r, 9).value: cw.cell(r, 12).value for r in range(3, 15)}
    assert cw["C15"].value == "Total" and sum(big.values()) == cw["F15"].value
    put("t15", sum(big.values()) / len(big), f"mean of Table!F3:F14 (12 cities) = {sum(big.values())}/12")
    us = {c: p for c, p in small.items() if c.endswith("USA")}
    put("t16", float(sum(us.values())), f"Table!L cells of {sorted(us)}")
    for sh in wb("DataTableCities.xlsx").worksheets:
        for r in sh.iter_rows():
            assert not any("paris" in str(c.value).lower() for c in r)
    put("t41", None, "no Paris in Table!C3:C14 or I3:I14, nor in any other cell of the workbook")

    # WithChartSheet.xlsx, Sheet1 flat table Year/Category/Cost/Revenue
    df = pd.read_excel(os.path.join(XLSX, "WithChartSheet.xlsx"), sheet_name="Sheet1")
    e = df[df.Category == "Electronics"].Revenue.sum()
    put("t17", float(e), "sum Sheet1!D3,D7,D11 (Electronics)")
    bk = df[df.Category == "Books"].set_index("Year").Revenue
    put("t35", round(float(bk[2007] / bk[2005] - 1) * 100, 4), f"Books revenue {bk[2005]} -> {bk[2007]}")


# ------------------------------------------------------------------ CSVs
def gold_csv():
    w = pd.read_csv(os.path.join(SETDATA, "seattle-weather.csv"), parse_dates=["date"])
    put("t05", float(w.loc[w.date == "2014-07-04", "temp_max"].iloc[0]), "row date=2014/07/04, column temp_max")
    y = w[(w.date.dt.year == 2013) & (w.weather == "rain")]
    put("t11", round(float(y.precipitation.sum()), 4), f"sum precipitation, year 2013 & weather=='rain' ({len(y)} days)")
    top = w.sort_values("precipitation", ascending=False).iloc[:2]
    assert top.precipitation.iloc[0] > top.precipitation.iloc[1]
    put("t21", float(top.precipitation.iloc[0]), f"max precipitation on {top.date.iloc[0].date()} (weather={top.weather.iloc[0]})")
    assert "humidity" not in " ".join(w.columns).lower()
    put("t40", None, f"columns are {list(w.columns)}")

    a = pd.read_csv(os.path.join(SETDATA, "airports.csv"), keep_default_na=False)
    r = a[a.iata == "BFI"].iloc[0]
    put("t04", f"{r['name']} | {r.city}", "row iata=='BFI', columns name, city")
    put("t12", float((a.state == "WA").sum()), "count rows state=='WA'")
    vc = a.state.value_counts()
    assert vc.iloc[0] > vc.iloc[1]
    put("t22", vc.index[0], f"value_counts(state): {vc.index[0]}={vc.iloc[0]}, next {vc.index[1]}={vc.iloc[1]}")

    e = pd.read_csv(os.path.join(SETDATA, "us-employment.csv"), parse_dates=["month"])
    put("t13", float(e[e.month.dt.year == 2009].nonfarm_change.sum()), "sum nonfarm_change, months of 2009")
    lo = e.sort_values("nonfarm_change").iloc[:2]
    assert lo.nonfarm_change.iloc[0] < lo.nonfarm_change.iloc[1]
    put("t23", str(lo.month.iloc[0].date()), f"min nonfarm_change = {lo.nonfarm_change.iloc[0]}")
    assert e.month.max() == pd.Timestamp("2015-12-01")
    put("t39", None, f"months run {e.month.min().date()} .. {e.month.max().date()}")


# --------------------------------------------------------------- filings
def gold_filings():
    _, v = row("NIKE_2023_10K.pdf", 59, "Diluted $")
    put("t06", v[0], "p.59 'Diluted' EPS, column 2023")
    _, v = row("NIKE_2023_10K.pdf", 59, "Revenues")
    put("t29", round((v[0] / v[1] - 1) * 100, 4), f"p.59 Revenues {v[1]} -> {v[0]}")
    segs = ["North America", "Europe, Middle East & Africa", "Greater China", "Asia Pacific & Latin America"]
    rev = {s: row("NIKE_2023_10K.pdf", 90, s, after="REVENUES")[1][0] for s in segs}
    _, tb = row("NIKE_2023_10K.pdf", 90, "Total NIKE Brand", after="REVENUES")
    put("t20", sum(rev.values()), f"p.90 {rev} (Total NIKE Brand {tb[0]} includes Global Brand Divisions)")
    ebit = {s: row("NIKE_2023_10K.pdf", 90, s, after="EARNINGS BEFORE INTEREST")[1][0] for s in segs}
    best = max(ebit, key=ebit.get)
    put("t25", best, f"p.90 EBIT 2023 {ebit}")

    _, v = row("AMAZON_2017_10K.pdf", 38, "Net service sales")
    put("t07", v[1], "p.38 columns are 2015 2016 2017; 2016 is the middle one")
    opex = {}
    for lab in ["Fulfillment", "Marketing", "Technology and content", "General and administrative",
                "Other operating expense, net"]:
        opex[lab] = row("AMAZON_2017_10K.pdf", 38, lab)[1][2]
    best = max(opex, key=opex.get)
    put("t26", best, f"p.38 2017 column {opex} (Cost of sales excluded)")

    _, v = row("GENERALMILLS_2020_10K.pdf", 50, "Long-term debt")
    _, cur = row("GENERALMILLS_2020_10K.pdf", 50, "Current portion of long-term debt")
    put("t08", v[0], f"p.50 'Long-term debt', column May 31, 2020 (current portion is {cur[0]})")
    _, v = row("GENERALMILLS_2020_10K.pdf", 48, "Net sales")
    put("t31", round((v[0] / v[1] - 1) * 100, 4), f"p.48 Net sales {v[1]} -> {v[0]}")

    _, v = row("3M_2022_10K.pdf", 52, "Dividends paid to shareholders")
    put("t09", -v[0], f"p.52 shown as ({-v[0]:,.0f})")
    _, rd = row("3M_2022_10K.pdf", 48, "Research, development and related expenses")
    _, ns = row("3M_2022_10K.pdf", 48, "Net sales")
    put("t32", round(rd[0] / ns[0] * 100, 4), f"p.48 {rd[0]} / {ns[0]}")

    _, v = row("AMD_2015_10K.pdf", 56, "Net revenue")
    put("t30", round((v[0] / v[1] - 1) * 100, 4), f"p.56 Net revenue {v[1]} (2014) -> {v[0]} (2015)")

    _, sub = row("ADOBE_2022_10K.pdf", 54, "Subscription")
    _, tot = row("ADOBE_2022_10K.pdf", 54, "Total revenue")
    put("t33", round(sub[0] / tot[0] * 100, 4), f"p.54 {sub[0]} / {tot[0]}")
    hdr = page_text("ADOBE_2022_10K.pdf", 54)
    assert "2022 2021 2020" in hdr and "2019" not in hdr
    put("t42", None, "p.54 income statement covers fiscal 2022, 2021, 2020 only")


# ------------------------------------------------------------------ DOCX
def gold_docx():
    c = docx_cases()
    put("t10", dnum(c["Siobhan"]["Net Cash Income"][1]), "table 2 (Siobhan), 'Net Cash Income', column 2007")
    ded = {n: dnum(r["Deductions as a % of Gross Income"][1]) for n, r in c.items()}
    best = max(ded, key=ded.get)
    put("t27", best, f"2007 'Deductions as a % of Gross Income' by case: {ded}")
    tl = c["Lorna and Paul"]["Total Liability"]
    put("t36", dnum(tl[0]) - dnum(tl[1]), f"table 5 'Total Liability' 2006 {tl[0]} - 2007 {tl[1]}")


# ------------------------------------------------------------------ PPTX
def gold_pptx():
    (ser,), = slide_charts("bar-chart.pptx", 1)
    put("t19", round(sum(ser[1].values()), 4), f"slide 1 series {ser[0]!r} {ser[1]}")
    charts = slide_charts("aascu.org_workarea_downloadasset.aspx_id=5864.pptx", 7)
    scores = {}
    for _, vals in charts[0]:
        scores.update(vals)
    top3 = sorted(scores, key=scores.get, reverse=True)[:4]
    put("t28", " > ".join(top3[:3]), f"slide 7 top scores {[(k, scores[k]) for k in top3]}")
    (ser,), = slide_charts("aascu.org_workarea_downloadasset.aspx_id=5864.pptx", 9)
    v = ser[1]
    put("t37", round((v["2010"] / v["1995"] - 1) * 100, 4), f"slide 9 {v['1995']} (1995) -> {v['2010']} (2010)")


def main():
    gold_sheets()
    gold_csv()
    gold_filings()
    gold_docx()
    gold_pptx()
    for qid in sorted(GOLD, key=lambda s: int(s[1:])):
        print(f"{qid}\t{GOLD[qid]!r}\t{SHOW[qid]}")
    if "--check" in sys.argv:
        bad = 0
        path = os.path.join(HERE, "tables.jsonl")
        qs = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
        assert {q["id"] for q in qs} == set(GOLD), "ids in tables.jsonl differ from the computed ones"
        for q in qs:
            g = GOLD[q["id"]]
            if q["kind"] == "unanswerable":
                ok = "answer" not in q and g is None
            elif "value" in q and isinstance(g, float):
                ok = abs(q["value"] - g) <= q["tolerance"] / 2 + 1e-9  # stored gold well inside its tolerance
            else:  # text answer: the gold string must satisfy every answer group
                ok = all(any(alt.lower() in str(g).lower() for alt in grp) for grp in q["answer"])
            bad += not ok
            print(("ok  " if ok else "BAD ") + q["id"])
        print(f"{len(qs) - bad} passed, {bad} failed")
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
