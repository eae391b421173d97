"""Pure text helpers shared by the rule-based and the Gemini paths: terms, sentences, numbers, citations."""

from __future__ import annotations

import math
import re

# Function words in the languages we most expect; they carry no topic, so overlap ignores them.
_STOP = {
    "en": "the a an and or of to in on for with by at from as is are was were be been being it its this that these "
          "those what which who whom whose when where why how do does did done not no yes can could should would "
          "will shall may might must have has had about into over than then there their they them he she his her "
          "we our you your i me my any all some each per vs versus also only just more most other such",
    "de": "der die das und oder ein eine einer eines ist sind war waren wie was wer wo warum welche welcher nicht "
          "mit von zu im in den dem des auf für bei aus",
    "fr": "le la les et ou un une des du de est sont était quel quelle quels quelles qui que quoi où pourquoi "
          "comment ne pas avec pour dans sur au aux ce cette",
    "es": "el la los las y o un una unos unas de del es son era que qué quien quién donde dónde cómo cual cuál "
          "no con para en por al este esta",
    "it": "il lo la gli le e o un una di del della è sono era che chi dove come quale non con per in su",
    "nl": "de het een en of is zijn was wat wie waar waarom hoe welke niet met van voor op in aan",
    "pt": "o a os as e ou um uma de do da é são era que quem onde como qual não com para em por",
}
STOPWORDS = frozenset(w for words in _STOP.values() for w in words.split())
# More function and question words per language, for telling languages apart only: not stopwords (English has
# "hat" and "hay"), and the short lists above share "de", "a", "in" across four languages.
_TELLS = {
    "en": "how many much when which what does did been being these those",
    "de": "viele viel hat haben wird werden wurde wurden auch noch nach über unter zwischen seit sich kann können "
          "dass wann wieviel dieser diese dieses einem",
    "fr": "combien quand ces leur leurs été être ont avoir aussi mais nous vous elle ils elles très entre après "
          "avant depuis selon qu est-ce",
    "es": "cuántos cuántas cuánto cuándo tiene tienen fue han hay también pero entre desde según sobre muy",
    "it": "quanti quante quanto quando ha hanno stato anche ma tra dopo prima secondo molto",
    "nl": "hoeveel wanneer heeft hebben wordt worden werd ook maar tussen sinds na",
    "pt": "quantos quantas quanto quando tem têm foi também mas desde segundo muito",
}
_LANG_WORDS = {lang: frozenset(words.split()) | frozenset(_TELLS.get(lang, "").split())
               for lang, words in _STOP.items()}
# Question words and request verbs: they say what kind of answer is wanted, not what it is about.
_QUERY = ("please tell show give list name explain describe summarize summarise compare comparison find mention "
          "mentions mentioned document documents file files say says said according many much difference "
          "differences between")
QUERY_WORDS = frozenset(_QUERY.split())

_WORD = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?")
# A reader-numbered citation as shown in a finished answer ("[2]", "[1, 3]"); the model's own are [P2] (citations.py).
CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
# A sentence ends at . ! ? before a capital or digit; citations right after the stop stay with their sentence
# ("It rose 5%. [P2] Then ..." -> "It rose 5%. [P2]" | "Then ..."), captured so re.split returns them.
_SENTENCE_END = re.compile(r"(?<=[.!?])((?:\s*(?:\[[^\]\n]{1,40}\]|\([PS][^)\n]{0,40}\)))*)\s+(?=[\"'“(]?[A-Z0-9À-Ý])")


def words(text: str) -> list[str]:
    """Lower-cased words; numbers keep their separators ("1,200.5"); possessives lose their 's."""
    return [re.sub(r"['’]s$", "", w.lower()) for w in _WORD.findall(text)]


