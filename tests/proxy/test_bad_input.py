"""Bad input never becomes a 500 or an aborted stream: from the client, from the upstream, in the middleware.

Real servers on 127.0.0.1 (the proxy, and upstreams that send what real ones sometimes do), the real
openai and anthropic clients, and httpx for bytes no client would send.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator

import anthropic
import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from helpers import TOOLS
from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread
from upstreams import RecordingModel

MESSAGES = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def plain_proxy() -> Iterator[str]:
    with ServerThread(RecordingModel("fine").app()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        yield px.url


# ---------------------------------------------------------------- from the client

def test_a_lone_surrogate_in_the_request_is_a_400_and_the_connection_stays_usable(plain_proxy: str) -> None:
    lone = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "a \\ud800 b"}]}'
    with httpx.Client(base_url=plain_proxy, timeout=10) as client:
        for path in ("/v1/chat/completions", "/v1/messages", "/v1/messages/count_tokens"):
            r = client.post(path, content=lone, headers={"content-type": "application/json"})
            assert r.status_code == 400, (path, r.text)
            body = r.json()
            message = body["error"]["message"]
            assert "surrogate" in message
            if path.startswith("/v1/messages"):
                assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
            assert r.headers.get("connection") != "close"
            ok = client.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
            assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == "fine"
        paired = b'{"model": "m", "messages": [{"role": "user", "content": "\\ud83d\\ude00"}]}'
        assert client.post("/v1/chat/completions", content=paired).status_code == 200  # a real pair is text
