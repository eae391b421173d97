"""all-MiniLM-L6-v2 exported to ONNX once and cached, run with tokenizers and onnxruntime (or OpenVINO in bfloat16).

torch and transformers are imported only by the one-time export: importing them costs ~8 s, which the app must
not pay at every start. sentence-transformers' own ONNX path needs optimum-onnx, which caps transformers below
what sentence-transformers 6 needs, hence the hand-made export.

The runtime. On a CPU with bfloat16 matrix instructions (AVX512-BF16, AMX: recent Xeons, AMD Zen 4 and later)
OpenVINO runs the very same fp32 model with bfloat16 products and fp32 sums: 1.8x the texts/s of onnxruntime
here (65 against 36 on 320 chunks of papers, 2 cores), vectors at cosine >= 0.99996 to fp32, the same retrieval
figures (bench/embedders.py pairs them); fp32 arithmetic itself is near this machine's peak already (~160
GFLOP/s), so nothing else doubles it at fp32 quality. Elsewhere, or without openvino installed, onnxruntime in
fp32. runtime="onnxruntime" (DOCAGENT_EMBED_RUNTIME in the app, read by wiring) forces fp32 arithmetic. Both give the same vector space, so a library
built by one is searched by the other and the embedder's name (what the store checks) is the same.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from document_processor import model_files

try:  # POSIX; without it two processes may both export, but the atomic rename still keeps the file whole
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

log = logging.getLogger(__name__)

# onnxruntime (1.31 on Linux) writes a device id and a usage database under ~/.cache/Microsoft/DeveloperTools when
# it is imported, unless this is set first: the app keeps nothing of anyone's outside its data directory.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

MODEL_NAME = "all-MiniLM-L6-v2"
_EXPORT_VERSION = 2  # bump when the export recipe changes, so old cached files are not reused
# Batches tokenised and length-sorted together (bounds memory for a very long text list): 2,048 texts hold a
# 10-K's passages, so its batches alternate over the whole file and the rate measured early is the file's
# (64 batches cut a 1,432-passage filing into three windows of different lengths).
_WINDOW = 256
WIDTH_STEP = 16  # OpenVINO's batches are padded to a multiple of this many tokens (see OnnxEmbedder)
RUNTIMES = ("auto", "onnxruntime", "openvino-bf16")


def _export_fp32(model_dir: Path, target: Path) -> None:
    """Write the transformer (token embeddings out, pooling is done in numpy) as ONNX to `target`."""
    import torch
    import transformers

    # Eager attention exports the classic MatMul-Softmax-MatMul pattern that ONNX Runtime fuses into its Attention
    # kernel (plus EmbedLayerNorm, SkipLayerNorm, BiasGelu) when the session loads; the default SDPA export does
    # not fuse. Same vectors (cosine to the SDPA export >= 0.9999998), 1.25x the texts/s here (42 -> 52 at
    # batch 16 on 384 texts of 60-160 words, 2 cores); bench/ingest.py measures it end to end.
    transformers.utils.logging.disable_progress_bar()  # a one-time export needs no "Loading weights" bar on stderr
    model = transformers.AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class _Encoder(torch.nn.Module):
        # transformers 5's BertModel.forward rejects positional arguments, which torch.onnx.export passes.
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    # The tracer warns about branches it freezes (KV-cache padding, causal masks); neither applies to an encoder
    # always given its attention mask, and tests/test_embedder.py checks the result against sentence-transformers.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        warnings.filterwarnings("ignore", message="Exporting aten::index operator")
        torch.onnx.export(
            _Encoder(model), (sample, sample, torch.zeros_like(sample)), str(target),
            input_names=names, output_names=["last_hidden_state"],
            dynamic_axes={**{n: {0: "batch", 1: "seq"} for n in names}, "last_hidden_state": {0: "batch", 1: "seq"}},
            opset_version=17, dynamo=False,
        )


def _quantize(fp32: Path, target: Path) -> None:
    """int8 weights (dynamic quantisation): 4x smaller, faster on CPU, slightly different vectors.

    Per-channel scales keep cosine to fp32 at min 0.985 / mean 0.993 on 104 texts, where one scale per
    tensor gave min 0.873 / mean 0.931 at the same size and speed.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8, per_channel=True)


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    """An exclusive lock across processes (and across threads: flock locks belong to the open file)."""
    with open(lock_path, "a+") as handle:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_file(target: Path, build: Callable[[Path], None]) -> Path:
    """`target`, built by build(tmp_path) first if missing; one builder at a time, and never a half-written file.

    A file that exists is complete: it only ever appears through an atomic rename.
    """
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / ".export.lock"):
        if not target.exists():  # another process may have built it while we waited
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            try:
                build(tmp)
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
    return target


