"""How documents word what questions ask: a small, hand-written vocabulary for expanding keyword queries.

Where it comes from: general knowledge of how the documents people drop are written, not any evaluation set.
Financial filings (10-K, 10-Q, annual reports, earnings releases) report line items under the names of US GAAP /
IFRS statements ("Net cash provided by operating activities", "Selling, general and administrative expenses"),
while people ask for the metrics analysts compute from them ("free cash flow", "operating margin", "capex") or use
their abbreviations ("SG&A", "D&A", "EPS"). Research papers and contracts have the same gap on a smaller scale
("SOTA" against "state-of-the-art results"; "can they cancel" against "Term and Termination").

Each entry maps the ways a question may say something (KEY forms: matched case-insensitively on whole words, and
also after stemming, so "capital expenditures" and "capital expenditure" both match) to the words a document
would use instead (line items, statement and section names, synonyms). A form that documents use as it is
("learning rate", "net income") is not a key of its own: expanding it only adds neighbours' words. Nothing here
is a rule about a particular company or question.

How expansion is weighed (advanced_retrieval.keyword.expansion and BM25Index.search): the expansion words form a second
BM25 query whose scores are added to those of the user's own words, scaled so that (a) an expansion word counts
at most EXPANSION_SHARE of a word the user typed and (b) the whole expansion adds at most EXPANSION_SHARE of the
best score the user's words reach. So the expansion reorders chunks the user's words already rank alike (which
statement, which section) and can never lift a chunk above one that matches the question itself much better.
Only when the user's words match nothing does the expansion search alone.
"""

from __future__ import annotations

