"""CORS answered by the proxy: preflights never reach the upstream, the headers the openai and anthropic SDKs send
are allowed, x-request-id is exposed; off by default (every OPTIONS a clean 405, never relayed), and an upstream's
own CORS headers never reach the client. Real servers on 127.0.0.1; a browser drives it in test_cors_browser.py."""

from __future__ import annotations

from typing import Any, Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread
from upstreams import RecordingModel

PAGE = "http://localhost:3000"
SDK_HEADERS = ("authorization", "content-type", "x-api-key", "anthropic-version", "x-stainless-os",
               "x-stainless-retry-count", "x-request-id", "anthropic-dangerous-direct-browser-access")


class Seen:
    """An upstream (RecordingModel's chat, plus a /v1/models that sends CORS headers of its own) that notes the
    method and path of every request that reaches it."""

    def __init__(self) -> None:
        self.model = RecordingModel("hello from upstream")
        self.methods: list[str] = []

    def app(self) -> Any:
        async def models(request: Request) -> Response:
            return JSONResponse({"object": "list", "data": []}, headers={"access-control-allow-origin": "*"})

        chat = self.model.app()
        listing = Starlette(routes=[Route("/v1/models", models, methods=["GET", "OPTIONS"])])

        async def app(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.methods.append(f"{scope['method']} {scope['path']}")
            await (listing if scope.get("path") == "/v1/models" else chat)(scope, receive, send)

        return app


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[Seen, ServerThread]]:
    seen = Seen()
    with ServerThread(seen.app()) as thread:
        yield seen, thread


def preflight(base: str, origin: str, path: str = "/v1/chat/completions") -> httpx.Response:
    return httpx.options(base + path, headers={"origin": origin, "access-control-request-method": "POST",
                                               "access-control-request-headers": ", ".join(SDK_HEADERS)})


def test_preflight_answered_by_the_proxy(upstream: tuple[Seen, ServerThread], monkeypatch: pytest.MonkeyPatch) -> None:
    seen, thread = upstream
    monkeypatch.setenv("STREAMPARSE_API_KEYS", "proxy-key-1")  # a preflight carries no key: still answered
    config = ProxyConfig.single(thread.url + "/v1", cors_origins=[PAGE, "https://app.example.com"])
    with ServerThread(create_app(config)) as proxy:
        before = len(seen.methods)
        for path in ("/v1/chat/completions", "/v1/messages", "/v1/responses", "/v1/models", "/v1/embeddings"):
            r = preflight(proxy.url, PAGE, path)
            assert r.status_code == 204 and r.content == b""
            assert r.headers["access-control-allow-origin"] == PAGE and r.headers["vary"] == "Origin"
            allowed = [h.strip() for h in r.headers["access-control-allow-headers"].split(",")]
            assert set(SDK_HEADERS) <= set(allowed)
            assert "POST" in r.headers["access-control-allow-methods"] and r.headers["access-control-max-age"]
            assert "access-control-allow-credentials" not in r.headers
        refused = preflight(proxy.url, "https://evil.example")
        assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers
        assert len(seen.methods) == before  # not one of them reached the upstream

        answer = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": []},
                            headers={"origin": PAGE, "authorization": "Bearer proxy-key-1"})
        assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == PAGE
        assert "x-request-id" in answer.headers["access-control-expose-headers"]
        no_key = httpx.post(proxy.url + "/v1/chat/completions", json={}, headers={"origin": PAGE})
        assert no_key.status_code == 401 and no_key.headers["access-control-allow-origin"] == PAGE  # readable error
        other = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": []},
                           headers={"origin": "https://evil.example", "authorization": "Bearer proxy-key-1"})
        assert "access-control-allow-origin" not in other.headers  # the browser keeps the answer from that page
        listed = httpx.get(proxy.url + "/v1/models", headers={"origin": "https://app.example.com",
                                                              "authorization": "Bearer proxy-key-1"})
        assert listed.headers.get_list("access-control-allow-origin") == ["https://app.example.com"]  # not also "*"


def test_any_origin_and_a_public_page_calling_loopback(upstream: tuple[Seen, ServerThread]) -> None:
    _, thread = upstream
    with ServerThread(create_app(ProxyConfig.single(thread.url + "/v1", cors_origins=["*"]))) as proxy:
        r = httpx.options(proxy.url + "/v1/chat/completions", headers={
            "origin": "https://anywhere.example", "access-control-request-method": "POST",
            "access-control-request-private-network": "true"})
        assert r.status_code == 204 and r.headers["access-control-allow-origin"] == "*"
        assert r.headers["access-control-allow-private-network"] == "true" and "vary" not in r.headers
        answer = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "m", "messages": []},
                            headers={"origin": "https://anywhere.example"})
        assert answer.headers["access-control-allow-origin"] == "*"


def test_off_by_default_options_is_a_405_and_never_relayed(upstream: tuple[Seen, ServerThread]) -> None:
    seen, thread = upstream
    with ServerThread(create_app(ProxyConfig.single(thread.url + "/v1"))) as proxy:
        before = len(seen.methods)
        for r in (preflight(proxy.url, PAGE), httpx.options(proxy.url + "/v1/models")):
            assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"
            assert "POST" in r.headers["allow"] and "access-control-allow-origin" not in r.headers
            assert r.headers["x-request-id"]
        listed = httpx.get(proxy.url + "/v1/models", headers={"origin": PAGE})
        assert listed.status_code == 200 and "access-control-allow-origin" not in listed.headers  # upstream's: dropped
        assert seen.methods[before:] == ["GET /v1/models"]  # the two OPTIONS never left the proxy
    with ServerThread(create_app(ProxyConfig.single(thread.url + "/v1", cors_origins=[PAGE]))) as proxy:
        plain = httpx.options(proxy.url + "/v1/chat/completions")  # not a preflight: same 405
        assert plain.status_code == 405 and "cors_origins" not in plain.json()["error"]["message"]
