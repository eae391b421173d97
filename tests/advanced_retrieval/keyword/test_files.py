"""advanced_retrieval.keyword.files and segments: the saved BM25 index, what a write costs, and every way a saved
copy can be damaged."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from advanced_retrieval import BM25Index, BM25IndexError, BM25Params
from advanced_retrieval.keyword import segments as seg_mod
from advanced_retrieval.keyword.tokens import TOKENIZER_VERSION, tokenize
from tests.helpers.retrieval import CORPUS, make_chunks


def test_save_and_load_round_trip(tmp_path):
    index = BM25Index.build(make_chunks(CORPUS, context="Annual report > Risks"), generation=42)
    index.save(tmp_path / "v1")
    loaded = BM25Index.load(tmp_path / "v1")
    manifest = loaded.manifest()
    assert manifest["generation"] == 42 and manifest["count"] == len(CORPUS)
    assert loaded.ids_hash == index.ids_hash and loaded.chunk_ids == index.chunk_ids
    assert loaded.search("risks cat", 5) == index.search("risks cat", 5)  # context header is indexed too
    rescored = BM25Index.load(tmp_path / "v1", params=BM25Params(method="atire", idf_method="robertson"))
    built = BM25Index.build(make_chunks(CORPUS, context="Annual report > Risks"),
                            params=BM25Params(method="atire", idf_method="robertson"))
    assert dict(rescored.search("cat", 5)) == pytest.approx(dict(built.search("cat", 5)))
    BM25Index.build([]).save(tmp_path / "empty")
    assert BM25Index.load(tmp_path / "empty").search("cat") == []


def _files(directory):
    return {p.relative_to(directory): (p.stat().st_mtime_ns, p.stat().st_size)
            for p in directory.rglob("*") if p.is_file()}


def test_a_write_saves_its_own_chunks_not_the_library(tmp_path):
    """Issue 28: each write rebuilt and rewrote the whole index (276 MB at 150,000 chunks). Saving after adding a
    document leaves every file of the earlier copy untouched and writes one segment of that document's rows."""
    library = BM25Index.build(make_chunks([f"{t} page {i}" for i in range(30) for t in CORPUS], "big"))
    library.save(tmp_path, manifest="a.json")
    before = _files(tmp_path)
    added = library.with_chunks(make_chunks(["a new page about revenue and cats"], "small"), generation=2)
    added.save(tmp_path, manifest="b.json")
    after = _files(tmp_path)
    assert all(after[path] == stamp for path, stamp in before.items())  # nothing rewritten
    new_segments = {p.parts[1] for p in set(after) - set(before) if p.parts[0] == seg_mod.SEGMENTS}
    assert len(new_segments) == 1
    (name,) = new_segments
    assert len(json.loads((tmp_path / seg_mod.SEGMENTS / name / "chunks.json").read_text())["chunk_ids"]) == 1
    again = BM25Index.load(tmp_path, manifest="b.json")
    fresh = BM25Index.build(make_chunks([f"{t} page {i}" for i in range(30) for t in CORPUS], "big")
                            + make_chunks(["a new page about revenue and cats"], "small"))
    for query in ["revenue cats", "page 7 weather", "net income"]:
        assert dict(again.search(query, 8)) == pytest.approx(dict(fresh.search(query, 8)))


def test_many_small_writes_stay_few_segments_and_score_as_a_fresh_build(tmp_path):
    texts = [f"{CORPUS[i % len(CORPUS)]} note {i}" for i in range(300)]
    index = BM25Index.build(make_chunks(texts[:100], "base"))
    for i in range(100, 300, 2):  # a hundred writes of two chunks, each saved
        index = index.with_chunks(make_chunks(texts[i:i + 2], f"doc{i}"), generation=i)
        index.save(tmp_path, manifest=f"m{i}.json")
    assert index.segment_count <= 8  # geometric merging: about log4 of 300 / 2
    index = index.without_documents([f"doc{i}" for i in range(100, 200, 2)], generation=400)
    index.save(tmp_path, manifest="last.json")
    loaded = BM25Index.load(tmp_path, manifest="last.json")
    kept = make_chunks(texts[:100], "base") + [c for i in range(200, 300, 2)
                                               for c in make_chunks(texts[i:i + 2], f"doc{i}")]
    fresh = BM25Index.build(kept)
    assert sorted(loaded.chunk_ids) == sorted(fresh.chunk_ids) and loaded.documents == fresh.documents
    for query in ["cat note 250", "revenue fiscal", "weather note 150", "dog"]:  # every match (ties at a cut-off
        assert dict(loaded.search(query, 500)) == pytest.approx(dict(fresh.search(query, 500)))  # fall either way)
    assert loaded.document_rates(["note"]) == fresh.document_rates(["note"])


def test_a_mostly_deleted_segment_is_rewritten_without_its_dead_rows():
    index = BM25Index.build(make_chunks([f"{t} {i}" for i in range(10) for t in CORPUS], "a")
                            + make_chunks(CORPUS, "b"))
    smaller = index.without_documents(["a"], generation=2)
    assert smaller.segment_count == 1 and smaller.manifest()["segments"][0]["rows"] == len(CORPUS)
    assert smaller.manifest()["segments"][0]["dead"] == []


