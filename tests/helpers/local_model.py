"""The local model (OpenAI-compatible stub) the tests configure: its key, model and question."""

from __future__ import annotations

from agentic_rag import LocalBrain
from testing.openai_stub import STUB_MODELS

KEY = "sk-local-stub-key-that-must-never-leak-7"
MODEL = STUB_MODELS[0]
QUESTION = "What was Acme's revenue in 2023?"


MODEL_MODE = LocalBrain.mode  # what the engine calls a model-written answer
