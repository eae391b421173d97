"""Which documents a query names: words of a file's name or title found in the question.

People ask about a document by what it is called ("3M's FY2022 capex", "the Acme lease", "BERT's pre-training
cost"), and file names say it too ("3M_2022_10K.pdf", "acme-lease-2021.docx"). In a library of many similar
documents (a company's filings of several years, contracts from one template) the passages of the named one
are what the question is about, while a search over everything drifts to the same passage in a sibling.

A name word matches a query word, or two or three consecutive query words written together ("General Mills"
names GENERALMILLS_2020_10K.pdf, "Coca Cola" COCACOLA_2017_10K.pdf), or a short form of it: a query word of four
or more letters that begins a name word ("Pepsi", "Kraft"), or one written as an abbreviation (two or more
capitals, or "&": "AMEX", "JnJ", "J&J", "JPM"; not a term of the vocabulary such as "SG&A") whose letters appear in order in the name, first letter first
("americanexpress", "johnsonjohnson"). Each matched name word weighs its rarity among the library's names
(log N/df), halved for a word only the embedded title holds (TITLE_WEIGHT), and each query word counts once for a
document (its best match; a word written twice, once), so "MGM Resorts" is not counted twice for a title holding
both "MGM" and "MGMResorts".

What is not a name: an ordinary word that a title happens to hold ("Company", "Securities", "Quarter",
"Results" in "3M Company" or "Fourth Quarter Results"), told apart by where the library's text holds it. Each
document's rate is the share of its chunks holding the word (so a long filing that says "evaluation" in 37 of its
1,432 chunks does not outweigh the deck about evaluation); the word is ordinary when the documents it would name
have less than NAME_SHARE of the sum of all documents' rates (a name is written mostly in its own document: "Adam"
in the Adam paper, though the other papers cite it; "Company" is in every filing). Nor is a
period: a year or a period word ("2022", "Q2", "FY2023", "2024q2") only tells siblings apart, adds PERIOD_WEIGHT
whatever its rarity (a question about FY2022 and FY2021 names both years' filings) and never names a document on
its own. The named documents are those with the best score; none when no word matches or the library has one
document.

Measured (bench/quality.py, "named documents"): the gold filing among the named documents for 68 of the 71
FinanceBench questions (both sets in one library), 52 before short forms, ordinary words and periods were told
apart; the three left name no company or a year the filing does not carry.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from advanced_retrieval.keyword.tokens import STOPWORDS
from advanced_retrieval.keyword.vocabulary import ENTRIES
from advanced_retrieval.types import Filters

_WORD = re.compile(r"[^\W_]+")
_PIECES = re.compile(r"[^\W\d_]+|\d+")
_PERIOD = re.compile(r"\d+|(?:fy|q|h)\d{0,4}|\d{4}(?:q|h)\d|(?:q|h)\d\d{2,4}|\d(?:q|h)")
_ABBREVIATION = re.compile(r"[A-Za-z&]{2,8}")
_TERMS = frozenset(form for forms, _ in ENTRIES for form in forms if " " not in form)  # "SG&A", "EBITDA": terms
_AMPERSANDED = re.compile(r"[^\W_]+(?:&[^\W_]+)*")  # a word, or words joined by "&" ("J&J")
_JOINED = 3  # query words written together that may form one name word
_MIN_CHARS = 2
_PREFIX_CHARS = 4  # a query word this long may name a document by beginning one of its name words
NAME_SHARE = 0.5  # a name word: at least this share of the documents' rates in the documents it names (above)
_MEMO = 4096  # words remembered per generation (rates, beginnings)
# A word only the embedded title holds counts this share of its rarity: file names are what people call their
# documents (and what the library shows), while embedded titles are often boilerplate ("Document", "UNITED STATES
# SECURITIES AND EXCHANGE COMMISSION", "Fourth Quarter Fiscal 2022 Results").
TITLE_WEIGHT = 0.5
PERIOD_WEIGHT = 0.1  # what a matching year or period adds: less than any name word's rarity (log 2 = 0.69)


def _words(text: str) -> list[str]:
    return _WORD.findall(_normal(text))


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _written(name: str, text: str) -> bool:
    """`name` occurs in `text` as a whole name, not inside a longer one ("data.csv" is not written out by
    "mydata.csv", "old-data.csv" or "data.csv.bak"; it is by "reports/data.csv" and "(data.csv)")."""
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before, after = text[start - 1:start] if start else " ", text[end:end + 2]
        joined_before = before.isalnum() or before in "_-"
        joined_after = after[:1].isalnum() or after[:1] in ("_", "-") or (after[:1] == "." and after[1:].isalnum())
        if not joined_before and not joined_after:
            return True
        start = text.find(name, start + 1)
    return False


def is_period(word: str) -> bool:
    """True for years, numbers and period words: "2022", "q2", "fy2023", "2024q2", "4q", "h1"."""
    return bool(_PERIOD.fullmatch(word))


def name_words(file_name: str, title: str = "") -> frozenset[str]:
    """The words a document is called by: its file name (without the extension) and its title, casefolded."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    words = _words(f"{stem} {title}")
    words += [piece for w in words for piece in _PIECES.findall(w) if piece != w]  # "2022q4": "2022", "q"
    return frozenset(w for w in words if len(w) >= _MIN_CHARS and w not in STOPWORDS)


