"""Recompute every gold value (and superlative winner) of tables_fresh3.jsonl
from docs/*.csv with pandas. Prints one line per question; exits 1 on any mismatch.

Usage: DOCS=DIR python compute_gold.py [path/to/tables_fresh3.jsonl]  (DIR: see ../statsmodels_csv.py)
"""
import json
import math
import os
import re
import sys

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.environ.get("DOCS", os.path.join(HERE, "docs"))  # where statsmodels_csv.py put the files


def load(name):
    return pd.read_csv(os.path.join(DOCS, name))


g = load("grunfeld.csv")
f = load("fair.csv")
s = load("stackloss.csv")
c = load("copper.csv")
p = load("cpunish.csv")
v = load("scotvote.csv")

# structure guards
assert g.shape == (220, 5) and g.groupby("firm").size().eq(20).all() and g.firm.nunique() == 11
assert f.shape == (6366, 9) and s.shape == (21, 4) and c.shape == (25, 7)
assert p.shape == (17, 8) and v.shape == (32, 9)


def one(df, mask, col):
    rows = df.loc[mask, col]
    assert len(rows) == 1, f"expected one row, got {len(rows)}"
    return float(rows.iloc[0])


def argbest(df, col, label, how="max", mask=None):
    """Winner label(s) and value; asserts the winner is unique."""
    d = df if mask is None else df[mask]
    best = d[col].max() if how == "max" else d[col].min()
    win = d[d[col] == best]
    assert len(win) == 1, f"tie for {how} of {col}: {win}"
    lab = [win[x].iloc[0] for x in label] if isinstance(label, list) else win[label].iloc[0]
    return lab, float(best)


gold = {}  # id -> (value, entity strings that must match an alternative of answer groups)

# lookups
gold["g01"] = (one(g, (g.firm == "IBM") & (g.year == 1950), "invest"), [])
gold["g02"] = (one(c, c.YEAR == 1966, "WORLDCONSUMPTION"), [])
gold["g03"] = (one(p, p.STATE == "Virginia", "INCOME"), [])
gold["g04"] = (one(v, v.COUNCILDIST == "Glasgow_City", "YES"), [])
gold["g05"] = (one(s, s.AIRFLOW == 75, "STACKLOSS"), [])
gold["g06"] = (one(g, (g.firm == "US Steel") & (g.year == 1940), "value"), [])
gold["g07"] = (one(c, c.YEAR == 1973, "ALUMPRICE"), [])
gold["g08"] = (one(p, p.STATE == "Louisiana", "PERBLACK"), [])

# aggregates
gold["g09"] = (float((f.rate_marriage == 1).sum()), [])
gold["g10"] = (float(f.yrs_married.mean()), [])
gold["g11"] = (float(g.loc[g.firm == "General Motors", "invest"].sum()), [])
assert sorted(g.loc[g.firm == "General Motors", "year"]) == list(range(1935, 1955))
gold["g12"] = (float(s.STACKLOSS.mean()), [])
m = c.YEAR.between(1960, 1969)
assert m.sum() == 10
gold["g13"] = (float(c.loc[m, "COPPERPRICE"].mean()), [])
assert not (v.YES == 65).any()
gold["g14"] = (float((v.YES > 65).sum()), [])
gold["g15"] = (float(p.loc[p.SOUTH == 1, "EXECUTIONS"].sum()), [])
gold["g16"] = (float(f.loc[f.rate_marriage == 5, "affairs"].mean()), [])

# superlatives
lab, val = argbest(g, "capital", "firm", "max", g.year == 1935)
gold["g17"] = (val, [lab])
lab, val = argbest(g, "invest", ["firm", "year"], "min")
gold["g18"] = (val, [lab[0], str(int(lab[1]))])
lab, val = argbest(c, "COPPERPRICE", "YEAR", "max")
gold["g19"] = (val, [str(int(lab))])
lab, val = argbest(p, "VC100k96", "STATE", "max")
gold["g20"] = (val, [lab])
lab, val = argbest(v, "COUTAX", "COUNCILDIST", "max")
gold["g21"] = (val, [lab.replace("_City", "").replace("_", " ")])
lab, val = argbest(s, "STACKLOSS", "AIRFLOW", "max")
gold["g22"] = (val, [str(int(lab))])
occ = f.groupby("occupation")["affairs"].mean()
assert (occ == occ.max()).sum() == 1
OCC = {1: "student", 2: "farming", 3: "white-collar", 4: "teacher", 5: "managerial", 6: "professional"}
gold["g23"] = (float(occ.max()), [OCC[int(occ.idxmax())]])

