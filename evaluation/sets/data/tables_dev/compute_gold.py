#!/usr/bin/env python
"""Recompute the gold of tables_dev.jsonl from the files in the set's documents.

    python compute_gold.py          # print every recomputed gold value
    python compute_gold.py --check  # compare with tables_dev.jsonl, exit 1 on mismatch

Needs pandas, openpyxl, pdfplumber, python-pptx.
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
JSONL = os.path.join(HERE, "..", "..", "tables_dev.jsonl")

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


# ---------------------------------------------------------------- gold computations
# Each returns a number, or (entity, number) for superlatives, or True for an unanswerable
# item whose absence check passes.
PEP, VZ, KO, WMT, AXP = ("PEPSICO_2022_10K.pdf", "VERIZON_2022_10K.pdf", "COCACOLA_2017_10K.pdf",
                         "WALMART_2018_10K.pdf", "AMERICANEXPRESS_2022_10K.pdf")
BBY, ULTA, MGM = "BESTBUY_2023_10K.pdf", "ULTABEAUTY_2023Q4_EARNINGS.pdf", "MGMRESORTS_2022Q4_EARNINGS.pdf"


def d01():  # AmEx net card fees 2022
    return cell(AXP, 96, "Net card fees", 0)


def d02():  # cars: weight of VW Rabbit Custom Diesel
    c = csv("cars.csv")
    r = c[c.Name == "volkswagen rabbit custom diesel"]
    assert len(r) == 1
    return float(r.Weight_in_lbs.iloc[0])


def d03():  # PepsiCo FLNA+QFNA+PBNA net revenue 2022
    return sum(cell(PEP, 70, lab, 0) for lab in ("FLNA", "QFNA", "PBNA"))


def d04():  # formulae.xlsx Simple Equation
    ws = wb("formulae.xlsx")["Sheet1"]
    assert ws["B4"].value == "Simple Equation"
    return float(ws["A4"].value)


def d05():  # Status code in log table
    return float(kv(pptx_table("2411-Performance_Up.pptx", 17))["Status Code"])


def d06():  # PepsiCo division with highest operating profit 2022
    divs = ("FLNA", "QFNA", "PBNA", "LatAm", "Europe", "AMESA", "APAC")
    return argbest({d: cell(PEP, 70, d, 3) for d in divs})


def d07():  # barley total yield Waseca 1931
    b = csv("barley.csv")
    return float(b[(b.site == "Waseca") & (b.year == 1931)]["yield"].sum())


def d08():  # Verizon Consumer wireless service revenue growth 2022 vs 2021 (2nd 'Consumer' row, p102)
    r = row(VZ, 102, "Consumer", occ=1)
    return pct(r[0], r[1])


def d09():  # charts.xlsx Dates: sum Jan-Sep 2013
    ws = wb("charts.xlsx")["Dates"]
    return float(sum(ws.cell(r, 2).value for r in range(1, 10)))


def d10():  # Ulta new stores opened in fiscal 2022 (sum of quarters)
    return sum(cell(ULTA, 8, f"{q} Quarter", 1) for q in ("1st", "2nd", "3rd", "4th"))


def d11():  # stocks: IBM price Mar 1 2005
    s = csv("stocks.csv")
    r = s[(s.symbol == "IBM") & (s.date == "Mar 1 2005")]
    assert len(r) == 1
    return float(r.price.iloc[0])


def d12():  # Coca-Cola segment with highest operating income 2017 (first block on p143)
    segs = ("Europe, Middle East & Africa", "Latin America", "North America", "Asia Pacific",
            "Bottling Investments", "Corporate")
    vals = row(KO, 143, "Operating income (loss)", 0)[:6]
    return argbest(dict(zip(segs, vals)))


def d13():  # MGM China hotel occupancy Q4 2022 -> absent
    t5, t6 = page_text(MGM, 5), page_text(MGM, 6)
    china_part = t6.split("Unconsolidated Affiliates")[0]
    ok = "MGM China" in t6 and "Occupancy" not in china_part and "MGM China" not in t5
    ok = ok and all("occupancy" not in page_text(MGM, p).lower() for p in range(1, 16) if p != 5)
    return True if ok else False


def d14():  # cars: Japanese 4-cylinder count
    c = csv("cars.csv")
    return float(((c.Origin == "Japan") & (c.Cylinders == 4)).sum())


def d15():  # Walmart Sam's Club operating income change FY2018 vs FY2017 (p86)
    return pct(cell(WMT, 86, "Operating income (loss)", 2, occ=0),
               cell(WMT, 86, "Operating income (loss)", 2, occ=1))


def d16():  # ExcelPivotTableSample Tabelle1 Field2 of y
    ws = wb("ExcelPivotTableSample.xlsx")["Tabelle1"]
    assert ws["E3"].value == "y" and ws["F1"].value == "Field2"
    return float(ws["F3"].value)


def d17():  # Best Buy Appliances revenue Domestic + International FY2023
    return cell(BBY, 63, "Appliances", 0, occ=0) + cell(BBY, 63, "Appliances", 0, occ=1)


def d18():  # iowa renewables 2016
    i = csv("iowa-electricity.csv")
    r = i[(i.source == "Renewables") & (i.year == "2016-01-01")]
    return float(r.net_generation.iloc[0])


def d19():  # Walmart quarter with lowest consolidated net income FY2018
    q = row(WMT, 87, "Consolidated net income", 0)[:4]
    return argbest(dict(zip(("Q1", "Q2", "Q3", "Q4"), q)), min)


def d20():  # stocks: AAPL price January 2012 -> absent
    s = csv("stocks.csv")
    return True if s[(s.symbol == "AAPL") & s.date.str.endswith("2012")].empty and \
        s.date.str.endswith("2012").sum() == 0 else False


def d21():  # Content bytes in log table
    return float(kv(pptx_table("2411-Performance_Up.pptx", 17))["Content Bytes"])


def d22():  # PepsiCo net revenue growth 2022 vs 2021
    r = row(PEP, 62, "Net Revenue")
    return pct(r[0], r[1])


def d23():  # cars: highest MPG
    c = csv("cars.csv")
    i = c.Miles_per_Gallon.idxmax()
    assert (c.Miles_per_Gallon == c.Miles_per_Gallon.max()).sum() == 1
    return c.Name[i], float(c.Miles_per_Gallon[i])


def d24():  # formulae.xlsx: sum of second column of the array-formula block
    ws = wb("formulae.xlsx")["Sheet1"]
    assert ws["A9"].value == "Array Formula"
    return float(sum(ws.cell(r, 2).value for r in range(10, 15)))


def d25():  # Verizon wireless equipment revenues 2022
    return cell(VZ, 54, "Wireless equipment revenues", 0)


def d26():  # Ulta share of net sales from nail products -> absent
    t = page_text(ULTA, 9)
    cats = [l for l in t.splitlines() if re.search(r"\d+%\s+\d+%$", l)]
    return True if "nail" not in t.lower() and len(cats) >= 12 else False


def d27():  # barley: Morris 1932 total minus 1931 total
    b = csv("barley.csv")
    m = b[b.site == "Morris"].groupby("year")["yield"].sum()
    return float(m[1932] - m[1931])


def d28():  # AmEx biggest expense line 2022
    labs = ("Card Member rewards", "Business development", "Card Member services", "Marketing",
            "Salaries and employee benefits", "Other, net")
    return argbest({l: cell(AXP, 96, l, 0) for l in labs})


def d29():  # charts.xlsx Negative: count of values below zero
    ws = wb("charts.xlsx")["Negative"]
    return float(sum(1 for r in ws.iter_rows(values_only=True) if r[0] is not None and r[0] < 0))


def d30():  # Coca-Cola net operating revenues change 2017 vs 2016
    r = row(KO, 74, "NET OPERATING REVENUES")
    return pct(r[0], r[1])


def d31():  # iowa: total generation 2017
    i = csv("iowa-electricity.csv")
    return float(i[i.year == "2017-01-01"].net_generation.sum())


def d32():  # table_test2: Header2 cell of the Lorem row
    rows = pptx_table("table_test2.pptx", 1)
    h = rows[0].index("Header2")
    r = [x for x in rows if x[0] == "Lorem"][0]
    return r[h]


def d33():  # Walmart average quarterly total revenues FY2018 (2nd 'Total revenues' row on p87)
    q = row(WMT, 87, "Total revenues", occ=1)
    return sum(q[:4]) / 4


def d34():  # barley site with lowest average yield
    b = csv("barley.csv")
    m = b.groupby("site")["yield"].mean()
    return m.idxmin(), float(m.min())


def d35():  # ExcelPivotTableSample Tabelle2: date column with larger Summe von Field2
    ws = wb("ExcelPivotTableSample.xlsx")["Tabelle2"]
    assert ws["A7"].value == "Gesamtergebnis"
    d = {ws.cell(4, c).value.date().isoformat(): ws.cell(7, c).value for c in (2, 3)}
    return argbest(d)


def d36():  # MGM Las Vegas Strip net revenues growth, twelve months 2022 vs 2021 (p13)
    r = row(MGM, 13, "Las Vegas Strip Resorts", 0)
    return pct(r[2], r[3])


def d37():  # stocks: MSFT change Jan 2000 -> Jan 2010
    s = csv("stocks.csv").set_index(["symbol", "date"]).price
    return pct(s[("MSFT", "Jan 1 2010")], s[("MSFT", "Jan 1 2000")])


def d38():  # Ulta merchandise inventories Jan 28 2023 (thousands)
    return cell(ULTA, 7, "Merchandise inventories, net", 0)


def d39():  # charts.xlsx Dates: month with highest value
    ws = wb("charts.xlsx")["Dates"]
    best = max(range(1, 10), key=lambda r: ws.cell(r, 2).value)
    return ws.cell(best, 1).value.strftime("%Y-%m"), float(ws.cell(best, 2).value)


def d40():  # response time in log table -> absent
    keys = " ".join(kv(pptx_table("2411-Performance_Up.pptx", 17))).lower()
    return True if not any(w in keys for w in ("time taken", "response time", "duration", "latency")) else False


def d41():  # stocks: month AMZN peaked
    s = csv("stocks.csv")
    a = s[s.symbol == "AMZN"]
    i = a.price.idxmax()
    return a.date[i], float(a.price[i])


def d42():  # MGM Las Vegas Strip ADR change Q4 2022 vs Q4 2021 (p5)
    r = row(MGM, 5, "Average daily rate (ADR)")
    return r[0] - r[1]


def d43():  # Tabelle1: Field2 of z minus Field2 of a
    ws = wb("ExcelPivotTableSample.xlsx")["Tabelle1"]
    assert ws["A2"].value == "a" and ws["E4"].value == "z"
    return float(ws["F4"].value - ws["B2"].value)


def d44():  # iowa renewables 2017 / 2001
    i = csv("iowa-electricity.csv")
    r = i[i.source == "Renewables"].set_index("year").net_generation
    return float(r["2017-01-01"] / r["2001-01-01"])


def d45():  # charts.xlsx Dates: December 2013 -> absent
    ws = wb("charts.xlsx")["Dates"]
    months = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value is not None]
    return True if all(m.month != 12 for m in months) and len(months) == 9 else False


GOLD = {f"d{i:02d}": globals()[f"d{i:02d}"] for i in range(1, 46)}


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
