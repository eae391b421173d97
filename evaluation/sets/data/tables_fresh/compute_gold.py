#!/usr/bin/env python3
"""Recompute every gold value of tables_fresh.jsonl from the files in the set's documents.

usage:  python compute_gold.py            # print id, computed value, detail
        python compute_gold.py --check    # also compare with tables_fresh.jsonl (exit 1 on mismatch)

Needs pandas, openpyxl, pdfplumber, python-docx, python-pptx.
SHARED_DATA=/path/to/shared/data if it is not ../shared/data beside the project.
"""
import io
import json
import os
import re
import sys
import zipfile

import pandas as pd

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
JSONL = os.path.join(HERE, "..", "..", "tables_fresh.jsonl")


def P(name):
    return _find(name)


# ---------------------------------------------------------------- PDF helpers
_pdf_cache = {}


def page_text(doc, page):
    """pdfplumber text of a 1-based page."""
    import pdfplumber
    key = (doc, page)
    if key not in _pdf_cache:
        with pdfplumber.open(P(doc)) as pdf:
            _pdf_cache[key] = pdf.pages[page - 1].extract_text() or ""
    return _pdf_cache[key]


def all_text(doc):
    import pdfplumber
    with pdfplumber.open(P(doc)) as pdf:
        return "\n".join((p.extract_text() or "") for p in pdf.pages)