# comparisons
gm = one(g, (g.firm == "General Motors") & (g.year == 1954), "invest")
ge = one(g, (g.firm == "General Electric") & (g.year == 1954), "invest")
gold["g24"] = (gm - ge, [])
gold["g25"] = ((one(c, c.YEAR == 1975, "WORLDCONSUMPTION") / one(c, c.YEAR == 1951, "WORLDCONSUMPTION") - 1) * 100, [])
gold["g26"] = (one(v, v.COUNCILDIST == "Glasgow_City", "YES") - one(v, v.COUNCILDIST == "Edinburgh_City", "YES"), [])
gold["g27"] = (one(p, p.STATE == "Maryland", "INCOME") - one(p, p.STATE == "Arkansas", "INCOME"), [])
assert p.INCOME.max() == one(p, p.STATE == "Maryland", "INCOME")
assert p.INCOME.min() == one(p, p.STATE == "Arkansas", "INCOME")

# unanswerable: assert the thing asked for is really absent
UNANS = {
    "g28": lambda: "Ford" not in set(g.firm) and not g.firm.str.contains("Ford").any(),
    "g29": lambda: 1980 not in set(c.YEAR) and c.YEAR.max() == 1975,
    "g30": lambda: not any("TURN" in col.upper() or "VOTE" in col.upper() for col in v.columns),
}

NUM = re.compile(r"^-?[\d,]*\.?\d+$")


def check_strings(rec, val):
    """Every purely numeric alternative must round-trip to the value."""
    errs = []
    for grp in rec["answer"]:
        for alt in grp:
            if NUM.match(alt):
                x = float(alt.replace(",", ""))
                dec = len(alt.split(".")[1]) if "." in alt else 0
                slack = rec["tolerance"] + 0.5 * 10 ** (-dec) + 1e-9
                # a number group may instead hold a year or a companion value (superlatives)
                if abs(x - val) > slack and rec["kind"] != "superlative":
                    errs.append(f"alt {alt!r} far from {val}")
    return errs


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "tables_fresh3.jsonl")
    recs = [json.loads(line) for line in open(path) if line.strip()]
    ids = [r["id"] for r in recs]
    assert ids == [f"g{i:02d}" for i in range(1, 31)], ids
    bad = 0
    for r in recs:
        rid = r["id"]
        errs = []
        assert os.path.exists(os.path.join(DOCS, r["doc"])), r["doc"]
        if r["kind"] == "unanswerable":
            ok = UNANS[rid]()
            for k in ("answer", "value", "tolerance", "unit"):
                if k in r:
                    errs.append(f"unanswerable has {k}")
            if not ok:
                errs.append("asked-for item is present")
            shown = "absent" if ok else "PRESENT"
        else:
            val, ents = gold[rid]
            if r["value"] is None or not math.isclose(val, r["value"], abs_tol=max(r["tolerance"], 1e-9)):
                errs.append(f"value {r['value']} != computed {val:.6g} (tol {r['tolerance']})")
            alts = [a.lower() for grp in r["answer"] for a in grp]
            for e in ents:
                if not any(a in e.lower() or e.lower() in a for a in alts):
                    errs.append(f"entity {e!r} not among answer alternatives")
            if r["kind"] == "superlative":
                # the value must be accepted by one of the answer groups
                num_groups = [grp for grp in r["answer"] if all(NUM.match(a) for a in grp)]
                if not any(abs(float(a.replace(",", "")) - val) <= r["tolerance"] + 0.5 * 10 ** (-(len(a.split(".")[1]) if "." in a else 0)) + 1e-9
                           for grp in num_groups for a in grp):
                    errs.append("no answer group carries the value")
            errs += check_strings(r, val)
            shown = f"{val:.6g}" + (f" [{', '.join(ents)}]" if ents else "")
        status = "OK  " if not errs else "FAIL"
        bad += bool(errs)
        print(f"{status} {rid} {r['kind']:<12} {r['doc']:<14} {shown}" + ("  <- " + "; ".join(errs) if errs else ""))
    print(f"{len(recs) - bad} passed, {bad} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
