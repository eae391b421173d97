"""What the app needs at run time besides drawing: configuration, settings, the Gemini models a key can use, the
models a local server lists, a fake embedder, background calls.

No streamlit here (app.py alone draws). AppConfig is read from the environment once per run, at the edge;
Settings are one browser tab's sidebar choices. Neither repr shows a key.
"""

from __future__ import annotations

import hashlib
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import wiring

STRATEGY_LABELS = {"auto": "Auto (let the agent choose)", "hybrid": "Hybrid (vector + BM25)", "vector": "Vector",
                   "bm25": "BM25 (keywords)"}
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True)
class AppConfig:
    """What the app reads from the environment, once per run, at the edge.

    DOCAGENT_DATA_DIR (default ./data) holds the index, the BM25 files and the exported ONNX model
    (DOCAGENT_MODEL_DIR puts the model elsewhere, e.g. one cache shared by test runs); DOCAGENT_FAKE_EMBEDDER=1
    swaps the ONNX model for HashingEmbedder (tests), DOCAGENT_FAKE_EMBED_DELAY=S makes it take S seconds per
    passage (browser tests that need a file caught mid-embedding); GOOGLE_API_KEY or GEMINI_API_KEY enables Gemini;
    DOCAGENT_GEMINI_BASE_URL points the Gemini client elsewhere (a local stub); the Gemini model preselected in
    Settings is wiring's (DOCAGENT_GEMINI_MODEL, else wiring.DEFAULT_GEMINI_MODEL). The provider preselected
    and the local server's fields are wiring.model_env's (DOCAGENT_PROVIDER, DOCAGENT_LOCAL_BASE_URL,
    DOCAGENT_LOCAL_MODEL, DOCAGENT_LOCAL_API_KEY); an unknown provider is left unselected.
    Keys are excluded from repr so they never land in a log line.
    """

    data_dir: Path
    model_dir: Path | None = None
    fake_embedder: bool = False
    fake_embed_delay: float = 0.0
    env_key: str = field(default="", repr=False)
    gemini_base_url: str | None = None
    gemini_model: str = wiring.DEFAULT_GEMINI_MODEL
    provider: str = ""  # gemini | local | offline, "" when DOCAGENT_PROVIDER is unset (or names none)
    local_base_url: str = wiring.DEFAULT_LOCAL_BASE_URL
    local_model: str = ""
    local_api_key: str = field(default="", repr=False)

    @property
    def models(self) -> Path:
        """Where the exported embedding model is cached."""
        return self.model_dir or self.data_dir / "models"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> AppConfig:
        """The configuration described by `environ` (default: os.environ)."""
        env = os.environ if environ is None else environ
        model = wiring.model_env(env)
        return cls(
            data_dir=Path(env.get("DOCAGENT_DATA_DIR") or "data").expanduser().resolve(),
            model_dir=Path(env["DOCAGENT_MODEL_DIR"]).expanduser().resolve() if env.get("DOCAGENT_MODEL_DIR") else None,
            fake_embedder=env.get("DOCAGENT_FAKE_EMBEDDER", "").strip().lower() in _TRUE,
            fake_embed_delay=float(env.get("DOCAGENT_FAKE_EMBED_DELAY") or 0.0),
            env_key=(env.get("GOOGLE_API_KEY") or env.get("GEMINI_API_KEY") or "").strip(),
            gemini_base_url=(env.get("DOCAGENT_GEMINI_BASE_URL") or "").strip() or None,
            gemini_model=model.gemini_model,
            provider=model.provider if model.provider in wiring.PROVIDERS else "",
            local_base_url=model.local_base_url, local_model=model.local_model, local_api_key=model.local_api_key,
        )


@dataclass(frozen=True)
class Settings:
    """The sidebar settings of one browser session. The key is excluded from repr (never logged)."""

    strategy: str = "auto"
    k: int = 8
    verify: bool = True
    model: str = wiring.DEFAULT_GEMINI_MODEL
    api_key: str = field(default="", repr=False)
    offline: bool = False
    provider: str = "gemini"  # which model answers when offline is off: gemini | local
    local_base_url: str = ""
    local_model: str = ""
    local_api_key: str = field(default="", repr=False)

    @property
    def mode(self) -> str:
        """'gemini' with a key, 'local' with a server and a model (offline off), else 'offline'."""
        if self.offline:
            return "offline"
        if self.provider == "local":
            return "local" if self.local_base_url and self.local_model else "offline"
        return "gemini" if self.api_key else "offline"

    def mode_label(self) -> str:
        """'Gemini · gemini-3.8-flash', 'Local · llama3.2 @ 127.0.0.1:11434' or 'Offline (extractive)'."""
        if self.mode == "local":
            from agentic_rag.local_call import host_of

            return f"Local · {self.local_model} @ {host_of(self.local_base_url)}"
        return f"Gemini · {self.model}" if self.mode == "gemini" else "Offline (extractive)"