def spelled_name(file_name: str) -> str:
    """The file name's words without digits, written together: "johnsonjohnson" from JOHNSON_JOHNSON_2022_10K.pdf
    (what an abbreviation is read against)."""
    stem = file_name.rsplit(".", 1)[0] if "." in file_name else file_name
    return "".join(w for w in _words(stem) if not any(c.isdigit() for c in w))


def query_keys(query: str) -> frozenset[str]:
    """Query words, their letter and digit pieces ("fy2022" -> "fy", "2022"), and runs of 2-3 words joined."""
    return frozenset(key for key, _ in _query_spans(query))


def _query_spans(query: str) -> list[tuple[str, tuple[int, int]]]:
    """(key, (first word, last word + 1)) for every query word, its pieces and runs of 2-3 words joined."""
    words = _words(query)
    out = [(w, (i, i + 1)) for i, w in enumerate(words)]
    for i, word in enumerate(words):
        out.extend((piece, (i, i + 1)) for piece in _PIECES.findall(word) if piece != word)
    for size in range(2, _JOINED + 1):
        out.extend(("".join(words[i:i + size]), (i, i + size)) for i in range(len(words) - size + 1))
    return out


def _abbreviations(query: str) -> list[tuple[str, tuple[int, int]]]:
    """(letters, query span) of query words written as abbreviations: "AMEX", "JnJ", "J&J" (read "jnj", spanning
    the two words "j" and "j" that the rest of the naming sees)."""
    text = unicodedata.normalize("NFKC", query or "")
    out = []
    for m in _AMPERSANDED.finditer(text):
        raw = m.group(0)
        capitals = sum(c.isupper() for c in raw)
        if _ABBREVIATION.fullmatch(raw) and len(raw) >= 3 and capitals >= 2 and raw.casefold() not in _TERMS:
            first = len(_WORD.findall(text[:m.start()]))
            out.append((raw.replace("&", "n").casefold(), (first, first + raw.count("&") + 1)))
    return out


def _in_order(letters: str, name: str) -> bool:
    """`letters` appear in `name` in order, the first at its start ("amex" in "americanexpress")."""
    if not letters or not name or letters[0] != name[0]:
        return False
    rest = iter(name[1:])
    return all(c in rest for c in letters[1:])


def _prefix_df(words: dict[str, frozenset[str]]) -> Counter:
    """For each name word, the documents called by it or by a longer word it begins ("mgm" counts the documents
    called "mgmresorts" too, so a short form in one title is no rarer than the name it abbreviates)."""
    pairs = sorted({(w, d) for d, ws in words.items() for w in ws})
    keys = [w for w, _ in pairs]
    df: Counter = Counter()
    for word in set(keys):
        lo = bisect.bisect_left(keys, word)
        hi = bisect.bisect_left(keys, word + "\U0010ffff")
        df[word] = len({d for _, d in pairs[lo:hi]})
    return df