def stem(word: str) -> str:
    """A deliberately light English stemmer: 'revenues'/'revenue', 'turbines'/'turbine' meet; 'business' stays."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("xes", "x"), ("ches", "ch"), ("shes", "sh")):
        if word.endswith(suffix):
            word = word[: -len(suffix)] + repl
            break
    else:
        if word.endswith("s") and not word.endswith(("ss", "us", "is")):
            word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def terms(text: str, *, drop_query_words: bool = False) -> list[str]:
    """Stemmed content words of `text`, in order, without function words."""
    out = []
    for w in words(text):
        if w in STOPWORDS or (drop_query_words and w in QUERY_WORDS) or (len(w) < 2 and not w.isdigit()):
            continue
        out.append(stem(w))
    return out


def overlap(query_terms: set[str] | frozenset[str], text: str) -> float:
    """Share of the distinct query terms found in `text` (0.0 when the query has none)."""
    if not query_terms:
        return 0.0
    found = set(terms(text))
    return len(query_terms & found) / len(query_terms)


def normalise_number(raw: str) -> str:
    """'1,200.50' -> '1200.5'; '3.0' -> '3'; signs dropped. Comparable across formats."""
    n = raw.lstrip("+-").replace(",", "")
    if "." in n:
        n = n.rstrip("0").rstrip(".")
    return n or "0"


def numbers(text: str) -> set[str]:
    """Normalised numbers in `text`, ignoring citation markers like [3]."""
    return {normalise_number(m) for m in _NUMBER.findall(CITATION.sub(" ", text))}


_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
# Words that make a year the edge of a span ("since 2019", "from 2019 to 2021"): other years can then answer.
_SPAN = re.compile(r"\b(?:after|before|since|until|till|through|thru|between|from|prior|earlier|later|over|within|"
                   r"past|last|next|onwards?|beyond|up to)\b", re.IGNORECASE)


def years_in(text: str) -> frozenset[str]:
    """The four-digit years 1900-2099 written in `text` ("FY2021" holds 2021)."""
    return frozenset(_YEAR.findall(text))


def asked_years(question: str) -> frozenset[str]:
    """The years a question asks about as points in time ("in 2021", "FY2021 vs FY2020"); none when it names
    none or a span ("since 2019", "before 2020"), where a passage about another year can be the answer."""
    return frozenset() if _SPAN.search(question) else years_in(question)


def sentences(text: str) -> list[str]:
    """Sentences of `text`, wrapped lines joined first (see unwrap); a kept line break ends a sentence."""
    out = []
    for line in unwrap(text).splitlines():
        line = line.strip()
        if line:
            parts = _SENTENCE_END.split(line) + [""]
            pieces = (parts[i] + (parts[i + 1] or "") for i in range(0, len(parts) - 1, 2))
            out.extend(p.strip() for p in pieces if p.strip())
    return out


_SOFT_HYPHENS = re.compile("[\u00ad\ufffe]")
_STRUCTURAL = re.compile(r"^\s*(?:[-*•▪◦]|\d+[.)]|\|)|\|")  # bullets, numbered items, table rows


def unwrap(text: str) -> str:
    """Join lines a PDF wrapped mid-sentence; keep breaks after sentence ends, headings, bullets and table rows.

    Soft hyphens are dropped and "classi-\nfication" is rejoined, so quotes read as the author wrote them.
    """
    lines = [ln.strip() for ln in _SOFT_HYPHENS.sub("", text).splitlines()]
    out: list[str] = []
    for line in lines:
        prev = out[-1] if out else ""
        if not line or not prev or _keeps_break(prev, line):
            out.append(line)
        elif prev.endswith("-") and line[:1].islower():
            out[-1] = prev[:-1] + line
        else:
            out[-1] = f"{prev} {line}"
    return "\n".join(out)


def _keeps_break(prev: str, line: str) -> bool:
    if prev.endswith((".", "!", "?", ":", ";")) or _STRUCTURAL.search(line) or "|" in prev:
        return True
    if _STRUCTURAL.search(prev):  # a list item: its wrapped continuation starts in lower case
        return not line[:1].islower()
    if tabular(prev) or tabular(line):
        return True
    return len(prev.split()) <= 6 and line[:1].isupper()  # a short line before a capital: a heading or a label


_CELL = re.compile(r"^[-+(]?[$€£]?\d[\d,.]*%?\)?$|^[-–—]$")


def tabular(line: str) -> bool:
    """A row of a table a PDF flattened into text: mostly figures ("Net sales $ 4,321 $ 3,900"), no full stop.

    Such lines keep their breaks, so a row is quoted as a row and not as one run-on "sentence" of numbers.
    """
    tokens = [t for t in line.split() if t not in ("$", "€", "£", "%", "·")]
    figures = sum(1 for t in tokens if _CELL.match(t))
    return figures >= 2 and figures * 2 >= len(tokens) and not line.rstrip().endswith(".")


def detect_language(text: str) -> str:
    """ISO 639-1 code of the language whose function words `text` uses most; 'en' when unsure."""
    tokens = words(text)
    best, best_hits = "en", 0
    for lang, vocab in _LANG_WORDS.items():
        hits = sum(1 for t in tokens if t in vocab)
        if hits > best_hits:
            best, best_hits = lang, hits
    return best


def language_of(text: str, least: int = 3) -> str:
    """ISO 639-1 code of `text`'s language by its function words, or '' when fewer than `least` of them say so
    (a short or number-only text, a table): unlike detect_language, never a guess."""
    tokens = [part for token in words(text.lower()) for part in re.split(r"['’]", token) if part]  # l'encodeur
    hits = {lang: sum(1 for t in tokens if t in vocab) for lang, vocab in _LANG_WORDS.items()}
    best = max(hits, key=hits.get)
    ranked = sorted(hits.values(), reverse=True)
    return best if ranked[0] >= least and ranked[0] > ranked[1] else ""


def estimate_tokens(text: str) -> int:
    """Gemini-ish token estimate (about four characters per token) for budgeting before a call."""
    return math.ceil(len(text) / 4)


def truncate_tokens(text: str, max_tokens: int) -> str:
    """Cut `text` at a word boundary so that estimate_tokens(result) <= max_tokens."""
    limit = max(0, max_tokens * 4)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut[: max(0, limit - 1)] + "…"


_TITLE = r'(?:\s+(?:"[^"\n]*"|\'[^\'\n]*\'))?'
_IMAGE = re.compile(r"(?<!\\)!\[([^\]\n]*)(?<!\\)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\))?[^\s()<>]*)>?" + _TITLE + r"\s*\)")
_LINK = re.compile(r"(?<!\\)\[([^\]\n]+)(?<!\\)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\))?[^\s()<>]*)>?" + _TITLE + r"\s*\)")
_IMAGE_REF = re.compile(r"!\[([^\]\n]*)\]\[([^\]\n]*)\]")
_REF_DEFINITION = re.compile(r"^( {0,3})\[([^\]\n]+)\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto|file|data):[^\s<>]*)>", re.IGNORECASE)


def inert_links(text: str, *, code: bool = True) -> str:
    """Answer text whose Markdown images and links are text with their address in a code span, never a
    picture that loads or a link to follow: `![logo](https://x/?q=…)` becomes "logo (image not loaded:
    `https://x/?q=…`)", `[guide](https://x)` "guide (`https://x`)", `<https://x>` "`https://x`", a reference
    definition `[1]: https://x` "[1]: `https://x`". A document can ask the model to write any of them; the
    chat, the export, the command line and the evaluation page show them this way alike. Citations ([1], [P2])
    are untouched, and so is an escaped bracket (`\\[x\\](y)` is no link). `code=False` leaves the address bare.
    The app's chat shows such Markdown literally instead (`ui.md_safe`): text and address all the same."""
    def address(url: str) -> str:
        return "`" + url.replace("`", "") + "`" if code else url

    text = _IMAGE.sub(lambda m: f"{m.group(1).strip() or 'image'} (image not loaded: {address(m.group(2))})", text)
    text = _IMAGE_REF.sub(lambda m: f"{m.group(1).strip() or 'image'} (image not loaded)", text)
    text = _LINK.sub(lambda m: address(m.group(2)) if m.group(1).strip() == m.group(2)
                     else f"{m.group(1)} ({address(m.group(2))})", text)
    text = _AUTOLINK.sub(lambda m: address(m.group(1)), text)
    return _REF_DEFINITION.sub(lambda m: f"{m.group(1)}[{m.group(2)}]: {address(m.group(3))}", text)
