"""Tables as data: every table of every document in one DuckDB file (`store`), numbers read as documents write
them (`values`), and the tables a question is about (`find`)."""

from advanced_retrieval.tables.store import Column, QueryResult, TableInfo, TableStore, TableStoreError

__all__ = ["Column", "QueryResult", "TableInfo", "TableStore", "TableStoreError"]
