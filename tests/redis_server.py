"""A real ``redis-server`` (Debian's package; ``.ci/run`` installs it) on a free loopback port, for the tests of
the shared Responses store. Each test that needs one starts its own, with no persistence, in a temporary folder."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from typing import Iterator

import pytest

REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """``with RedisServer() as redis:`` a server at ``redis.url``; ``stop()`` kills it (a Redis that died)."""

    def __init__(self) -> None:
        if REDIS_SERVER is None:
            pytest.skip("redis-server is not installed (Debian: apt-get install -y redis-server; .ci/run does it)")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._dir = tempfile.TemporaryDirectory()
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> "RedisServer":
        assert REDIS_SERVER is not None
        self._process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self._dir.name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def command(self, *words: str) -> bytes:
        """One command, its raw reply (for what a test checks behind the store's back)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as conn:
            parts = [f"*{len(words)}\r\n".encode()] + [f"${len(w.encode())}\r\n{w}\r\n".encode() for w in words]
            conn.sendall(b"".join(parts))
            time.sleep(0.05)
            return conn.recv(1 << 16)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(10)

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._dir.cleanup()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server
