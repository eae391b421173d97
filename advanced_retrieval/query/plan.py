"""How to search one query: the `auto` strategy choice (keyword, or hybrid with keywords weighted up) and the
phrases the user quoted, a pure function of the query's terms."""

from __future__ import annotations

import re
from dataclasses import dataclass

from advanced_retrieval.keyword.tokens import is_number, raw_terms

# BM25's weight in the fusion when a question holds exact terms (numbers, codes, quoted phrases): such terms are
# what embeddings of a short question blur, while the rest of the question still needs meaning to match.
KEYWORD_WEIGHT = 2.0

# Words that say what kind of question it is, not what it is about; ignored when deciding if only exact terms
# are left (so "What is ISO-9001?" is a keyword lookup).
_QUESTION_WORDS = frozenset((
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "does", "do", "did", "can", "could",
    "would", "should", "tell", "me", "about", "find", "show", "give", "list", "explain", "describe", "define",
    "mean", "means", "meaning", "please", "i", "we", "you", "our", "my",
))
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|(?<!\w)\'([^\']+)\'(?!\w)|‘([^’]+)’')
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")


@dataclass(frozen=True)
class QueryPlan:
    """How to search for one query: the strategy, why, BM25's fusion weight and any quoted phrases."""

    strategy: str
    reason: str
    keyword_weight: float = 1.0
    phrases: tuple[str, ...] = ()


def quoted_phrases(query: str) -> tuple[str, ...]:
    """Phrases the user put in quotes ("...", “...”, '...', ‘...’), whitespace-collapsed, empty ones left out."""
    found = (next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(query or ""))
    return tuple(p for p in (" ".join(f.split()) for f in found) if p)


def _exact_terms(terms: list[str], whole_query_upper: bool) -> list[str]:
    """Numbers, codes ("10-K", "max_tokens", "iPhone") and acronyms ("EBITDA") among raw terms."""
    def exact(term: str) -> bool:
        if is_number(term) or "_" in term or any(c.isdigit() for c in term) or _INNER_CAPITAL.search(term):
            return True
        return not whole_query_upper and term.isupper() and 2 <= len(term) <= 10
    return [t for t in terms if exact(t)]


def plan_query(query: str, keyword_weight: float = KEYWORD_WEIGHT) -> QueryPlan:
    """Decide the `auto` strategy from the query's terms (token features, never substring tests).

    Only exact terms (numbers, codes, acronyms, quoted phrases) → "bm25": an embedding of "A1:F40" means little.
    Exact terms among ordinary words → "hybrid" with BM25 weighted up. Otherwise plain "hybrid".
    """
    phrases = quoted_phrases(query)
    outside = _QUOTED.sub(" ", query or "")
    terms = raw_terms(outside)
    exact = _exact_terms(terms, whole_query_upper=outside.isupper())
    words = [t for t in terms if t not in exact and t.casefold() not in _QUESTION_WORDS]
    if not terms and not phrases:
        return QueryPlan("hybrid", "no searchable terms")
    shown = ", ".join([f'"{p}"' for p in phrases] + exact[:4])
    if not words:
        return QueryPlan("bm25", f"only exact terms ({shown}): keyword search", keyword_weight, phrases)
    if phrases or exact:
        return QueryPlan("hybrid", f"exact terms ({shown}) among words: hybrid, keywords weighted ×{keyword_weight:g}",
                         keyword_weight, phrases)
    return QueryPlan("hybrid", "plain-language question: hybrid of meaning and keywords")


def choose_strategy(query: str) -> tuple[str, str]:
    """(strategy, reason) that `auto` picks for `query`; see plan_query."""
    plan = plan_query(query)
    return plan.strategy, plan.reason
