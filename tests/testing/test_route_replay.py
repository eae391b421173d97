"""testing.route_replay: a set through the model route on the Gemini stub, its calls, tokens and the sections
the engine read, per question and in sum."""

from __future__ import annotations

from agentic_rag import build_agent, make_gemini_brain
from evaluation.dataset import parse_question
from testing.gemini_stub import GeminiStub, docagent_responder
from testing.route_replay import measure, summary

SECTIONS = ("Introduction", "Method", "Results", "Discussion", "Conclusion")


def test_a_summary_question_reads_the_documents_sections_and_its_cost_is_counted(kb, fake_embedder):
    text = "# Turbine Wear\n\n" + "\n\n".join(
        f"## {title}\n\nThe {title.lower()} of the turbine study says one thing. It adds another point." for title in SECTIONS)
    kb.ingest_bytes(text.encode(), "turbines.md")
    questions = [parse_question({"id": "w1", "question": "Summarise the turbines document.", "doc": "turbines.md",
                                 "kind": "summary", "sections": [[t] for t in SECTIONS]}, 1),
                 parse_question({"id": "w2", "question": "What does the study say about wear?"}, 2)]
    with GeminiStub(responder=docagent_responder, delay=0.0) as stub:
        brain = make_gemini_brain("k", model="gemini-replay", base_url=stub.base_url, timeout=20.0)
        agent = build_agent(brain, kb.retriever, embedder=fake_embedder, tables=kb.tables, outlines=kb)
        rows = measure(agent, stub, questions)
        assert sum(r["calls"] for r in rows) == len(stub.requests)
    assert rows[0]["sections"] == 1.0 and rows[1]["sections"] is None  # every section read; no gold for w2
    assert all(r["calls"] >= 2 and r["input_tokens"] > 0 for r in rows)
    total = summary(rows)
    assert total["questions"] == 2 and total["section_coverage"] == 1.0 and total["calls_max"] >= 2
