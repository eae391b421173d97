"""agentic_rag.language.meaning: the embedder is asked once per text."""

from __future__ import annotations

from agentic_rag import OfflineBrain
from agentic_rag.language.question_rules import analyze_question
from tests.helpers.agent import _block


def test_the_embedder_is_asked_once_per_text(chunks, fake_embedder):
    brain = OfflineBrain(fake_embedder)
    blocks = [_block(i + 1, c, ("What was Acme's revenue in 2023?",), rank=i + 1) for i, c in enumerate(chunks)]
    analysis = analyze_question("What was Acme's revenue in 2023?")
    brain.answer(analysis, (analysis.standalone,), blocks)
    first = fake_embedder.texts_embedded
    brain.answer(analysis, (analysis.standalone,), blocks)  # a retry round sees the same passages again
    assert first > 0 and fake_embedder.texts_embedded == first
