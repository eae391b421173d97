"""A real `chroma run` on 127.0.0.1 for the server-mode tests and benches (the `chroma` command beside this Python)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from vector_db import StoreError, make_client

CHROMA = Path(sys.executable).with_name("chroma")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ChromaServer:
    """A real `chroma run` on 127.0.0.1, started and stopped on demand."""

    def __init__(self, path: Path):
        self.path, self.port, self.proc = path, free_port(), None

    def start(self, timeout: float = 60.0) -> None:
        log = open(self.path.parent / "chroma-server.log", "ab")  # noqa: SIM115 - handed to the child process
        self.proc = subprocess.Popen([str(CHROMA), "run", "--path", str(self.path), "--host", "127.0.0.1",
                                      "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chroma run exited with {self.proc.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    make_client(self.path, host="127.0.0.1", port=self.port).heartbeat()
                    return
            except (OSError, StoreError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"chroma run did not answer on port {self.port} within {timeout} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
