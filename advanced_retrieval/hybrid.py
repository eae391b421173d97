"""Hybrid retrieval: vector and BM25 candidates fused by reciprocal rank, every score kept on the hit."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

import numpy as np

from advanced_retrieval.fusion import RRF_K, reciprocal_rank_fusion
from advanced_retrieval.keyword.expansion import expansion_query, heading_phrases
from advanced_retrieval.keyword.index import KeywordIndex
from advanced_retrieval.query.bodies import Bodies
from advanced_retrieval.query.naming import NamedDocuments
from advanced_retrieval.query.plan import KEYWORD_WEIGHT, QueryPlan, plan_query
from advanced_retrieval.query.sections import Sections
from advanced_retrieval.seams import Store
from advanced_retrieval.types import STRATEGIES, Filters, Hit, page_key
from document_processor import Chunk
from vector_db import Embedder

log = logging.getLogger(__name__)


def _normalised(text: str) -> str:
    return " ".join(text.casefold().split())


NAMED_WEIGHT = 1.0  # fusion weight of the searches within the named documents, as the library-wide ones
# The named documents' pages whose headings hold a statement or section name of the query's vocabulary expansion
# (advanced_retrieval.query.sections, expansion.heading_phrases) are fused as one more list whose weight is this share of
# the other lists' total: the first headed page counts as much as a chunk every other search puts first. A question
# that names a document and the statement its answer is read from (a margin, a ratio, a balance) is answered on
# that statement's page, whose line items neither its words nor its meaning resemble, so no other list brings it
# up. Chosen on financebench_dev only (hybrid MRR@10, every other piece on; docs/retrieval.md): a fixed weight of 3
# .424, 4 .506, 5 .528, 6 .540, 8 .528; the share 1.0 matches 4 for plain questions and 6 for those with exact terms.
SECTION_SHARE = 1.0
SECTION_DOCS = 4  # headed pages are looked for in at most this many documents (each read once per generation)


@dataclass(frozen=True)
class _Candidates:
    """What each retriever proposed: vector (chunk, cosine) and BM25 (chunk id, score), best first."""

    vector: list[tuple[Chunk, float]]
    bm25: list[tuple[str, float]]
    query_vector: np.ndarray | None = None  # the embedded query (hybrid and vector)
    extra: tuple[tuple[list[str], float], ...] = ()  # hybrid: more ranked lists to fuse, with their weights
    headed: list[str] = field(default_factory=list)  # hybrid: pages headed by what the query names (sections)
    cosine: dict[str, float] = field(default_factory=dict)  # cosines measured for the extra lists


class HybridRetriever:
    """Finds the chunks that answer a query with vector search, BM25, or both fused (RRF).

    Args:
        store: the VectorStore (query, get_chunks, generation, documents).
        bm25: the KeywordIndex of the same store; it is brought up to date before each query, so another
            process's writes become visible.
        embedder: embeds the query (.embed_query) into the store's vector space.
        candidates: chunks each retriever proposes before fusion.
        rrf_k: the RRF constant.
        keyword_weight: BM25's fusion weight when the query holds exact terms (see fusion.plan_query).
        expand: add the vocabulary's document words to the BM25 query (advanced_retrieval.keyword.expansion).
        one_per_page: at most one hit per page (or slide); the page's other chunks ride on it as `page_chunks`.
        route: in hybrid, search again within the documents the query names (advanced_retrieval.query.naming) and fuse
            those lists too, so the named document's passages outrank the same passage in a sibling document.
        sections: with expand, also fuse the pages whose headings hold a statement or section name of the query's
            vocabulary expansion (advanced_retrieval.query.sections), in the documents the query names (route), else in
            those the filter keeps, else in the library's only document: the statement or section it is about.

    Raises:
        ValueError: candidates < 1, rrf_k < 0 or keyword_weight <= 0.
    """

    def __init__(self, store: Store, bm25: KeywordIndex, embedder: Embedder, *, candidates: int = 30,
                 rrf_k: int = RRF_K, keyword_weight: float = KEYWORD_WEIGHT, expand: bool = True,
                 one_per_page: bool = True, route: bool = True, sections: bool = True):
        if candidates < 1 or rrf_k < 0 or keyword_weight <= 0:
            raise ValueError(f"need candidates >= 1, rrf_k >= 0 and keyword_weight > 0; got {candidates}, "
                             f"{rrf_k}, {keyword_weight}")
        self._store = store
        self._bm25 = bm25
        self._embedder = embedder
        self.candidates = candidates
        self.rrf_k = rrf_k
        self.keyword_weight = keyword_weight
        self.expand = expand
        self.one_per_page = one_per_page
        self.route = route
        self.sections = sections
        self._named = NamedDocuments(store)
        self._sections = Sections(store)
        self._bodies = Bodies(store)
        self._executor: ThreadPoolExecutor | None = None  # made on first hybrid query
        self._worker_lock = threading.Lock()
        # warm_soon reads ahead only where asked for (the app's library): a one-shot command would pay for it
        self.read_ahead = False
        self._warm_at = 0.0
        self._warmer: threading.Thread | None = None

    # -- reading ahead --------------------------------------------------------------------------------------
    def warm(self) -> dict[str, float]:
        """Read now what each document's first question would read: its stored vectors and its chunks (when the
        whole library fits NamedDocuments' and Bodies' caches: then a question's vector search is a product over
        the held vectors, exact, and reads nothing from the store) and its pages' headings (Sections').
        Figures: documents, vectors, chunks and sections read, seconds."""
        started = time.perf_counter()
        with _pinned(self._store):
            index = self._bm25.current(self._store)
            docs = self._named.documents(index)
            if sum(r.chunks for r in self._store.documents()) > NamedDocuments.MAX_CACHED_VECTORS:
                # a larger library would only push itself out of the caches: nothing is read (bounded work)
                return {"documents": len(docs), "vectors": 0, "chunks": 0, "sections": 0,
                        "seconds": round(time.perf_counter() - started, 3)}
            vectors = self._named.read_ahead(index)
            chunks = self._bodies.read_ahead(index.chunk_ids, index.generation)
            sections = self._sections.read_ahead(docs, index.generation) if self.sections and self.expand else 0
        return {"documents": len(docs), "vectors": vectors, "chunks": chunks, "sections": sections,
                "seconds": round(time.perf_counter() - started, 3)}

    def warm_soon(self, delay: float = 2.0) -> None:
        """warm() on a background thread `delay` seconds after the last call (a batch of writes warms once, after
        its last file), when read_ahead is on; a failure is logged with its traceback (questions then read what
        they need themselves, as without reading ahead)."""
        if not self.read_ahead:
            return
        with self._worker_lock:
            self._warm_at = time.monotonic() + delay
            if self._warmer is None:
                self._warmer = threading.Thread(target=self._warm_later, name="retrieval-read-ahead", daemon=True)
                self._warmer.start()

    def _warm_later(self) -> None:
        while True:
            with self._worker_lock:
                wait = self._warm_at - time.monotonic()
                if wait <= 0:
                    self._warmer = None  # a later warm_soon starts another thread
                    break
            time.sleep(min(wait, 1.0))
        try:
            log.info("read ahead for first questions: %s", self.warm())
        except Exception:
            log.warning("reading ahead for the library's first questions failed; each question reads what it "
                        "needs instead", exc_info=True)

    def documents(self) -> list:
        """The store's ready documents (DocumentRecord), sorted by file name."""
        return self._store.documents()

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        """Every chunk of one document, in order (for an exhaustive check such as "which files do NOT mention X")."""
        return self._store.document_chunks(doc_id)

    def plan(self, query: str, strategy: str = "auto") -> QueryPlan:
        """The plan `retrieve` follows: for "auto" the strategy chosen from the query, else the one given.

        Raises:
            ValueError: a strategy not in STRATEGIES.
        """
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; allowed: {', '.join(STRATEGIES)}")
        auto = plan_query(query, self.keyword_weight)
        if strategy == "auto":
            return auto
        return QueryPlan(strategy, f"{strategy} (chosen by the caller)", auto.keyword_weight, auto.phrases)

    def retrieve(self, query: str, k: int = 8, strategy: str = "auto", filters: Filters | None = None) -> list[Hit]:
        """The `k` best chunks for `query`, best first; [] for an empty query, an empty store or no match.

        Hits carry the score (RRF for hybrid, cosine for vector, BM25 for bm25), the 1-based rank, the cosine
        similarity whenever the query was embedded (hybrid and vector; for a BM25-only hit of a hybrid query it is
        computed from the chunk's stored vector, one store read, no embedding; None for bm25, which never embeds
        the query), the BM25 score whenever the BM25 index knows the chunk (0.0: no query term in it), and the
        strategy actually used.

        Raises:
            ValueError: a strategy not in STRATEGIES.
        """
        plan = self.plan(query, strategy)
        if k <= 0 or not (query or "").strip():
            return []
        # The query is embedded on a worker thread (the runtime leaves the GIL) from the start: while the store's
        # generation is read and the keyword searches, named documents and headed pages are worked out here.
        embedding = (self._worker().submit(self._embedder.embed_query, query)
                     if plan.strategy in ("vector", "hybrid") else None)
        with _pinned(self._store):  # the store's generation read once for the whole retrieval
            return self._retrieve(plan, query, k, filters, embedding)

    def _retrieve(self, plan: QueryPlan, query: str, k: int, filters: Filters | None,
                  embedding: Future | None) -> list[Hit]:
        index = self._bm25.current(self._store)
        found, chunks = self._candidates(plan, query, k, filters, index, embedding)
        cosine = {**found.cosine, **{c.id: s for c, s in found.vector}}
        # The user's own words' BM25 score (no expansion) for every candidate: one sparse product over its tokens.
        bm25 = index.score(query, [*(cid for cid, _ in found.bm25), *cosine])
        ranked = self._rank(plan, found, chunks, index.generation)
        hits = self._first_k(ranked, chunks, k, filters, plan.strategy, cosine, bm25, index.generation)
        if found.query_vector is not None and any(h.vector_score is None for h in hits):
            hits = self._with_stored_cosine(hits, found.query_vector, index)
        return hits

    def _first_k(self, ranked: list[tuple[str, float]], chunks: dict[str, Chunk], k: int, filters: Filters | None,
                 strategy: str, cosine: dict[str, float], bm25: dict[str, float], generation: int) -> list[Hit]:
        """The first k hits of the ranking, one per page when `one_per_page` (a page's later chunks are attached
        to its hit as page_chunks); chunks deleted since the BM25 index was read or outside the filters skipped."""
        hits: list[Hit] = []
        pages: dict[tuple, int] = {}
        mates: dict[int, list[Chunk]] = {}
        pos = 0
        while len(hits) < k and pos < len(ranked):
            window = ranked[pos:pos + k - len(hits)]
            pos += len(window)
            self._fetch_missing(chunks, [cid for cid, _ in window], generation)
            for cid, score in window:
                chunk = chunks.get(cid)
                if chunk is None or (filters is not None and not filters.allows(chunk)):
                    continue
                key = page_key(chunk) if self.one_per_page else (cid,)
                if key in pages:
                    mates.setdefault(pages[key], []).append(chunk)
                    continue
                pages[key] = len(hits)
                hits.append(Hit(chunk=chunk, score=score, rank=len(hits) + 1, vector_score=cosine.get(cid),
                                bm25_score=bm25.get(cid), strategy=strategy))
        for cid, _ in ranked[pos:]:  # later candidates already fetched still join their page (no store read)
            chunk = chunks.get(cid)
            if chunk is not None and self.one_per_page and page_key(chunk) in pages:
                mates.setdefault(pages[page_key(chunk)], []).append(chunk)
        return [replace(h, page_chunks=tuple(mates[i])) if i in mates else h for i, h in enumerate(hits)]

    def _with_stored_cosine(self, hits: list[Hit], query_vector: np.ndarray, index) -> list[Hit]:
        """BM25-only hits get their cosine from the stored vectors (unit length, as the query's): those held
        (NamedDocuments), the others read."""
        wanted = [h.chunk for h in hits if h.vector_score is None]
        stored = self._named.cached_vectors(wanted, index)
        if len(stored) < len(wanted):
            stored.update(self._store.vectors([c.id for c in wanted if c.id not in stored]))
        return [replace(h, vector_score=float(stored[h.chunk.id] @ query_vector))
                if h.vector_score is None and h.chunk.id in stored else h for h in hits]

    def _candidates(self, plan: QueryPlan, query: str, k: int, filters: Filters | None, index,
                    embedding: Future | None) -> tuple[_Candidates, dict[str, Chunk]]:
        """Both retrievers' candidates, and the chunks known so far.

        In hybrid, BM25's first k chunks are fetched from the store on a worker thread while the query is
        embedded (on another) and the vector search runs (measured: 2-4 ms less per query at 10k and 100k chunks). Without
        quoted phrases a BM25-only chunk can only reach the fused top k from there, as RRF keeps BM25's order
        among them; anything else still missing is fetched afterwards.
        """
        # A warm library's exact vector search follows the embedding on the worker (numpy leaves the GIL too).
        nearest = (self._worker().submit(self._held_nearest, embedding, filters, index)
                   if embedding is not None else None)
        expansion = expansion_query(query) if self.expand else ""
        bm25 = (index.search(query, self.candidates, filters, expansion=expansion)
                if plan.strategy in ("bm25", "hybrid") else [])
        prefetch = None
        if plan.strategy == "hybrid" and bm25:
            prefetch = self._worker().submit(self._bodies.get, [cid for cid, _ in bm25[:k]], index.generation)
        within = self._named.within(query, filters, index) if plan.strategy == "hybrid" and self.route else None
        named_bm25 = self._named_bm25(plan, query, expansion, within, index)
        headed = self._headed(plan, query, expansion, within, filters, index)
        query_vector, near = nearest.result() if nearest is not None else (None, None)
        vector = self._vector(query_vector, near, filters, index) if query_vector is not None else []
        chunks = {c.id: c for c, _ in vector}
        named_cosine: dict[str, float] = {}
        extra = self._named_lists(query_vector, within, index, named_cosine, named_bm25)
        if prefetch is not None:
            for chunk in prefetch.result().values():
                chunks.setdefault(chunk.id, chunk)
        return _Candidates(vector=vector, bm25=bm25, query_vector=query_vector, extra=extra, headed=headed,
                           cosine=named_cosine), chunks

    def _held_nearest(self, embedding: Future, filters: Filters | None,
                      index) -> tuple[np.ndarray, list[tuple[str, float]] | None]:
        """The query's vector, and its `candidates` nearest chunk ids over the held vectors (None: not all held).
        Runs on a worker thread, outside the retrieval's pinned view: it reads no chunk or vector from the store,
        only, once per generation, the library's document list when the names are not read yet."""
        query_vector = embedding.result()
        return query_vector, self._named.library_nearest(query_vector, filters, index, self.candidates)

    def _vector(self, query_vector: np.ndarray, near: list[tuple[str, float]] | None, filters: Filters | None,
                index) -> list[tuple[Chunk, float]]:
        """The `candidates` chunks nearest to the query: `near`, the exact search over the held vectors, with
        their chunks from Bodies; else (None) the store's own search, whose chunks Bodies keeps."""
        if near is None:
            found = self._store.query(query_vector, self.candidates, filters)
            self._bodies.add([c for c, _ in found], index.generation)
            return found
        chunks = self._bodies.get([cid for cid, _ in near], index.generation)
        return [(chunks[cid], score) for cid, score in near if cid in chunks]

    def _named_bm25(self, plan: QueryPlan, query: str, expansion: str, within: Filters | None,
                    index) -> tuple[list[str], float] | None:
        """Hybrid only: the keyword search again `within` the documents the query names (route), with its weight."""
        if within is None:  # only a hybrid query with route names documents
            return None
        return ([cid for cid, _ in index.search(query, self.candidates, within, expansion=expansion)],
                NAMED_WEIGHT * plan.keyword_weight)

    def _named_lists(self, query_vector, within: Filters | None, index, cosine: dict[str, float],
                     named_bm25: tuple[list[str], float] | None) -> tuple[tuple[list[str], float], ...]:
        """Hybrid only: both searches again `within` the documents the query names (route): the vector one
        here, the keyword one from _named_bm25. (Embedding the expansion's words as a query of their own was
        tried: dev MRR@10 -0.036, 8 questions worse, 2 better.) The cosines measured within the named documents
        are added to `cosine`."""
        if within is None or named_bm25 is None:
            return ()
        near = self._named.nearest(query_vector, within, index, self.candidates)
        cosine.update(near)
        return (([cid for cid, _ in near], NAMED_WEIGHT), named_bm25)

    def _headed(self, plan: QueryPlan, query: str, expansion: str, within: Filters | None, filters: Filters | None,
                index) -> list[str]:
        """Hybrid with sections: the pages headed by what the query's vocabulary names, `within` the documents the
        query names (route), else those the filter keeps, else the library's only document; [] otherwise."""
        if plan.strategy != "hybrid" or not (self.sections and expansion):
            return []
        asked = within.doc_ids if within is not None else self._asked_documents(filters, index)
        return self._headed_pages(query, expansion, asked, index) if 0 < len(asked) <= SECTION_DOCS else []

    def _asked_documents(self, filters: Filters | None, index) -> tuple[str, ...]:
        """Without a named document, the documents a question is about all the same: those the caller's filter
        keeps (the "asking only about X" scope), or the library's only document."""
        if filters is not None and filters.doc_ids is not None:
            return tuple(filters.doc_ids)
        library = self._named.documents(index)
        return library if len(library) == 1 else ()

    def _headed_pages(self, query: str, expansion: str, doc_ids: tuple[str, ...], index) -> list[str]:
        """These documents' pages whose headings hold a statement or section name of the expansion
        (vocabulary.HEADINGS: "balance sheets", not the line item "net sales"), each as its chunk the query and its
        expansion score best on (BM25), best page first; at most `candidates`."""
        pages = self._sections.pages(doc_ids, heading_phrases(query), index.generation)
        scored = index.score(f"{query} {expansion}", [cid for page in pages for cid in page.chunk_ids])
        best = [max(page.chunk_ids, key=lambda cid: scored.get(cid, 0.0)) for page in pages]
        best.sort(key=lambda cid: -scored.get(cid, 0.0))  # stable: document order among equals
        return best[:self.candidates]

    def _worker(self) -> ThreadPoolExecutor:
        with self._worker_lock:
            if self._executor is None:
                one_blas_thread()
                # a retrieval's query embedding and its BM25 prefetch, for two retrievals at once (sub-questions)
                self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retrieval")
            return self._executor

    def _rank(self, plan: QueryPlan, found: _Candidates, chunks: dict[str, Chunk],
              generation: int) -> list[tuple[str, float]]:
        """(chunk id, score) best first: the single retriever's own scores, or RRF for hybrid.

        Quoted phrases: for bm25 the candidates holding them move first (scores stay BM25's); for hybrid they
        form a third ranked list with the keyword weight.
        """
        if plan.strategy == "vector":
            return [(c.id, s) for c, s in found.vector]
        bm25_ids = [cid for cid, _ in found.bm25]
        if plan.strategy == "bm25":
            if not plan.phrases:
                return list(found.bm25)
            first = set(self._with_phrases(plan.phrases, [bm25_ids], chunks, generation))
            return sorted(found.bm25, key=lambda item: item[0] not in first)  # stable: BM25 order inside
        lists = [[c.id for c, _ in found.vector], bm25_ids, *(ids for ids, _ in found.extra)]
        weights = [1.0, plan.keyword_weight, *(w for _, w in found.extra)]
        if found.headed:
            lists.append(found.headed)
            weights.append(SECTION_SHARE * sum(weights))
        if plan.phrases:
            lists.append(self._with_phrases(plan.phrases, lists, chunks, generation))
            weights.append(plan.keyword_weight)
        return reciprocal_rank_fusion(lists, k=self.rrf_k, weights=weights)

    def _with_phrases(self, phrases: tuple[str, ...], lists: list[list[str]], chunks: dict[str, Chunk],
                      generation: int) -> list[str]:
        """Candidates whose text holds every quoted phrase (case and spacing ignored), in fused order: BM25
        has no positions, so "net income" would otherwise rank like "income ... net"."""
        order = [cid for cid, _ in reciprocal_rank_fusion(lists, k=self.rrf_k)]
        self._fetch_missing(chunks, order, generation)
        wanted = [_normalised(p) for p in phrases]
        return [cid for cid in order if cid in chunks
                and all(p in _normalised(chunks[cid].index_text) for p in wanted)]

    def _fetch_missing(self, chunks: dict[str, Chunk], ids: list[str], generation: int) -> None:
        missing = [cid for cid in ids if cid not in chunks]
        if missing:
            chunks.update(self._bodies.get(missing, generation))


_BLAS = threading.Lock()
_blas_held = False


def one_blas_thread() -> None:
    """Hold numpy's BLAS to one thread in this process (once). A question's products are memory-bound (the
    library's 28,710 × 384 vectors: 1.9 ms on one thread, 1.1-1.9 ms on two), and the second BLAS thread, spinning
    after each product, took the core the keyword searches ran on: they went from 2.3 to 4.6 ms a question
    (FinanceBench library, 2 cores). No other product of the app is large enough to gain from threads."""
    global _blas_held
    with _BLAS:
        if not _blas_held:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=1, user_api="blas")
            _blas_held = True


def _pinned(store):
    """store.pinned() (one generation read per retrieval) where the store has it; a no-op context otherwise."""
    pinned = getattr(store, "pinned", None)
    return pinned() if pinned is not None else nullcontext()
