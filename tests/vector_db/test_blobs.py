"""vector_db.blobs: an original's bytes in a collection, cut into parts, read back whole or not at all."""

from __future__ import annotations

import os

import pytest

from vector_db import StoreError, blobs


@pytest.fixture
def col(client):
    return client.get_or_create_collection("chunks-originals", embedding_function=None)


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(blobs, "PIECE", 1000)


def test_an_original_of_several_parts_comes_back_byte_for_byte(col, small_pieces):
    data, empty = os.urandom(3500), b""
    blobs.put(col, "a" * 64, "report.pdf", ".pdf", data)
    blobs.put(col, "b" * 64, "empty.txt", ".txt", empty)
    assert col.count() == 4 + 1 + 1 + 1  # four parts and a head, one part and a head
    assert blobs.get(col, "a" * 64) == ("report.pdf", ".pdf", data)
    assert blobs.get(col, "b" * 64) == ("empty.txt", ".txt", empty)
    assert blobs.get(col, "c" * 64) is None
    assert blobs.stored(col) == {"a" * 64: 3500, "b" * 64: 0}
    blobs.remove(col, ["a" * 64, "c" * 64], step=2)
    assert blobs.stored(col) == {"b" * 64: 0} and col.count() == 2


def test_a_missing_part_is_an_error_naming_the_file(col, small_pieces):
    blobs.put(col, "a" * 64, "report.pdf", ".pdf", os.urandom(2500))
    col.delete(ids=[f"part:{'a' * 64}:1"])
    with pytest.raises(StoreError, match="report.pdf lacks part 2 of 3"):
        blobs.get(col, "a" * 64)


def test_a_write_cut_short_before_its_head_is_not_an_original(col, small_pieces):
    blobs.put(col, "a" * 64, "report.pdf", ".pdf", os.urandom(2500))
    col.delete(ids=[f"head:{'a' * 64}"])
    assert blobs.get(col, "a" * 64) is None and blobs.stored(col) == {}
    blobs.remove(col, ["a" * 64], step=100)
    assert col.count() == 0