def _no_rates(words: Iterable[str]) -> dict[str, dict[str, float]]:
    return {w: {} for w in words}


@dataclass(frozen=True)
class Names:
    """The library's documents by their name words, with each word's rarity (built once per store generation).

    `rates` tells, for words, the share of each document's chunks that hold them (BM25Index.document_rates);
    without it every word may be a name.
    """

    words: dict[str, frozenset[str]]  # doc_id -> name words
    idf: dict[str, float]
    spelled: dict[str, str] = field(default_factory=dict)  # doc_id -> the file name's letters (spelled_name)
    filed: dict[str, frozenset[str]] = field(default_factory=dict)  # doc_id -> name words of its file name
    files: dict[str, str] = field(default_factory=dict)  # doc_id -> its file name, casefolded (written_out)
    rates: Callable[[Iterable[str]], dict[str, dict[str, float]]] = _no_rates
    _held: dict[str, dict[str, float]] = field(default_factory=dict, compare=False)  # rates, remembered
    _begun: dict[str, int] = field(default_factory=dict, compare=False)  # documents a beginning begins
    _longer: dict[frozenset[str], frozenset[str]] = field(default_factory=dict, compare=False)  # see _beginnings
    _called: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict, compare=False)  # see _documents_by

    @classmethod
    def of(cls, documents: Sequence, rates: Callable[[Iterable[str]], dict[str, dict[str, float]]] | None = None
           ) -> Names:
        """From records with .doc_id, .file_name and .title (vector_db.DocumentRecord)."""
        words = {d.doc_id: name_words(d.file_name, d.title) for d in documents}
        n = len(words)
        return cls(words, {w: math.log(n / c) for w, c in _prefix_df(words).items()},
                   {d.doc_id: spelled_name(d.file_name) for d in documents},
                   {d.doc_id: name_words(d.file_name) for d in documents},
                   {d.doc_id: _normal(d.file_name) for d in documents}, rates or _no_rates)

    def ordinary(self, word: str, docs: Iterable[str]) -> bool:
        """True when `docs` (the documents `word` would name) have less than NAME_SHARE of the sum of every
        document's rate of chunks holding it; False for a word no chunk holds."""
        if word not in self._held:
            if len(self._held) >= _MEMO:
                self._held.clear()
            self._held.update(self.rates([word]))
        held = self._held.get(word) or {}
        total = sum(held.values())
        return total > 0 and sum(held.get(d, 0) for d in docs) < NAME_SHARE * total

    def named(self, query: str) -> tuple[str, ...]:
        """The doc_ids the query names best (sorted), or () when it names none."""
        if len(self.words) < 2:
            return ()
        written = self.written_out(query)
        if written:
            return written
        spans, abbreviations = _query_spans(query), _abbreviations(query)
        matches = self.matches(spans, abbreviations)
        by_word: dict[str, set[str]] = {}
        for doc_id, found in matches.items():
            for word, *_ in found:
                by_word.setdefault(word, set()).add(doc_id)
        ordinary = {w for w, docs in by_word.items() if not is_period(w) and self.ordinary(w, docs)}
        score_of = {d: s for d, found in matches.items() if (s := _score(found, ordinary)) > 0}
        best = max(score_of.values(), default=0.0)
        return tuple(sorted(d for d, s in score_of.items() if s >= best))

    def written_out(self, query: str) -> tuple[str, ...]:
        """The doc_ids whose whole file name, extension included, the query writes ("the Dates sheet of
        charts.xlsx"), sorted. Such a name is the document whatever its words are elsewhere: "charts" is an
        ordinary word of a library of filings, "charts.xlsx" is one file."""
        text = _normal(query)
        return tuple(sorted(d for d, name in self.files.items() if "." in name and _written(name, text)))

    def _prefix_idf(self, key: str) -> float:
        """A beginning's rarity among the library's names: log(N / documents with a name word it begins)."""
        if key not in self._begun:
            if len(self._begun) >= _MEMO:
                self._begun.clear()
            self._begun[key] = sum(any(w.startswith(key) for w in ws) for ws in self.words.values())
        return math.log(len(self.words) / self._begun[key]) if self._begun[key] else 0.0

    def _abbreviation_idf(self, letters: str) -> float:
        """An abbreviation's rarity among the library's names: log(N / documents whose name it spells)."""
        spelled = sum(_in_order(letters, name) for name in self.spelled.values())
        return math.log(len(self.words) / spelled) if spelled else 0.0

    def _beginnings(self, words: frozenset[str]) -> frozenset[str]:
        """Every beginning of at least _PREFIX_CHARS letters that is shorter than its word ("mgmre" of
        "mgmresorts"): a set lookup instead of a scan of every name word, per query word and document (a library
        of 32 filings spent 3.5 ms a question on those scans)."""
        got = self._longer.get(words)
        if got is None:
            got = frozenset(w[:i] for w in words for i in range(_PREFIX_CHARS, len(w)))
            if len(self._longer) >= _MEMO:
                self._longer.clear()
            self._longer[words] = got
        return got

    def _documents_by(self) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
        """(name word -> the documents called by it, beginning -> the documents with a longer name word it begins
        (_beginnings)), built once per Names (a store generation)."""
        if "word" not in self._called:
            by_word: dict[str, list[str]] = {}
            by_beginning: dict[str, list[str]] = {}
            for doc_id, words in self.words.items():
                for word in words:
                    by_word.setdefault(word, []).append(doc_id)
                for beginning in self._beginnings(words):
                    by_beginning.setdefault(beginning, []).append(doc_id)
            self._called["beginning"] = {k: tuple(v) for k, v in by_beginning.items()}
            self._called["word"] = {k: tuple(v) for k, v in by_word.items()}  # set last: the flag of the build
        return self._called["word"], self._called["beginning"]

    def matches(self, spans, abbreviations) -> dict[str, list[tuple[str, float, tuple[int, int], bool]]]:
        """_matches for every document, from the query's spans looked up in the name words and their beginnings
        (what a scan of every document per span gave: 1.8 ms a question over 32 filings)."""
        by_word, by_beginning = self._documents_by()
        out: dict[str, list] = {doc_id: [] for doc_id in self.words}
        for key, span in spans:
            exact = by_word.get(key, ()) if self.idf.get(key, 0) > 0 else ()
            period = is_period(key)
            if exact:
                weight = PERIOD_WEIGHT if period else self.idf[key]
                for doc_id in exact:
                    filed = self.filed.get(doc_id, self.words[doc_id])
                    out[doc_id].append((key, weight if period or key in filed else weight * TITLE_WEIGHT, span,
                                        period))
            if len(key) >= _PREFIX_CHARS and span[1] - span[0] == 1 and not period:
                for doc_id in by_beginning.get(key, ()):
                    if doc_id in exact:
                        continue
                    begun = key in self._beginnings(self.filed.get(doc_id, self.words[doc_id]))
                    out[doc_id].append((key, self._prefix_idf(key) * (1.0 if begun else TITLE_WEIGHT), span, False))
        for letters, span in abbreviations:
            for doc_id in self.words:
                if letters not in self.filed.get(doc_id, self.words[doc_id]) and _in_order(
                        letters, self.spelled.get(doc_id, "")):
                    out[doc_id].append((letters, self._abbreviation_idf(letters), span, False))
        return out

    def _matches(self, doc_id: str, words: frozenset[str], spans, abbreviations
                 ) -> list[tuple[str, float, tuple[int, int], bool]]:
        """(query word, weight, its span in the query, is a period) for each way the query calls this document."""
        out = []
        filed = self.filed.get(doc_id, words)
        for key, span in spans:
            if key in words and self.idf[key] > 0:
                period = is_period(key)
                weight = PERIOD_WEIGHT if period else self.idf[key] * (1.0 if key in filed else TITLE_WEIGHT)
                out.append((key, weight, span, period))
            elif (len(key) >= _PREFIX_CHARS and span[1] - span[0] == 1 and key in self._beginnings(words)
                  and not is_period(key)):
                begun = key in self._beginnings(filed)
                out.append((key, self._prefix_idf(key) * (1.0 if begun else TITLE_WEIGHT), span, False))
        for letters, span in abbreviations:
            if letters not in filed and _in_order(letters, self.spelled.get(doc_id, "")):
                out.append((letters, self._abbreviation_idf(letters), span, False))
        return out


