"""The tokenizer BM25 uses for documents and queries alike.

Words are lower-cased, NFKC-normalised (PDF ligatures such as "ﬁ" become "fi"), English stopwords are dropped and
what is left is stemmed with Snowball English. Numbers and codes are different: "28.4", "4,000", "10-K", "gpt-4",
"ISO-9001", "A1:F40", "2023-12-31" and "max_tokens" stay whole and unstemmed, because a question about "10-K"
must not match every "10" and "k". A code joined by - : / . also yields its parts ("iso-9001" → "iso", "9001"), so
"ISO 9001" in a question still finds "ISO-9001" in a document, while the whole code scores more when it matches.
Letters glued to digits are split too ("FY2022" → "fy2022", "fy", "2022"), since documents write "fiscal 2022".
Thousands separators are dropped ("4,000" → "4000") so that "$4,000" and "4000" match. Typographic hyphens and
dashes (U+2010-2015, the minus sign U+2212; NFKC leaves them) count as "-": PDFs write "10‑K" with a
non-breaking hyphen and "2019–2023" with an en dash, and questions are typed with "-".
"""

from __future__ import annotations

import re
import threading
import unicodedata
from itertools import chain

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

# Bumped whenever the tokens produced change: stored token ids from another version must then be rebuilt.
TOKENIZER_VERSION = 3

# NLTK's 179 English stopwords (bm25s ships them). Against Lucene's 33, BM25 page hit@8 on 45 questions over 15
# real PDFs rose from 0.60 to 0.67 and MRR from 0.46 to 0.51 (bench/retrieval.py --quality): questions are
# full of "what", "which", "did", "how", which Lucene's list keeps and which then match at random.
STOPWORDS = frozenset(STOPWORDS_EN_PLUS)

# A thousands-grouped number first ("4,000", "1,234.5"), else a run of word characters joined by - : / . ' ’
# (a trailing "." or "-" is punctuation, not part of the token: "in 2022." → "2022").
_TOKEN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|\w+(?:[-:/.'’]\w+)*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)*$")
_CONNECTOR = re.compile(r"[-:/.'’]")
_CODE_PARTS = re.compile(r"[-:/._'’]")
_POSSESSIVE = re.compile(r"['’]s$")
_MIXED = re.compile(r"[^\W\d_]{2,}\d|\d[^\W\d_]{2,}")  # "fy2022", "covid19", "2023fy"; not "a1", "x86", "h2o"
_PIECES = re.compile(r"[^\W\d_]+|\d+")

_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63"})

_local = threading.local()  # PyStemmer objects are not thread-safe: one per thread
# Raw token -> its output tokens. Words repeat (Zipf), so most tokens cost one dict lookup; plain dict get/set
# is atomic under the GIL. Bounded so that a stream of unique numbers cannot grow it without limit.
_memo: dict[str, tuple[str, ...]] = {}
_MAX_MEMO = 1_000_000


def _stem(word: str) -> str:
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english")
    return stemmer.stemWord(word)


def _is_code(token: str) -> bool:
    return "_" in token or any(c.isdigit() for c in token)


def _word(word: str, out: list[str]) -> None:
    """A plain word (no connectors): stopwords and single letters dropped, the rest stemmed."""
    if len(word) < 2 and not word.isdigit():
        return
    if _is_code(word):
        out.append(word)
    elif word not in STOPWORDS:
        out.append(_stem(word))


def _code(token: str, out: list[str]) -> None:
    """A number or code: kept whole; a composite code also gives its parts."""
    if _THOUSANDS.match(token):
        out.append(token.replace(",", ""))
        return
    out.append(token)
    if _NUMBER.match(token):  # "28.4" or "3.11.2": a number, never split into "28" and "4"
        return
    parts = _CODE_PARTS.split(token)
    if len(parts) > 1:
        for part in parts:
            _word(part, out)
    for part in parts:  # "fy2022" also gives "fy" and "2022": documents say "fiscal 2022" or "FY 2022"
        if _MIXED.search(part):
            for piece in _PIECES.findall(part):
                _word(piece, out)


def _raw(raw: str) -> tuple[str, ...]:
    """Output tokens of one casefolded raw token."""
    out: list[str] = []
    if _is_code(raw):
        _code(raw, out)
    elif _CONNECTOR.search(raw):  # "state-of-the-art", "company's": words joined by punctuation
        for part in _CONNECTOR.split(_POSSESSIVE.sub("", raw)):
            _word(part, out)
    else:
        _word(raw, out)
    return tuple(out)


def tokenize(text: str) -> list[str]:
    """Tokens of `text` for BM25: the same function is used for chunks and for queries.

    Returns an empty list for empty or stopword-only text.
    """
    if not text:
        return []
    raws = _TOKEN.findall(_normal(text).casefold())
    parts = [_memo.get(raw) for raw in raws]
    if None in parts:
        parts = [tokens if tokens is not None else _remember(raw) for tokens, raw in zip(parts, raws, strict=True)]
    return list(chain.from_iterable(parts))


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_DASHES)


def _remember(raw: str) -> tuple[str, ...]:
    tokens = _raw(raw)
    if len(_memo) < _MAX_MEMO:
        _memo[raw] = tokens
    return tokens


def is_code_token(token: str) -> bool:
    """True for a number or code token as `tokenize` emits them ("28.4", "10-k", "a1:f40")."""
    return _is_code(token)


def raw_terms(text: str) -> list[str]:
    """The query's terms before stemming, in their original case (NFKC), stopwords left out.

    Used to describe a query (numbers, codes, acronyms), never to match.
    """
    found = _TOKEN.findall(_normal(text or ""))
    return [t for t in found if t.casefold() not in STOPWORDS]


def is_number(term: str) -> bool:
    """True for "28.4", "4,000", "2022", "3.11.2"."""
    return bool(_NUMBER.match(term) or _THOUSANDS.match(term))
