"""The library: the KnowledgeBase that writes documents and keeps the vector store and the keyword index in
step (`knowledge_base`), the kept copy of every original file (`originals`), getting documents back from them
after a loss (`restore`) and the one-writer lock (`locking`)."""

from advanced_retrieval.library.knowledge_base import IngestResult, KnowledgeBase, shown_name
from advanced_retrieval.library.locking import LockTimeout, WriteLock
from advanced_retrieval.library.originals import Originals
from advanced_retrieval.library.outline import Outline, Section, build_outline

__all__ = ["IngestResult", "KnowledgeBase", "LockTimeout", "Originals", "Outline", "Section", "WriteLock",
           "build_outline", "shown_name"]
