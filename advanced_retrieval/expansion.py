"""Keyword-query expansion from the vocabulary (advanced_retrieval.vocabulary), a pure function of the query.

A question form is found in the query as whole words, case-insensitively ("SG&A", "free cash flow"); a form of
two or more words is also found after stemming and stopword removal, as BM25 sees it ("capital expenditure"
finds "capital expenditures"). One-word forms match as written only, so "compute" does not fire on "computed".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from advanced_retrieval.tokens import tokenize
from advanced_retrieval.vocabulary import ENTRIES

# An expansion word counts at most this share of a word the user typed, and the whole expansion adds at most
# this share of the best score the user's own words reach (see the vocabulary's docstring). Chosen on
# financebench_dev only, with PDF tables indexed and every other piece on (hybrid hit@5 / MRR@10): 0.5 .405 / .237,
# 0.3 .452 / .264, 0.2 .429 / .263, 0.1 .429 / .262, no expansion .405 / .283 (all within noise of each other on
# MRR except 0.5, which lost 9 questions and won 4 against no expansion without the page rule).
EXPANSION_SHARE = 0.3

_NOT_WORD = re.compile(r"[^\w&]+")

Entry = tuple[tuple[str, ...], tuple[str, ...]]


def _surface(text: str) -> str:
    """' free cash flow ' from 'Free-cash-flow?': casefolded words (and "&") between single spaces."""
    return f" {' '.join(_NOT_WORD.sub(' ', unicodedata.normalize('NFKC', text).casefold()).split())} "


def _contains(tokens: Sequence[str], part: Sequence[str]) -> bool:
    n = len(part)
    return any(list(tokens[i:i + n]) == list(part) for i in range(len(tokens) - n + 1))


def _matches(form: str, surface: str, tokens: Sequence[str]) -> bool:
    if _surface(form) in surface:
        return True
    stems = tokenize(form)
    return len(stems) >= 2 and _contains(tokens, stems)


def expansion_phrases(query: str, entries: Sequence[Entry] = ENTRIES) -> tuple[str, ...]:
    """The document phrases of every entry whose question form occurs in `query`, in vocabulary order, once each;
    () for an empty query or one with no known form."""
    if not (query or "").strip():
        return ()
    surface, tokens = _surface(query), tokenize(query)
    found: dict[str, None] = {}
    for forms, phrases in entries:
        if any(_matches(form, surface, tokens) for form in forms):
            found.update(dict.fromkeys(phrases))
    return tuple(found)


def expansion_query(query: str, entries: Sequence[Entry] = ENTRIES) -> str:
    """The expansion as one keyword query ("" when nothing in `query` is in the vocabulary)."""
    return " ".join(expansion_phrases(query, entries))
