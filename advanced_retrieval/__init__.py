"""Keyword (BM25) and hybrid retrieval over the vector store, the KnowledgeBase that keeps both in step, and the
ingestion queue that is its one writer of uploads."""

from advanced_retrieval.bm25 import BM25Index, BM25IndexError, BM25Params
from advanced_retrieval.fusion import RRF_K, QueryPlan, choose_strategy, plan_query, reciprocal_rank_fusion
from advanced_retrieval.ingest_queue import IngestQueue, IngestQueueError
from advanced_retrieval.keyword_index import KeywordIndex
from advanced_retrieval.knowledge_base import IngestResult, KnowledgeBase
from advanced_retrieval.locking import LockTimeout, WriteLock
from advanced_retrieval.queue_files import QueueItem
from advanced_retrieval.retriever import HybridRetriever
from advanced_retrieval.tokens import tokenize
from advanced_retrieval.types import STRATEGIES, Filters, Hit

__all__ = [
    "RRF_K", "STRATEGIES", "BM25Index", "BM25IndexError", "BM25Params", "Filters", "Hit", "HybridRetriever",
    "IngestQueue", "IngestQueueError", "IngestResult", "KeywordIndex", "KnowledgeBase", "LockTimeout", "QueryPlan",
    "QueueItem", "WriteLock", "choose_strategy", "plan_query", "reciprocal_rank_fusion", "tokenize",
]
