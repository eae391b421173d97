"""advanced_retrieval.keyword.files: the saved BM25 index, and every way it can be damaged."""

from __future__ import annotations

import pytest

from advanced_retrieval import BM25Index, BM25IndexError, BM25Params
from advanced_retrieval.keyword import bm25 as bm25_mod
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION
from tests.helpers.retrieval import CORPUS, make_chunks


def test_save_and_load_round_trip(tmp_path):
    index = BM25Index.build(make_chunks(CORPUS, context="Annual report > Risks"), generation=42)
    index.save(tmp_path / "v1")
    loaded = BM25Index.load(tmp_path / "v1")
    manifest = loaded.manifest()
    assert manifest["generation"] == 42 and manifest["count"] == len(CORPUS)
    assert manifest["ids_hash"] == index.ids_hash
    assert loaded.search("risks cat", 5) == index.search("risks cat", 5)  # context header is indexed too
    rescored = BM25Index.load(tmp_path / "v1", params=BM25Params(method="atire", idf_method="robertson"))
    built = BM25Index.build(make_chunks(CORPUS, context="Annual report > Risks"),
                            params=BM25Params(method="atire", idf_method="robertson"))
    assert dict(rescored.search("cat", 5)) == pytest.approx(dict(built.search("cat", 5)))
    BM25Index.build([]).save(tmp_path / "empty")
    assert BM25Index.load(tmp_path / "empty").search("cat") == []


def test_loading_with_the_default_parameters_uses_the_saved_scores(tmp_path, monkeypatch):
    """The manifest spells the default idf out ("lucene"); KeywordIndex loads with BM25Params(), whose idf_method
    is None: the same parameters, so the saved score matrix is used, not rebuilt (5.5 s at a million chunks)."""
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v1")
    monkeypatch.setattr(bm25_mod, "_build_model", lambda *a: pytest.fail("the saved score matrix was rebuilt"))
    loaded = BM25Index.load(tmp_path / "v1", params=BM25Params())
    assert loaded.search("cat", 5)


def test_unusable_saved_index_raises_a_typed_error(tmp_path):
    with pytest.raises(BM25IndexError, match="no saved BM25 index"):
        BM25Index.load(tmp_path / "missing")
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v")
    manifest = (tmp_path / "v" / "manifest.json")
    manifest.write_text(manifest.read_text().replace(f'"tokenizer": {TOKENIZER_VERSION}', '"tokenizer": 99'))
    with pytest.raises(BM25IndexError, match="tokenizer"):
        BM25Index.load(tmp_path / "v")
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "w")
    (tmp_path / "w" / "postings.npz").write_bytes(b"garbage")
    with pytest.raises(BM25IndexError, match="postings.npz differs"):
        BM25Index.load(tmp_path / "w")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
@pytest.mark.parametrize("name", ["postings.npz", "data.csc.index.npy", "chunks.json"])
def test_a_damaged_saved_file_is_a_typed_error_never_a_zip_error_or_wrong_scores(tmp_path, name, damage):
    """Issue 16, item 7: a truncated .npz raised BadZipFile, a flipped byte "Bad CRC-32" or nothing at all (a .npy
    has no checksum, so its scores were silently wrong). The manifest's sha256 of every file catches each."""
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v")
    path = tmp_path / "v" / name
    raw = bytearray(path.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    else:
        raw[len(raw) - 3] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(BM25IndexError, match=f"damaged .{name} differs"):
        BM25Index.load(tmp_path / "v")
