"""A header the question names in other words (tables.meaning), read with the real embedder: "the best fuel
economy" is the Miles_per_Gallon column, and the passage says so; a phrase as close to two headers, or close to
none, reads no header and the question is not answered from the table."""

import csv
import io
import os
from pathlib import Path

import pytest

import wiring
from advanced_retrieval.tables import Column, TableInfo
from agentic_rag.tables.meaning import MIN_MARGIN, MIN_SIMILARITY, by_meaning
from document_processor import Location

CARS = [("chevrolet chevelle", 18.0, 130, 3504), ("buick skylark", 15.0, 165, 3693),
        ("mazda glc", 46.6, 65, 2110), ("vw rabbit", 41.5, 76, 2144), ("ford torino", 17.0, 140, 3449),
        ("honda civic", 38.0, 67, 1965), ("pontiac catalina", 14.0, 225, 4425)]


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    from vector_db import OnnxEmbedder

    # the suite's shared model cache spares the export; otherwise a private one
    return OnnxEmbedder(Path(os.environ.get("DOCAGENT_MODEL_DIR") or tmp_path_factory.mktemp("models")))


def _table(name: str, headers: list[str], labels=("a", "b")) -> TableInfo:
    columns = tuple(Column(h, h, i > 0, "", chr(65 + i), i > 0) for i, h in enumerate(headers))
    where = Location(sheet=name, cells="A1:D3")
    return TableInfo("t1", "d1", f"{name}.csv", name, name, "", 1.0, columns, where, (where, where), 2, "t_1",
                     tuple(labels))


def test_a_header_named_in_other_words_is_read_and_one_named_by_none_is_not(embedder):
    cars = _table("vehicles", ["Name", "Miles_per_Gallon", "Horsepower", "Weight_in_lbs", "Acceleration"])
    found = by_meaning("Which vehicle gets the best fuel economy?", [cars], embedder)
    assert [(m.phrase, cars.columns[m.column].name) for m in found] == [("fuel economy", "Miles_per_Gallon")]
    assert found[0].similarity >= MIN_SIMILARITY and "Miles per Gallon" in found[0].text
    assert 'Miles_per_Gallon: "fuel economy" (read by meaning' in found[0].reading()
    found = by_meaning("How heavy is the lightest vehicle?", [cars], embedder)
    assert [cars.columns[m.column].name for m in found] == ["Weight_in_lbs"]
    # nothing in the table is what is asked
    assert by_meaning("Which vehicle had the most recalls by the safety regulator?", [cars], embedder) == []
    # a phrase as close to two headers (within MIN_MARGIN) names neither
    filing = _table("results", ["Segment", "Net sales", "Operating income"])
    assert by_meaning("Which segment brought in the most revenue?", [filing], embedder) == [], MIN_MARGIN
    # a header the question's words already name is the rules' to read, not compared
    assert by_meaning("Which vehicle has the most horsepower?", [cars], embedder) == []


def test_offline_a_question_naming_a_header_in_other_words_is_computed_and_says_how_it_was_read(
        tmp_path, fake_embedder, embedder):
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["Name", "Miles_per_Gallon", "Horsepower", "Weight_in_lbs"])
    writer.writerows(CARS)
    (tmp_path / "cars.csv").write_text(out.getvalue())
    kb = wiring.open_knowledge_base(tmp_path / "data", embedder=fake_embedder, environ={}, isolate=False)
    assert [r.status for r in kb.ingest_many([tmp_path / "cars.csv"])] == ["indexed"]
    agent = wiring.build_for(wiring.ModelConfig("offline"), kb, embedder)
    result = agent.ask("Which car gets the best fuel economy in the cars dataset?")
    computed = next(t for t in result.trace if t["step"] == "retrieve")["details"]["computed"]
    assert '"Miles_per_Gallon"' in computed["sql"] and computed["rows"][0][-1] == 46.6, computed
    assert "mazda glc" in result.answer and "46.6" in result.answer, result.answer
    assert 'Miles_per_Gallon: "fuel economy" (read by meaning' in result.citations[0].text
    # the reading is the engine's note for the user to check, not a claim the document makes
    assert '*(Headers read as Miles_per_Gallon: "fuel economy" (read by meaning' in result.answer, result.answer
    assert "⚠" not in result.answer, result.answer
    # without the embedder the words name no header: nothing is computed
    plain = wiring.build_for(wiring.ModelConfig("offline"), kb, fake_embedder)
    computed = next(t for t in plain.ask("Which car gets the best fuel economy in the cars dataset?").trace
                    if t["step"] == "retrieve")["details"].get("computed")
    assert not (computed and computed["sql"]), computed
