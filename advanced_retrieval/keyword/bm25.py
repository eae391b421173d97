"""The BM25 index over chunks: segments written once (segments.py) and the counts BM25 needs, applied at query time.

bm25s has no incremental update and its score matrix bakes in idf and the average length, so any write rebuilt
and rewrote the whole index (at 150,000 chunks 0.6 s and 276 MB per write). Here a write adds one segment of its
own chunks and updates the document frequencies; a deletion marks rows dead and un-counts their tokens. A query
scores each token's postings in each segment with the library's current idf and average length, so the scores are
those of a fresh build over the live chunks (tests/advanced_retrieval/keyword/test_bm25.py compares them).

Scoring is bm25s's: method "lucene" by default (idf = ln(1 + (N - df + 0.5) / (df + 0.5)), always positive).
rank_bm25's BM25Okapi uses idf = ln((N - df + 0.5) / (df + 0.5)): 0 for a term in exactly half of the chunks,
negative above half (then replaced by 0.25 × the mean idf), so on a knowledge base of a few chunks it scores real
matches 0 or below. `BM25Params(method="atire", idf_method="robertson")` reproduces
BM25Okapi's scores exactly for terms in fewer than half of the chunks (tests/test_advanced_retrieval.py checks it);
bm25s's robertson idf is 0 where BM25Okapi's epsilon rule applies.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Sequence
from functools import cached_property
from itertools import islice
from pathlib import Path

import numpy as np

from advanced_retrieval.keyword import segments as seg_mod
from advanced_retrieval.keyword.corpus import FORMAT_VERSION, BM25Params
from advanced_retrieval.keyword.expansion import EXPANSION_SHARE
from advanced_retrieval.keyword.files import MANIFEST, load_index, save_index
from advanced_retrieval.keyword.segments import Segment
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION, tokenize
from advanced_retrieval.types import Filters
from document_processor import Chunk

_MASK_CACHE = 32  # filter masks remembered per index (an index never changes, so they never go stale)
# Unfiltered scores remembered per index: a question's searches (the library's, then within the documents it
# names) and its expansion share them, so each query is scored once and only its filter differs.
_SCORE_CACHE = 4
_VOCAB_LOCK = threading.Lock()  # the vocabulary dict is shared by an index and those made from it (see _grow)


def _idf(df: np.ndarray, n: int, method: str) -> np.ndarray:
    """bm25s's idf formulas, vectorised (float64); 0 for tokens no chunk contains any more."""
    dff = df.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "lucene":
            idf = np.log1p((n - dff + 0.5) / (dff + 0.5))
        elif method == "robertson":
            idf = np.log(np.maximum((n - dff + 0.5) / (dff + 0.5), 1.0))
        else:  # atire
            idf = np.log(n / dff)
    return np.where(df > 0, idf, 0.0)


