"""Running ASGI apps under uvicorn: in the foreground (``streamparse serve``) or in a
background thread on a free loopback port (the demo, the tests, the benchmarks)."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import uvicorn

__all__ = ["ServerThread", "serve_forever", "started_process", "port_open", "free_port"]


def serve_forever(app: Any, host: str, port: int, log_level: str = "info") -> None:
    uvicorn.run(app, host=host, port=port, log_level=log_level, lifespan="on")


class ServerThread:
    """``with ServerThread(app) as server: server.url`` — uvicorn in a thread, stopped on exit."""

    def __init__(self, app: Any, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
        self.host = host
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=5)
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "ServerThread":
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self._thread.join(timeout=15)
        self._sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_open(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


@contextmanager
def started_process(cmd: list[str], ready: Callable[[], bool], *, timeout: float = 30,
                    env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Start ``cmd``, wait until ``ready()`` (or fail with the end of its stderr), stop it on exit.

    stderr goes to a temporary file, not a pipe: a chatty server would block on a full pipe.
    """
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        try:
            deadline = time.monotonic() + timeout
            while not ready():
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    stderr.seek(0)
                    err = stderr.read().decode(errors="replace")
                    raise RuntimeError(f"{' '.join(cmd[:4])} … did not start: {err[-3000:]}")
                time.sleep(0.1)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
