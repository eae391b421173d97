"""How a question's words meet a table's names: headers written as identifiers ("Miles_per_Gallon",
"netGeneration"), their initials ("mpg"), and a value named by a word derived from it ("Japan" by "Japanese",
"Europe" by "European", "Canada" by "Canadian", "Renewables" by "renewable").

Derivation is checked by ending, not by similarity: a shared beginning counts only when what is left of each word
is an ending that derives one from the other (a plural, a demonym, an adjective), so "state" never meets
"statement" and "net" never meets "network".
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentic_rag.language.concepts import forms_of

_DERIVED = frozenset({"", "s", "es", "ese", "an", "ian", "ean", "n", "ish", "ic", "al", "i", "er", "ers"})
_DROPPED = frozenset({"", "a", "e", "y", "s"})  # what the base word may lose before its ending ("Canad|a")
_MIN_STEM = 4
_SMALL = frozenset({"of", "and", "the", "a", "an", "in", "on", "for", "to"})


def identifier_text(name: str) -> str:
    """A header written as an identifier, as words: 'Miles_per_Gallon' -> 'Miles per Gallon',
    'netGeneration' -> 'net Generation'."""
    text = re.sub(r"[_]+", " ", name)
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)


@lru_cache(maxsize=4096)
def name_forms(name: str) -> frozenset[str]:
    """The forms a header or value offers: those of its words, the initials of a name of two words or more
    ('Miles per Gallon' -> 'mpg'), and, for a header written as an identifier, its short words as truncations
    ('pop', 'lifeExp': TRUNCATED + 'pop', 'exp'; see `meets`)."""
    text = identifier_text(name)
    words = [w for w in re.findall(r"[A-Za-z]+", text)]
    initials = "".join(w[0] for w in words).lower() if len(words) >= 2 else ""
    short = {TRUNCATED + w.lower() for w in words if (_IDENTIFIER.fullmatch(name.strip()) or _CAPS.fullmatch(name.strip()))
             and _MIN_CUT <= len(w) <= _MAX_CUT and w.lower() not in _SMALL | _NOT_CUT}
    month = MONTH_NAMES.get(name.strip().lower().rstrip("."))  # a month's column: "MAR", "Sept"
    return forms_of(text) | ({initials} if len(initials) >= 2 else set()) | short | joined(name) | \
        (forms_of(month) if month else frozenset())


MONTH_NAMES = {m[:3]: m for m in ("january", "february", "march", "april", "may", "june", "july", "august",
                                   "september", "october", "november", "december")} | {"sept": "september"}


def joined(word: str) -> frozenset[str]:
    """A header written as words run together, in one case ("realgdp", "tbilrate", "TOTEMP", "STACKLOSS"), as a
    form `meets` splits into the question's words (see `_split`); none for anything else."""
    word = word.strip()
    return frozenset({JOINED + word.lower()}) if _JOINED.fullmatch(word) and len(word) >= 5 else frozenset()