def _codes(values: Sequence[str], names: tuple[str, ...]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Categorical codes for `values`, extending `names` with values not seen before."""
    index = {name: i for i, name in enumerate(names)}
    new = list(names)
    codes = np.empty(len(values), dtype=np.int32)
    for i, value in enumerate(values):
        if value not in index:
            index[value] = len(new)
            new.append(value)
        codes[i] = index[value]
    return codes, tuple(new)


class BM25Index:
    """Okapi BM25 over chunk ids, immutable: updates return a new index, so readers keep a consistent snapshot.

    `generation` is the vector store generation this index reflects. Rows are the segments' rows in order, dead
    ones included (they score 0); `count` and `chunk_ids` are the live ones.
    """

    def __init__(self, segments: Sequence[Segment] = (), dead: Sequence[np.ndarray | None] | None = None, *,
                 params: BM25Params | None = None, generation: int = 0, doc_names: tuple[str, ...] = (),
                 type_names: tuple[str, ...] = (), vocab: dict[str, int] | None = None,
                 df: np.ndarray | None = None):
        """Use `build`, `load` or the update methods. `vocab` is the segments' tokens as a dict (ids in order) and
        `df` the live rows holding each token; both are derived when not given."""
        self._segments = list(segments)
        self._dead = list(dead) if dead is not None else [None] * len(self._segments)
        self.params = params or BM25Params()
        self.generation = generation
        self._doc_names, self._type_names = doc_names, type_names
        self._n_vocab = self._segments[-1].vocab_end if self._segments else 0
        if vocab is None:
            vocab = {t: i for i, t in enumerate(t for s in self._segments for t in s.tokens)}
        self._vocab = vocab
        self._df = df if df is not None else self._count_df()
        self._offsets = np.cumsum([0] + [s.rows for s in self._segments]).astype(np.int64)
        self._masks: dict[tuple, np.ndarray] = {}
        self._recent: dict[tuple, np.ndarray | None] = {}
        self._recent_lock = threading.Lock()

    def _count_df(self) -> np.ndarray:
        df = np.zeros(self._n_vocab, dtype=np.int64)
        for seg, gone in zip(self._segments, self._dead, strict=True):
            df[: seg.vocab_end] += seg.df()
            if gone is not None:
                df -= np.bincount(seg.tokens_of(np.flatnonzero(gone)), minlength=self._n_vocab)
        return df

    @classmethod
    def build(cls, chunks: Iterable[Chunk], *, params: BM25Params | None = None, generation: int = 0) -> BM25Index:
        """An index of `chunks` (each chunk's context header and text)."""
        return cls(params=params, generation=generation).with_chunks(list(chunks), generation=generation)

    def _like(self, segments, dead, *, generation: int, vocab=None, df=None, doc_names=None,
              type_names=None) -> BM25Index:
        return BM25Index(segments, dead, params=self.params, generation=generation,
                         doc_names=self._doc_names if doc_names is None else doc_names,
                         type_names=self._type_names if type_names is None else type_names,
                         vocab=self._vocab if vocab is None else vocab, df=self._df if df is None else df)

    # -- what it holds --------------------------------------------------------------------------------------
    @cached_property
    def _alive(self) -> np.ndarray | None:
        """Live rows (None: all of them)."""
        if all(d is None for d in self._dead):
            return None
        return np.concatenate([~d if d is not None else np.ones(s.rows, dtype=bool)
                               for s, d in zip(self._segments, self._dead, strict=True)])

    @cached_property
    def _all_ids(self) -> tuple[str, ...]:
        return tuple(c for s in self._segments for c in s.chunk_ids)

    def _row_array(self, key: str) -> np.ndarray:
        if not self._segments:
            return np.zeros(0, dtype=np.int32)
        return np.concatenate([getattr(s, key) for s in self._segments])

    @cached_property
    def _doc_codes(self) -> np.ndarray:
        return self._row_array("doc_codes")

    @cached_property
    def _type_codes(self) -> np.ndarray:
        return self._row_array("type_codes")

    @cached_property
    def _doc_len(self) -> np.ndarray:
        return self._row_array("doc_len")

    @property
    def count(self) -> int:
        alive = self._alive
        return int(self._offsets[-1]) if alive is None else int(alive.sum())

    @cached_property
    def chunk_ids(self) -> tuple[str, ...]:
        alive = self._alive
        if alive is None:
            return self._all_ids
        return tuple(c for c, a in zip(self._all_ids, alive, strict=True) if a)

    @property
    def vocabulary_size(self) -> int:
        return self._n_vocab

    @property
    def segment_count(self) -> int:
        return len(self._segments)

    @cached_property
    def documents(self) -> dict[str, int]:
        """{doc_id: chunks} of the documents it holds: compared with the store's records (VectorStore.chunk_counts)
        to tell whether it holds the store's documents without listing every chunk id."""
        counts = self._doc_sizes
        return {name: int(n) for name, n in zip(self._doc_names, counts, strict=True) if n}

    @cached_property
    def _ids_sum(self) -> int:
        return ids_sum(self.chunk_ids)

    @property
    def ids_hash(self) -> str:
        """A digest of the chunk ids (module function ids_hash), to compare with the store without comparing every
        id; kept up to date by each write from its own ids."""
        return f"{self._ids_sum:032x}"

    # -- updates --------------------------------------------------------------------------------------------
    def with_chunks(self, chunks: Sequence[Chunk], *, generation: int) -> BM25Index:
        """A new index with `chunks` added as one segment; chunks already present (same id) are skipped. Ids are
        looked up only for documents the index holds already (an id is derived from its document's id), so adding
        a new document never lists the library's ids."""
        held = self.documents
        fresh, seen = [], set()
        for chunk in chunks:  # the first of repeated ids wins, as in the vector store
            if chunk.id not in seen and (chunk.doc_id not in held or chunk.id not in self._row_of):
                seen.add(chunk.id)
                fresh.append(chunk)
        if not fresh:
            return self.at_generation(generation)
        with _VOCAB_LOCK:  # two writers growing one shared dict would give a token two ids
            vocab = self._grow()
            doc_len, row_ptr, tok, tf, tokens = seg_mod.tokenised(fresh, vocab, tokenize)
        doc_codes, doc_names = _codes([c.doc_id for c in fresh], self._doc_names)
        type_codes, type_names = _codes([c.file_type for c in fresh], self._type_names)
        segment = seg_mod.make(tuple(c.id for c in fresh), doc_codes, type_codes, doc_len, row_ptr, tok, tf,
                               tokens, self._n_vocab)
        df = np.zeros(segment.vocab_end, dtype=np.int64)
        df[: self._n_vocab] = self._df
        df += segment.df()
        segments, dead = seg_mod.tidy(self._segments + [segment], self._dead + [None])
        index = self._like(segments, dead, generation=generation, vocab=vocab, df=df, doc_names=doc_names,
                           type_names=type_names)
        index._ids_sum = (self._ids_sum + ids_sum(segment.chunk_ids)) % _HASH_MOD
        return index

    def _grow(self) -> dict[str, int]:
        """The vocabulary dict a new segment may add to: this index's own when no newer index added to it (the
        usual case: no copy of a large dict per write), else a copy of the part this index knows. Older indexes
        ignore ids beyond their own vocabulary, so sharing the dict never changes what they find. The caller holds
        _VOCAB_LOCK."""
        if len(self._vocab) == self._n_vocab:
            return self._vocab
        return dict(islice(self._vocab.items(), self._n_vocab))

    def without_chunks(self, chunk_ids: Iterable[str], *, generation: int) -> BM25Index:
        """A new index without the given chunk ids (unknown ids are ignored)."""
        row_of = self._row_of
        rows = np.fromiter((row_of[c] for c in set(chunk_ids) if c in row_of), dtype=np.int64)
        return self._without_rows(np.sort(rows), generation)

    def without_documents(self, doc_ids: Iterable[str], *, generation: int) -> BM25Index:
        """A new index without any chunk of the given documents."""
        wanted = set(doc_ids)
        codes = [i for i, name in enumerate(self._doc_names) if name in wanted]
        gone = np.isin(self._doc_codes, codes)
        if self._alive is not None:
            gone &= self._alive
        return self._without_rows(np.flatnonzero(gone), generation)

    def _without_rows(self, rows: np.ndarray, generation: int) -> BM25Index:
        """`rows` (global, live, sorted) marked dead and their tokens un-counted."""
        if not len(rows):
            return self.at_generation(generation)
        if len(rows) == self.count:  # nothing left: start afresh (the vocabulary too)
            return BM25Index(params=self.params, generation=generation)
        df = self._df.copy()
        dead = list(self._dead)
        gone_sum = ids_sum(self._all_ids[r] for r in rows)
        which = np.searchsorted(self._offsets, rows, side="right") - 1
        for i in np.unique(which):
            seg, local = self._segments[i], rows[which == i] - self._offsets[i]
            mask = np.zeros(seg.rows, dtype=bool) if dead[i] is None else dead[i].copy()
            mask[local] = True
            dead[i] = mask
            df -= np.bincount(seg.tokens_of(local), minlength=len(df))
        segments, dead = seg_mod.tidy(self._segments, dead)
        index = self._like(segments, dead, generation=generation, df=df)
        index._ids_sum = (self._ids_sum - gone_sum) % _HASH_MOD
        return index

    def at_generation(self, generation: int) -> BM25Index:
        """The same content, recorded as reflecting another store generation (no rebuild)."""
        other = object.__new__(BM25Index)
        other.__dict__.update(self.__dict__, generation=generation, _masks={}, _recent={},
                              _recent_lock=threading.Lock())
        return other

    # -- search ---------------------------------------------------------------------------------------------
    def search(self, query: str, k: int = 10, allowed: Filters | None = None,
               expansion: str = "") -> list[tuple[str, float]]:
        """The `k` best chunk ids with their BM25 scores, best first; ties keep insertion order.

        `expansion` is a second keyword query (the document's words for the user's, advanced_retrieval.keyword.expansion)
        weighed by `expanded`. Chunks without any query token are never returned, so an empty or stopword-only
        query, an empty index or a filter that allows nothing all give [].
        """
        scores = self._scores(query, allowed)
        if expansion:
            scores = expanded(scores, self._scores(expansion, allowed, skip=frozenset(tokenize(query))))
        if scores is None or k <= 0:
            return []
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[scores[top] > 0]
        top = top[np.lexsort((top, -scores[top]))]
        ids = self._all_ids
        return [(ids[i], float(scores[i])) for i in top]

    def score(self, query: str, chunk_ids: Iterable[str]) -> dict[str, float]:
        """BM25 scores of particular chunks (0.0 when no query token occurs in them; unknown ids left out)."""
        rows = {cid: self._row_of[cid] for cid in chunk_ids if cid in self._row_of}
        scores = self._scores(query, None) if rows else None
        return {cid: float(scores[row]) if scores is not None else 0.0 for cid, row in rows.items()}

    def chunk_ids_within(self, allowed: Filters) -> list[str]:
        """Every chunk id the filters allow, in index order."""
        mask = self._mask(allowed)
        if mask is None:
            return list(self.chunk_ids)
        return [self._all_ids[i] for i in np.flatnonzero(mask)]

    def document_rates(self, words: Iterable[str]) -> dict[str, dict[str, float]]:
        """For each word, {doc_id: share of that document's chunks holding it} over the documents that hold it;
        {} for a word no chunk holds or one without a token. A word of several tokens counts by its rarest token.
        Used to tell a document's name from an ordinary word (advanced_retrieval.query.naming)."""
        out: dict[str, dict[str, float]] = {}
        for word in words:
            ids = [self._token_id(t) for t in tokenize(word)]
            if not ids or None in ids or not self._df[ids].all():
                out[word] = {}
                continue
            rarest = min(ids, key=lambda i: self._df[i])
            rows = self._postings(rarest)[0]
            if self._alive is not None:
                rows = rows[self._alive[rows]]
            codes, counts = np.unique(self._doc_codes[rows], return_counts=True)
            out[word] = {self._doc_names[c]: float(n / self._doc_sizes[c]) for c, n in zip(codes, counts, strict=True)}
        return out

    def _token_id(self, token: str) -> int | None:
        i = self._vocab.get(token)
        return i if i is not None and i < self._n_vocab else None

    def _postings(self, token: int) -> tuple[np.ndarray, np.ndarray]:
        """(global rows, term frequencies) of every row holding `token`, dead rows included."""
        rows, tfs = [], []
        for seg, offset in zip(self._segments, self._offsets, strict=False):
            if token < seg.vocab_end:
                a, b = seg.col_ptr[token], seg.col_ptr[token + 1]
                rows.append(seg.col_rows[a:b] + offset)
                tfs.append(seg.col_tf[a:b])
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        return np.concatenate(rows), np.concatenate(tfs)

    @cached_property
    def _doc_sizes(self) -> np.ndarray:
        """Live chunks per document code."""
        codes = self._doc_codes if self._alive is None else self._doc_codes[self._alive]
        return np.bincount(codes, minlength=len(self._doc_names))

    @cached_property
    def _row_of(self) -> dict[str, int]:
        """{chunk id: row} of the live rows."""
        alive = self._alive
        if alive is None:
            return {cid: row for row, cid in enumerate(self._all_ids)}
        return {cid: row for row, (cid, a) in enumerate(zip(self._all_ids, alive, strict=True)) if a}

    @cached_property
    def _norm(self) -> np.ndarray:
        """BM25's length normalisation per row, k1 × (1 - b + b × length / average length of the live rows)."""
        p, doc_len = self.params, self._doc_len
        live = doc_len if self._alive is None else doc_len[self._alive]
        avgdl = float(live.mean()) if len(live) else 1.0
        avgdl = avgdl or 1.0  # all-empty chunks: no postings, any divisor will do
        return (p.k1 * (1 - p.b + p.b * doc_len / avgdl)).astype(np.float32)

    def _scores(self, query: str, allowed: Filters | None, skip: frozenset[str] = frozenset()) -> np.ndarray | None:
        """Scores of every row for `query` (each token as often as the query holds it), tokens in `skip` left
        out, dead rows and rows `allowed` leaves out 0; None when no token is known or nothing is allowed.
        The array may be shared: read it, never write to it."""
        mask = self._mask(allowed)
        if mask is not None and not mask.any():
            return None
        scores = self._unfiltered(query, skip)
        return scores if scores is None or mask is None else scores * mask

    def _unfiltered(self, query: str, skip: frozenset[str]) -> np.ndarray | None:
        """_scores without a filter (dead rows 0), remembered for the last _SCORE_CACHE queries; read-only."""
        key = (query, skip)
        with self._recent_lock:
            if key in self._recent:
                return self._recent[key]
        scores = self._score_rows(query, skip)
        if scores is not None:
            scores.flags.writeable = False
        with self._recent_lock:
            if len(self._recent) >= _SCORE_CACHE:
                self._recent.pop(next(iter(self._recent)))
            self._recent[key] = scores
        return scores

    def _score_rows(self, query: str, skip: frozenset[str]) -> np.ndarray | None:
        tokens = tokenize(query)
        if skip:
            tokens = [t for t in dict.fromkeys(tokens) if t not in skip]
        ids = [i for i in map(self._token_id, tokens) if i is not None and self._df[i] > 0]
        if not ids:
            return None
        idf = _idf(self._df[ids], self.count, self.params.idf).astype(np.float32)
        scores = np.zeros(int(self._offsets[-1]), dtype=np.float32)
        atire, k1 = self.params.method == "atire", np.float32(self.params.k1 + 1)
        norm = self._norm
        for token, weight in zip(ids, idf, strict=True):
            for seg, offset in zip(self._segments, self._offsets, strict=False):
                if token >= seg.vocab_end:
                    continue
                a, b = seg.col_ptr[token], seg.col_ptr[token + 1]
                if a == b:
                    continue
                rows, tf = seg.col_rows[a:b], seg.col_tf[a:b]
                part = norm[offset: offset + seg.rows][rows]
                part += tf
                np.divide(tf * k1 if atire else tf, part, out=part)
                part *= weight
                np.add.at(scores[offset: offset + seg.rows], rows, part)
        if self._alive is not None:
            scores *= self._alive
        return scores

    def _mask(self, allowed: Filters | None) -> np.ndarray | None:
        """1.0 for live rows the filters allow, else 0.0 (None: no filter); cached per filter value."""
        if allowed is None or (allowed.doc_ids is None and allowed.file_types is None):
            return None
        key = tuple(None if v is None else tuple(v) for v in (allowed.doc_ids, allowed.file_types))  # lists too
        mask = self._masks.get(key)
        if mask is None:
            ok = np.ones(int(self._offsets[-1]), dtype=bool) if self._alive is None else self._alive.copy()
            for wanted, names, codes in (
                (key[0], self._doc_names, self._doc_codes),
                (key[1], self._type_names, self._type_codes),
            ):
                if wanted is not None:
                    ok &= np.isin(codes, [i for i, name in enumerate(names) if name in set(wanted)])
            mask = ok.astype(np.float32)
            if len(self._masks) >= _MASK_CACHE:
                self._masks.clear()
            self._masks[key] = mask
        return mask

    # -- disk -----------------------------------------------------------------------------------------------
    def manifest(self) -> dict:
        """What a saved copy claims to hold: compared with the store before the copy is trusted."""
        p = self.params
        return {
            "format": FORMAT_VERSION, "tokenizer": TOKENIZER_VERSION, "generation": self.generation,
            "count": self.count, "ids_hash": self.ids_hash, "params": {"k1": p.k1, "b": p.b, "method": p.method, "idf_method": p.idf},
            "doc_names": list(self._doc_names), "type_names": list(self._type_names),
            "segments": [{"name": s.name, "rows": s.rows, "dead": _runs(d)}
                         for s, d in zip(self._segments, self._dead, strict=True)],
        }

    def save(self, directory: Path, manifest: str = MANIFEST) -> None:
        """Write the index into `directory` (created): the segments not there yet, then the manifest `manifest`.
        Segments never change, so a copy saved over an earlier one writes only what was added since."""
        save_index(self.manifest(), self._segments, Path(directory), manifest)

    @classmethod
    def load(cls, directory: Path, *, params: BM25Params | None = None, manifest: str = MANIFEST) -> BM25Index:
        """Read an index saved by `save` (or by the earlier, one-file-set format); other `params` just score
        differently (scores are computed at query time from the postings).

        Raises:
            BM25IndexError: missing or unreadable files, another format/tokenizer version, or inconsistent sizes.
        """
        saved = load_index(Path(directory), manifest)
        dead = [_mask_of(runs, seg.rows) for seg, runs in zip(saved.segments, saved.dead, strict=True)]
        index = cls(saved.segments, dead, params=params or saved.params, generation=saved.generation,
                    doc_names=saved.doc_names, type_names=saved.type_names)
        if saved.ids_hash:  # written by the index that saved these very segments (their files checked above)
            index._ids_sum = int(saved.ids_hash, 16)
        return index


def _runs(dead: np.ndarray | None) -> list[list[int]]:
    """[[start, end), …] of the True runs of `dead`."""
    if dead is None or not dead.any():
        return []
    edges = np.flatnonzero(np.diff(np.concatenate(([False], dead, [False])).astype(np.int8)))
    return [[int(a), int(b)] for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _mask_of(runs: list[list[int]], rows: int) -> np.ndarray | None:
    if not runs:
        return None
    mask = np.zeros(rows, dtype=bool)
    for a, b in runs:
        mask[a:b] = True
    return mask


def expanded(own: np.ndarray | None, extra: np.ndarray | None) -> np.ndarray | None:
    """The user's scores plus the expansion's, the expansion capped (vocabulary.py's docstring): each expansion
    token counts at most EXPANSION_SHARE of a user token and the whole expansion at most EXPANSION_SHARE of the
    user's best score. With no user score at all, the expansion's own."""
    if extra is None or not extra.any():
        return own
    if own is None or not own.any():
        return extra
    weight = EXPANSION_SHARE * min(1.0, float(own.max()) / float(extra.max()))
    return own + np.float32(weight) * extra


_HASH_MOD = 1 << 128


def ids_sum(chunk_ids: Iterable[str]) -> int:
    """The sum of the ids' 128-bit blake2b digests, modulo 2^128: the same for the same set in any order, and kept
    up to date by adding a write's ids and subtracting a deletion's (no pass over the library)."""
    total = 0
    for cid in chunk_ids:
        total += int.from_bytes(hashlib.blake2b(cid.encode(), digest_size=16).digest(), "big")
    return total % _HASH_MOD


def ids_hash(chunk_ids: Iterable[str]) -> str:
    """A digest of a set of chunk ids (ids_sum in hex), to compare an index with the store without comparing
    every id."""
    return f"{ids_sum(chunk_ids):032x}"