@dataclass(frozen=True)
class ModelChoices:
    """The models Settings offers: the key's own list (`listed`), else the built-in one, with `note` saying why."""

    models: tuple[str, ...]
    listed: bool = False
    note: str = ""


class ModelCatalog:
    """The Gemini models each key can use (google-genai's models.list), cached per key and base URL.

    A list is kept `ttl` seconds; a failed listing shows the built-in list (wiring.FALLBACK_GEMINI_MODELS) and
    is asked again after `failed_ttl` seconds, so an offline laptop does not wait on every rerun. Entries are
    keyed by the key's fingerprint, never the key, so one catalog is safe to share between browser sessions.
    `lister(api_key, base_url=...)` raises ModelListError (or ValueError) with a reason when it cannot list.
    """

    def __init__(self, lister: Callable[..., tuple[str, ...]] | None = None, *,
                 fallback: Sequence[str] = wiring.FALLBACK_GEMINI_MODELS, ttl: float = 3600.0,
                 failed_ttl: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self._lister = lister
        self._fallback = tuple(fallback)
        self._ttl, self._failed_ttl, self._clock = ttl, failed_ttl, clock
        self._entries: dict[tuple[str, str], tuple[float, ModelChoices]] = {}
        self._lock = threading.Lock()

    def choices(self, api_key: str, base_url: str | None = None, preferred: str = "") -> ModelChoices:
        """The models for `api_key` with `preferred` (the configured model) first; the built-in list without a key."""
        if not api_key:
            return _first(ModelChoices(self._fallback), preferred)
        slot = (key_fingerprint(api_key), base_url or "")
        with self._lock:
            expires, cached = self._entries.get(slot, (0.0, None))
        if cached is None or self._clock() >= expires:
            cached, ttl = self._list(api_key, base_url)
            with self._lock:
                self._entries[slot] = (self._clock() + ttl, cached)
        return _first(cached, preferred)

    def _list(self, api_key: str, base_url: str | None) -> tuple[ModelChoices, float]:
        from agentic_rag.gemini_models import ModelListError, list_gemini_models

        lister = self._lister or list_gemini_models
        try:
            models = lister(api_key, base_url=base_url)
        except (ModelListError, ValueError) as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            return ModelChoices(self._fallback, note=f"Could not list this key's models ({reason}); "
                                                     f"showing the built-in list."), self._failed_ttl
        if not models:
            return ModelChoices(self._fallback, note="This key lists no Gemini text models; showing the "
                                                     "built-in list."), self._failed_ttl
        return ModelChoices(tuple(models), listed=True, note=f"{len(models)} models available to this key."), \
            self._ttl


class LocalModelCatalog:
    """The models each local server lists (GET /v1/models), cached per address and key fingerprint.

    A list is kept `ttl` seconds (a model pulled meanwhile shows up soon); a server that cannot be asked is
    asked again after `failed_ttl` seconds, and meanwhile the configured model alone is offered with the reason.
    `lister(base_url, api_key=...)` raises ModelListError (or ValueError) with a reason when it cannot list.
    """

    def __init__(self, lister: Callable[..., tuple[str, ...]] | None = None, *, ttl: float = 30.0,
                 failed_ttl: float = 10.0, clock: Callable[[], float] = time.monotonic):
        self._lister = lister
        self._ttl, self._failed_ttl, self._clock = ttl, failed_ttl, clock
        self._entries: dict[tuple[str, str], tuple[float, ModelChoices]] = {}
        self._lock = threading.Lock()

    def choices(self, base_url: str, api_key: str = "", preferred: str = "") -> ModelChoices:
        """The server's models with `preferred` (the configured one) first, or why there are none."""
        slot = (base_url, key_fingerprint(api_key))
        with self._lock:
            expires, cached = self._entries.get(slot, (0.0, None))
        if cached is None or self._clock() >= expires:
            cached, ttl = self._list(base_url, api_key)
            with self._lock:
                self._entries[slot] = (self._clock() + ttl, cached)
        return _first(cached, preferred)

    def _list(self, base_url: str, api_key: str) -> tuple[ModelChoices, float]:
        from agentic_rag.local import ModelListError, list_local_models

        lister = self._lister or list_local_models
        try:
            models = lister(base_url, api_key=api_key)
        except (ModelListError, ValueError) as exc:
            return ModelChoices((), note=getattr(exc, "reason", None) or str(exc)), self._failed_ttl
        if not models:
            return ModelChoices((), note="The server lists no models: pull one first (`ollama pull llama3.2`)."), \
                self._failed_ttl
        return ModelChoices(tuple(models), listed=True, note=f"{len(models)} models on this server."), self._ttl


def _first(choices: ModelChoices, preferred: str) -> ModelChoices:
    """`choices` with `preferred` first (added when the list lacks it: the configuration names it on purpose)."""
    if not preferred:
        return choices
    rest = tuple(m for m in choices.models if m != preferred)
    return ModelChoices((preferred, *rest), choices.listed, choices.note)



class HashingEmbedder:
    """Deterministic bag-of-words hashing embedder for tests and demos without the ONNX model.

    Same text, same unit vector; texts sharing words have a higher cosine. Selected by the app when
    DOCAGENT_FAKE_EMBEDDER=1, so AppTest runs in seconds. `delay` seconds per text (with progress after each)
    lets a browser test catch a file mid-embedding.
    """

    dim = 384
    name = "hashing-384"

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    def _vector(self, text: str):
        import numpy as np  # here, not at import: the first page of the app draws before numpy is needed

        v = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v[h % self.dim] += 1.0 if (h >> 32) & 1 else -1.0
        norm = float(np.linalg.norm(v))
        if norm == 0.0:
            v[0] = 1.0  # a text with no words still needs a valid unit vector
            return v
        return v / norm

    def embed(self, texts: Sequence[str], progress=None):
        """(n, 384) float32 numpy array, L2-normalised; calls progress(done, total) at the end (after each text
        when slowed down by `delay`)."""
        import numpy as np

        for done in range(1, len(texts) + 1 if self.delay > 0 else 1):
            time.sleep(self.delay)
            if progress is not None:
                progress(done, len(texts))

        out = np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)
        if progress is not None:
            progress(len(texts), len(texts))
        return out

    def embed_query(self, text: str):
        """(384,) float32 unit vector."""
        return self._vector(text)


