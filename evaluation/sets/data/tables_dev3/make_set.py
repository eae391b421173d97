"""Write tables_dev3.jsonl: 24 questions on statsmodels data files, gold computed with pandas.

    DOCS=DIR .venv/bin/python evaluation/sets/data/tables_dev3/make_set.py   (DIR: see ../statsmodels_csv.py)
"""
import json
import os

import pandas as pd

D = os.environ["DOCS"].rstrip("/") + "/"
c=pd.read_csv(D+'committee.csv'); cc=pd.read_csv(D+'ccard.csv'); el=pd.read_csv(D+'elnino.csv'); su=pd.read_csv(D+'sunspots.csv')
ni=pd.read_csv(D+'nile.csv'); st=pd.read_csv(D+'star98.csv'); he=pd.read_csv(D+'heart.csv'); en=pd.read_csv(D+'engel.csv')
def num(v, nd=2):
    v=float(v); s=f"{v:,.{nd}f}".rstrip('0').rstrip('.') ; return [s, s.replace(',',''), str(round(v,1)) if nd>1 else s]
Q=[]
def add(q, doc, kind, groups, value=None, tol=0.01):
    Q.append({"id": f"t{len(Q)+1:02d}", "question": q, "doc": doc, "kind": kind, "answer": groups, "value": value, "tolerance": tol, "unit": "", "family": "csv"})
r=c.set_index('COMMITTEE')
add("How many subcommittees does the Budget committee have?", "committee.csv", "lookup", [["0", "no subcommittees", "none"]], 0)
w=c.loc[c.STAFF.idxmax()]; add("Which House committee had the largest staff, and how big was it?", "committee.csv", "superlative", [[w.COMMITTEE], num(w.STAFF,0)], float(w.STAFF))
add("How many bills did the Rules committee handle in the 104th Congress?", "committee.csv", "lookup", [num(r.loc['Rules','BILLS104'],0)], float(r.loc['Rules','BILLS104']))
add("What is the average committee size in committee.csv?", "committee.csv", "aggregate", [num(c.SIZE.mean(),1)], float(c.SIZE.mean()), 0.1)
add("What is the average monthly credit card expenditure in ccard.csv?", "ccard.csv", "aggregate", [num(cc.AVGEXP.mean(),2)], float(cc.AVGEXP.mean()), 0.05)
add("What is the highest income among the credit card holders?", "ccard.csv", "superlative", [num(cc.INCOME.max(),2)], float(cc.INCOME.max()))
e=el.set_index('YEAR'); add("What was the El Nino sea surface temperature in March 1952?", "elnino.csv", "lookup", [num(e.loc[1952,'MAR'],2)], float(e.loc[1952,'MAR']))
w=el.loc[el.DEC.idxmax()]; add("Which year had the warmest December sea surface temperature?", "elnino.csv", "superlative", [[str(int(w.YEAR))]], None)
add("What was the average January sea temperature in elnino.csv?", "elnino.csv", "aggregate", [num(el.JAN.mean(),2)], float(el.JAN.mean()), 0.01)
s=su.set_index('YEAR'); add("What was the sunspot activity in 1750?", "sunspots.csv", "lookup", [num(s.loc[1750,'SUNACTIVITY'],1)], float(s.loc[1750,'SUNACTIVITY']))
w=su.loc[su.SUNACTIVITY.idxmax()]; add("Which year had the highest sunspot activity?", "sunspots.csv", "superlative", [[str(int(w.YEAR))], num(w.SUNACTIVITY,1)], float(w.SUNACTIVITY))
add("What was the average yearly sunspot activity?", "sunspots.csv", "aggregate", [num(su.SUNACTIVITY.mean(),2)], float(su.SUNACTIVITY.mean()), 0.05)
n=ni.set_index('year'); add("What was the Nile's flow volume in 1900?", "nile.csv", "lookup", [num(n.loc[1900,'volume'],0)], float(n.loc[1900,'volume']))
w=ni.loc[ni.volume.idxmin()]; add("In which year was the Nile's volume lowest?", "nile.csv", "superlative", [[str(int(w.year))]], None)
add("What is the highest pupil-teacher ratio among the school districts?", "star98.csv", "superlative", [num(st.PTRATIO.max(),2)], float(st.PTRATIO.max()))
add("What is the largest percentage of low-income students in a district in star98.csv?", "star98.csv", "superlative", [num(st.LOWINC.max(),2)], float(st.LOWINC.max()))
add("What was the longest survival time in heart.csv?", "heart.csv", "superlative", [num(he.survival.max(),0)], float(he.survival.max()))
add("What is the average food expenditure in engel.csv?", "engel.csv", "aggregate", [num(en.foodexp.mean(),2)], float(en.foodexp.mean()), 0.05)
add("What is the highest household income in engel.csv?", "engel.csv", "superlative", [num(en.income.max(),2)], float(en.income.max()))
add("How many districts are in star98.csv?", "star98.csv", "aggregate", [[str(len(st))]], float(len(st)), 0)
add("What was the total number of bills across all committees in the 103rd Congress?", "committee.csv", "aggregate", [num(c.BILLS103.sum(),0)], float(c.BILLS103.sum()), 0)
add("How many more staff does the Appropriations committee have than the Budget committee?", "committee.csv", "comparison", [num(r.loc['Appropriations','STAFF']-r.loc['Budget','STAFF'],0)], float(r.loc['Appropriations','STAFF']-r.loc['Budget','STAFF']), 0)
add("What was the highest average monthly credit card expenditure?", "ccard.csv", "superlative", [num(cc.AVGEXP.max(),2)], float(cc.AVGEXP.max()))
add("What is the average teacher salary in star98.csv?", "star98.csv", "aggregate", [num(st.AVSALK.mean(),2)], float(st.AVSALK.mean()), 0.05)
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tables_dev3.jsonl'), 'w') as f:
    for q in Q:
        if q['value'] is None: q.pop('value'); q.pop('tolerance')
        f.write(json.dumps(q)+'\n')
print(len(Q))