def model_file(cache_dir: Path, quantized: bool, model_dir: Path | None = None) -> Path:
    """The cached ONNX model, exported (and quantised) on first use."""
    src = model_dir or model_files.model_dir()
    fp32 = Path(cache_dir) / f"{MODEL_NAME}.v{_EXPORT_VERSION}.fp32.onnx"
    ensure_file(fp32, lambda tmp: _export_fp32(src, tmp))
    if not quantized:
        return fp32
    int8 = Path(cache_dir) / f"{MODEL_NAME}.v{_EXPORT_VERSION}.int8.onnx"
    return ensure_file(int8, lambda tmp: _quantize(fp32, tmp))


def openvino_module():
    """The openvino package without its model-conversion tools, or None when it is not installed.

    `import openvino` also imports openvino.tools.ovc, whose usage statistics client looks up
    www.google-analytics.com at import (openvino 2026.4, seen with strace); nothing may leave this machine, and
    only the runtime is needed, so the tools are marked absent first (openvino then skips them, as it does when
    they are not installed). tests/vector_db/test_embedder.py checks that no connection is attempted.
    """
    if "openvino" not in sys.modules:
        sys.modules.setdefault("openvino.tools.ovc", None)
    try:
        import openvino
    except ImportError:
        return None
    return openvino


def bf16_unavailable() -> str | None:
    """Why OpenVINO cannot run the model in bfloat16 here, or None when it can."""
    ov = openvino_module()
    if ov is None:
        return "openvino is not installed"
    capabilities = ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    if "BF16" not in capabilities:
        return f"this CPU has no bfloat16 instructions (OpenVINO reports {', '.join(capabilities)})"
    return None


def choose_runtime(requested: str | None, quantized: bool) -> tuple[str, str]:
    """(runtime, why): "openvino-bf16" or "onnxruntime" for `requested` ("auto" when None).

    Raises:
        ValueError: an unknown runtime, bfloat16 asked for the int8 model, or asked where it cannot run.
    """
    requested = requested or "auto"
    if requested not in RUNTIMES:
        raise ValueError(f"unknown embedding runtime {requested!r} (DOCAGENT_EMBED_RUNTIME in the app): "
                         f"use one of {', '.join(RUNTIMES)}")
    if quantized:
        if requested == "openvino-bf16":
            raise ValueError("the int8 model runs on onnxruntime only")
        return "onnxruntime", "the int8 model runs on onnxruntime"
    if requested == "onnxruntime":
        return "onnxruntime", "asked for"
    reason = bf16_unavailable()
    if reason is None:
        return "openvino-bf16", "this CPU multiplies in bfloat16 (same vectors, about twice the speed)"
    if requested == "openvino-bf16":
        raise ValueError(f"the openvino-bf16 embedding runtime cannot run here: {reason}")
    return "onnxruntime", reason


class _OpenVinoSession:
    """OpenVINO's compiled model behind onnxruntime's `run`: one inference request per call (a request is not
    safe to share between threads, and making one costs ~10 us)."""

    def __init__(self, compiled):
        self._compiled, self._output = compiled, compiled.output(0)

    def run(self, _outputs, feeds: dict) -> list[np.ndarray]:
        return [self._compiled.create_infer_request().infer(feeds)[self._output]]


