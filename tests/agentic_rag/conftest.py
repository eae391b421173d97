"""The agent's corpora: five hand-made chunks (a report, a memo, a deck, a sheet) with their retriever and an offline
agent, and a 10-K page (`filing`)."""

from __future__ import annotations

import pytest

from agentic_rag import OfflineBrain, build_agent
from tests.helpers.agent import FakeRetriever, make_chunk


@pytest.fixture
def chunks():
    return [
        make_chunk("d1", "acme_report.pdf", "Acme Corp annual report. Revenue in 2023 was $5.2 million, up 12% "
                   "from 2022. The company employs 140 people.", page=3),
        make_chunk("d1", "acme_report.pdf", "The three pilot sites are Aarhus, Bilbao and Cork. Bilbao hosts the "
                   "wind-turbine test bench.", 1, page=4),
        make_chunk("d2", "globex_memo.docx", "Globex revenue reached $7.9 million in 2023. Globex complies with "
                   "GDPR since 2018.", paragraph=2),
        make_chunk("d3", "kickoff.pptx", "Kick-off agenda: the steering committee meets every Monday at 9:00.",
                   slide=2),
        make_chunk("d4", "budget.xlsx", "Region | Budget\nNorth | 410000\nSouth | 385000", sheet="Budget",
                   cells="A1:B3"),
    ]


@pytest.fixture
def retriever(chunks, fake_embedder):
    return FakeRetriever(chunks, fake_embedder)


@pytest.fixture
def offline_agent(retriever, fake_embedder):
    return build_agent(OfflineBrain(), retriever, embedder=fake_embedder)


@pytest.fixture
def filing(fake_embedder):
    return FakeRetriever([
        make_chunk("f", "10k.pdf", "Adjusted EBITDA (in millions) | 2023 | 2022\nAdjusted EBITDA | 2,117 | 2,018\n"
                   "Net sales | 10,500 | 9,800", page=41),
        make_chunk("r", "resnet.pdf", "Deeper residual networks [11] are easier to optimize than plain ones [41]; "
                   "the 152-layer net has lower complexity than VGG nets.", page=1),
    ], fake_embedder)