NUM = re.compile(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?|—|–")


def parse_num(tok):
    tok = tok.replace("$", "").replace(" ", "")
    if tok in ("—", "–", "-"):
        return 0.0
    neg = tok.startswith("(") and tok.endswith(")")
    tok = tok.strip("()").replace(",", "")
    v = float(tok)
    return -v if neg else v


def row(doc, page, label, after=None, ncols=None):
    """Numbers of the first line on `page` that starts with `label`
    (searching only after the first line containing `after`, if given)."""
    lines = page_text(doc, page).splitlines()
    start = 0
    if after is not None:
        start = next(i for i, l in enumerate(lines) if after in l) + 1
    for l in lines[start:]:
        if l.startswith(label):
            rest = l[len(label):]
            nums = [parse_num(t) for t in NUM.findall(rest)]
            if ncols is not None:
                assert len(nums) == ncols, (doc, page, label, l, nums)
            return nums
    raise KeyError((doc, page, label))


# ---------------------------------------------------------------- workbook 49609.xlsx
def load_49609():
    """49609.xlsx is a malformed package (lower-case [content_types].xml, backslash part
    names, lower-case sharedstrings.xml); repack it in memory with the standard names."""
    import openpyxl
    z = zipfile.ZipFile(P("49609.xlsx"))
    fix = {"[content_types].xml": "[Content_Types].xml", "xl/sharedstrings.xml": "xl/sharedStrings.xml"}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for info in z.infolist():
            name = info.filename.replace("\\", "/")
            out.writestr(fix.get(name, name), z.read(info))
    wb = openpyxl.load_workbook(buf, data_only=True)
    frames = {}
    for ws in wb.worksheets:
        rows = list(ws.iter_rows(values_only=True))
        hdr = rows[0][1:]                      # B1 = 'Cycle', C1.. = wells A1..H12
        data = [r[1:] for r in rows[1:] if r[1] is not None]
        df = pd.DataFrame(data, columns=hdr).set_index("Cycle")
        assert df.shape == (38, 96), df.shape
        frames[ws.title] = df
    return frames


_wb = None


def wb():
    global _wb
    if _wb is None:
        _wb = load_49609()
    return _wb


# ---------------------------------------------------------------- docx
def docx_tables():
    import docx
    return docx.Document(P("bug65649.docx")).tables


def ru_num(s):
    return float(s.replace("\xa0", "").replace(" ", "").replace(",", "."))


# ---------------------------------------------------------------- pptx
PPTX = "au.asn.aes.www_conferences_2011_presentations_Fri_20Room4Level4_20930_20Maloney.pptx"


def slide_table(n):
    from pptx import Presentation
    s = Presentation(P(PPTX)).slides[n - 1]
    tabs = [sh.table for sh in s.shapes if sh.has_table]
    assert len(tabs) == 1
    return [[c.text for c in r.cells] for r in tabs[0].rows]


def unique_max(series):
    s = series.sort_values(ascending=False)
    assert s.iloc[0] > s.iloc[1], "winner not unique"
    return s.index[0], s.iloc[0]


def unique_min(series):
    s = series.sort_values()
    assert s.iloc[0] < s.iloc[1], "winner not unique"
    return s.index[0], s.iloc[0]


# ================================================================= gold, one function per id
G = {}


def gold(fid):
    def deco(f):
        G[fid] = f
        return f
    return deco


# ---------------- filings
@gold("f01")
def _():
    # Verizon 2021 segment table: 2021 block comes first; columns Consumer, Business, Total
    v = row("VERIZON_2021_10K.pdf", 98, "Operating Income")
    assert v == [29955, 3437, 33392], v
    return v[1], "Business 2021 operating income"


@gold("f02")
def _():
    v = row("AMERICANWATERWORKS_2022_10K.pdf", 133, "Cash paid for capital expenditures", ncols=3)
    assert v[0] + v[1] == v[2]
    return v[0], "Regulated Businesses 2022 (consolidated %d)" % v[2]


@gold("f03")
def _():
    d = "KRAFTHEINZ_2019_10K.pdf"
    segs = ["United States", "Canada", "EMEA", "Rest of World"]
    vals = [row(d, 107, s, after="Segment Adjusted EBITDA:", ncols=3)[0] for s in segs]
    assert vals == [4809, 487, 661, 363], vals
    return sum(vals), "sum of 2019 Segment Adjusted EBITDA %s" % vals


@gold("f04")
def _():
    d = "BESTBUY_2024Q2_10Q.pdf"
    dom = row(d, 13, "Computing and Mobile Phones", after="Domestic:", ncols=4)
    intl = row(d, 13, "Computing and Mobile Phones", after="International:", ncols=4)
    assert (dom[0], intl[0]) == (3674, 309)
    return dom[0] + intl[0], "Domestic %d + International %d (three months ended July 29, 2023)" % (dom[0], intl[0])


PEP_DIVS = ["FLNA", "QFNA", "PBNA", "LatAm", "Europe", "AMESA", "APAC"]


@gold("f05")
def _():
    d = "PEPSICO_2021_10K.pdf"
    g = {}
    for div in PEP_DIVS:
        v = row(d, 69, div, after="Net Revenue Operating Profit")
        # AMESA/APAC lines carry a footnote marker "(a)"/"(b)", which NUM does not match
        v = v[-6:]
        g[div] = (v[0] / v[1] - 1) * 100
    tot = row(d, 69, "Total division", ncols=6)
    assert tot[0] == 79474
    name, val = unique_max(pd.Series(g))
    assert name == "APAC"
    return round(val, 2), "APAC net revenue 4,615 vs 3,445; runner-up AMESA %.1f%%" % g["AMESA"]


@gold("f06")
def _():
    d = "PEPSICO_2023Q1_EARNINGS.pdf"
    names = ["Frito-Lay North America", "Quaker Foods North America", "PepsiCo Beverages North America",
             "Latin America", "Europe", "Africa, Middle East and South Asia",
             "Asia Pacific, Australia and New Zealand and China Region"]
    op = {n: row(d, 5, n, after="Operating Profit/(Loss)", ncols=2)[0] for n in names}
    name, val = unique_min(pd.Series(op))
    assert name == "Europe"
    return val, "Europe operating profit, 12 weeks ended 3/25/2023"


@gold("f07")
def _():
    v = row("JOHNSON_JOHNSON_2022_10K.pdf", 47, "Net earnings $", ncols=3)
    assert v[:2] == [17941, 20878]
    return round((v[0] / v[1] - 1) * 100, 2), "net earnings 17,941 vs 20,878"


@gold("f08")
def _():
    v = row("CVSHEALTH_2022_10K.pdf", 108, "Premiums", ncols=3)
    assert v[:2] == [85330, 76132]
    return round((v[0] / v[1] - 1) * 100, 2), "premiums 85,330 vs 76,132"


@gold("f09")
def _():
    v = row("Pfizer_2023Q2_10Q.pdf", 8, "Revenues", ncols=4)
    assert v[:2] == [12734, 27742]
    return v[1] - v[0], "three months ended July 2, 2023 vs July 3, 2022"


@gold("f10")
def _():
    d = "AMCOR_2023Q4_EARNINGS.pdf"
    ns = row(d, 8, "Net sales", ncols=4)      # columns: 3M 2022, 3M 2023, 12M 2022, 12M 2023
    gp = row(d, 8, "Gross profit", ncols=4)
    assert (ns[3], gp[3]) == (14694, 2725)
    return round(gp[3] / ns[3] * 100, 2), "gross profit 2,725 / net sales 14,694, twelve months ended June 30, 2023"


@gold("f11")
def _():
    t = all_text("BESTBUY_2024Q2_10Q.pdf")
    assert "July 31, 2021" not in t and "July 31, 2022" not in t
    hdr = page_text("BESTBUY_2024Q2_10Q.pdf", 4)
    assert "July 29, 2023 July 30, 2022 July 29, 2023 July 30, 2022" in hdr
    return None, "only periods ended July 29, 2023 and July 30, 2022 are reported"


@gold("f12")
def _():
    t = page_text("CVSHEALTH_2022_10K.pdf", 108)
    assert "2022 2021 2020" in t
    full = all_text("CVSHEALTH_2022_10K.pdf")
    assert "185,236" not in full          # CVS 2019 product revenues (from its 2019/2020 filings) absent
    return None, "statement covers 2022, 2021, 2020 only"


# ---------------- CSVs
@gold("f13")
def _():
    df = pd.read_csv(P("iowa-electricity.csv"))
    s = df[(df.source == "Nuclear Energy") & (df.year.str.startswith("2012"))].net_generation
    assert len(s) == 1
    return float(s.iloc[0]), "Nuclear Energy, year 2012-01-01 (thousand MWh)"


@gold("f14")
def _():
    df = pd.read_csv(P("burtin.csv"))
    s = df[df.Bacteria == "Salmonella schottmuelleri"].Neomycin
    assert len(s) == 1
    return float(s.iloc[0]), "Neomycin column"


@gold("f15")
def _():
    df = pd.read_csv(P("la-riots.csv"))
    return int((df.type == "Homicide").sum()), "rows with type == 'Homicide'"


@gold("f16")
def _():
    df = pd.read_csv(P("crimea.csv"))
    s = df[df.date.str.startswith("1855")]
    assert len(s) == 12
    return int(s.disease.sum()), "sum of disease, 12 monthly rows of 1855"


@gold("f17")
def _():
    df = pd.read_csv(P("wheat.csv")).set_index("year")
    y, v = unique_max(df.wheat)
    return int(y), "wheat price %.1f" % v


@gold("f18")
def _():
    df = pd.read_csv(P("burtin.csv")).set_index("Bacteria")
    b, v = unique_max(df.Streptomycin)
    assert b == "Streptococcus hemolyticus"
    return float(v), b


@gold("f19")
def _():
    df = pd.read_csv(P("driving.csv")).set_index("year")
    a, b = df.miles[1956], df.miles[2010]
    return round((b / a - 1) * 100, 2), "miles per capita 1956 %d -> 2010 %d" % (a, b)


@gold("f20")
def _():
    df = pd.read_csv(P("driving.csv"))
    assert df.year.min() == 1956 and df.year.max() == 2010 and 2015 not in set(df.year)
    return None, "driving.csv covers 1956-2010"


# ---------------- workbook
@gold("f21")
def _():
    return round(float(wb()["FAM"].loc[20, "D7"]), 2), "FAM sheet, cycle 20 (row 21), well D7 (column AS)"


@gold("f22")
def _():
    return round(float(wb()["VIC"].loc[38].mean()), 2), "mean of VIC row cycle 38 (row 39), 96 wells"


@gold("f23")
def _():
    r = wb()["FAM"].loc[38]
    assert ((r - 5000).abs() > 100).all()      # no reading near the threshold
    return int((r < 5000).sum()), "FAM cycle 38 readings < 5000"


@gold("f24")
def _():
    w, v = unique_max(wb()["FAM"].loc[38])
    assert w == "D6"
    return round(float(v), 2), "well D6"


@gold("f25")
def _():
    f = wb()["FAM"]["A3"]
    return round((f[38] / f[1] - 1) * 100, 2), "A3: %.2f -> %.2f" % (f[1], f[38])


@gold("f26")
def _():
    for df in wb().values():
        assert df.index.max() == 38
    return None, "cycles 1-38 only"


# ---------------- docx
@gold("f27")
def _():
    t = docx_tables()[11]                   # 'Спецификация оборудования' (Приложение № 2.2)
    rows = [[c.text for c in r.cells] for r in t.rows]
    hit = [r for r in rows if r[1] == "Модуль газового пожаротушения"]
    assert len(hit) == 1 and rows[0][5].startswith("Цена за единицу без НДС")
    return ru_num(hit[0][5]), "row 2.1, qty %s, sum %s" % (hit[0][4], hit[0][6])


@gold("f28")
def _():
    t = docx_tables()[11]
    rows = [[c.text for c in r.cells] for r in t.rows]
    items = {r[1].strip(): ru_num(r[6]) for r in rows if r[0].startswith("3.") and r[0] != "3."}
    assert len(items) == 19
    total = next(ru_num(r[6]) for r in rows if r[1] == "Итого по системе СВН:")
    assert abs(sum(items.values()) - total) < 0.01
    name, v = unique_max(pd.Series(items))
    assert name == "Видеокамера тип 2"
    return v, name


@gold("f29")
def _():
    t = docx_tables()[6]                    # 'Расчет начальной (максимальной) цены контракта'
    rows = [[c.text for c in r.cells] for r in t.rows]
    apt = [r for r in rows if r[0] == "1.2."]
    assert [r[3] for r in apt] == ["226", "310"]
    a226, a310 = ru_num(apt[0][7]), ru_num(apt[1][7])
    return round(a226 - a310, 2), "АПТ 226 %.2f - 310 %.2f" % (a226, a310)


# ---------------- pptx
@gold("f30")
def _():
    t = slide_table(20)
    purpose = dict((r[0], r[1]) for r in t)["Purpose"]
    assert purpose == "Formative and summative evaluations over three years"
    return None, purpose


@gold("f31")
def _():
    t = slide_table(10)
    aud = dict((r[0], r[1]) for r in t)["Audience"]
    assert aud.split("\n") == ["Managers", "Frontline staff"]
    return None, aud.replace("\n", "; ")


@gold("f32")
def _():
    traits = [r[0] for s in (22, 23) for r in slide_table(s)[1:]]
    assert traits == ["Simple", "Concrete", "Unexpected", "Credible", "Emotional", "Stories"]
    return len(traits), ", ".join(traits)


# ================================================================= main
def main():
    check = "--check" in sys.argv
    recs = {}
    if check:
        with open(JSONL, encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                recs[r["id"]] = r
        assert sorted(recs) == sorted(G), "ids differ between jsonl and gold script"
    ok = bad = 0
    for fid in sorted(G):
        try:
            val, detail = G[fid]()
            err = None
        except Exception as e:  # noqa
            val, detail, err = None, "", "%s: %s" % (type(e).__name__, e)
        status = ""
        if check:
            r = recs[fid]
            problems = []
            if err:
                problems.append(err)
            if r["kind"] == "unanswerable":
                if "answer" in r or r.get("value") is not None:
                    problems.append("unanswerable record carries an answer/value")
            else:
                if not r.get("answer"):
                    problems.append("no answer groups")
                if val is not None:
                    if r.get("value") is None or abs(float(r["value"]) - float(val)) > 1e-6:
                        problems.append("value %r != gold %r" % (r.get("value"), val))
                else:
                    # text answer: every group must have an alternative found in the gold cell text
                    for grp in r.get("answer", []):
                        if not any(a.lower() in detail.lower() for a in grp):
                            problems.append("group %r not in gold text %r" % (grp, detail))
                if r["kind"] == "superlative":
                    # the winner's name (first group) must be what the gold computation found
                    hay = (detail + " " + str(val)).lower()
                    if not any(a.lower() in hay for a in r["answer"][0]):
                        problems.append("winner group %r not in %r" % (r["answer"][0], hay))
            status = "OK" if not problems else "MISMATCH " + "; ".join(problems)
            if problems:
                bad += 1
            else:
                ok += 1
        elif err:
            status = "ERROR " + err
        print("%s\t%s\t%s\t%s" % (fid, val, detail, status))
    if check:
        print("%d passed, %d failed" % (ok, bad))
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
