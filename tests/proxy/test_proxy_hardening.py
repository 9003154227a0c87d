"""The proxy probed as an operator would: credentials, paths, validation, limits, time.

Every test runs real uvicorn servers on 127.0.0.1 (the proxy and a scripted
upstream) and talks to them with httpx, raw sockets or the openai client.
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from typing import Any, Iterator

import httpx
import openai
import pytest
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from helpers import TOOLS
from streamparse.proxy.config import Backend, ConfigError, ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port
from streamparse.proxy.app import create_app
from streamparse.wire.sse import SSEDecoder
from upstreams import HERMES, FaultLog, faulty_upstream, raw_get, scripted_upstream, wait_for

MESSAGES = [{"role": "user", "content": "go"}]
KEY = "sk-backend-0123456789"


def backend(url: str, **kw: Any) -> ProxyConfig:
    server = {k: kw.pop(k) for k in ("max_body_bytes", "max_response_bytes", "max_event_bytes") if k in kw}
    return ProxyConfig(backends=[Backend(name="b", upstream=url, default=True, **kw)], **server)


def sse_items(url: str, payload: dict[str, Any], timeout: float = 30) -> list[Any]:
    items: list[Any] = []
    decoder = SSEDecoder()
    with httpx.stream("POST", url + "/v1/chat/completions", json=payload, timeout=timeout) as resp:
        assert resp.status_code == 200, resp.read()
        for raw in resp.iter_bytes():
            for event in decoder.feed(raw):
                if event.data is not None:
                    items.append(event.data if event.data == "[DONE]" else json.loads(event.data))
    return items


def content(items: list[Any]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in items
                   if isinstance(c, dict) and c.get("choices"))


def errors(items: list[Any]) -> list[str]:
    return [i["error"]["message"] for i in items if isinstance(i, dict) and "error" in i]


@pytest.fixture()
def faults() -> Iterator[tuple[FaultLog, ServerThread]]:
    log = FaultLog()
    with ServerThread(faulty_upstream(log)) as up:
        yield log, up


# ---------------------------------------------------------------- credentials and paths

class Recorder:
    """An upstream that records every request it gets (path and headers), under any prefix."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str]]] = []

        async def any_path(request: Request) -> Response:
            self.seen.append((request.url.path, dict(request.headers)))
            return JSONResponse({"path": request.url.path, "auth": request.headers.get("authorization")})

        self.app = Starlette(routes=[Route("/{p:path}", any_path, methods=["GET", "POST"])])


TRAVERSALS = [
    "/v1/../../tenant-b/v1/models",
    "/v1/%2e%2e/%2e%2e/tenant-b/v1/models",
    "/v1/%2E%2E/%2E%2E/tenant-b/v1/models",
    "/v1/..%2f..%2ftenant-b/v1/models",
    "/v1/models/../../../tenant-b/v1/models",
    "/v1/./models",
    "/v1//models",
    "/v1/..\\..\\tenant-b",
    "/tenant-b/v1/models",
    "/../tenant-b/v1/models",
]


def test_paths_cannot_leave_the_backend_base(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENANT_KEY", KEY)
    rec = Recorder()
    with ServerThread(rec.app) as up, \
            ServerThread(create_app(backend(up.url + "/tenant-a/v1", api_key_env="TENANT_KEY"))) as px:
        for path in TRAVERSALS:
            status, body = raw_get(px.port, path)
            assert status in (400, 404), (path, status, body)
            assert json.loads(body)["error"]["message"]
        assert rec.seen == []  # nothing was forwarded, with or without the key
        r = httpx.get(px.url + "/v1/models?x=1", timeout=10)
        assert r.status_code == 200 and r.json() == {"path": "/tenant-a/v1/models", "auth": "Bearer ***"}
        assert rec.seen == [("/tenant-a/v1/models", rec.seen[0][1])] and rec.seen[0][1]["authorization"] == f"Bearer {KEY}"


def test_a_backend_with_a_key_never_sees_the_clients_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENANT_KEY", KEY)
    rec = Recorder()
    client_headers = {"Authorization": "Bearer sk-client", "x-api-key": "sk-client-2", "Cookie": "session=abc",
                      "X-Trace": "t1"}
    with ServerThread(rec.app) as up, \
            ServerThread(create_app(backend(up.url + "/v1", api_key_env="TENANT_KEY", chat_template="off"))) as px:
        httpx.get(px.url + "/v1/models", headers=client_headers, timeout=10)
        httpx.post(px.url + "/v1/chat/completions", headers=client_headers, timeout=10,
                   json={"model": "m", "messages": MESSAGES})
    assert len(rec.seen) == 2
    for _, headers in rec.seen:
        assert headers["authorization"] == f"Bearer {KEY}"
        assert "x-api-key" not in headers and "cookie" not in headers
        assert headers["x-trace"] == "t1"


def test_an_unset_key_variable_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR"):
        create_app(backend("http://127.0.0.1:9/v1", api_key_env="NO_SUCH_KEY_VAR"))


def test_secrets_never_reach_a_response_or_a_log(faults: tuple[FaultLog, ServerThread], monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    _, up = faults
    monkeypatch.setenv("TENANT_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    with ServerThread(create_app(backend(up.url + "/v1", api_key_env="TENANT_KEY"))) as px:
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "echo_key", "messages": MESSAGES}, timeout=10)
        assert r.status_code == 401 and "invalid key Bearer ***" in r.text and KEY not in r.text
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "echo_key", "messages": MESSAGES,
                                                               "stream": True, "tools": TOOLS}, timeout=10)
        assert r.status_code == 401 and "Bearer ***" in r.text and KEY not in r.text
    dead = free_port()
    with ServerThread(create_app(ProxyConfig.single(f"http://admin:hunter2@127.0.0.1:{dead}/v1"))) as px:
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=10)
        assert r.status_code == 502 and "unreachable" in r.text
        r2 = httpx.get(px.url + "/v1/models", timeout=10)
        assert r2.status_code == 502
    for text in (r.text, r2.text, caplog.text):
        assert "hunter2" not in text and "admin:" not in text and KEY not in text
    assert "***@127.0.0.1" in r.text


