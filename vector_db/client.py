"""Building the Chroma client (embedded or server) and turning its connection failures into StoreError."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import chromadb
import httpx
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.config import Settings
from chromadb.errors import ChromaError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


class StoreError(Exception):
    """The vector store cannot do what was asked, with a reason a person understands (e.g. server unreachable)."""


REBUILD_HINT = "`python cli.py rebuild` indexes the kept originals again"


class LibraryDamaged(StoreError):
    """The store's data is damaged or lost (an unreadable Chroma database, or one that forgot its documents).
    Nothing was changed; the message says how to rebuild the library from the kept originals."""


def _settings() -> Settings:
    return Settings(anonymized_telemetry=False)


def server_url(host: str, port: int, ssl: bool) -> str:
    """'http://host:port' (or https) as a person would type it."""
    return f"{'https' if ssl else 'http'}://{host}:{port}"


def make_client(data_dir: Path, *, host: str | None = None, port: int = 8000, ssl: bool = False):
    """An embedded Chroma at data_dir/"chroma", or an HttpClient to a Chroma server when `host` is given.

    Telemetry is off either way.

    Raises:
        ValueError: `port` outside 1..65535 or an empty `host`.
        StoreError: the server at host:port does not answer.
        LibraryDamaged: the embedded database exists but Chroma cannot read it.
    """
    if host is None:
        path = Path(data_dir) / "chroma"
        path.mkdir(parents=True, exist_ok=True)
        try:
            return chromadb.PersistentClient(path=str(path), settings=_settings())
        except ChromaError as exc:  # e.g. "file is not a database", "database disk image is malformed"
            # Chroma caches the System per path even when it failed to start; without this, a fresh database
            # made at the same path later in this process (a rebuild) would reuse the broken one.
            SharedSystemClient._identifier_to_system.pop(str(path), None)
            raise LibraryDamaged(f"the library's Chroma database in {path} cannot be opened ({exc}); nothing was "
                                 f"changed: {REBUILD_HINT} (it sets the damaged database aside)") from exc
    if not host.strip():
        raise ValueError("Chroma host must be a host name or address, got an empty string")
    if not 1 <= int(port) <= 65535:
        raise ValueError(f"Chroma port must be between 1 and 65535, got {port}")
    url = server_url(host, port, ssl)
    try:
        # HttpClient checks tenant and database on construction; a dead server surfaces as ValueError here.
        return chromadb.HttpClient(host=host, port=int(port), ssl=ssl, settings=_settings())
    except (ValueError, httpx.TransportError) as exc:
        raise StoreError(f"cannot reach Chroma at {url}: {exc}") from exc


def client_from_env(data_dir: Path, environ: Mapping[str, str]):
    """make_client configured by CHROMA_HOST / CHROMA_PORT / CHROMA_SSL in `environ` (wiring.Config.chroma: the
    composition root reads the environment); embedded when CHROMA_HOST is unset.

    Raises:
        ValueError: CHROMA_PORT is not a number or CHROMA_SSL is not one of 1/0/true/false/yes/no/on/off.
        StoreError: CHROMA_HOST is set but the server does not answer.
    """
    env = environ
    host = env.get("CHROMA_HOST", "").strip() or None
    raw_port = env.get("CHROMA_PORT", "8000").strip() or "8000"
    if not raw_port.isdigit():
        raise ValueError(f"CHROMA_PORT must be a number, got {raw_port!r}")
    raw_ssl = env.get("CHROMA_SSL", "").strip().lower()
    if raw_ssl not in _TRUE + _FALSE:
        raise ValueError(f"CHROMA_SSL must be one of {', '.join(_TRUE + _FALSE[:-1])}, got {raw_ssl!r}")
    return make_client(data_dir, host=host, port=int(raw_port), ssl=raw_ssl in _TRUE)


def _is_server(settings) -> bool:
    return bool(settings.chroma_server_host) and settings.chroma_api_impl.endswith("FastAPI")


def embedded_path(client) -> Path | None:
    """The directory of an embedded (PersistentClient) Chroma; None for a server client."""
    settings = client.get_settings()
    if _is_server(settings) or not settings.persist_directory:
        return None
    return Path(settings.persist_directory)


def reopen(client):
    """A new embedded client on `client`'s directory that loads Chroma's state from disk afresh.

    Embedded Chroma caches one System per directory per process, with the vector index in memory; a process
    that only reads while another owns the directory keeps a view that falls behind the owner's writes until its
    queries fail with "Error finding id" (issue 16, item 6). Dropping the cache entry (not stopping the System:
    other threads may still be reading through it) makes the next client load the current state.
    """
    path = embedded_path(client)
    if path is None:
        return client
    SharedSystemClient._identifier_to_system.pop(str(path), None)
    return chromadb.PersistentClient(path=str(path), settings=_settings())


def describe(client) -> str:
    """Where `client` stores data: a server URL, or 'embedded Chroma at PATH'."""
    settings = client.get_settings()
    if _is_server(settings):
        host, port = settings.chroma_server_host, settings.chroma_server_http_port
        return server_url(host, port, settings.chroma_server_ssl_enabled)
    return f"embedded Chroma at {settings.persist_directory}"


@contextlib.contextmanager
def reaching(where: str) -> Iterator[None]:
    """Turn a lost connection into StoreError("cannot reach Chroma at WHERE: reason"), and Chroma's own
    errors into StoreError("Chroma at WHERE failed: reason")."""
    try:
        yield
    except httpx.TransportError as exc:
        raise StoreError(f"cannot reach Chroma at {where}: {exc}") from exc
    except ChromaError as exc:
        raise StoreError(f"Chroma at {where} failed: {exc}") from exc