# (question forms, document forms). Keep entries general: a metric, an abbreviation, a section.
FINANCE: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("free cash flow", "fcf"),
     ("net cash provided by operating activities", "capital expenditures", "purchases of property and equipment",
      "statements of cash flows")),
    (("capex", "capital expenditure", "capital expenditures", "capital spending", "capital investment"),
     ("capital expenditures", "purchases of property plant and equipment", "additions to property and equipment",
      "payments for property and equipment", "investing activities", "statements of cash flows")),
    # Capital intensity is read from the assets a business needs for its sales (total assets or fixed assets
    # against revenue) as well as from what it spends on them.
    (("capital intensive", "capital intensity"),
     ("capital expenditures", "property plant and equipment net", "total assets", "purchases of property plant and "
      "equipment", "balance sheets", "statements of cash flows")),
    (("operating cash flow", "cash flow from operations", "cash from operations", "cfo"),
     ("net cash provided by operating activities", "operating activities", "statements of cash flows")),
    (("cash flow", "cash flows"), ("statements of cash flows", "operating activities", "investing activities",
                                   "financing activities")),
    (("operating margin", "operating profit margin", "operating profit", "ebit"),
     ("operating income", "income from operations", "net sales", "total revenues", "statements of income")),
    (("gross margin", "gross profit margin", "gross profit"),
     ("gross profit", "cost of sales", "cost of goods sold", "net sales", "statements of income")),
    (("net margin", "net profit margin", "profit margin", "net profit", "profitability", "bottom line"),
     ("net income", "net earnings", "net sales", "total revenues", "statements of income")),
    (("ebitda", "adjusted ebitda"),
     ("operating income", "depreciation and amortization", "net income", "interest expense",
      "provision for income taxes", "non-gaap reconciliation")),
    (("eps", "earnings per share", "diluted eps", "basic eps"),
     ("diluted earnings per share", "basic earnings per share", "net income per share",
      "weighted average shares outstanding")),
    (("d&a", "depreciation", "amortization", "amortisation"),
     ("depreciation and amortization", "depreciation expense", "amortization of intangible assets")),
    (("sg&a", "overhead", "selling expenses"), ("selling general and administrative expenses",)),
    (("cogs", "cost of goods sold", "cost of goods"), ("cost of sales", "cost of revenue", "cost of products sold")),
    (("r&d", "research spending"), ("research and development expenses",)),
    (("revenue", "revenues", "sales", "top line", "turnover"),
     ("net sales", "total revenues", "net revenues", "operating revenues")),
    (("earnings", "profit"), ("net income", "net earnings", "statements of income")),
    (("yoy", "year over year", "year-over-year"), ("compared to prior year", "increase", "decrease")),
    (("income statement", "statement of operations", "statement of earnings", "p&l", "profit and loss"),
     ("consolidated statements of income", "statements of operations", "statements of earnings")),
    (("statement of financial position", "financial position"),
     ("consolidated balance sheets", "total assets", "total liabilities")),
    (("cash flow statement", "statement of cash flows"),
     ("consolidated statements of cash flows", "operating activities", "investing activities")),
    # A full year's figures stand in a release's "Twelve Months Ended" or a filing's "Year Ended" columns.
    (("fy",), ("fiscal year", "twelve months ended", "year ended")),
    (("ytd", "year to date"), ("nine months ended", "six months ended")),
    (("quarter", "quarterly", "q1", "q2", "q3", "q4"), ("three months ended",)),
    (("roa", "return on assets"), ("net income", "total assets", "balance sheets")),
    (("roe", "return on equity"), ("net income", "total shareholders equity", "balance sheets")),
    (("roic", "return on invested capital", "return on capital"),
     ("operating income", "total debt", "shareholders equity", "invested capital")),
    (("working capital",), ("total current assets", "total current liabilities", "balance sheets")),
    (("current ratio", "quick ratio", "liquidity ratio"),
     ("total current assets", "total current liabilities", "cash and cash equivalents", "balance sheets")),
    (("liquidity",), ("liquidity and capital resources", "cash and cash equivalents", "credit facility")),
    (("debt", "leverage", "debt to equity", "borrowings"),
     ("long-term debt", "short-term borrowings", "current portion of long-term debt", "total equity")),
    # A ratio of line items from two statements points to both: turnover and days ratios divide an income
    # statement flow (sales, cost of sales) by a balance sheet stock (inventories, receivables, payables).
    (("interest coverage",), ("interest expense", "operating income", "statements of income")),
    (("inventory turnover", "inventory turns", "days inventory outstanding", "dio"),
     ("inventories", "cost of sales", "balance sheets", "statements of income")),
    (("inventory",), ("inventories", "cost of sales")),
    (("dso", "days sales outstanding", "receivables turnover"),
     ("accounts receivable", "net sales", "balance sheets", "statements of income")),
    (("receivables",), ("accounts receivable", "net sales")),
    (("dpo", "days payable outstanding", "payables turnover"),
     ("accounts payable", "cost of sales", "balance sheets", "statements of income")),
    (("payables",), ("accounts payable", "cost of sales")),
    (("ppe", "pp&e", "fixed assets", "fixed asset"),
     ("property plant and equipment net", "total assets", "balance sheets")),
    (("total assets", "balance sheet"), ("balance sheets", "total assets", "total liabilities and equity")),
    (("dividend", "dividends", "payout ratio", "dividend payout"),
     ("dividends paid", "cash dividends declared per share", "financing activities")),
    (("buyback", "buybacks", "share repurchase", "share repurchases", "stock repurchase"),
     ("repurchases of common stock", "treasury stock", "share repurchase program")),
    (("effective tax rate", "tax rate", "taxes"),
     ("provision for income taxes", "income before income taxes", "effective tax rate")),
    (("segment", "segments", "division", "business unit"),
     ("segment information", "reportable segments", "operating segments")),
    (("goodwill", "impairment"), ("goodwill impairment", "intangible assets")),
    (("restructuring", "layoffs"), ("restructuring charges", "severance")),
    (("stock-based compensation", "sbc", "share-based compensation"),
     ("share-based compensation expense", "stock-based compensation expense")),
    (("m&a", "acquisition", "acquisitions", "acquired"), ("business combinations", "purchase price")),
    (("lease", "leases"), ("operating lease liabilities", "right-of-use assets")),
    (("nii", "net interest income"), ("net interest income", "interest income", "interest expense")),
    (("book value",), ("total shareholders equity",)),
    (("organic growth", "organic sales"), ("organic sales", "excluding acquisitions", "foreign currency")),
    (("guidance", "outlook", "forecast"), ("outlook", "expects", "full year")),
    (("headcount", "employees", "workforce"), ("human capital", "employees")),
    (("lawsuit", "litigation", "legal"), ("legal proceedings", "contingencies")),
    (("auditor", "audit firm"), ("report of independent registered public accounting firm",)),
    (("risks", "risk"), ("risk factors",)),
)