# ---------------------------------------------------------------- requests

BAD_TOOLS = [
    ({"tools": "x"}, "'tools' must be a list"),
    ({"tools": [{"type": "function"}]}, "tools[0].function"),
    ({"tools": [{"type": "function", "function": {"description": "no name"}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "function", "function": {"name": ""}}]}, "tools[0].function.name"),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}]}, "parameters"),
    ({"tools": [1]}, "tools[0] must be an object"),
    ({"tools": TOOLS, "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "not among the tools"),
    ({"tools": TOOLS, "tool_choice": "sometimes"}, "tool_choice"),
]


def test_malformed_tools_are_refused_before_the_upstream_is_called(faults: tuple[FaultLog, ServerThread]) -> None:
    log, up = faults
    with ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        client = OpenAI(base_url=px.url + "/v1", api_key="k")  # default retries: a 400 must not be retried
        for extra, message in BAD_TOOLS:
            with pytest.raises(openai.BadRequestError) as info:
                client.chat.completions.create(model="slow", messages=MESSAGES, **extra)
            assert message in info.value.message
            assert info.value.body["type"] == "invalid_request_error"
    assert log.requests == []


def test_without_tools_the_upstream_text_is_untouched() -> None:
    with ServerThread(scripted_upstream()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        full = client.chat.completions.create(model="hermes", messages=MESSAGES)
        assert full.choices[0].message.content == "Let me look.\n" + HERMES + "\nDone."
        assert full.choices[0].message.tool_calls is None and full.choices[0].finish_reason == "stop"
        direct = httpx.post(up.url + "/v1/chat/completions", json={"model": "hermes", "messages": MESSAGES}).json()
        via = httpx.post(px.url + "/v1/chat/completions", json={"model": "hermes", "messages": MESSAGES}).json()
        assert {k: v for k, v in via.items() if k not in ("id", "created")} == \
            {k: v for k, v in direct.items() if k not in ("id", "created")}
        chunks = list(client.chat.completions.create(model="hermes", messages=MESSAGES, stream=True))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == full.choices[0].message.content
        assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
        assert chunks[-1].choices[0].finish_reason == "stop"
        # tool_choice "none": the client offered tools but allows no call
        none = client.chat.completions.create(model="hermes", messages=MESSAGES, tools=TOOLS, tool_choice="none")
        assert none.choices[0].message.tool_calls is None and HERMES in none.choices[0].message.content


def test_parse_without_tools_restores_tagged_blocks() -> None:
    with ServerThread(scripted_upstream()) as up, \
            ServerThread(create_app(backend(up.url + "/v1", parse_without_tools=True))) as px:
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        full = client.chat.completions.create(model="hermes", messages=MESSAGES)
        assert full.choices[0].message.tool_calls[0].function.name == "get_weather"
        assert full.choices[0].finish_reason == "tool_calls"


def test_bad_bodies_get_a_400_and_the_connection_stays_usable() -> None:
    with ServerThread(scripted_upstream()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        conn = http.client.HTTPConnection("127.0.0.1", px.port, timeout=10)
        good = json.dumps({"model": "plain", "messages": MESSAGES})
        bodies = ["[" * 5000 + "]" * 5000, '{"a":' * 3000 + "1" + "}" * 3000,
                  '{"model": "m", "temperature": NaN, "messages": []}', '{"x": Infinity}',
                  '{"messages": [' + "[" * 100 + "]" * 100 + "]}", "\xff\xfe not utf8", good]
        sock = None
        for body in bodies:
            conn.request("POST", "/v1/chat/completions", body=body.encode("latin-1"),
                         headers={"content-type": "application/json"})
            resp = conn.getresponse()
            data = json.loads(resp.read())
            sock = sock or conn.sock
            assert conn.sock is sock  # the same keep-alive connection every time
            if body is good:
                assert resp.status == 200 and data["choices"][0]["message"]["content"]
            else:
                assert resp.status == 400 and data["error"]["type"] == "invalid_request_error", (body[:40], data)
        conn.close()


def test_size_limits_on_every_path(faults: tuple[FaultLog, ServerThread]) -> None:
    log, up = faults
    config = backend(up.url + "/v1", max_body_bytes=10_000, max_response_bytes=1_000_000, max_event_bytes=500_000)
    with ServerThread(create_app(config)) as px:
        for path in ("/v1/chat/completions", "/v1/embeddings", "/v1/files"):
            r = httpx.post(px.url + path, content=b"x" * 20_000, timeout=10)
            assert r.status_code == 413 and "limit" in r.json()["error"]["message"], path
        assert log.requests == []
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "huge_body", "messages": MESSAGES}, timeout=10)
        assert r.status_code == 502 and "larger than the limit" in r.json()["error"]["message"]
        items = sse_items(px.url, {"model": "huge_line", "messages": MESSAGES, "stream": True, "tools": TOOLS})
        assert content(items) == "Hello <tool_"  # held text flushed first
        (message,) = errors(items)
        assert "longer than the limit" in message
        assert wait_for(lambda: log.open_streams == 0)


# ---------------------------------------------------------------- time

def test_pings_do_not_defeat_the_read_timeout(faults: tuple[FaultLog, ServerThread]) -> None:
    log, up = faults
    with ServerThread(create_app(backend(up.url + "/v1", read_timeout=0.6))) as px:
        start = time.monotonic()
        items = sse_items(px.url, {"model": "pings_only", "messages": MESSAGES, "stream": True, "tools": TOOLS})
        assert time.monotonic() - start < 20
        assert content(items) == "Hello <tool_"
        (message,) = errors(items)
        assert "read_timeout" in message
        items = sse_items(px.url, {"model": "pings_only", "messages": MESSAGES, "stream": True})  # relayed as is
        assert "read_timeout" in errors(items)[0]
    assert wait_for(lambda: log.open_streams == 0)


def test_total_timeout_ends_a_slow_stream_and_a_stalled_answer(faults: tuple[FaultLog, ServerThread]) -> None:
    log, up = faults
    with ServerThread(create_app(backend(up.url + "/v1", total_timeout=0.7, read_timeout=30))) as px:
        items = sse_items(px.url, {"model": "endless", "messages": MESSAGES, "stream": True, "tools": TOOLS})
        assert "total_timeout" in errors(items)[0] and content(items).startswith("Hello <tool_ tick0")
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "hang", "messages": MESSAGES}, timeout=30)
        assert r.status_code == 504 and r.json()["error"]["code"] == "upstream_timeout"
    assert wait_for(lambda: log.open_streams == 0)


