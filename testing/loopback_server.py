"""What the local model stubs share: a ThreadingHTTPServer on 127.0.0.1 in a daemon thread, a script of replies
that go before the responder, and start/stop as a context manager. Each stub adds its protocol (its handler)."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar


@dataclass
class LoopbackServer:
    """Serves `handler` (a BaseHTTPRequestHandler whose `stub` is this object) on a free 127.0.0.1 port."""

    handler: ClassVar[type[BaseHTTPRequestHandler]]
    _script: deque = field(default_factory=deque)
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def push(self, *replies) -> None:
        """Queue replies that are used, in order, before the responder is asked."""
        self._script.extend(replies)

    def scripted(self):
        """The next queued reply, or None (call with the lock held)."""
        return self._script.popleft() if self._script else None

    def start(self):
        handler = type("Handler", (self.handler,), {"stub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