class BackgroundCall:
    """Run `fn(post)` on a worker thread and hand what it posts to the calling thread, in order.

    The engine's callbacks may fire on LangGraph's worker threads, where Streamlit calls are lost; so the
    callbacks only `post` events and the script thread drains them with `events()` and draws. An exception
    in `fn` is kept in `.error` (never lost) for the caller to show.
    """

    def __init__(self, fn: Callable[[Callable[[object], None]], object]):
        self._fn = fn
        self._queue: queue.Queue = queue.Queue()
        self.result: object = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="docagent-ask", daemon=True)

    def _run(self) -> None:
        try:
            self.result = self._fn(self._queue.put)
        except Exception as error:  # handed to the script thread, which shows it
            self.error = error

    def events(self, poll: float = 0.05) -> Iterator[object]:
        """Start the call and yield each posted event until the call has finished and all are drained."""
        self._thread.start()
        while True:
            try:
                yield self._queue.get(timeout=poll)
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    return


def key_fingerprint(api_key: str) -> str:
    """A short hash that tells two keys apart without keeping the key itself in a cache signature."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:12] if api_key else ""


def main_script_imports(main_module, modules: Mapping[str, object]) -> tuple[str, ...]:
    """Modules the main script's top level imported (e.g. `streamlit.web.cli` for the `streamlit` launcher).

    The parser's fork-server children re-run the main script by path on Python 3.11 (preloading "__main__"
    does not take there), so each uploaded file would import these again; preloading them in the server
    (document_processor.warm_up) makes a child cost milliseconds instead of seconds. A `from X import f`
    is traced to X by finding the loaded module that holds the very same object under that name.
    """
    names: list[str] = []
    for attr, value in vars(main_module).items():
        if attr.startswith("__"):
            continue
        if isinstance(value, type(os)):
            found = value.__name__
        elif callable(value):
            # vars(), not getattr(): a module-level __getattr__ may import or warn on any name asked for
            found = next((name for name, mod in list(modules.items())
                          if mod is not main_module and name not in ("__main__", "__mp_main__")
                          and getattr(mod, "__dict__", {}).get(attr) is value), None)
        else:
            continue
        if found and found not in names:
            names.append(found)
    return tuple(names)