def test_connect_timeout() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # never accepts: once the backlog is full, connections hang in SYN
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):
            s = socket.socket()
            s.setblocking(False)
            s.connect_ex(("127.0.0.1", port))
            fillers.append(s)
        with ServerThread(create_app(backend(f"http://127.0.0.1:{port}/v1", connect_timeout=0.5))) as px:
            start = time.monotonic()
            r = httpx.post(px.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=30)
            assert r.status_code == 504 and time.monotonic() - start < 10
    finally:
        for s in fillers:
            s.close()
        listener.close()


def test_abandoned_requests_cancel_their_upstream_and_a_full_pool_answers_503(
        faults: tuple[FaultLog, ServerThread]) -> None:
    log, up = faults
    with ServerThread(create_app(backend(up.url + "/v1", max_connections=5))) as px:
        def give_up() -> None:
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(px.url + "/v1/chat/completions", json={"model": "hang", "messages": MESSAGES}, timeout=0.3)

        for _ in range(4):  # 20 clients that give up, five at a time
            threads = [threading.Thread(target=give_up) for _ in range(5)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert wait_for(lambda: log.open_streams == 0), log.open_streams
        assert log.cancelled == 20
        assert px.server.config.app.state.upstream.slots.in_flight["b"] == 0
        # Fill the pool with streams that stay open, then one more request is refused at once.
        streams = [httpx.stream("POST", px.url + "/v1/chat/completions", timeout=30,
                                json={"model": "endless", "messages": MESSAGES, "stream": True}) for _ in range(5)]
        opened = [s.__enter__() for s in streams]
        try:
            assert all(r.status_code == 200 for r in opened)
            r = httpx.get(px.url + "/v1/models", timeout=5)
            assert r.status_code == 503 and r.json()["error"]["type"] == "overloaded_error"
            assert httpx.get(px.url + "/healthz", timeout=5).json() == {"status": "ok"}  # answered locally
        finally:
            for s in streams:
                s.__exit__(None, None, None)
        assert wait_for(lambda: px.server.config.app.state.upstream.slots.in_flight["b"] == 0)
        assert httpx.get(px.url + "/v1/models", timeout=5).status_code == 200


def test_a_404_from_a_base_without_v1_carries_a_hint(faults: tuple[FaultLog, ServerThread]) -> None:
    _, up = faults
    with ServerThread(create_app(ProxyConfig.single(up.url))) as px:
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES}, timeout=10)
    assert r.status_code == 404 and "does not end in /v1" in r.json()["error"]["message"]
