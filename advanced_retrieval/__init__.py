"""Keyword (BM25) and hybrid retrieval over the vector store, and the KnowledgeBase that keeps both in step."""

from advanced_retrieval.bm25 import BM25Index, BM25IndexError, BM25Params
from advanced_retrieval.fusion import RRF_K, QueryPlan, choose_strategy, plan_query, reciprocal_rank_fusion
from advanced_retrieval.keyword_index import KeywordIndex
from advanced_retrieval.knowledge_base import IngestResult, KnowledgeBase
from advanced_retrieval.locking import LockTimeout, WriteLock
from advanced_retrieval.retriever import HybridRetriever
from advanced_retrieval.tokens import tokenize
from advanced_retrieval.types import STRATEGIES, Filters, Hit

__all__ = [
    "RRF_K", "STRATEGIES", "BM25Index", "BM25IndexError", "BM25Params", "Filters", "Hit", "HybridRetriever",
    "IngestResult", "KeywordIndex", "KnowledgeBase", "LockTimeout", "QueryPlan", "WriteLock", "choose_strategy",
    "plan_query", "reciprocal_rank_fusion", "tokenize",
]
