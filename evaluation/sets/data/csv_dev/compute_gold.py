#!/usr/bin/env python
"""Recompute the gold of csv_dev.jsonl from the CSV files beside this script.

    python compute_gold.py          # print every recomputed gold value
    python compute_gold.py --check  # compare with csv_dev.jsonl, exit 1 on any mismatch

Needs pandas. Each gold value is the pandas expression written next to its question id below.
"""
import calendar
import json
import os
import sys

import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
SET = os.path.join(HERE, "..", "..", "csv_dev.jsonl")


def gold() -> dict:
    iris = pd.read_csv(os.path.join(HERE, "iris.csv"))
    ohlc = pd.read_csv(os.path.join(HERE, "ohlc.csv"))
    ans = pd.read_csv(os.path.join(HERE, "anscombe.csv"))
    sea = pd.read_csv(os.path.join(HERE, "seattle-temps.csv"))
    sf = pd.read_csv(os.path.join(HERE, "sf-temps.csv"))
    sea["d"], sf["d"] = pd.to_datetime(sea["date"]), pd.to_datetime(sf["date"])
    by_species = iris.groupby("species")
    monthly = sea.groupby(sea.d.dt.month).temp.mean()
    return {
        "m01": by_species.petalLength.mean()["virginica"],
        "m02": (iris.species == "setosa").sum(),
        "m03": by_species.sepalWidth.mean().idxmax(),
        "m04": iris.sepalLength.max(),
        "m05": (iris.petalWidth > 2).sum(),
        "m06": by_species.petalWidth.sum()["versicolor"],
        "m07": ohlc.loc[ohlc.date == "2009-06-15", "close"].iloc[0],
        "m08": ohlc.high.max(),
        "m09": ohlc.loc[ohlc.close.idxmin(), "date"],
        "m10": (ohlc.signal == "long").sum(),
        "m11": ohlc[ohlc.date.str.startswith("2009-06")].close.mean(),
        "m12": ohlc.loc[ohlc.date == "2009-07-31", "close"].iloc[0] - ohlc.loc[ohlc.date == "2009-06-01", "close"].iloc[0],
        "m13": ans[ans.Series == "III"].Y.mean(),
        "m14": (ans.Series == "IV").sum(),
        "m15": sea.temp.max(),
        "m16": sea[sea.d.dt.month == 7].temp.mean(),
        "m17": None,  # unanswerable: the file has no volume column
        "m18": by_species.petalLength.mean()[["setosa", "versicolor"]].idxmax(),
        "n01": list(ohlc.close.nlargest(3)),
        "n02": iris.species.nunique(),
        "n03": iris[iris.species == "setosa"].sepalWidth.min(),
        "n04": ohlc[ohlc.signal == "short"].ret.mean(),
        "n05": (ohlc.close > 30).sum(),
        "n06": sf[sf.d.dt.month == 1].temp.min(),
        "n07": calendar.month_name[monthly.idxmax()],
        "n08": by_species.petalLength.mean()["virginica"] - by_species.petalLength.mean()["setosa"],
        "n09": ohlc[ohlc.date.str.startswith("2009-07")].ret.sum(),
        "n10": (sea.temp < 38).sum(),
        "n11": ohlc.loc[ohlc.ret.idxmax(), "date"],
        "n12": sf.temp.mean() - sea.temp.mean(),
    }


def _matches(value, answer) -> bool:
    """Whether a recomputed value is what the set's answer groups say (numbers to the printed decimals)."""
    if value is None:
        return answer is None
    values = value if isinstance(value, list) else [value]
    for v, group in zip(values, answer, strict=False):
        if isinstance(v, str):
            if not any(v.lower() in g.lower() or g.lower() in v.lower() for g in group):
                return False
        elif not any(abs(float(v) - float(g.replace(",", ""))) < 10 ** -(len(g.split(".")[1]) if "." in g else 0) / 2 + 1e-9
                     for g in group if g.replace(",", "").replace(".", "").lstrip("-").isdigit()):
            return False
    return True


def main() -> int:
    values = gold()
    records = [json.loads(line) for line in open(SET, encoding="utf-8")]
    bad = 0
    for r in records:
        v = values[r["id"]]
        ok = _matches(v, r.get("answer"))
        bad += not ok
        if "--check" not in sys.argv or not ok:
            print(r["id"], v, r.get("answer"), "" if ok else "MISMATCH")
    return 1 if bad and "--check" in sys.argv else 0


if __name__ == "__main__":
    sys.exit(main())
