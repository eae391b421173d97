"""A header the question names in other words: "the best fuel economy" over a column headed "Miles_per_Gallon",
"the price of a ticket" over "fare". The rules meet a header by its words (tables.plan, tables.words); when no
table's query reads the question that way, the question's words that no table holds are compared in meaning (the
library's embedder) with each candidate table's headers, and a header far closer to one of those phrases than to
any other header stands for it: the question is read again with the header's name in place of the phrase.

    found = by_meaning(question, tables, embedder)   # [Meant(table, phrase, column, text, similarity)], best first

What makes it safe to use is that it is a fallback (the rules found no reading), that a header must be both close
in meaning (MIN_SIMILARITY) and clearly closer than the table's next header (MIN_MARGIN: "revenue" is as close to
"Net sales" as to "Operating income", so neither stands for it), and that the answer's passage says how the header
was read ('Miles_per_Gallon: "fuel economy" (read by meaning)'), for the user to check.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from advanced_retrieval.tables import TableInfo
from agentic_rag.language.concepts import forms_of, query_concepts
from agentic_rag.tables.plan import GENERIC, op_words
from agentic_rag.tables.words import identifier_text

# all-MiniLM-L6-v2 cosines (measured in tests/agentic_rag/tables/test_meaning.py): a header and a phrase that name
# one measure in other words score 0.5-0.75 ("fuel economy" / "Miles per Gallon" 0.52, "how heavy" / "Weight in
# lbs" 0.65, "price of a ticket" / "fare" 0.50); unrelated headers of the same table 0.1-0.35
MIN_SIMILARITY = 0.45
MIN_MARGIN = 0.15  # over the table's next header: a phrase as close to two headers names neither
MAX_WORDS = 3  # the longest phrase compared: a measure is named in one to three words
MAX_PHRASES = 12
MEANT = "read by meaning"


@dataclass(frozen=True)
class Meant:
    """A header the question names in other words: `phrase` (the question's) stands for `column` of `table`."""

    table: TableInfo
    phrase: str
    column: int
    text: str  # the question with the header's name in place of the phrase
    similarity: float

    def reading(self) -> str:
        """The line the answer's passage shows: 'Miles_per_Gallon: "fuel economy" (read by meaning, 0.52)'."""
        return f'{self.table.columns[self.column].name}: "{self.phrase}" ({MEANT}, {self.similarity:.2f})'


def by_meaning(question: str, tables: Sequence[TableInfo], embedder, *, figures: bool = True) -> list[Meant]:
    """For each table, the header one of the question's unheld phrases names in other words, best first (at most
    one per table). `figures`: only columns of figures stand for a phrase."""
    if embedder is None or not tables:
        return []
    out: list[Meant] = []
    for table in tables:
        phrases = _unheld_phrases(question, table)
        columns = [i for i, c in enumerate(table.columns) if i and (c.numeric or not figures)]
        if not phrases or len(columns) < 1:
            continue
        headers = [identifier_text(table.columns[i].name) for i in columns]
        vectors = np.asarray(embedder.embed([*phrases, *headers]), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
        similar = vectors[: len(phrases)] @ vectors[len(phrases):].T  # phrases x headers
        best: Meant | None = None
        for p, phrase in enumerate(phrases):
            order = np.argsort(-similar[p])
            top = float(similar[p, order[0]])
            second = float(similar[p, order[1]]) if len(order) > 1 else 0.0
            if top < MIN_SIMILARITY or top - second < MIN_MARGIN:
                continue
            if best is None or top > best.similarity:
                column = columns[int(order[0])]
                text = _replaced(question, phrase, headers[int(order[0])])
                best = Meant(table, phrase, column, text, round(top, 4))
        if best is not None:
            out.append(best)
    return sorted(out, key=lambda m: -m.similarity)


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _unheld_phrases(question: str, table: TableInfo) -> list[str]:
    """Runs of one to MAX_WORDS of the question's words that name something (not a name the question gives, an
    operation, a number or a word naming nothing in particular) none of which the table's file name, title,
    headers or row labels hold."""
    held = forms_of(" ".join([re.sub(r"[_.\-]+", " ", table.file_name.rsplit(".", 1)[0]), table.title, table.note,
                              table.name, *(identifier_text(c.name) for c in table.columns), *table.labels]))
    concepts = {c.text.lower(): c for c in query_concepts(question)}
    skip = {w.lower() for w in op_words(question)}
    runs: list[list[str]] = [[]]
    for m in _WORD.finditer(question):
        word = m.group(0)
        c = concepts.get(word.lower())
        content = c is not None and not c.specific and not c.forms & held and not c.forms <= GENERIC \
            and word.lower() not in skip
        if content:
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    phrases = []
    for run in runs:
        for size in range(min(MAX_WORDS, len(run)), 0, -1):
            phrases += [" ".join(run[i:i + size]) for i in range(len(run) - size + 1)]
    return list(dict.fromkeys(phrases))[:MAX_PHRASES]


def _replaced(question: str, phrase: str, header: str) -> str:
    """The question with the header's name in place of the phrase (first occurrence, as written)."""
    return question.replace(phrase, header, 1)