class OnnxEmbedder:
    """Sentence embeddings from all-MiniLM-L6-v2: mean-pooled over tokens, L2-normalised, 384 dimensions.

    Args:
        cache_dir: where the exported model is kept (the app passes <data-dir>/models).
        quantized: run the int8 model (23 MB, faster, cosine to fp32 ~0.985-0.99) instead of fp32 (90 MB,
            identical to sentence-transformers).
        batch_size: texts per onnxruntime call. 8: on the 311 chunks of ../shared/data/papers, length-sorted
            batches of 4-8 ran at 62-68 texts/s, 16 at 61-63, 32 at 57-58, 1 at 56 (2 cores; less padding, and
            the activations stay in cache).
        threads: the runtime's threads; default os.cpu_count().
        runtime: "auto" (default): OpenVINO in bfloat16 where the CPU has it, else onnxruntime;
            "onnxruntime" (fp32 arithmetic); "openvino-bf16". `self.runtime` says which runs, `self.runtime_why`
            why.

    Raises:
        ValueError: batch_size or threads below 1, or a runtime that is unknown or cannot run here.
    """

    def __init__(self, cache_dir: Path, *, quantized: bool = False, batch_size: int = 8, threads: int | None = None,
                 runtime: str | None = None):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be at least 1 or None (all cores), got {threads}")
        self.runtime, self.runtime_why = choose_runtime(runtime, quantized)
        from tokenizers import Tokenizer

        src = model_files.model_dir()
        self.batch_size = batch_size
        # The vector space, which the store checks: the same for both runtimes (cosine >= 0.99996 between them).
        self.name = f"{MODEL_NAME}/onnx-{'int8' if quantized else 'fp32'}"
        self.dim = int(json.loads((src / "config.json").read_text())["hidden_size"])
        self.path = model_file(Path(cache_dir), quantized, src)
        threads = threads or os.cpu_count() or 1
        # OpenVINO keeps compiled kernels (and memory) per input shape: a long-running app that saw every width
        # from 1 to 256 grew from 260 to 660 MB in 600 batches and kept growing; widths rounded up to a multiple
        # of WIDTH_STEP (padding is masked out, so the vectors do not change) held it at ~355 MB.
        self._width_step = WIDTH_STEP if self.runtime == "openvino-bf16" else 1
        if self.runtime == "openvino-bf16":
            core = openvino_module().Core()
            self._session = _OpenVinoSession(core.compile_model(core.read_model(str(self.path)), "CPU", {
                "INFERENCE_PRECISION_HINT": "bf16", "PERFORMANCE_HINT": "LATENCY",
                "INFERENCE_NUM_THREADS": threads}))
        else:
            import onnxruntime as ort

            options = ort.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(str(self.path), sess_options=options,
                                                 providers=["CPUExecutionProvider"])
        log.info("embedding with %s on %s (%s)", self.name, self.runtime, self.runtime_why)
        # Our own tokenizer object: the shared model_files.tokenizer() must stay untruncated for count_tokens.
        self._tokenizer = Tokenizer.from_file(str(src / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(model_files.MAX_TOKENS)

    def embed(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Unit vectors for `texts`, shape (len(texts), dim), float32; progress(done, total) after each batch."""
        total = len(texts)
        out = np.zeros((total, self.dim), dtype=np.float32)
        done, window = 0, self.batch_size * _WINDOW
        for start in range(0, total, window):
            encodings = self._tokenizer.encode_batch(list(texts[start:start + window]))
            # Length-sorted batches pad less; results go back to their original rows. The batches run shortest
            # and longest in turn, so the rate measured after any few of them is the window's (run shortest
            # first, a file's rate halved from its first passages to its last, and "time left" was a guess).
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            batches = [order[b:b + self.batch_size] for b in range(0, len(order), self.batch_size)]
            for rows in alternating(batches):
                out[[start + r for r in rows]] = self._run([encodings[r] for r in rows])
                done += len(rows)
                if progress is not None:
                    progress(done, total)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector of one text, shape (dim,)."""
        return self.embed([text])[0]

    def _run(self, encodings) -> np.ndarray:
        width = max(len(e.ids) for e in encodings)
        width = -(-width // self._width_step) * self._width_step
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            n = len(enc.ids)
            ids[row, :n], mask[row, :n], types[row, :n] = enc.ids, enc.attention_mask, enc.type_ids
        (hidden,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
        return mean_pool(hidden, mask)


def alternating(items: Sequence) -> list:
    """First, last, second, second to last, ...: every prefix holds about as much of each end as the other."""
    out, low, high = [], 0, len(items) - 1
    while low <= high:
        out.append(items[low])
        if high != low:
            out.append(items[high])
        low, high = low + 1, high - 1
    return out


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Average of token vectors where mask is 1, L2-normalised (sentence-transformers' Pooling + Normalize)."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