PAPERS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("sota", "state of the art", "best result", "best results"), ("state-of-the-art", "outperforms", "results")),
    (("hyperparameters", "hyperparameter", "training setup"),
     ("training details", "optimizer", "learning rate", "batch size")),
    (("training time", "compute", "gpus", "training cost"), ("hardware and schedule", "training cost", "gpus",
                                                              "hours")),
    (("ablation", "ablations"), ("ablation study", "model variations")),
    (("limitations", "weaknesses"), ("limitations", "future work")),
    (("dataset", "datasets", "training data"), ("datasets", "corpus", "training data")),
    (("model size", "parameters", "number of parameters"), ("layers", "hidden size", "parameters")),
)

CONTRACTS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("cancel", "terminate", "termination", "end the contract"),
     ("term and termination", "notice of termination", "terminate this agreement")),
    (("non-compete", "noncompete", "non compete"), ("non-competition", "restrictive covenants")),
    (("nda", "confidentiality", "secret", "secrets"), ("confidential information", "non-disclosure")),
    (("governing law", "jurisdiction", "which court"), ("governing law", "venue", "jurisdiction")),
    (("indemnify", "indemnity", "indemnification"), ("indemnification", "hold harmless")),
    (("liability cap", "cap on liability", "maximum liability"), ("limitation of liability",)),
    (("payment terms", "fees", "invoice", "invoices"), ("fees and payment", "invoices", "payment terms")),
    (("renewal", "renew", "auto-renew"), ("term", "automatically renew", "renewal term")),
    (("ip", "intellectual property"), ("intellectual property", "ownership", "license grant")),
    (("sla", "uptime"), ("service level agreement", "service levels", "availability")),
    (("warranty", "warranties"), ("representations and warranties", "warranty")),
)

ENTRIES = FINANCE + PAPERS + CONTRACTS

# Document forms above that are the names of statements, notes and sections: what a page is headed by, as opposed
# to a line item or a phrase of the text ("net sales", "three months ended"). advanced_retrieval.query.sections looks
# for these in page headings; general knowledge of how filings, papers and contracts are organised, like the rest.
HEADINGS = frozenset((
    "statements of cash flows", "consolidated statements of cash flows", "statements of income",
    "consolidated statements of income", "statements of operations", "statements of earnings",
    "consolidated balance sheets", "balance sheets", "non-gaap reconciliation", "segment information",
    "liquidity and capital resources", "legal proceedings", "contingencies", "risk factors", "human capital",
    "report of independent registered public accounting firm", "business combinations", "goodwill impairment",
    "share repurchase program", "restructuring charges",
    "ablation study", "model variations", "training details", "hardware and schedule", "limitations",
    "future work", "datasets",
    "term and termination", "restrictive covenants", "non-competition", "non-disclosure", "confidential information",
    "governing law", "indemnification", "limitation of liability", "fees and payment", "service level agreement",
    "representations and warranties", "intellectual property", "license grant",
))

# The names one statement goes by, by company and standard (US GAAP filers title the income statement "Statements
# of Income", "of Operations" or "of Earnings"; IFRS filers and banks say "Statement of Financial Position" or "of
# Condition" for the balance sheet). A page headed by any of them is the statement a question points to.
STATEMENT_NAMES: tuple[frozenset[str], ...] = (
    frozenset(("statements of income", "consolidated statements of income", "statements of operations",
               "statements of earnings", "income statements")),
    frozenset(("balance sheets", "consolidated balance sheets", "statements of financial position",
               "statements of financial condition")),
    frozenset(("statements of cash flows", "consolidated statements of cash flows", "cash flow statements")),
)
