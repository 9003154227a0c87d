"""Slow clients: a request's headers and body must arrive within ``header_timeout`` / ``body_timeout``.

The proxy (short deadlines, 0.5 s) under uvicorn on 127.0.0.1, probed with raw sockets; the bound
each wait is given (10 s) only keeps a broken build from hanging the run.
"""

from __future__ import annotations

import socket
import time
from typing import Iterator

import httpx
import pytest

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread
from upstreams import RecordingModel


@pytest.fixture(scope="module")
def proxy() -> Iterator[ServerThread]:
    model = RecordingModel("fine")
    with ServerThread(model.app()) as up:
        config = ProxyConfig(backends=[Backend(name="b", upstream=up.url + "/v1", default=True)],
                             header_timeout=0.5, body_timeout=0.5)
        with ServerThread(create_app(config)) as px:
            yield px


def read_all(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def test_a_body_shorter_than_declared_gets_a_408_and_the_connection_closes(proxy: ServerThread) -> None:
    for path in ("/v1/chat/completions", "/v1/messages", "/v1/models"):
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
            sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         "Content-Length: 100\r\n\r\n{\"model\": \"m\"".encode())
            data = read_all(sock)  # returns only once the server closes the connection
        assert data.startswith(b"HTTP/1.1 408"), (path, data[:200])
        assert b"did not arrive" in data


def test_trickled_headers_do_not_keep_connections_open(proxy: ServerThread) -> None:
    socks = [socket.create_connection(("127.0.0.1", proxy.port), timeout=10) for _ in range(120)]
    try:
        for sock in socks:
            sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")
            sock.setblocking(False)
        open_socks = set(range(len(socks)))
        answers: dict[int, bytes] = {}
        give_up = time.monotonic() + 10
        while open_socks and time.monotonic() < give_up:
            for i in list(open_socks):
                try:
                    socks[i].sendall(b"X-Slow: 1\r\n")  # one more header line, never the end of them
                    chunk = socks[i].recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                answers[i] = answers.get(i, b"") + chunk
                if not chunk:
                    open_socks.discard(i)
            time.sleep(0.05)
        assert not open_socks, f"{len(open_socks)} connections still open"
        assert all(a == b"" or a.startswith(b"HTTP/1.1 408") for a in answers.values())
    finally:
        for sock in socks:
            sock.close()


def test_prompt_clients_are_untouched_and_keep_alive_still_works(proxy: ServerThread) -> None:
    with httpx.Client(base_url=proxy.url, timeout=10) as client:
        for _ in range(3):
            r = client.post("/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
            assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "fine"
            time.sleep(0.6)  # longer than the header deadline between requests: idle is not "slow headers"
    assert httpx.get(proxy.url + "/healthz", timeout=10).status_code == 200


def test_deadlines_are_checked_settings() -> None:
    from streamparse.proxy.config import ConfigError

    for bad in (0, -1, "10", True):
        with pytest.raises(ConfigError, match="header_timeout"):
            ProxyConfig(backends=[Backend(name="b", upstream="http://127.0.0.1:9/v1")], header_timeout=bad)  # type: ignore[arg-type]


def test_a_second_request_on_a_kept_alive_connection_has_its_own_header_deadline(proxy: ServerThread) -> None:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while b'"ok"' not in first:
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        sock.setblocking(False)
        data, give_up = b"", time.monotonic() + 10
        while time.monotonic() < give_up:
            try:
                sock.sendall(b"X-Slow: 1\r\n")
                chunk = sock.recv(65536)
            except BlockingIOError:
                time.sleep(0.05)
                continue
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        assert data.startswith(b"HTTP/1.1 408")