def _score(found: list[tuple[str, float, tuple[int, int], bool]], ordinary: set[str]) -> float:
    """Σ over query words of their best match (a query word, and a word written twice, counts once); 0 without a
    match that is a name."""
    taken: set[int] = set()
    counted: set[str] = set()
    score, named = 0.0, False
    for word, weight, (first, last), period in sorted(found, key=lambda m: -m[1]):
        if weight <= 0 or word in ordinary or word in counted or taken.intersection(range(first, last)):
            continue
        taken.update(range(first, last))
        counted.add(word)
        score += weight
        named = named or not period
    return score if named else 0.0


class NamedDocuments:
    """The library's names and the stored vectors of recently named documents, both kept per store generation.

    A vector search within a few documents is a matrix product over their stored vectors: Chroma's filtered
    query took 52 ms a question here (its unfiltered one 24 ms), the product well under 1 ms once the vectors
    of the named documents are read. They are kept per document, the most recently named first, up to
    MAX_CACHED_VECTORS in all (48 MB of float32 at 384 dimensions), so a second question about a filing, or one
    naming it beside another, reads nothing (reading a 1,400-chunk filing's vectors from Chroma took 55 ms).
    """

    MAX_CACHED_VECTORS = 32_768

    def __init__(self, store):
        self._store = store
        self._names: tuple[int, Names] | None = None
        self._vectors: OrderedDict[tuple[int, str], tuple[list[str], np.ndarray]] = OrderedDict()
        self._rows: dict[tuple[int, str], dict[str, int]] = {}  # a held document's {chunk id: row}, when asked
        self._lock = threading.Lock()

    def within(self, query: str, filters: Filters | None, index) -> Filters | None:
        """`filters` narrowed to the documents `query` names; None when it names none (or none is allowed).

        `index` is the BM25Index the caller searches: the names are read again only when its generation moves,
        with no store call per query, and it tells which words most documents hold in their text.
        """
        named = self._names_of(index).named(query)
        if filters is not None and filters.doc_ids is not None:
            named = tuple(d for d in named if d in filters.doc_ids)
        if not named:
            return None
        return Filters(doc_ids=named, file_types=filters.file_types if filters is not None else None)

    def documents(self, index) -> tuple[str, ...]:
        """The library's document ids at `index`'s generation (from the names read for it)."""
        return tuple(self._names_of(index).words)

    def _names_of(self, index) -> Names:
        with self._lock:
            if self._names is None or self._names[0] != index.generation:
                self._names = (index.generation, Names.of(self._store.documents(), index.document_rates))
            return self._names[1]

    def nearest(self, query_vector: np.ndarray, within: Filters, index, n: int) -> list[tuple[str, float]]:
        """The `n` chunks of the named documents nearest to `query_vector`: (chunk id, cosine), best first."""
        ids, matrix = self._matrix(within, index)
        if not ids:
            return []
        scores = shared_product(matrix, np.asarray(query_vector, dtype=np.float32))
        top = np.argsort(-scores, kind="stable")[:n]
        return [(ids[i], float(scores[i])) for i in top]

    def library_nearest(self, query_vector: np.ndarray, filters: Filters | None, index,
                        n: int) -> list[tuple[str, float]] | None:
        """nearest() over every document `filters` allows, exactly, when each one's vectors are held (the library
        was read ahead, or every document named already); None when one is not (the store's search is then
        asked). One product per document, no stacked copy of the library's vectors."""
        doc_ids = self.documents(index)
        if filters is not None and filters.doc_ids is not None:
            doc_ids = tuple(d for d in doc_ids if d in filters.doc_ids)
        with self._lock:
            parts = [self._vectors.get((index.generation, doc)) for doc in doc_ids]
        if any(part is None for part in parts):
            return None
        parts = [part for part in parts if part[0]]
        if not parts or n <= 0:
            return []
        scores = _products([rows for _, rows in parts], np.asarray(query_vector, dtype=np.float32))
        starts = np.cumsum([0] + [len(chunk_ids) for chunk_ids, _ in parts])

        def chunk_id(i: int) -> str:  # the i-th row of the concatenation (no list of every id per question)
            part = int(np.searchsorted(starts, i, side="right")) - 1
            return parts[part][0][i - starts[part]]

        if filters is not None and filters.file_types is not None:
            allowed = set(index.chunk_ids_within(Filters(doc_ids=doc_ids, file_types=filters.file_types)))
            keep = np.fromiter((cid in allowed for chunk_ids, _ in parts for cid in chunk_ids), dtype=bool,
                               count=len(scores))
            scores = np.where(keep, scores, -np.inf)
            n = min(n, int(keep.sum()))
            if n == 0:
                return []
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.lexsort((top, -scores[top]))]  # best first, ties in library order
        return [(chunk_id(int(i)), float(scores[i])) for i in top]

    def cached_vectors(self, chunks: Sequence, index) -> dict[str, np.ndarray]:
        """The stored vectors of these chunks (.id, .doc_id) whose documents' vectors are held; others left out."""
        out: dict[str, np.ndarray] = {}
        with self._lock:
            for chunk in chunks:
                part = self._vectors.get((index.generation, chunk.doc_id))
                if part is not None:
                    rows = self._rows.get((index.generation, chunk.doc_id))
                    if rows is None:
                        rows = self._rows[(index.generation, chunk.doc_id)] = {c: i for i, c in enumerate(part[0])}
                    if chunk.id in rows:
                        out[chunk.id] = part[1][rows[chunk.id]]
        return out

    def read_ahead(self, index) -> int:
        """Read every document's stored vectors now when the library fits MAX_CACHED_VECTORS, so a document's
        first question reads nothing; the number of vectors read (0 when the library does not fit)."""
        doc_ids = self.documents(index)
        with self._lock:
            missing = [d for d in doc_ids if (index.generation, d) not in self._vectors]
        if not missing or sum(r.chunks for r in self._store.documents()) > self.MAX_CACHED_VECTORS:
            return 0
        return sum(len(ids) for ids, _ in self._read(missing, index).values())

    def _matrix(self, within: Filters, index) -> tuple[list[str], np.ndarray]:
        """The chunk ids `within` allows and their stored vectors (a row each), from the per-document cache;
        the documents not cached are read in one store call."""
        doc_ids = within.doc_ids if within.doc_ids is not None else self.documents(index)
        parts: dict[str, tuple[list[str], np.ndarray]] = {}
        with self._lock:
            for doc in doc_ids:
                if (index.generation, doc) in self._vectors:
                    self._vectors.move_to_end((index.generation, doc))
                    parts[doc] = self._vectors[(index.generation, doc)]
        missing = [d for d in doc_ids if d not in parts]
        if missing:
            parts.update(self._read(missing, index))
        held = [parts[doc] for doc in doc_ids if parts[doc][0]]
        if not held:
            return [], np.zeros((0, 0), dtype=np.float32)
        ids = [cid for chunk_ids, _ in held for cid in chunk_ids]
        matrix = np.vstack([rows for _, rows in held])
        if within.file_types is not None:  # a file-type filter besides the documents: their allowed chunks only
            allowed = set(index.chunk_ids_within(within))
            keep = [i for i, cid in enumerate(ids) if cid in allowed]
            ids, matrix = [ids[i] for i in keep], matrix[keep]
        return ids, matrix

    def _read(self, doc_ids: Sequence[str], index) -> dict[str, tuple[list[str], np.ndarray]]:
        """These documents' chunk ids and stored vectors, read in one store call and cached (oldest dropped
        first beyond MAX_CACHED_VECTORS)."""
        wanted = {doc: index.chunk_ids_within(Filters(doc_ids=(doc,))) for doc in doc_ids}
        stored = self._store.vectors([cid for ids in wanted.values() for cid in ids])
        out: dict[str, tuple[list[str], np.ndarray]] = {}
        held = {doc: [cid for cid in chunk_ids if cid in stored] for doc, chunk_ids in wanted.items()}
        # One block, each document's rows a view of it in this order: a library read ahead is searched with one
        # product over the block (library_nearest; 1.3 ms against 2.9 ms for 32 products at 28,000 chunks). A block
        # stays in memory while any of its documents is held.
        dim = len(next(iter(stored.values()))) if stored else 0
        block = np.empty((sum(len(ids) for ids in held.values()), dim), dtype=np.float32)
        start = 0
        for doc, ids in held.items():
            for row, cid in enumerate(ids, start):
                block[row] = stored[cid]
            out[doc] = (ids, block[start:start + len(ids)])
            start += len(ids)
        with self._lock:
            for key in [k for k in self._vectors if k[0] != index.generation]:  # the store moved on: stale
                del self._vectors[key]
            self._rows = {k: v for k, v in self._rows.items() if k[0] == index.generation}
            for doc, part in out.items():
                self._vectors[(index.generation, doc)] = part
            held = sum(len(ids) for ids, _ in self._vectors.values())
            while held > self.MAX_CACHED_VECTORS and len(self._vectors) > 1:
                key, (ids, _) = self._vectors.popitem(last=False)
                self._rows.pop(key, None)
                held -= len(ids)
        return out


