"""Keyword retrieval: the BM25 index over chunks (`bm25`, made of write-once `segments`, saved by `files`; what they
share is in `corpus`),
the index kept in step with a store (`index`), the tokenizer (`tokens`) and the query expansion from a small
vocabulary of how documents word what questions ask (`vocabulary`, `expansion`)."""

from advanced_retrieval.keyword.bm25 import BM25Index
from advanced_retrieval.keyword.corpus import BM25IndexError, BM25Params
from advanced_retrieval.keyword.index import KeywordIndex
from advanced_retrieval.keyword.tokens import tokenize

__all__ = ["BM25Index", "BM25IndexError", "BM25Params", "KeywordIndex", "tokenize"]
