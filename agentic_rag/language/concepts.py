"""What a question asks for, as weighted concepts, and the word forms a passage offers to match them.

Question and passage rarely spell a thing the same way: "beta1" and "β1", "BERT-LARGE" and "BERTLARGE",
"pre-train" and "pretraining", "JnJ" and "Johnson & Johnson", "FY2022" and "fiscal 2022", "10,000" and "10000".
Both sides are reduced to sets of forms (stems, joined compounds, Greek letter names, acronym initials,
normalised numbers), and a concept is found when any of its forms is in the passage's set.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agentic_rag.language.text import QUERY_WORDS, STOPWORDS, normalise_number, stem

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ϵ": "epsilon", "ζ": "zeta", "η": "eta",
    "θ": "theta", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho",
    "σ": "sigma", "τ": "tau", "φ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
}
# Verbs and fillers a question needs but an answer rarely repeats ("How many layers make up ...").
_LIGHT = ("make made up use used using have has had get got reach reached achieve achieved employ employed take took "
          "give gave need needed show shown work worked provide provided report reported include included value "
          "values set kind type way called known happen happened exist exists end year "
          # Where in a document, not what it says: "what does the script line say?"
          "line lines sentence sentences paragraph paragraphs passage passages")
LIGHT_WORDS = frozenset(stem(w) for w in re.findall(r"\w+", _LIGHT))
LIGHT_WEIGHT = 0.35
FOCUS_WEIGHT = 1.5  # the thing asked for: "what [share price] ...", "how many [layers] ..."
SPECIFIC_WEIGHT = 1.0
# Tokens, keeping hyphenated compounds and "J&J" together so both their parts and their joined form count.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)+%?|[^\W_]+(?:[-&'’][^\W_]+)*%?", re.UNICODE)
# Periods: "FY2022", "FY22", "Q3", "FY2023Q1", "Q22023", "Q2'2023" (the year is what a passage must hold).
_PERIOD = re.compile(r"^(?:fy)?['-]?(?P<year>\d{4}|\d{2})?['-]?(?:q(?P<q>[1-4]))?['-]?(?P<year2>\d{4})?$")
_PERIOD_WORD = re.compile(r"^(?:q[1-4]|h[12]|fy|ytd|ttm|ltm)$")
# Units and periods a question names but a figure's own line rarely repeats ("in USD millions").
_FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_REFERENCE = re.compile(r"\b(?:figure|fig\.|table|section|sec\.|eq\.|equation|appendix|algorithm|chapter|page|"
                        r"p\.|pp\.|step|line|footnote)\s*$", re.IGNORECASE)
_DOTTED = re.compile(r"\b(?:[A-Za-z]\.){2,}")
_CURRENCY = {"$": "dollar", "€": "euro", "£": "pound"}
_UNITS = frozenset(re.findall(r"\w+", "fy usd eur gbp dollars dollar euros million millions billion billions "
                                     "thousand thousands amount amounts"))
# Common abbreviations and how documents spell them out (each phrase needs all its content words).
_ABBREVIATIONS = {
    "fy": ("fiscal year",), "yoy": ("year over year",), "ytd": ("year to date",), "ttm": ("twelve months",),
    "ltm": ("twelve months",), "usd": ("dollars",), "us": ("united states", "usa"), "usa": ("united states", "us"),
    "uk": ("united kingdom",), "eu": ("european union",), "cogs": ("cost of goods sold", "cost of sales"),
    "sg&a": ("selling general administrative",), "r&d": ("research development",),
    "pp&e": ("property plant equipment",), "eps": ("earnings per share",), "ebit": ("earnings before interest",),
    "ebitda": ("earnings before interest taxes depreciation amortization",),
    "dpo": ("days payable outstanding",), "dso": ("days sales outstanding",),
    "dio": ("days inventory outstanding",), "roa": ("return on assets",), "roe": ("return on equity",),
    "roi": ("return on investment",), "roic": ("return on invested capital",),
    "capex": ("capital expenditures", "purchases of property plant equipment"), "fcf": ("free cash flow",),
    "ocf": ("operating cash flow", "cash provided by operating activities"), "d&a": ("depreciation amortization",),
    "m&a": ("mergers acquisitions",), "gaap": ("generally accepted accounting principles",),
    "bps": ("basis points",), "ceo": ("chief executive officer",), "cfo": ("chief financial officer",),
    "q1": ("first quarter",), "q2": ("second quarter",), "q3": ("third quarter",), "q4": ("fourth quarter",),
    "h1": ("first half",), "h2": ("second half",),
}
# "How [long]", "how [soon]": the word after "how" names the measure asked for; the answer states it ("within 7
# days"), rarely the word itself, so it weighs like a light word.
MEASURES = ("many", "much", "long", "old", "often", "deep", "large", "big", "high", "far", "soon", "fast", "quickly",
            "late", "early", "frequently", "tall", "wide", "heavy", "small", "low")
_HOW_MEASURE = re.compile(rf"\bhow\s+({'|'.join(MEASURES)})\b", re.IGNORECASE)
_WH = re.compile(rf"\b(?:what|which|who|whom|whose|when|where|how(?:\s+(?:{'|'.join(MEASURES)}))?)\s+"
                 r"(?:(?:is|are|was|were|do|does|did|has|have|had|can|will|would)\s+)?"
                 r"(?:(?:the|a|an|its|their|of)\s+)*", re.IGNORECASE)
_PROPER_RUN = re.compile(r"[A-Z][a-z]+(?:\s+(?:&|of)?\s*[A-Z][a-z]+)+")
_NAME_RUN = re.compile(r"[A-Z][\w’'.-]*(?:\s+(?:&|and|of|the)?\s*[A-Z][\w’'.-]*)+")
_IRREGULAR = {"corpora": "corpus", "indices": "index", "matrices": "matrix", "vertices": "vertex",
              "analyses": "analysis", "criteria": "criterion", "phenomena": "phenomenon", "children": "child",
              "people": "person", "women": "woman", "men": "man", "feet": "foot", "teeth": "tooth",
              "mice": "mouse", "geese": "goose", "theses": "thesis", "hypotheses": "hypothesis",
              # the past of verbs that name a statement's rows ("Dividends paid", "Cost of goods sold")
              "paid": "pay", "spent": "spend", "sold": "sell", "bought": "buy"}
# Words of everyday business prose that documents use for one another ("revenue" is mostly "net sales").
_SYNONYM_GROUPS = (("revenue", "sales", "turnover"), ("profit", "earnings", "income"),
                   ("employees", "staff", "headcount", "workforce"), ("cost", "expense"), ("buyback", "repurchase"),
                   ("shareholder", "stockholder"), ("client", "customer"))
_SYNONYMS = {stem(w): {stem(o) for o in group} for group in _SYNONYM_GROUPS for w in group}
# Words ending like agent nouns that are none ("number" is no one who numbs).
_NOT_AGENTS = frozenset(re.findall(r"\w+", "number factor member matter center letter quarter chapter sector winter summer border corner "
                        "silver filter register master monitor mirror render gender tensor vector error anchor "
                        "daughter brother mother father sister transfer offer answer powder ladder"))
_ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                  "eleventh", "twelfth")
_ORDINALS = {**{f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}": w
                for n, w in enumerate(_ORDINAL_WORDS, start=1)},
             **{w: f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}"
                for n, w in enumerate(_ORDINAL_WORDS, start=1)}}
_NUMBER_WORDS = frozenset(re.findall(r"\w+", "one two three four five six seven eight nine ten eleven twelve "
                                            "twenty hundred thousand million billion twice half dozen"))


@dataclass(frozen=True)
class Concept:
    """One thing the question names: its accepted forms, its weight, and whether it is a name or a number."""

    text: str
    forms: frozenset[str]
    weight: float = 1.0
    specific: bool = False  # a name or number: the passage's document must mention it
    focus: bool = False  # among the words right after the question word: what is asked for
    phrases: tuple[frozenset[str], ...] = ()  # spelled-out forms, every word needed ("cogs": cost, goods, sold)

    def met(self, forms: frozenset[str]) -> bool:
        """Whether `forms` (a passage's) hold this concept: one of its forms, or every word of one phrase."""
        return bool(self.forms & forms) or any(p <= forms for p in self.phrases)


def forms_of(text: str) -> frozenset[str]:
    """Every form `text` offers for matching: stems of its content words, joined compounds, Greek letter names,
    normalised numbers, fiscal years, and the initials of its multi-word names ("Johnson & Johnson" -> "jj")."""
    out: set[str] = {word for sign, word in _CURRENCY.items() if sign in text}
    out |= {m.replace(".", "").lower() for m in _DOTTED.findall(text)}  # "U.S." -> "us"
    for token in _TOKEN.findall(_greek_to_names(text)):
        for part_forms in _token_forms(token):
            out.update(part_forms)
    for run in _NAME_RUN.findall(text):
        out |= _initials(run)
    out |= {_ORDINALS[f] for f in out if f in _ORDINALS}  # "3rd Quarter" is the third quarter
    return frozenset(out)


def abbreviated(text: str, forms: frozenset[str]) -> frozenset[str]:
    """The words (casefolded, hyphenated names in their parts) of the multi-word names in `text` that `forms`
    hold by their initials: "frito", "lay", "north", "america" when a table labels its row "FLNA"."""
    out: set[str] = set()
    for run in _NAME_RUN.findall(text):
        for part in {run, *re.split(r"\s+(?:&|and)\s+", run)}:
            if _own_initials(part) & forms:
                out.update(w.casefold() for w in re.findall(r"[^\W_]+", part))
    return frozenset(out)


def _initials(run: str) -> set[str]:
    """The initials a run of capitalised words may be abbreviated by: of the whole run ("Johnson & Johnson" ->
    "jj"), of each name in a list joined by "and" or "&" ("Quaker Foods North America and PepsiCo Beverages North
    America" -> "qfna", "pbna"), and with a hyphenated name's parts counted apart ("Frito-Lay North America" ->
    "fna" and "flna")."""
    return set().union(*(_own_initials(part) for part in {run, *re.split(r"\s+(?:&|and)\s+", run)}))


def _own_initials(name: str) -> set[str]:
    """The initials of one name's capitalised words, and with its hyphenated words' parts counted apart."""
    words = re.findall(r"[A-Z][\w’'.-]*", name)
    pieces = [p for w in words for p in w.split("-") if p[:1].isupper()]
    return {s.lower() for s in ("".join(w[0] for w in words), "".join(p[0] for p in pieces)) if len(s) >= 2}


def query_concepts(question: str) -> tuple[Concept, ...]:
    """The concepts of a question in order, without question words and function words.

    Names and numbers (capitalised words not starting a sentence, acronyms, digits) are `specific`; light verbs
    weigh LIGHT_WEIGHT; the words right after the question word ("what [share price]") weigh FOCUS_WEIGHT.
    Common abbreviations also match their spelled-out forms ("COGS", "FY2022", "Q3", "USD").
    """
    question = _greek_to_names(question)
    focus, runs = _focus_words(question), _joined_names(question)
    for first, second in _adjacent_words(question):  # "BERT large" is also "BERTLARGE", "pre train" "pretrain"
        runs.setdefault(first, set()).add((first + second).lower())
        runs.setdefault(second, set()).add((first + second).lower())
    title_case = _title_case(question)
    measures = {m.lower() for m in _HOW_MEASURE.findall(question)}
    concepts: dict[str, Concept] = {}
    for m in _TOKEN.finditer(question):
        token = m.group(0)
        starts = not question[:m.start()].strip() or question[:m.start()].rstrip()[-1] in ".?!:;"
        specific = _is_specific(token, first=starts, title_case=title_case)
        for part, part_forms in zip(_parts(token), _token_forms(token), strict=True):
            key = _main_form(part) or min(part_forms, default="")  # "J&J" has no word, only initials
            if not key or key in concepts or part.lower() in QUERY_WORDS:
                continue
            short = _ABBREVIATIONS.get(token.lower()) or _ABBREVIATIONS.get(part.lower())
            light = key in LIGHT_WORDS or part.lower() in _UNITS or part.lower() in measures
            # "Q2" may be written "three months ended ...": a period is no name a passage must hold.
            name = specific and not light and not _PERIOD_WORD.match(part.lower())
            # A name can say what is asked for ("what F1 score"); a year or a period cannot.
            is_focus = part.lower() in focus and not light and not (name and _figure_like(part))
            weight = LIGHT_WEIGHT if light else SPECIFIC_WEIGHT if name else FOCUS_WEIGHT if is_focus else 1.0
            forms = part_forms | frozenset(runs.get(part, ()))
            concepts[key] = Concept(part, forms, weight, name, is_focus, _phrases(short))
    return tuple(concepts.values())


def coverage(concepts: Iterable[Concept], forms: frozenset[str], names: frozenset[str] = frozenset(),
             credit: float = 0.0) -> float:
    """Weighted share of `concepts` met in `forms` (0.0 when there are none); a name or number met only in
    `names` (the rest of its passage, say) counts `credit` of its weight."""
    concepts = tuple(concepts)
    total = sum(c.weight for c in concepts)
    if not total:
        return 0.0
    held = sum(c.weight if c.met(forms) else c.weight * credit if c.specific and c.met(names) else 0.0
               for c in concepts)
    return held / total


def near(concepts: Iterable[Concept], text: str, exclude: frozenset[str] = frozenset(), reach: int = 4, *,
         counting: bool = False) -> bool:
    """Whether a quantity (other than those in `exclude`) stands within `reach` words of one of `concepts`:
    "N = 6 identical layers" answers "how many layers"; "(Vaswani et al., 2017) ... layers" does not.
    `counting` ("how many heads"): the quantity comes before the thing counted, as counts are written
    ("8 parallel attention layers, or heads"), or straight after it ("heads: 8", "heads = 8"), so
    "single-head attention is 0.9 BLEU worse" is no count of heads (nor, a cost of this rule, is "the number of
    heads is 8": "X is N" reads both ways, and only the first kind showed up in eval/papers.jsonl).

    Numbers inside formulas ("warmup_steps−1.5", "x^2") and equation numbers ("(3)") are not quantities.
    """
    wanted = frozenset(f for c in concepts for f in c.forms)
    spots, figures = [], []
    for i, m in enumerate(_TOKEN.finditer(text)):
        token = m.group(0)
        if any(wanted & part for part in _token_forms(token)):
            spots.append(i)
        if token[:1].isdigit() and normalise_number(token.rstrip("%")) not in exclude and not _in_formula(text, m):
            figures.append(i)
    if counting:
        return any(0 < i - j <= reach or j - i == 1 for i in spots for j in figures)
    return any(abs(i - j) <= reach for i in spots for j in figures)


def _in_formula(text: str, m: re.Match) -> bool:
    """A number that is no quantity: part of a formula, an equation number "(3)", or a reference ("Table 2")."""
    before = text[max(0, m.start() - 1):m.start()]
    equation_number = text[max(0, m.start() - 1):m.end() + 1] == f"({m.group(0)})" and len(m.group(0)) <= 2
    section = text[m.end():m.end() + 2].startswith(".") and text[m.end() + 1:m.end() + 2].isdigit()  # "3.2.3"
    heading = not text[:m.start()].strip() and bool(re.match(r"\s+[A-Z]", text[m.end():]))  # "5.3 Optimizer"
    return (before in ("−", "^", "·", "×", "*", "/", "_") or equation_number or section or heading
            or bool(_REFERENCE.search(text[max(0, m.start() - 14):m.start()])))


def has_number(text: str, exclude: frozenset[str] = frozenset()) -> bool:
    """Whether `text` states a quantity (digits or a number word) other than those in `exclude`; references
    ("Figure 2", "Section 3.1") and formula parts do not count."""
    found = {normalise_number(m.group(0)) for m in _FIGURE.finditer(text) if not _in_formula(text, m)}
    return bool(found - exclude) or bool(_NUMBER_WORDS & set(re.findall(r"[a-z]+", text.lower())))


def _greek_to_names(text: str) -> str:
    return "".join(GREEK.get(ch, ch) for ch in text) if any(ch in GREEK for ch in text) else text


def _parts(token: str) -> list[str]:
    """'BERT-LARGE' -> ['BERT', 'LARGE']; "J&J's" -> ['J', 'J'] (a possessive is no part of a name)."""
    return [p for p in re.split(r"[-&]", re.sub(r"['’]s$", "", token)) if p]


@functools.lru_cache(maxsize=1 << 16)
def _token_forms(token: str) -> tuple[frozenset[str], ...]:
    """Forms per part of one token; every part of a compound also accepts the joined compound. Remembered:
    passages repeat their words, and retry rounds and the verifier read them again."""
    parts = _parts(token)
    joined = {_main_form("".join(parts))} if len(parts) > 1 else set()
    out = []
    for part in parts:
        main = _main_form(part)
        forms = ({main} | joined | _camel_parts(part) | _SYNONYMS.get(main, set()) | _agent_base(main)) - {""} \
            if main else set()
        low = part.lower().rstrip("%")
        period = _PERIOD.match(low) if low.startswith(("fy", "q")) else None
        if period and any(period.groups()):
            year = period.group("year") or period.group("year2")
            forms |= {year if len(year) == 4 else "20" + year} if year else set()
            forms |= {"q" + period.group("q")} if period.group("q") else set()
        if low.endswith("percent") or low in ("percentage", "rate", "rates") or part.endswith("%"):
            forms |= {"%", "percent"}
        if len(parts) > 1 and all(len(p) == 1 for p in parts):
            forms.add("".join(p.lower() for p in parts))  # "J&J" -> "jj"
        if 2 <= sum(ch.isupper() for ch in part) <= 5 and len(part) <= 5 and part.isalpha():
            forms.add("".join(ch for ch in part if ch.isupper()).lower())  # "JnJ" -> "jj"
        out.append(frozenset(forms))
    return tuple(out)


def _agent_base(stemmed: str) -> set[str]:
    """The verb an agent noun comes from, as `stem` leaves it: 'supplier' -> 'supply' (as 'supplies'),
    'producer' -> 'produc' (as 'produces'), 'investor' -> 'invest', so "who supplies" meets "the supplier"."""
    if len(stemmed) < 6 or not stemmed.isalpha() or stemmed in _NOT_AGENTS:
        return set()
    if stemmed.endswith("ier"):
        return {stemmed[:-3] + "y"}
    if stemmed.endswith(("er", "or")) and stemmed[-3] not in "aeiou":
        return {stemmed[:-2]}
    return set()


def _camel_parts(word: str) -> set[str]:
    """'BooksCorpus' -> {'book', 'corpus'}; 'ImageNet' -> {'image', 'net'}: names built of words match the words."""
    pieces = re.findall(r"[A-Z][a-z]{2,}", word)
    if len(pieces) < 2 or "".join(pieces) != word:
        return set()
    return {_main_form(p) for p in pieces} - {""}


def _main_form(word: str) -> str:
    """The stem of a content word, a normalised number, or '' for a function word."""
    low = re.sub(r"['’]s$", "", word.lower()).rstrip("%")
    if not low:
        return ""
    if low[0].isdigit() and re.fullmatch(r"\d[\d,]*(?:\.\d+)?", low):
        return normalise_number(low)
    if low in STOPWORDS or low.endswith("n't") or (len(low) < 2 and not low.isdigit()):
        return ""
    return stem(_IRREGULAR.get(low, low))


def _is_specific(token: str, *, first: bool, title_case: bool = False) -> bool:
    """A number, an acronym or a word with inner capitals, or a capitalised word not starting a sentence (in a
    question Written In Title Case, capitals say nothing)."""
    if any(ch.isdigit() for ch in token):
        return True
    if token.lower() in STOPWORDS or token.lower() in QUERY_WORDS:
        return False
    inner = sum(ch.isupper() for ch in token[1:]) > 0
    return inner or (not first and not title_case and token[:1].isupper())


def _figure_like(word: str) -> bool:
    return word[:1].isdigit() or bool(_PERIOD.match(word.lower()) and any(ch.isdigit() for ch in word))


def _title_case(question: str) -> bool:
    """Capitalised function words inside a sentence ("What Is The Highest ...") give Title Case away."""
    inner = re.findall(r"(?<=[\w,] )([A-Z][a-z]+)\b", question)
    return sum(w.lower() in STOPWORDS for w in inner) >= 2


def _joined_names(question: str) -> dict[str, set[str]]:
    """Each word of a multi-word name also matches the name written as one word: 'Best Buy' and 'BESTBUY'."""
    out: dict[str, set[str]] = {}
    for m in _PROPER_RUN.finditer(question):
        if m.start() == 0:
            continue
        words = [w for w in re.findall(r"[^\W_]+", m.group(0)) if w.lower() not in ("and", "of", "the")]
        joined = "".join(w.lower() for w in words)
        for w in words:
            out.setdefault(w, set()).add(joined)
    return out


def _adjacent_words(question: str) -> list[tuple[str, str]]:
    """Neighbouring content words ("BERT large", "data set"), which documents may write as one."""
    pairs = re.findall(r"(?=\b([A-Za-z]+)\s+([A-Za-z]+)\b)", question)
    return [(a, b) for a, b in pairs if not {a.lower(), b.lower()} & (STOPWORDS | QUERY_WORDS)]


def _phrases(expansions: tuple[str, ...] | None) -> tuple[frozenset[str], ...]:
    if not expansions:
        return ()
    return tuple(f for f in (frozenset(_main_form(w) for w in e.split()) - {""} for e in expansions) if f)


def _focus_words(question: str) -> set[str]:
    """Up to three content words right after the question word: what the question asks for."""
    m = _WH.search(question.strip())
    if not m or len(question.strip()[:m.start()].split()) > 2:  # "Over how many ...", "Since when ..."
        return set()
    out = []
    for word in re.findall(r"[^\W_]+(?:['’][^\W_]+)*", question.strip()[m.end():]):
        low = re.sub(r"['’]s$", "", word.lower())
        if low in STOPWORDS or low in QUERY_WORDS:
            if out:
                break
            continue  # "how much did [it] cost": skip what stands before the asked-for words
        out.append(low)
        if len(out) == 3:
            break
    return set(out)
