"""agentic_rag.brains.offline: the offline brain's verification."""

from __future__ import annotations

from agentic_rag import OfflineBrain
from agentic_rag.brains.offline import _closest
from agentic_rag.checks.claims import split_claims
from agentic_rag.checks.verdicts import check_claim
from agentic_rag.confidence import support_share
from tests.helpers.agent import _block, make_chunk


def test_confidence_drops_when_a_quote_does_not_answer(chunks, fake_embedder):
    brain = OfflineBrain(fake_embedder)
    blocks = [_block(1, chunks[0], ("What was Acme's revenue in 2023?",))]
    good = split_claims('"Revenue in 2023 was $5.2 million, up 12% from 2022." [P1]')
    bad = split_claims('"The company employs 140 people." [P1]')
    verdicts, _ = brain.verify(good + bad, blocks, question="What was Acme's revenue in 2023?").value
    claims = [check_claim(d, v, {1: blocks[0]}) for d, v in zip(good + bad, verdicts, strict=True)]
    assert [c.verdict for c in claims] == ["supported", "unsupported"] and support_share(claims) == 0.5


def test_a_refusal_names_each_closest_place_once():
    blocks = [_block(n, make_chunk("d1", "deck.pptx", f"Passage {n} of the deck.", ordinal=n, slide=slide))
              for n, slide in ((1, 6), (2, 6), (3, 9))]
    assert _closest(blocks) == "\nClosest passages (not an answer): deck.pptx slide 6; deck.pptx slide 9."
