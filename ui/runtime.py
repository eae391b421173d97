"""What the app needs at run time besides drawing: a tab's settings, the Gemini models a key can use, the
models a local server lists, background calls.

No streamlit here. The configuration is wiring.Config (the environment, read once per run by the composition
root); Settings are one browser tab's sidebar choices. Neither repr shows a key.
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import wiring

STRATEGY_LABELS = {"auto": "Auto (let the agent choose)", "hybrid": "Hybrid (vector + BM25)", "vector": "Vector",
                   "bm25": "BM25 (keywords)"}


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

    def model_name(self) -> str:
        """The model that answers in this mode ('' offline)."""
        return {"gemini": self.model, "local": self.local_model}.get(self.mode, "")

    def mode_label(self) -> str:
        """'Gemini · gemini-3.8-flash', 'Local · llama3.2 @ 127.0.0.1:11434' or 'Offline (extractive)'."""
        if self.mode == "local":
            from agentic_rag import host_of

            return f"Local · {self.local_model} @ {host_of(self.local_base_url)}"
        return f"Gemini · {self.model}" if self.mode == "gemini" else "Offline (extractive)"


@dataclass(frozen=True)
class Scope:
    """The documents ticked in the library: the next question is asked about these only (none: about all)."""

    doc_ids: tuple[str, ...] = ()
    names: tuple[str, ...] = ()

    def label(self) -> str:
        """'a.pdf', 'a.pdf and b.docx', 'a.pdf, b.docx and 3 more'."""
        if len(self.names) <= 2:
            return " and ".join(self.names)
        if len(self.names) == 3:
            return f"{self.names[0]}, {self.names[1]} and {self.names[2]}"
        return f"{self.names[0]}, {self.names[1]} and {len(self.names) - 2} more"


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
        from agentic_rag import ModelListError, list_gemini_models

        lister = self._lister or list_gemini_models
        try:
            models = lister(api_key, base_url=base_url)
        except (ModelListError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, ModelListError) else str(exc)
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
        from agentic_rag import ModelListError, list_local_models

        lister = self._lister or list_local_models
        try:
            models = lister(base_url, api_key=api_key)
        except (ModelListError, ValueError) as exc:
            return ModelChoices((), note=exc.reason if isinstance(exc, ModelListError) else str(exc)), \
                self._failed_ttl
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


PAGE_MODULE = "ui.page"  # what app.py imports: the page


def parse_preload(main_module, modules: Mapping[str, object]) -> tuple[str, ...]:
    """The modules the parser's fork server imports once for all its children: ui.parse_children first (it quiets
    Streamlit's no-runtime warnings there), the page, and the main script's own imports.

    The page is named, not found: `make run` (python -m ui.serve) opens the library, and so starts the fork
    server, before Streamlit has run app.py, while its children will each run app.py (Streamlit makes it
    __main__) and import the page: ~2.2 s a file when the server had not imported it.
    """
    return ("ui.parse_children", PAGE_MODULE,
            *(m for m in main_script_imports(main_module, modules) if m not in ("ui.parse_children", PAGE_MODULE)))


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
        if isinstance(value, types.ModuleType):
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
