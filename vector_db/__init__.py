"""The vector store: embeddings of chunks in Chroma (embedded or server), with a library of indexed documents."""

from vector_db.client import REBUILD_HINT, LibraryDamaged, StoreError, client_from_env, make_client
from vector_db.embedder import OnnxEmbedder
from vector_db.hashing import HashingEmbedder
from vector_db.records import DocumentRecord
from vector_db.seams import Embedder
from vector_db.search import OVERFETCH, ChunkFilter
from vector_db.store import VectorStore

__all__ = [
    "OVERFETCH", "REBUILD_HINT", "ChunkFilter", "DocumentRecord", "Embedder", "HashingEmbedder", "LibraryDamaged",
    "OnnxEmbedder", "StoreError", "VectorStore",
    "client_from_env", "make_client",
]