def _products(parts: Sequence[np.ndarray], vector: np.ndarray) -> np.ndarray:
    """np.concatenate([rows @ vector for rows in parts]): one product where the parts are consecutive rows of one
    block (documents read together, NamedDocuments._read), else one per part."""
    base = parts[0].base
    if base is not None and base.ndim == 2 and base.flags.c_contiguous and all(p.base is base for p in parts):
        row_bytes = base.strides[0] or 1
        first = (parts[0].ctypes.data - base.ctypes.data) // row_bytes
        end = first
        for rows in parts:
            if (rows.ctypes.data - base.ctypes.data) // row_bytes != end or not rows.flags.c_contiguous:
                break
            end += len(rows)
        else:
            return shared_product(base[first:end], vector)
    return np.concatenate([rows @ vector for rows in parts])


# A product over this many rows or more is shared between the calling thread and a helper, half each. It is
# memory-bound (the library's 28,710 × 384 vectors, 44 MB, a little more than this machine's 32 MB L3 cache: 5.4 ms
# on one thread, 2.8 ms in two halves), and BLAS's own second thread spins after each product on the core the
# keyword searches need (one_blas_thread); the helper waits on a queue, spinning nothing.
SHARED_ROWS = 8192
_SPLIT_ALIGN = 64  # halves cut at a multiple of 64 rows: each row's dot product is summed as in one product
_helper: ThreadPoolExecutor | None = None
_helper_lock = threading.Lock()


def shared_product(block: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """block @ vector, its second half computed on a helper thread meanwhile when the block is large (numpy
    leaves the GIL in BLAS): the same scores, in about half the time on two cores."""
    if len(block) < SHARED_ROWS:
        return block @ vector
    global _helper
    with _helper_lock:
        if _helper is None:
            _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-product")
    half = len(block) // 2 // _SPLIT_ALIGN * _SPLIT_ALIGN
    second = _helper.submit(np.matmul, block[half:], vector)
    first = block[:half] @ vector
    return np.concatenate([first, second.result()])
