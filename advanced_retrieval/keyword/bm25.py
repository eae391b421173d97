"""An immutable BM25 index over chunks, built on bm25s, that can be updated by making a new one cheaply.

bm25s has no incremental update, so the index keeps its tokenised corpus as postings (chunk row, token id,
term frequency) and rebuilds bm25s's sparse score matrix from them with numpy when chunks are added or removed;
only new chunks are tokenised. Search goes through bm25s (`get_scores_from_ids` with a `weight_mask` for
filters), and the saved form is bm25s's own files plus the postings, the chunk ids and a manifest.

Scoring is bm25s's: method "lucene" by default (idf = ln(1 + (N - df + 0.5) / (df + 0.5)), always positive).
rank_bm25's BM25Okapi uses idf = ln((N - df + 0.5) / (df + 0.5)): 0 for a term in exactly half of the chunks,
negative above half (then replaced by 0.25 × the mean idf), so on a knowledge base of a few chunks it scores real
matches 0 or below. `BM25Params(method="atire", idf_method="robertson")` reproduces
BM25Okapi's scores exactly for terms in fewer than half of the chunks (tests/test_advanced_retrieval.py checks it);
bm25s's robertson idf is 0 where BM25Okapi's epsilon rule applies.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

import bm25s
import numpy as np
import scipy.sparse as sp

from advanced_retrieval.keyword.corpus import FORMAT_VERSION, BM25Params, Corpus
from advanced_retrieval.keyword.expansion import EXPANSION_SHARE
from advanced_retrieval.keyword.files import load_index, save_index
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION, tokenize
from advanced_retrieval.types import Filters
from document_processor import Chunk

_MASK_CACHE = 32  # filter masks remembered per index (an index never changes, so they never go stale)


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


def _scores(tf: np.ndarray, rows: np.ndarray, doc_len: np.ndarray, idf: np.ndarray, params: BM25Params):
    """idf × bm25s's term-frequency part per posting, in float32 and in place (ten million postings: 0.1 s).

    "atire" keeps BM25Okapi's (k1 + 1) factor, the others drop it (a constant, so rankings do not change).
    """
    avgdl = float(doc_len.mean()) or 1.0  # all-empty chunks: no postings, any divisor will do
    norm = (params.k1 * (1 - params.b + params.b * doc_len / avgdl)).astype(np.float32)
    out = norm[rows]
    out += tf
    num = tf * np.float32(params.k1 + 1) if params.method == "atire" else tf
    np.divide(num, out, out=out)
    out *= idf
    return out


def _build_model(corpus: Corpus, params: BM25Params) -> bm25s.BM25 | None:
    """bm25s's CSC score matrix (columns = tokens) computed from the postings, or None for an empty corpus.

    The postings are row-sorted, i.e. already a CSR matrix of term frequencies; scipy turns that into CSC in
    linear time (a stable argsort of ten million token ids took 1.4 s, this 0.1 s).
    """
    n, n_vocab = len(corpus.chunk_ids), len(corpus.vocab)
    if n == 0:
        return None
    row_ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(corpus.rows, minlength=n), out=row_ptr[1:])
    csc = sp.csr_matrix((corpus.tf.astype(np.float32), corpus.tok, row_ptr), shape=(n, n_vocab)).tocsc()
    df = np.diff(csc.indptr)
    tok = np.repeat(np.arange(n_vocab, dtype=np.int32), df)
    idf = _idf(df, n, params.idf).astype(np.float32)[tok]
    data = _scores(csc.data, csc.indices, corpus.doc_len, idf, params)
    model = bm25s.BM25(k1=params.k1, b=params.b, method=params.method, idf_method=params.idf)
    indices = csc.indices.astype(np.int32, copy=False)
    model.scores = {"data": data, "indices": indices, "indptr": csc.indptr.astype(np.int64), "num_docs": n}
    model.vocab_dict = corpus.vocab
    model.nonoccurrence_array = None
    return model


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


def _append(corpus: Corpus, chunks: Sequence[Chunk]) -> Corpus:
    """A new corpus with `chunks` tokenised and appended; the vocabulary dict is copied, never shared."""
    vocab = dict(corpus.vocab)
    start = len(corpus.chunk_ids)
    rows, tok, tf, lengths = [], [], [], np.empty(len(chunks), dtype=np.int32)
    for i, chunk in enumerate(chunks):
        counts = Counter(tokenize(chunk.index_text))
        lengths[i] = sum(counts.values())
        for token, count in counts.items():
            tok.append(vocab.setdefault(token, len(vocab)))
            tf.append(count)
        rows.extend([start + i] * len(counts))
    doc_codes, doc_names = _codes([c.doc_id for c in chunks], corpus.doc_names)
    type_codes, type_names = _codes([c.file_type for c in chunks], corpus.type_names)
    return Corpus(
        chunk_ids=corpus.chunk_ids + tuple(c.id for c in chunks), doc_names=doc_names, type_names=type_names,
        doc_codes=np.concatenate([corpus.doc_codes, doc_codes]),
        type_codes=np.concatenate([corpus.type_codes, type_codes]),
        doc_len=np.concatenate([corpus.doc_len, lengths]),
        rows=np.concatenate([corpus.rows, np.asarray(rows, dtype=np.int32)]),
        tok=np.concatenate([corpus.tok, np.asarray(tok, dtype=np.int32)]),
        tf=np.concatenate([corpus.tf, np.asarray(tf, dtype=np.int32)]), vocab=vocab,
    )


def _keep(corpus: Corpus, keep: np.ndarray) -> Corpus:
    """A new corpus with only the rows where `keep` is True, renumbered in order."""
    if not keep.any():
        return Corpus()
    new_row = np.cumsum(keep, dtype=np.int64).astype(np.int32) - 1
    kept = keep[corpus.rows]
    return Corpus(
        chunk_ids=tuple(c for c, k in zip(corpus.chunk_ids, keep, strict=True) if k), doc_names=corpus.doc_names,
        type_names=corpus.type_names, doc_codes=corpus.doc_codes[keep], type_codes=corpus.type_codes[keep],
        doc_len=corpus.doc_len[keep], rows=new_row[corpus.rows[kept]], tok=corpus.tok[kept],
        tf=corpus.tf[kept], vocab=corpus.vocab,
    )


class BM25Index:
    """Okapi BM25 over chunk ids, immutable: updates return a new index, so readers keep a consistent snapshot.

    `generation` is the vector store generation this index reflects.
    """

    def __init__(
        self, corpus: Corpus | None = None, *, params: BM25Params | None = None, generation: int = 0,
        model: bm25s.BM25 | None = None,
    ):
        """Use `build`, `load` or the update methods; `model` is a score matrix already built for `corpus`."""
        self._corpus = corpus or Corpus()
        self.params = params or BM25Params()
        self.generation = generation
        self._model = model if model is not None else _build_model(self._corpus, self.params)
        self._masks: dict[tuple, np.ndarray] = {}

    @classmethod
    def build(cls, chunks: Iterable[Chunk], *, params: BM25Params | None = None, generation: int = 0) -> BM25Index:
        """An index of `chunks` (each chunk's context header and text)."""
        return cls(params=params, generation=generation).with_chunks(list(chunks), generation=generation)

    # -- what it holds --------------------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return len(self._corpus.chunk_ids)

    @property
    def chunk_ids(self) -> tuple[str, ...]:
        return self._corpus.chunk_ids

    @property
    def vocabulary_size(self) -> int:
        return len(self._corpus.vocab)

    @cached_property
    def documents(self) -> dict[str, int]:
        """{doc_id: chunks} of the documents it holds: compared with the store's records (VectorStore.chunk_counts)
        to tell whether it holds the store's documents without listing every chunk id."""
        counts = np.bincount(self._corpus.doc_codes, minlength=len(self._corpus.doc_names))
        return {name: int(n) for name, n in zip(self._corpus.doc_names, counts, strict=True) if n}

    @cached_property
    def ids_hash(self) -> str:
        """sha256 of the sorted chunk ids, to compare with the store without comparing every id."""
        return ids_hash(self._corpus.chunk_ids)

    # -- updates --------------------------------------------------------------------------------------------
    def with_chunks(self, chunks: Sequence[Chunk], *, generation: int) -> BM25Index:
        """A new index with `chunks` added; chunks already present (same id) are skipped."""
        known = set(self._corpus.chunk_ids)
        fresh = []
        for chunk in chunks:  # the first of repeated ids wins, as in the vector store
            if chunk.id not in known:
                known.add(chunk.id)
                fresh.append(chunk)
        corpus = _append(self._corpus, fresh) if fresh else self._corpus
        return BM25Index(corpus, params=self.params, generation=generation)

    def without_chunks(self, chunk_ids: Iterable[str], *, generation: int) -> BM25Index:
        """A new index without the given chunk ids (unknown ids are ignored)."""
        gone = set(chunk_ids)
        keep = np.fromiter((c not in gone for c in self._corpus.chunk_ids), dtype=bool, count=self.count)
        corpus = self._corpus if keep.all() else _keep(self._corpus, keep)
        return BM25Index(corpus, params=self.params, generation=generation)

    def without_documents(self, doc_ids: Iterable[str], *, generation: int) -> BM25Index:
        """A new index without any chunk of the given documents."""
        codes = [i for i, name in enumerate(self._corpus.doc_names) if name in set(doc_ids)]
        keep = ~np.isin(self._corpus.doc_codes, codes)
        corpus = self._corpus if keep.all() else _keep(self._corpus, keep)
        return BM25Index(corpus, params=self.params, generation=generation)

    def at_generation(self, generation: int) -> BM25Index:
        """The same content, recorded as reflecting another store generation (no rebuild)."""
        other = object.__new__(BM25Index)
        other.__dict__.update(self.__dict__, generation=generation, _masks={})
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
        return [(self._corpus.chunk_ids[i], float(scores[i])) for i in top]

    def score(self, query: str, chunk_ids: Iterable[str]) -> dict[str, float]:
        """BM25 scores of particular chunks (0.0 when no query token occurs in them; unknown ids left out)."""
        rows = {cid: self._row_of[cid] for cid in chunk_ids if cid in self._row_of}
        scores = self._scores(query, None) if rows else None
        return {cid: float(scores[row]) if scores is not None else 0.0 for cid, row in rows.items()}

    def chunk_ids_within(self, allowed: Filters) -> list[str]:
        """Every chunk id the filters allow, in index order."""
        mask = self._mask(allowed)
        if mask is None:
            return list(self._corpus.chunk_ids)
        return [self._corpus.chunk_ids[i] for i in np.flatnonzero(mask)]

    def document_rates(self, words: Iterable[str]) -> dict[str, dict[str, float]]:
        """For each word, {doc_id: share of that document's chunks holding it} over the documents that hold it;
        {} for a word no chunk holds or one without a token. A word of several tokens counts by its rarest token.
        Used to tell a document's name from an ordinary word (advanced_retrieval.query.naming)."""
        out: dict[str, dict[str, float]] = {}
        for word in words:
            ids = [self._corpus.vocab.get(t) for t in tokenize(word)]
            if not ids or None in ids or self._model is None:
                out[word] = {}
                continue
            indptr, indices = self._model.scores["indptr"], self._model.scores["indices"]
            rarest = min(ids, key=lambda i: indptr[i + 1] - indptr[i])
            codes, counts = np.unique(self._corpus.doc_codes[indices[indptr[rarest]:indptr[rarest + 1]]],
                                      return_counts=True)
            out[word] = {self._corpus.doc_names[c]: float(n / self._doc_sizes[c])
                         for c, n in zip(codes, counts, strict=True)}
        return out

    @cached_property
    def _doc_sizes(self) -> np.ndarray:
        """Chunks per document code."""
        return np.bincount(self._corpus.doc_codes, minlength=len(self._corpus.doc_names))

    @cached_property
    def _row_of(self) -> dict[str, int]:
        return {cid: row for row, cid in enumerate(self._corpus.chunk_ids)}

    def _scores(self, query: str, allowed: Filters | None, skip: frozenset[str] = frozenset()) -> np.ndarray | None:
        """Scores of every chunk for `query` (each token as often as the query holds it), tokens in `skip` left
        out; None when no token is known."""
        vocab = self._corpus.vocab
        tokens = tokenize(query)
        if skip:
            tokens = [t for t in dict.fromkeys(tokens) if t not in skip]
        ids = [vocab[t] for t in tokens if t in vocab]
        if self._model is None or not ids:
            return None
        mask = self._mask(allowed)
        if mask is not None and not mask.any():
            return None
        return self._model.get_scores_from_ids(ids, weight_mask=mask)

    def _mask(self, allowed: Filters | None) -> np.ndarray | None:
        """1.0 for chunks the filters allow, else 0.0 (None: no filter); cached per filter value."""
        if allowed is None or (allowed.doc_ids is None and allowed.file_types is None):
            return None
        key = tuple(None if v is None else tuple(v) for v in (allowed.doc_ids, allowed.file_types))  # lists too
        mask = self._masks.get(key)
        if mask is None:
            ok = np.ones(self.count, dtype=bool)
            for wanted, names, codes in (
                (key[0], self._corpus.doc_names, self._corpus.doc_codes),
                (key[1], self._corpus.type_names, self._corpus.type_codes),
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
            "count": self.count, "ids_hash": self.ids_hash,
            "params": {"k1": p.k1, "b": p.b, "method": p.method, "idf_method": p.idf},
        }

    def save(self, directory: Path) -> None:
        """Write the index into `directory` (created); the manifest is written last."""
        save_index(self, self._corpus, self._model, Path(directory))

    @classmethod
    def load(cls, directory: Path, *, params: BM25Params | None = None) -> BM25Index:
        """Read an index saved by `save`; with other `params` it is re-scored from its postings (no re-tokenising).

        Raises:
            BM25IndexError: missing or unreadable files, another format/tokenizer version, or inconsistent sizes.
        """
        corpus, model, saved_params, generation = load_index(Path(directory))
        if params is not None and not params.scores_like(saved_params):
            return cls(corpus, params=params, generation=generation)
        return cls(corpus, params=saved_params, generation=generation, model=model)


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


def ids_hash(chunk_ids: Iterable[str]) -> str:
    """sha256 over the sorted chunk ids (one per line)."""
    h = hashlib.sha256()
    for cid in sorted(chunk_ids):
        h.update(cid.encode())
        h.update(b"\n")
    return h.hexdigest()

