"""evaluation.dataset: the JSONL question sets' shapes, gold locations and errors."""

from __future__ import annotations

import json

import pytest

from evaluation import DatasetError, GoldSource, chunk_matches, load_dataset, parse_dataset
from tests.helpers.evaluation import chunk


def test_parse_dataset_shapes():
    text = "\n".join([
        json.dumps({"question": "Q1?", "doc": "a.pdf", "pages": [2, 1], "answer": [["8", "eight"], ["64"]],
                    "kind": "Precision"}),
        "",
        json.dumps({"question": "Q2?", "doc": ["a.pdf", "dir/b.docx"], "pages": {"a.pdf": [3]}}),
        json.dumps({"question": "Q3?", "kind": "unanswerable", "id": "u1"}),
    ])
    q1, q2, q3 = parse_dataset(text)
    assert q1.gold == (GoldSource("a.pdf", (1, 2)),) and q1.answer == (("8", "eight"), ("64",))
    assert q1.kind == "precision" and q1.id == "q1" and q1.line == 1
    assert q2.gold == (GoldSource("a.pdf", (3,)), GoldSource("b.docx")) and q2.line == 3
    assert q3.unanswerable and q3.id == "u1" and not q3.gold
    assert parse_dataset("") == [] and parse_dataset("\n  \n") == []


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"question": ""}', "'question' must be a non-empty string"),
    ('{"question": "q", "page": [1]}', "unknown field(s) page"),
    ('{"question": "q", "doc": "a.pdf", "pages": [0]}', "1-based"),
    ('{"question": "q", "pages": [1]}', "needs a 'doc'"),
    ('{"question": "q", "doc": ["a.pdf", "b.pdf"], "pages": [1]}', "names several files"),
    ('{"question": "q", "doc": "a.pdf", "pages": {"c.pdf": [1]}}', "not in 'doc'"),
    ('{"question": "q", "answer": ["8", "eight"]}', "groups of alternatives"),
    ('{"question": "q", "answer": [[""]]}', "non-empty string"),
    ('{"question": "q", "kind": "unanswerable", "answer": [["x"]]}', "unanswerable question takes no"),
    ('{"question": "q", "doc": 3}', "'doc' must be a file name"),
])
def test_bad_lines_name_their_line_number(line, message):
    good = json.dumps({"question": "fine?"})
    with pytest.raises(DatasetError) as info:
        parse_dataset(f"{good}\n{good}\n{line}\n", source="set.jsonl")
    assert info.value.line == 3
    assert str(info.value).startswith("set.jsonl line 3: ")
    assert message in str(info.value)


def test_load_dataset_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path / "absent.jsonl")


def test_gold_slides_and_sheets():
    slide = chunk("deck.pptx", slide=4)
    cell = chunk("book.xlsx", sheet="Budget", cells="A1:F9")
    assert chunk_matches(slide, [GoldSource("deck.pptx", (4,))])
    assert not chunk_matches(slide, [GoldSource("deck.pptx", (3,))])
    assert chunk_matches(cell, [GoldSource("book.xlsx", sheets=("budget",))])
    assert not chunk_matches(cell, [GoldSource("book.xlsx", sheets=("Summary",))])
    assert chunk_matches(cell, [GoldSource("book.xlsx")])
    q1, q2 = parse_dataset("\n".join([
        json.dumps({"question": "Q?", "doc": "book.xlsx", "sheets": ["Budget"]}),
        json.dumps({"question": "Q?", "doc": ["book.xlsx", "deck.pptx"], "sheets": {"book.xlsx": ["Budget"]},
                    "pages": {"deck.pptx": [4]}, "note": "read on slide 4"}),
    ]))
    assert q1.gold == (GoldSource("book.xlsx", sheets=("Budget",)),)
    assert q2.gold == (GoldSource("book.xlsx", sheets=("Budget",)), GoldSource("deck.pptx", (4,)))
    assert q2.to_dict()["sheets"] == {"book.xlsx": ["Budget"]}
    for bad, message in [({"doc": "b.xlsx", "sheets": "Budget"}, "sheet names"),
                         ({"sheets": ["Budget"]}, "needs a 'doc'"),
                         ({"doc": "b.xlsx", "sheets": [""]}, "sheet names"),
                         # an unanswerable question may name the file it asks about, never an answer
                         ({"kind": "unanswerable", "sheets": ["x"]}, "needs a 'doc'"),
                         ({"kind": "unanswerable", "doc": "b.xlsx", "value": 3}, "takes no")]:
        with pytest.raises(DatasetError, match=message):
            parse_dataset(json.dumps({"question": "Q?", **bad}))
