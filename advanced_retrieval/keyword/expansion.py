"""Keyword-query expansion from the vocabulary (advanced_retrieval.keyword.vocabulary), a pure function of the query.

A question form is found in the query as whole words, case-insensitively ("SG&A", "free cash flow"); a form of
two or more words is also found after stemming and stopword removal, as BM25 sees it ("capital expenditure"
finds "capital expenditures"), and with neighbouring words written together, as people write compounds ("free
cashflow", "cashflow statement"); a period word written against its year is read apart from it ("FY2022" is "FY 2022",
"Q22023" is "Q2 2023"). One-word forms match as written only, so "compute" does not fire on "computed".

`heading_phrases` gives the phrases of the expansion that name a statement or section (vocabulary.HEADINGS), each
with the other names the same statement goes by ("statements of earnings" for "statements of income").
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

from advanced_retrieval.keyword.tokens import tokenize
from advanced_retrieval.keyword.vocabulary import ENTRIES, HEADINGS, STATEMENT_NAMES

# An expansion word counts at most this share of a word the user typed, and the whole expansion adds at most
# this share of the best score the user's own words reach (see the vocabulary's docstring). Chosen on
# financebench_dev only, with PDF tables indexed and every other piece on (hybrid hit@5 / MRR@10): 0.5 .405 / .237,
# 0.3 .452 / .264, 0.2 .429 / .263, 0.1 .429 / .262, no expansion .405 / .283 (all within noise of each other on
# MRR except 0.5, which lost 9 questions and won 4 against no expansion without the page rule).
EXPANSION_SHARE = 0.3

_NOT_WORD = re.compile(r"[^\w&]+")
_PERIOD = re.compile(r"\b(fy|q[1-4]|h[12])(?=\d)")  # "FY2022", "Q2 2023", "q22023": the period word before its year

Entry = tuple[tuple[str, ...], tuple[str, ...]]


def _surface(text: str) -> str:
    """' free cash flow ' from 'Free-cash-flow?': casefolded words (and "&") between single spaces."""
    words = _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold())
    return " " + " ".join(_PERIOD.sub(r"\1 ", words).split()) + " "


def _contains(tokens: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(tuple(tokens[i:i + n]) == tuple(part) for i in range(len(tokens) - n + 1))


@functools.cache  # the vocabulary's forms are constant: made once each
def _written(form: str) -> tuple[str, ...]:
    """The ways a form may be written: as it is, and with every choice of neighbouring words written together
    ("free cash flow": "freecash flow", "free cashflow", "freecashflow"; 2^(words - 1) in all)."""
    words = form.split()
    out = []
    for mask in range(2 ** (len(words) - 1)):
        text = words[0]
        for i, word in enumerate(words[1:]):
            text += word if mask >> i & 1 else f" {word}"
        out.append(_surface(text))
    return tuple(out)


@functools.cache
def _stems(form: str) -> tuple[str, ...]:
    return tuple(tokenize(form))


@functools.cache
def _openers(form: str) -> frozenset[str]:
    """The first word of each way the form may be written: one of them is a word of any text it occurs in."""
    return frozenset(word for written in _written(form) for word in written.split()[:1])


def _matches(form: str, surface: str, tokens: Sequence[str], words: frozenset[str] = frozenset(),
             stemmed: frozenset[str] = frozenset()) -> bool:
    """Whether `form` occurs in the query (`surface`: _surface of it; `tokens`: its BM25 tokens). `words` and
    `stemmed`, the sets of both when given, let a form refuse with set lookups (~400 forms a query)."""
    openers = _openers(form)
    if (not words or not openers or openers & words) and any(written in surface for written in _written(form)):
        return True  # (when no way of writing the form starts at a word of the query, none is in it)
    stems = _stems(form)
    if len(stems) < 2 or (stemmed and stems[0] not in stemmed):
        return False
    return _contains(tokens, stems)


def expansion_phrases(query: str, entries: Sequence[Entry] = ENTRIES) -> tuple[str, ...]:
    """The document phrases of every entry whose question form occurs in `query`, in vocabulary order, once each;
    () for an empty query or one with no known form."""
    if not (query or "").strip():
        return ()
    surface, tokens = _surface(query), tokenize(query)
    words, stemmed = frozenset(surface.split()), frozenset(tokens)
    found: dict[str, None] = {}
    for forms, phrases in entries:
        if any(_matches(form, surface, tokens, words, stemmed) for form in forms):
            found.update(dict.fromkeys(phrases))
    return tuple(found)


def expansion_query(query: str, entries: Sequence[Entry] = ENTRIES) -> str:
    """The expansion as one keyword query ("" when nothing in `query` is in the vocabulary)."""
    return " ".join(expansion_phrases(query, entries))


def heading_phrases(query: str, entries: Sequence[Entry] = ENTRIES) -> tuple[str, ...]:
    """The expansion's statement and section names (vocabulary.HEADINGS), each followed by the other names of the
    same statement (vocabulary.STATEMENT_NAMES: a balance sheet is also a statement of financial position), once
    each; () when the query's vocabulary names none."""
    found: dict[str, None] = {}
    for phrase in expansion_phrases(query, entries):
        if phrase in HEADINGS:
            found[phrase] = None
            for names in STATEMENT_NAMES:
                if phrase in names:
                    found.update(dict.fromkeys(names))
    return tuple(found)
