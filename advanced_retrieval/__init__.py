"""Keyword (BM25) and hybrid retrieval over the vector store, the KnowledgeBase that keeps both in step, and the
ingestion queue that is its one writer of uploads."""

from advanced_retrieval.fusion import RRF_K, reciprocal_rank_fusion
from advanced_retrieval.hybrid import HybridRetriever
from advanced_retrieval.ingest.queue import IngestQueue, IngestQueueError
from advanced_retrieval.ingest.queue_files import QueueItem
from advanced_retrieval.keyword.bm25 import BM25Index
from advanced_retrieval.keyword.corpus import BM25IndexError, BM25Params
from advanced_retrieval.keyword.index import KeywordIndex
from advanced_retrieval.keyword.tokens import tokenize
from advanced_retrieval.library.knowledge_base import IngestResult, KnowledgeBase
from advanced_retrieval.library.locking import LockTimeout, WriteLock
from advanced_retrieval.library.originals import Originals
from advanced_retrieval.library.outline import Outline, Section, build_outline
from advanced_retrieval.query.plan import QueryPlan, choose_strategy, plan_query
from advanced_retrieval.types import STRATEGIES, Filters, Hit, Progress

__all__ = [
    "RRF_K", "STRATEGIES", "BM25Index", "BM25IndexError", "BM25Params", "Filters", "Hit", "HybridRetriever",
    "IngestQueue", "IngestQueueError", "IngestResult", "KeywordIndex", "KnowledgeBase", "LockTimeout", "Originals", "Outline", "Section", "build_outline",
    "Progress", "QueryPlan", "QueueItem", "WriteLock", "choose_strategy", "plan_query", "reciprocal_rank_fusion", "tokenize",
]
