"""agentic_rag.answer_record: a saved answer reads back whole."""

from __future__ import annotations


def test_an_answer_record_round_trips_through_json_whole(offline_agent):
    """What a saved conversation keeps: the answer read back equals the one given, hits and analysis included."""
    import json

    from agentic_rag import answer_from_record, answer_record

    result = offline_agent.ask("Which documents do not mention revenue?")
    assert result.sub_hits and result.analysis is not None and result.coverage
    again = answer_from_record(json.loads(json.dumps(answer_record(result))))
    assert again == result
    older = {"answer": "x [1]", "mode": "offline", "citations": [c.to_dict() for c in result.citations]}
    assert answer_from_record(older).citations == result.citations  # a record without the new fields still reads
