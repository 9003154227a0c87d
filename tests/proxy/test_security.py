"""The proxy probed as an attacker would: paths, the proxy's own keys, secrets and a named tool_choice.

Every test runs real uvicorn servers on 127.0.0.1 (the proxy and a recording or scripted upstream)
and talks to them with raw sockets, httpx, and the openai and anthropic clients.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread


class Recorder:
    """An upstream that records the raw path and headers of every request, under any prefix."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, dict[str, str]]] = []

        async def any_path(request: Request) -> Response:
            self.seen.append((request.scope.get("raw_path") or b"", dict(request.headers)))
            return JSONResponse({"path": request.url.path})

        self.app = Starlette(routes=[Route("/{p:path}", any_path, methods=["GET", "POST"])])


def raw_get(port: int, path: str) -> tuple[int, bytes]:
    """A GET with the path exactly as written (clients would normalise it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


DOUBLE_ENCODED = [
    "/v1/%252e%252e/x",
    "/v1/%252E%252E/%252e%252e/tenant-b/v1/models",
    "/v1/models%252f..%252f..%252fx",
    "/v1/%25252e%25252e/x",          # three layers
    "/v1/..%255c..%255cx",
    "/v1/x%2500",
    "/v1/..;/x",
    "/v1/models/..;/..;/x",
    "/v1/.;/models",
]


@pytest.mark.parametrize("path", DOUBLE_ENCODED)
def test_no_encoding_depth_lets_a_path_leave_the_backend_base(path: str) -> None:
    rec = Recorder()
    with ServerThread(rec.app) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/tenant-a/v1"))) as px:
        status, body = raw_get(px.port, path)
        assert status in (400, 404), (status, body)
        error = json.loads(body)["error"]
        assert error["type"] == "invalid_request_error" and "refused" in error["message"]
        assert rec.seen == []  # never forwarded
        ok_status, _ = raw_get(px.port, "/v1/models%20list")  # an ordinary encoded character still goes through
        assert ok_status == 200 and rec.seen[0][0] == b"/tenant-a/v1/models%20list"