def _v1_copy(directory, texts):
    """A copy as the format-1 code saved it: one set of files (postings, chunk ids, bm25s's vocabulary)."""
    chunks = make_chunks(texts)
    vocab, rows, tok, tf, lens = {}, [], [], [], []
    for r, c in enumerate(chunks):
        words = tokenize(c.index_text)
        lens.append(len(words))
        for w in dict.fromkeys(words):
            rows.append(r)
            tok.append(vocab.setdefault(w, len(vocab)))
            tf.append(words.count(w))
    directory.mkdir()
    i32 = np.int32
    np.savez(directory / "postings.npz", doc_codes=np.zeros(len(chunks), i32), type_codes=np.zeros(len(chunks), i32),
             doc_len=np.asarray(lens, i32), rows=np.asarray(rows, i32), tok=np.asarray(tok, i32),
             tf=np.asarray(tf, i32))
    (directory / "chunks.json").write_text(json.dumps({"chunk_ids": [c.id for c in chunks], "doc_names": ["doc-a"],
                                                       "type_names": ["txt"]}))
    (directory / "vocab.index.json").write_text(json.dumps(vocab))
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.iterdir()}
    (directory / "manifest.json").write_text(json.dumps({
        "format": 1, "tokenizer": TOKENIZER_VERSION, "generation": 5, "count": len(chunks), "ids_hash": "",
        "params": {"k1": 1.5, "b": 0.75, "method": "lucene", "idf_method": "lucene"}, "files": files}))
    return chunks


def test_a_copy_saved_in_the_earlier_format_is_read_as_one_segment(tmp_path):
    chunks = _v1_copy(tmp_path / "old", CORPUS)
    loaded = BM25Index.load(tmp_path / "old")
    fresh = BM25Index.build(chunks)
    assert loaded.generation == 5 and loaded.chunk_ids == fresh.chunk_ids and loaded.segment_count == 1
    assert dict(loaded.search("cat dog", 5)) == pytest.approx(dict(fresh.search("cat dog", 5)))
    (tmp_path / "old" / "postings.npz").write_bytes(b"garbage")
    with pytest.raises(BM25IndexError, match="postings.npz differs"):
        BM25Index.load(tmp_path / "old")


def test_unusable_saved_index_raises_a_typed_error(tmp_path):
    with pytest.raises(BM25IndexError, match="no saved BM25 index"):
        BM25Index.load(tmp_path / "missing")
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v")
    manifest = (tmp_path / "v" / "manifest.json")
    manifest.write_text(manifest.read_text().replace(f'"tokenizer": {TOKENIZER_VERSION}', '"tokenizer": 99'))
    with pytest.raises(BM25IndexError, match="tokenizer"):
        BM25Index.load(tmp_path / "v")
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "w")
    (segment,) = (tmp_path / "w" / seg_mod.SEGMENTS).iterdir()
    (segment / "segment.json").unlink()
    with pytest.raises(BM25IndexError, match="missing or unreadable"):
        BM25Index.load(tmp_path / "w")


@pytest.mark.parametrize("damage", ["truncate", "flip"])
@pytest.mark.parametrize("name", ["tok.npy", "col_tf.npy", "col_ptr.npy", "chunks.json"])
def test_a_damaged_saved_file_is_a_typed_error_never_a_zip_error_or_wrong_scores(tmp_path, name, damage):
    """Issue 16, item 7: a truncated file raised numpy's or zipfile's own errors, a flipped byte nothing at all (a
    .npy has no checksum, so its scores were silently wrong). The sha256 of every segment file catches each."""
    BM25Index.build(make_chunks(CORPUS)).save(tmp_path / "v")
    (segment,) = (tmp_path / "v" / seg_mod.SEGMENTS).iterdir()
    path = segment / name
    raw = bytearray(path.read_bytes())
    if damage == "truncate":
        raw = raw[: len(raw) // 2]
    else:
        raw[len(raw) - 3] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(BM25IndexError, match=f"damaged .{segment.name}/{name} differs"):
        BM25Index.load(tmp_path / "v")


def _mapping(array):
    """The mmap an array's memory belongs to, or None (followed through its chain of bases)."""
    import mmap

    base = array
    while base is not None and not isinstance(base, mmap.mmap):
        base = getattr(base, "base", None)
    return base


def test_loaded_postings_are_mapped_from_their_files_and_score_as_built(tmp_path):
    """Issue 28: at a million chunks a loaded keyword index held its postings twice in the process's own memory
    (3.3 GB). The postings are mapped from the saved files (only the pages a search touches become resident);
    everything else is read, and the scores are the built index's."""
    import shutil

    kept = make_chunks([f"{t} page {i}" for i in range(4) for t in CORPUS], "kept")
    gone = make_chunks([f"{t} sheet {i}" for i in range(12) for t in CORPUS], "gone")
    built = BM25Index.build(kept + gone)
    built.save(tmp_path, manifest="a.json")
    loaded = BM25Index.load(tmp_path, manifest="a.json")
    (segment,) = loaded._segments
    assert {key for key in seg_mod._ARRAYS if _mapping(getattr(segment, key)) is not None} == seg_mod.MAPPED
    assert all(type(getattr(segment, key)) is np.ndarray and not getattr(segment, key).flags.writeable
               for key in seg_mod._ARRAYS)  # plain read-only arrays, no np.memmap subclass in the hot loops
    queries = ["revenue cats", "page 3 weather", "sheet 7 net income"]
    for query in queries:
        assert loaded.search(query, 8) == built.search(query, 8)
    # most rows deleted: the segment is rewritten from the mapped postings, and once the old files are gone
    # (as cleanup removes them; the mapping outlives them) both copies still answer
    smaller = loaded.without_documents(["gone"], generation=2)
    smaller.save(tmp_path, manifest="b.json")
    assert segment.name not in json.dumps(smaller.manifest())
    shutil.rmtree(tmp_path / seg_mod.SEGMENTS / segment.name)
    again = BM25Index.load(tmp_path, manifest="b.json")
    fresh = BM25Index.build(kept)
    for query in queries:
        assert dict(again.search(query, 8)) == pytest.approx(dict(fresh.search(query, 8)))
        assert loaded.search(query, 8) == built.search(query, 8)
