"""The proxy probed as an attacker would: paths, the proxy's own keys, secrets and a named tool_choice.

Every test runs real uvicorn servers on 127.0.0.1 (the proxy and a recording or scripted upstream)
and talks to them with raw sockets, httpx, and the openai and anthropic clients.
"""

from __future__ import annotations

import json
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
from upstreams import RecordingModel, raw_get


class Recorder:
    """An upstream that records the raw path and headers of every request, under any prefix."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, dict[str, str]]] = []

        async def any_path(request: Request) -> Response:
            self.seen.append((request.scope.get("raw_path") or b"", dict(request.headers)))
            return JSONResponse({"path": request.url.path})

        self.app = Starlette(routes=[Route("/{p:path}", any_path, methods=["GET", "POST"])])


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


# ---------------------------------------------------------------- the proxy's own keys

PROXY_KEY = "sp-proxy-key-0123456789"
BACKEND_KEY = "sk-backend-abcdefghijkl"
MESSAGES = [{"role": "user", "content": "go"}]


def keyed(url: str, monkeypatch: pytest.MonkeyPatch, **backend: Any) -> ProxyConfig:
    monkeypatch.setenv("TEST_PROXY_KEYS", f"{PROXY_KEY}, second-key-xyz")
    return ProxyConfig(backends=[Backend(name="b", upstream=url, default=True, **backend)], api_keys_env="TEST_PROXY_KEYS")


def test_without_a_proxy_key_nothing_is_forwarded_and_each_front_answers_401_in_its_shape(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic
    import openai

    model = RecordingModel("hello")
    with ServerThread(model.app()) as up, ServerThread(create_app(keyed(up.url + "/v1", monkeypatch))) as px:
        for key in ("wrong", PROXY_KEY[:-1], PROXY_KEY + "x", "second-key"):
            client = openai.OpenAI(base_url=px.url + "/v1", api_key=key, max_retries=0)
            with pytest.raises(openai.AuthenticationError) as info:
                client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
            assert info.value.status_code == 401 and info.value.body["code"] == "invalid_api_key"
            claude = anthropic.Anthropic(base_url=px.url, api_key=key, max_retries=0)
            with pytest.raises(anthropic.AuthenticationError) as ainfo:
                claude.messages.create(model="m", max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
            assert ainfo.value.body == {"type": "error", "error": {"type": "authentication_error",
                                                                   "message": ainfo.value.body["error"]["message"]}}
            with pytest.raises(openai.AuthenticationError) as info:
                client.responses.create(model="m", input="go")
            assert info.value.status_code == 401 and info.value.body["code"] == "invalid_api_key"
        r = httpx.get(px.url + "/v1/models", timeout=10)
        assert r.status_code == 401 and r.json()["error"]["type"] == "invalid_request_error"
        assert r.headers["www-authenticate"] == "Bearer"
        r = httpx.post(px.url + "/v1/messages/count_tokens", json={"model": "m", "messages": MESSAGES}, timeout=10)
        assert r.status_code == 401 and r.json()["type"] == "error"
        assert httpx.get(px.url + "/healthz", timeout=10).status_code == 200  # load balancers carry no key
        assert model.requests == []


def test_a_proxy_key_is_accepted_as_bearer_or_x_api_key_and_never_forwarded(monkeypatch: pytest.MonkeyPatch) -> None:
    import anthropic
    import openai

    model = RecordingModel("hello")
    with ServerThread(model.app()) as up, ServerThread(create_app(keyed(up.url + "/v1", monkeypatch))) as px:
        client = openai.OpenAI(base_url=px.url + "/v1", api_key=PROXY_KEY, max_retries=0)
        assert client.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content == "hello"  # type: ignore[arg-type]
        claude = anthropic.Anthropic(base_url=px.url, api_key="second-key-xyz", max_retries=0)
        reply = claude.messages.create(model="m", max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
        assert reply.content[0].text == "hello"  # type: ignore[union-attr]
        r = httpx.post(px.url + "/v1/chat/completions", headers={"x-api-key": PROXY_KEY}, timeout=10,
                       json={"model": "m", "messages": MESSAGES})
        assert r.status_code == 200
        assert client.responses.create(model="m", input="go").output_text == "hello"
        r = httpx.post(px.url + "/v1/responses", headers={"x-api-key": PROXY_KEY}, timeout=10,
                       json={"model": "m", "input": "go"})
        assert r.status_code == 200 and r.json()["output"][0]["content"][0]["text"] == "hello"
    assert len(model.headers) == 5
    for headers in model.headers:  # a keyless backend: the client's proxy key is not passed on either
        assert "authorization" not in headers and "x-api-key" not in headers
        assert not any(PROXY_KEY in v or "second-key-xyz" in v for v in headers.values())


def test_with_proxy_and_backend_keys_the_backend_sees_only_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    import openai

    monkeypatch.setenv("TEST_BACKEND_KEY", BACKEND_KEY)
    monkeypatch.setenv("STREAMPARSE_API_KEYS", "env-key-one,env-key-two")
    model = RecordingModel("hi")
    with ServerThread(model.app()) as up:
        config = ProxyConfig(backends=[Backend(name="b", upstream=up.url + "/v1", default=True,
                                               api_key_env="TEST_BACKEND_KEY")])
        with ServerThread(create_app(config)) as px:
            client = openai.OpenAI(base_url=px.url + "/v1", api_key="env-key-two", max_retries=0)
            client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
            assert httpx.get(px.url + "/v1/models", timeout=10).status_code == 401
    assert [h["authorization"] for h in model.headers] == [f"Bearer {BACKEND_KEY}"]


def test_a_relayed_path_never_carries_the_proxy_key(monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder()
    with ServerThread(rec.app) as up, ServerThread(create_app(keyed(up.url + "/v1", monkeypatch))) as px:
        assert httpx.get(px.url + "/v1/models", timeout=10).status_code == 401
        r = httpx.get(px.url + "/v1/models", headers={"Authorization": f"Bearer {PROXY_KEY}"}, timeout=10)
        assert r.status_code == 200 and r.json() == {"path": "/v1/models"}
        r = httpx.get(px.url + "/v1/models", headers={"x-api-key": PROXY_KEY, "Cookie": "c=1"}, timeout=10)
        assert r.status_code == 200
    assert len(rec.seen) == 2
    for _, headers in rec.seen:
        assert "authorization" not in headers and "x-api-key" not in headers and "cookie" not in headers


def test_proxy_keys_live_in_the_environment_only(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamparse.cli import build_parser
    from streamparse.proxy.config import ConfigError, load_config

    path = tmp_path / "proxy.toml"
    path.write_text('[server]\napi_keys = ["k1"]\n[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n')
    with pytest.raises(ConfigError, match="api_keys_env"):
        load_config(str(path))
    path.write_text('[server]\napi_keys_env = "UNSET_PROXY_KEYS_VAR"\n[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n')
    monkeypatch.delenv("UNSET_PROXY_KEYS_VAR", raising=False)
    with pytest.raises(ConfigError, match="UNSET_PROXY_KEYS_VAR"):
        create_app(load_config(str(path)))
    monkeypatch.setenv("UNSET_PROXY_KEYS_VAR", "a-key")
    assert load_config(str(path)).proxy_keys() == ["a-key"]
    args = build_parser().parse_args(["serve", "--upstream", "http://127.0.0.1:9/v1", "--api-key", "k1",
                                      "--api-key", "k2"])
    assert args.api_key == ["k1", "k2"]


def test_serve_api_key_guards_every_worker() -> None:
    import os
    import sys

    import openai

    from streamparse.proxy.runner import free_port, port_open, started_process

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMPARSE_API_KEY")}
    with ServerThread(RecordingModel("from the model").app()) as up:
        cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", up.url + "/v1", "--port", str(port),
               "--workers", "2", "--api-key", "cli-key-1", "--api-key", "cli-key-2", "--log-level", "warning"]
        with started_process(cmd, lambda: port_open(port), env=env):
            base = f"http://127.0.0.1:{port}"
            assert httpx.get(base + "/healthz", timeout=10).status_code == 200
            for _ in range(4):  # connections land on either worker
                assert httpx.post(base + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES},
                                  timeout=10).status_code == 401
            client = openai.OpenAI(base_url=base + "/v1", api_key="cli-key-2", max_retries=0)
            answer = client.chat.completions.create(model="m", messages=MESSAGES)  # type: ignore[arg-type]
            assert answer.choices[0].message.content == "from the model"