# A header written as an identifier (a CSV's "pop", "lifeExp", "gdpPercap", "sepal_len"): one token, in lower case
# or joined by "_" or a capital inside. Its short words may be cut from the word a question writes in full ("pop":
# population, "exp": expectancy): a question's word of three letters more that starts with one meets it.
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*|[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")
TRUNCATED = "~"
_CAPS = re.compile(r"[A-Z][A-Z0-9]*")  # a header in capitals ("POP", "UNEMP"): its short words may be cut too
# Words run together in one case, as data files name their columns ("realgdp": real GDP; "tbilrate": Treasury bill
# rate; "TOTEMP": total employment; "GNPDEFL": GNP deflator; "AIRFLOW"): met when the question's words, each cut
# to its start (three letters at least) or, at most twice, to its initial, spell it in two pieces or more.
JOINED = "+"
_JOINED = re.compile(r"[a-z]{4,24}\d{0,4}|[A-Z]{4,24}\d{0,4}")  # "BILLS104": bills of the 104th (Congress)
_ORDINAL_END = re.compile(r"(?:st|nd|rd|th)?")
_MIN_PIECE, _MAX_INITIALS = 3, 2
_NOT_CUT = frozenset({"per", "from", "with", "into", "over", "than", "all"})
_MIN_CUT, _MAX_CUT, _CUT_BY = 3, 5, 3


def derived(a: str, b: str) -> bool:
    """Whether two lower-case words are one word and a derivation of it ('japan', 'japanese')."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) < _MIN_STEM:
        return False
    common = 0
    for x, y in zip(short, long_, strict=False):
        if x != y:
            break
        common += 1
    rest_short, rest_long = short[common:], long_[common:]
    return common >= _MIN_STEM and ((rest_short in _DROPPED and rest_long in _DERIVED)
                                    or (rest_long in _DROPPED and rest_short in _DERIVED))


def bases(word: str) -> tuple[str, ...]:
    """`word` and the words it may derive from by one ending ('european' -> 'europe'; 'canadian' -> 'canada';
    'japanese' -> 'japan'), the ones `derived` accepts."""
    out = [word]
    for ending in sorted(_DERIVED - {""}, key=len, reverse=True):
        if word.endswith(ending):
            stem = word[:-len(ending)]
            out += [stem + lost for lost in sorted(_DROPPED - {"s"}) if derived(stem + lost, word)]
    return tuple(dict.fromkeys(out))


def meets(asked: frozenset[str], forms: frozenset[str]) -> frozenset[str]:
    """The forms of `forms` that a form of `asked` is, or derives from, or (an identifier's short word) is cut
    from ("pop" from "population")."""
    return frozenset(f for f in forms if f in asked or any(derived(f, a) for a in asked if a[:2] == f[:2])
                     or (f[:1] == TRUNCATED and any(_cut_from(f[1:], a) for a in asked))
                     or (f[:1] == JOINED and _split(f[1:], asked)))


def _split(joined: str, asked: frozenset[str]) -> bool:
    """Whether `joined` is two or more of the question's words (their forms), each once, in pieces: a word whole,
    its start of three letters or more ("tot" of total, "emp" of employment), the word of a form cut shorter
    ("rate" of "rat"), a contraction ("avg" of average), a number ("104" of "104th") or, at most twice, an initial
    ("t" of treasury); a first piece may be two letters of a long word ("AV" of average) and a last "k" says
    thousands ("AVSALK": average salary, in thousands). Two pieces at least are no initials, or the initials are written together ("PTRATIO":
    pupil-teacher ratio), or one initial begins it ("ccard": credit card); "surviva" + "l" of longest is no split
    of "survival"."""
    words = tuple(sorted(a for a in asked if a.isalnum() and len(a) >= 2 or a.isdigit()))
    return bool(words) and _pieces(joined, words)


@lru_cache(maxsize=8192)
def _pieces(rest: str, words: tuple[str, ...], kinds: str = "") -> bool:
    """Whether `rest` splits into pieces each met by one of `words` (each used once); `kinds` are the pieces so
    far: "w" a word or its start, "c" a contraction, "t" a first piece of two letters, "i" an initial, "u" a unit."""
    if rest == "k" and "w" in kinds:  # "AVSALK": average salary, in thousands (a unit, no word of the question)
        rest, kinds = "", kinds + "u"
    if not rest:
        solid = sum(kinds.count(k) for k in "wct")
        initials = re.findall(r"i+", kinds)
        # two-letter starts and contractions together spell too much ("se" of setosa + "pal" of petal: "sepal")
        return ("t" not in kinds or "c" not in kinds) and (
            solid >= 2 or solid >= 1 and len(initials) == 1 and len(initials[0]) >= 2
            or bool(re.fullmatch(r"i[wct]+u?", kinds)))  # "ccard": credit card
    for word in words:
        # each word once, and its other forms with it ("percentag" and "percent" are one word of the question)
        others = tuple(w for w in words if w != word and w[:4] != word[:4])
        for size in range(len(rest), 0, -1):
            piece = rest[:size]
            if piece.isdigit() or word[0].isdigit():  # a number: the question's, or its ordinal ("104th")
                if not (piece.isdigit() and word.startswith(piece) and _ORDINAL_END.fullmatch(word[size:])):
                    continue
                kind = "w"
            elif size == 1:
                if kinds.count("i") >= _MAX_INITIALS or word[0] != piece:
                    continue
                kind = "i"
            elif size == 2 and not kinds and len(rest) > 2 and len(word) >= 5 and word.startswith(piece):
                kind = "t"  # a first piece of two letters cut from a long word: "AV" of average in "AVSALK"
            elif piece == word or size >= _MIN_PIECE and (word.startswith(piece) or piece.startswith(word)
                                                          and len(word) >= _MIN_PIECE and size - len(word) <= 2):
                kind = "w"
            elif size >= _MIN_PIECE and _contraction(piece, word):
                kind = "c"
            else:
                continue
            if _pieces(rest[size:], others, kinds + kind):
                return True
    return False


def _contraction(piece: str, word: str) -> bool:
    """Whether `piece` is `word` written short by leaving letters out: its first letter, then others in order
    ("avg" of average, "govt" of government, "yrs" of years), the word two letters longer at least and at most
    two and a half times as long ("per" is no contraction of "pupilteacher")."""
    if piece[0] != word[0] or not len(piece) + 2 <= len(word) <= 2.5 * len(piece) or not word.isalpha():
        return False
    letters = iter(word[1:])
    return all(ch in letters for ch in piece[1:])


def _cut_from(short: str, word: str) -> bool:
    """Whether `short` is the beginning of `word`, cut by three letters at least ('pop', 'population')."""
    return word.startswith(short) and len(word) >= len(short) + _CUT_BY and word.isalpha()


def named_by(asked: frozenset[str], value: str) -> bool:
    """Whether the question names a cell value: every content word of it is met (at least one not small)."""
    words = frozenset(w.lower() for w in re.findall(r"[A-Za-z0-9]+", identifier_text(value))) - _SMALL
    if not words:
        return False
    return all(w in asked or any(derived(w, a) for a in asked if a[:2] == w[:2]) for w in words)


_CODE = re.compile(r"[A-Z]{3,5}")
_NAME_WORD = re.compile(r"(?<=\s)[A-Z][a-z]{3,}")  # a capitalised word, not the sentence's first


def contracted(text: str, value: str) -> bool:
    """Whether a cell value is a code printed as a contraction of a name the question writes ("MSFT" for
    Microsoft, "AMZN" for Amazon, "AAPL" for Apple, "GOOG" for Google; see `contracts`). The name must be written
    capitalised, not as a sentence's first word."""
    return any(contracts(word, value) for word in _NAME_WORD.findall(text))


def contracts(word: str, value: str) -> bool:
    """Whether `value` is three to five capitals that are the first letter of `word` (a longer, capitalised
    word) and others of its letters in order, a doubled letter read once."""
    code = value.strip()
    if not _CODE.fullmatch(code) or not re.fullmatch(r"[A-Z][a-z]+", word) or len(word) <= len(code):
        return False
    short, long_ = (re.sub(r"(.)\1+", r"\1", w.lower()) for w in (code, word))
    if long_[0] != short[0]:
        return False
    letters = iter(long_[1:])
    return all(ch in letters for ch in short[1:])


# The noun a measure adjective names ("the widest sepals": the width; "the oldest": the age), for headers that
# write the noun ("sepalWidth", "Age"). English derivation, not a thesaurus: only these dimensions.
_MEASURE_NOUNS = {"wide": "width", "long": "length", "high": "height", "tall": "height", "deep": "depth",
                  "heavy": "weight", "light": "weight", "old": "age", "young": "age", "broad": "breadth",
                  "thick": "thickness", "strong": "strength", "fast": "speed", "slow": "speed"}


def _degrees(adjective: str) -> tuple[str, ...]:
    """'wide' -> wide, wider, widest; 'heavy' -> heavier, heaviest; 'big' -> bigger, biggest."""
    if adjective.endswith("e"):
        return adjective, adjective + "r", adjective + "st"
    if adjective.endswith("y"):
        return adjective, adjective[:-1] + "ier", adjective[:-1] + "iest"
    return adjective, adjective + "er", adjective + "est"


_MEASURE_WORDS = {form: noun for adjective, noun in _MEASURE_NOUNS.items() for form in _degrees(adjective)}


def measure_nouns(text: str) -> frozenset[str]:
    """The forms of the nouns the measure adjectives of `text` name ("widest" -> "width")."""
    nouns = " ".join(_MEASURE_WORDS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _MEASURE_WORDS)
    return forms_of(nouns) if nouns else frozenset()


# The noun a verb of business names ("how much did it sell": its sales; "what did it earn": its earnings), for a
# table that prints the noun in its title or labels. English derivation of these verbs only, not a thesaurus.
_VERB_NOUNS = {"sell": "sales", "sold": "sales", "sells": "sales", "earn": "earnings", "earned": "earnings",
               "earns": "earnings", "spend": "spending", "spent": "spending", "produce": "production",
               "produced": "production", "employ": "employees", "employed": "employees", "employs": "employees",
               "invest": "investment", "invested": "investment", "pay": "payments", "paid": "payments",
               "grow": "growth", "grew": "growth", "lose": "loss", "lost": "loss", "ship": "shipments",
               "shipped": "shipments", "deliver": "deliveries", "delivered": "deliveries", "generate": "generation",
               "generated": "generation", "consume": "consumption", "consumed": "consumption",
               "borrow": "borrowings", "borrowed": "borrowings", "acquire": "acquisitions",
               "acquired": "acquisitions", "repurchase": "repurchases", "repurchased": "repurchases"}


def verb_nouns(text: str) -> frozenset[str]:
    """The forms of the nouns the business verbs of `text` name ("sell" -> "sales")."""
    nouns = " ".join(_VERB_NOUNS[w] for w in re.findall(r"[a-z]+", text.lower()) if w in _VERB_NOUNS)
    return forms_of(nouns) if nouns else frozenset()
