"""OnnxEmbedder: same vectors as sentence-transformers, exported once, no torch at run time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import vector_db.embedder as embedder_mod
from document_processor import model_files
from tests.helpers.paths import REPO
from vector_db import OnnxEmbedder

TEXTS = [
    "The quarterly revenue grew by 12% compared with last year.",
    "A cat sat on the mat.",
    "",
    "Résumé: naïve café — 東京, ünïcödé and emoji ✓",
    "attention " * 400,  # far beyond 256 word pieces: truncated like sentence-transformers does
    "x",
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    """One cache for the module, so the ~5-10 s export happens once per run."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def embedder(cache_dir) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir, batch_size=4)


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    """sentence-transformers on torch, the implementation we replace."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_files.model_dir()), device="cpu")
    return model.encode(TEXTS, normalize_embeddings=True)


def test_matches_sentence_transformers(embedder, reference):
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * reference).sum(axis=1).min() >= 0.999
    assert embedder.dim == 384 and embedder.name == "all-MiniLM-L6-v2/onnx-fp32"


def test_length_sorting_keeps_the_input_order(embedder):
    together = embedder.embed(TEXTS)
    alone = np.stack([embedder.embed_query(t) for t in TEXTS])
    assert np.allclose(together, alone, atol=1e-5)


def test_batches_run_shortest_and_longest_in_turn_so_the_rate_holds_through_a_file(embedder, monkeypatch):
    from vector_db.embedder import alternating

    assert alternating([1, 2, 3, 4, 5]) == [1, 5, 2, 4, 3] and alternating([]) == [] and alternating([7]) == [7]
    texts = [" ".join(["word"] * n) for n in (40, 3, 25, 9, 60, 14, 33, 5)]  # batches of 2 after length sorting
    widths = []
    run = embedder._run
    monkeypatch.setattr(embedder, "_run", lambda encodings: widths.append(max(len(e.ids) for e in encodings))
                        or run(encodings))
    monkeypatch.setattr(embedder, "batch_size", 2)
    together = embedder.embed(texts)
    assert widths == [7, 62, 16, 35]  # shortest pair, longest pair, ... (each width: its longer text + 2 markers)
    assert np.allclose(together, np.stack([embedder.embed_query(t) for t in texts]), atol=1e-5)


def test_similar_texts_are_closer(embedder):
    a, b, c = embedder.embed(["The cat sleeps on the sofa.", "A kitten naps on the couch.", "Interest rates rose."])
    assert a @ b > a @ c + 0.2


def test_progress_after_each_batch_and_empty_input(embedder):
    calls = []
    embedder.embed(TEXTS[:5], progress=lambda done, total: calls.append((done, total)))
    assert calls == [(4, 5), (5, 5)]
    assert embedder.embed([]).shape == (0, 384)


def test_export_is_cached(cache_dir, embedder, monkeypatch):
    before = embedder.path.stat()

    def no_export(*_args):
        raise AssertionError("exported again although the cached model exists")

    monkeypatch.setattr(embedder_mod, "_export_fp32", no_export)
    again = OnnxEmbedder(cache_dir)
    assert again.path == embedder.path and again.path.stat().st_mtime_ns == before.st_mtime_ns
    assert np.allclose(again.embed_query("cached"), embedder.embed_query("cached"), atol=1e-6)
    assert not [p for p in cache_dir.iterdir() if p.name.endswith(".tmp")]


def test_int8_is_close_to_fp32(cache_dir, embedder):
    quantized = OnnxEmbedder(cache_dir, quantized=True)
    assert quantized.name == "all-MiniLM-L6-v2/onnx-int8"
    assert quantized.path.stat().st_size < embedder.path.stat().st_size / 3
    cos = (quantized.embed(TEXTS) * embedder.embed(TEXTS)).sum(axis=1)
    assert cos.min() >= 0.97


def test_no_torch_at_run_time(cache_dir, embedder):
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            "from vector_db import OnnxEmbedder\n"
            f"v = OnnxEmbedder({str(cache_dir)!r}).embed(['hello'])\n"
            "print(v.shape, 'torch' in sys.modules, 'transformers' in sys.modules, "
            "'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "(1, 384) False False False"


@pytest.mark.parametrize("kwargs, message", [({"batch_size": 0}, "batch_size"), ({"threads": 0}, "threads")])
def test_bad_configuration_is_a_value_error(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        OnnxEmbedder(tmp_path, **kwargs)
    assert list(tmp_path.iterdir()) == []  # refused before any export


def test_ensure_file_builds_once_under_concurrency(tmp_path):
    builds = []

    def build(tmp: Path) -> None:
        builds.append(tmp)
        time.sleep(0.2)  # long enough for the other threads to pile up on the lock
        tmp.write_text("whole file")

    target = tmp_path / "sub" / "model.onnx"
    threads = [threading.Thread(target=embedder_mod.ensure_file, args=(target, build)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(builds) == 1 and target.read_text() == "whole file"
    assert sorted(p.name for p in target.parent.iterdir()) == [".export.lock", "model.onnx"]


def test_ensure_file_leaves_nothing_when_the_build_fails(tmp_path):
    def build(tmp: Path) -> None:
        tmp.write_text("half")
        raise RuntimeError("disk full")

    target = tmp_path / "model.onnx"
    with pytest.raises(RuntimeError, match="disk full"):
        embedder_mod.ensure_file(target, build)
    assert not target.exists() and [p.name for p in tmp_path.iterdir()] == [".export.lock"]
