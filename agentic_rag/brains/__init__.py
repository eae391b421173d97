"""The brains that plan, answer and check a question: Gemini and local models (both ModelBrain, over one request
policy in `transport` and the prompts in `prompts`) and the offline brain, which quotes and needs no model."""

from agentic_rag.brains.gemini import GeminiBrain, list_gemini_models, make_gemini_brain
from agentic_rag.brains.local import LOCAL_BUDGETS, LocalBrain, host_of, list_local_models, make_local_brain
from agentic_rag.brains.model import ModelBrain
from agentic_rag.brains.offline import OfflineBrain
from agentic_rag.brains.transport import ModelListError

__all__ = ["LOCAL_BUDGETS", "GeminiBrain", "LocalBrain", "ModelBrain", "ModelListError", "OfflineBrain", "host_of",
           "list_gemini_models", "list_local_models", "make_gemini_brain", "make_local_brain"]
