"""The graph's nodes, one file each: analyze, decompose, retrieve, synthesize, verify; `run` is what they share.

Each step is a plain function of (state, run) that returns only the keys it changes.
"""

from agentic_rag.steps.analyze import analyze
from agentic_rag.steps.decompose import decompose_step
from agentic_rag.steps.retrieve import retrieve
from agentic_rag.steps.synthesize import synthesize
from agentic_rag.steps.verify import verify

__all__ = ["analyze", "decompose_step", "retrieve", "synthesize", "verify"]
