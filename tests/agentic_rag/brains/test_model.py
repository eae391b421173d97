"""agentic_rag.brains.model: JSON read tolerantly from what models write, and the plan's search queries cleaned."""

from __future__ import annotations

import pytest

from agentic_rag.brains.model import MAX_SEARCH_QUERIES, parse_json, search_queries
from agentic_rag.brains.transport import content_text
from tests.helpers.plan_queries import LINE_ITEM, QUESTION


def test_json_replies_are_read_tolerantly():
    assert parse_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json('Sure! Here it is: {"a": {"b": 2}} hope that helps') == {"a": {"b": 2}}
    with pytest.raises(ValueError):
        parse_json("no json here")
    with pytest.raises(ValueError):
        parse_json('{"a": 1,,}')
    assert content_text([{"type": "text", "text": "Hel"}, "lo", {"type": "thinking", "thinking": "x"}]) == "Hello"


def test_cleaning_keeps_distinct_document_worded_queries():
    asked = (QUESTION,)
    assert search_queries([LINE_ITEM, f"  {LINE_ITEM.upper()} ", "", "   ", QUESTION.lower()], asked) == (LINE_ITEM,)
    assert len(search_queries([f"query {i}" for i in range(9)], asked)) == MAX_SEARCH_QUERIES
    assert len(search_queries(["x" * 1000], asked)[0]) < 1000
    assert search_queries([], asked) == ()


def test_parse_json_decodes_the_first_object():
    assert parse_json('{"a": 1} and then prose with } and {"b": 2}') == {"a": 1}
    assert parse_json('Sure: {"a": {"b": 2}} hope {that} helps') == {"a": {"b": 2}}
    assert parse_json('text {not json} then {"a": [1, 2]}') == {"a": [1, 2]}
    assert parse_json('```json\n{"a": 1}\n```\n{"b": 2}') == {"a": 1}
    for bad in ("no json here", '{"a": 1,,}', "[1, 2]"):
        with pytest.raises(ValueError):
            parse_json(bad)
