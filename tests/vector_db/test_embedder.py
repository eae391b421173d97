"""OnnxEmbedder: same vectors as sentence-transformers, exported once, no torch at run time."""

from __future__ import annotations

import os
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
    # bfloat16 products over a padded batch may differ from the text alone in the 5th decimal (4e-5 seen)
    assert np.allclose(together, np.stack([embedder.embed_query(t) for t in texts]), atol=1e-4)


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


# -- the runtime: OpenVINO in bfloat16 where the CPU has it, onnxruntime in fp32 otherwise --------------------

BF16_MISSING = embedder_mod.bf16_unavailable()
needs_bf16 = pytest.mark.skipif(BF16_MISSING is not None, reason=f"no bfloat16 runtime here: {BF16_MISSING}")


@pytest.fixture(scope="module")
def fp32_arithmetic(cache_dir) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir, batch_size=4, runtime="onnxruntime")


def test_the_default_runtime_is_bf16_exactly_where_the_cpu_has_it(embedder, fp32_arithmetic):
    assert embedder.runtime == ("onnxruntime" if BF16_MISSING else "openvino-bf16")
    assert fp32_arithmetic.runtime == "onnxruntime" and fp32_arithmetic.name == embedder.name
    if BF16_MISSING:
        assert embedder.runtime_why == BF16_MISSING


@needs_bf16
def test_bf16_gives_the_fp32_vectors_and_the_same_neighbours(cache_dir, fp32_arithmetic, reference):
    bf16 = OnnxEmbedder(cache_dir, batch_size=4, runtime="openvino-bf16")
    assert bf16.runtime == "openvino-bf16"
    vectors = bf16.embed(TEXTS)
    assert vectors.dtype == np.float32 and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (vectors * fp32_arithmetic.embed(TEXTS)).sum(axis=1).min() >= 0.9999
    assert (vectors * reference).sum(axis=1).min() >= 0.9999
    # the same texts in other batches give the same vectors (a query alone, a chunk among its file's)
    assert np.allclose(vectors, np.stack([bf16.embed_query(t) for t in TEXTS]), atol=1e-4)
    # every text's nearest neighbours among the others are the fp32 ones
    queries = ["revenue growth", "a pet resting", "unicode text"]
    assert [int(np.argmax(vectors @ q)) for q in bf16.embed(queries)] == \
        [int(np.argmax(fp32_arithmetic.embed(TEXTS) @ q)) for q in fp32_arithmetic.embed(queries)]


@needs_bf16
def test_bf16_batches_come_in_few_widths_so_memory_stays_bounded(cache_dir, fp32_arithmetic):
    """OpenVINO keeps kernels per input shape (RSS 260 -> 660 MB over 600 batches of every width); the widths are
    rounded up to a multiple of WIDTH_STEP, the padding masked out."""
    bf16 = OnnxEmbedder(cache_dir, batch_size=3, runtime="openvino-bf16")
    widths = []
    run = bf16._session.run
    bf16._session.run = lambda outputs, feeds: widths.append(feeds["input_ids"].shape[1]) or run(outputs, feeds)
    texts = [" ".join(["word"] * n) for n in range(1, 300, 7)]
    vectors = bf16.embed(texts)
    assert widths and all(w % embedder_mod.WIDTH_STEP == 0 for w in widths) and max(widths) == 256
    assert len(set(widths)) <= 256 // embedder_mod.WIDTH_STEP
    assert (vectors * fp32_arithmetic.embed(texts)).sum(axis=1).min() >= 0.9999


@needs_bf16
def test_bf16_is_safe_from_several_threads(cache_dir):
    bf16 = OnnxEmbedder(cache_dir, batch_size=2, runtime="openvino-bf16")
    expected = bf16.embed(TEXTS)
    results, errors = [], []

    def work():
        try:
            for _ in range(5):
                results.append(bf16.embed(TEXTS))
        except Exception as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and len(results) == 20 and all(np.allclose(r, expected, atol=1e-5) for r in results)


def test_the_runtime_is_chosen_by_its_caller_and_refused_when_unknown_or_impossible(tmp_path, monkeypatch):
    assert embedder_mod.choose_runtime("onnxruntime", False) == ("onnxruntime", "asked for")
    with pytest.raises(ValueError, match="unknown embedding runtime 'cuda'.*DOCAGENT_EMBED_RUNTIME"):
        OnnxEmbedder(tmp_path, runtime="cuda")
    with pytest.raises(ValueError, match="int8 model runs on onnxruntime only"):
        embedder_mod.choose_runtime("openvino-bf16", True)
    assert embedder_mod.choose_runtime(None, True)[0] == "onnxruntime"
    monkeypatch.setattr(embedder_mod, "bf16_unavailable", lambda: "this CPU has no bfloat16 instructions")
    assert embedder_mod.choose_runtime("auto", False) == ("onnxruntime", "this CPU has no bfloat16 instructions")
    with pytest.raises(ValueError, match="cannot run here: this CPU has no bfloat16"):
        OnnxEmbedder(tmp_path, runtime="openvino-bf16")
    assert list(tmp_path.iterdir()) == []  # refused before any export


def test_embedding_makes_no_network_request(cache_dir, tmp_path):
    """openvino's conversion tools look up www.google-analytics.com at import; the embedder keeps them out. An
    audit hook (inherited by forked children) records every name lookup and connection of the process."""
    log = tmp_path / "audit.log"
    code = (f"import sys, os\n"
            f"log = open({str(log)!r}, 'a', buffering=1)\n"
            "sys.addaudithook(lambda event, args: event.startswith('socket.') and event != 'socket.__new__'"
            " and log.write(f'{os.getpid()} {event} {args!r:.120}\\n'))\n"
            f"sys.path.insert(0, {str(REPO)!r})\n"
            "from vector_db import OnnxEmbedder\n"
            f"e = OnnxEmbedder({str(cache_dir)!r})\n"
            "print(e.runtime, e.embed(['hello']).shape)\n"
            "import time; time.sleep(1.5)\n")  # a forked reporter would have looked the address up by then
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "JENKINS_URL", "BUILD_NUMBER")}
    home = tmp_path / "home"  # a usage-statistics client writes its files here (and stays silent without a home)
    home.mkdir()
    env["HOME"] = str(home)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("(1, 384)")
    assert not log.exists() or log.read_text() == ""
    assert list(home.iterdir()) == []
