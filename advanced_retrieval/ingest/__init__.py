"""The ingestion queue: uploads saved first, then indexed one after another by one worker (`queue`), their files
on disk (`queue_files`), how long each has left (`estimates`) and whether a failure was the disk's (`disk`)."""

from advanced_retrieval.ingest.queue import IngestQueue, IngestQueueError
from advanced_retrieval.ingest.queue_files import Pause, QueueItem, SetAside

__all__ = ["IngestQueue", "IngestQueueError", "Pause", "QueueItem", "SetAside"]
