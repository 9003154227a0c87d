"""/readyz asks the upstreams (cached), /healthz does not; GET /v1/models merges every backend's list, and one
backend that is down leaves the others listed; `serve` warns once at start-up about an upstream that does not
answer. Real servers on 127.0.0.1, the openai client where a client lists models."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from typing import Iterator

import httpx
import pytest
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port, port_open
from upstreams import wait_for


class ModelServer:
    """An upstream that lists ``names`` at /v1/models and counts how often it was asked."""

    def __init__(self, *names: str, status: int = 200):
        self.names, self.status, self.asked = names, status, 0

    def app(self) -> Starlette:
        async def models(request: Request) -> Response:
            self.asked += 1
            data = [{"id": n, "object": "model", "created": 1, "owned_by": "up"} for n in self.names]
            return JSONResponse({"object": "list", "data": data}, status_code=self.status)

        return Starlette(routes=[Route("/v1/models", models)])


@pytest.fixture
def up() -> Iterator[tuple[ModelServer, ServerThread]]:
    server = ModelServer("m1", "m2")
    with ServerThread(server.app()) as thread:
        yield server, thread


def test_readyz_follows_the_upstream_and_is_cached(up: tuple[ModelServer, ServerThread]) -> None:
    server, thread = up
    config = ProxyConfig([Backend("local", thread.url + "/v1", default=True)], ready_cache=2)
    with ServerThread(create_app(config)) as proxy:
        for _ in range(5):
            r = httpx.get(proxy.url + "/readyz")
            assert r.status_code == 200 and r.json() == {
                "status": "ready", "backends": {"local": "up"}, "served_by": {"local": "local"},
                "responses_store": {"store": "this process's memory store", "shared": False, "state": "up"}}
        assert server.asked == 1  # four answers came from the cache
        thread.__exit__(None, None, None)  # the upstream goes away: /readyz says so once its cache expires
        assert wait_for(lambda: httpx.get(proxy.url + "/readyz").status_code == 503, timeout=10)
        r = httpx.get(proxy.url + "/readyz")
        assert r.json()["status"] == "unavailable"
        assert r.json()["backends"]["local"].startswith("unreachable: ConnectError")
        assert httpx.get(proxy.url + "/healthz").json() == {"status": "ok"}  # liveness does not ask


def test_readyz_with_one_backend_of_two_down(up: tuple[ModelServer, ServerThread]) -> None:
    """A backend without a fallback that is down: its models cannot be served, so not ready (docs/operating.md)."""
    _, thread = up
    config = ProxyConfig([Backend("local", thread.url + "/v1", default=True),
                          Backend("gone", f"http://127.0.0.1:{free_port()}/v1", models=["x"])])
    with ServerThread(create_app(config)) as proxy:
        r = httpx.get(proxy.url + "/readyz")
        assert r.status_code == 503 and r.json()["backends"]["local"] == "up"
        assert r.json()["backends"]["gone"].startswith("unreachable")
        assert r.json()["served_by"] == {"local": "local", "gone": None}


def test_readyz_counts_a_5xx_as_down_and_a_401_as_up() -> None:
    for status, code in ((503, 503), (401, 200)):
        with ServerThread(ModelServer(status=status).app()) as thread:
            with ServerThread(create_app(ProxyConfig.single(thread.url + "/v1"))) as proxy:
                assert httpx.get(proxy.url + "/readyz").status_code == code


def test_readyz_stays_open_when_the_proxy_has_keys(up: tuple[ModelServer, ServerThread],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STREAMPARSE_API_KEYS", "proxy-key-1")
    with ServerThread(create_app(ProxyConfig.single(up[1].url + "/v1"))) as proxy:
        assert httpx.get(proxy.url + "/readyz").status_code == 200
        assert httpx.get(proxy.url + "/metrics").status_code == 401
        assert httpx.get(proxy.url + "/v1/models").status_code == 401


def test_models_merges_every_backend_and_leaves_out_one_that_is_down() -> None:
    a, b = ModelServer("a1", "a2"), ModelServer("b1", "a1")
    with ServerThread(a.app()) as ta, ServerThread(b.app()) as tb:
        config = ProxyConfig([
            Backend("a", ta.url + "/v1", default=True),
            Backend("b", tb.url + "/v1", model_map={"alias": "b1"}),
            Backend("down", f"http://127.0.0.1:{free_port()}/v1", models=["c-model"]),
        ])
        with ServerThread(create_app(config)) as proxy:
            client = OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0)
            listed = client.models.list()
            assert [m.id for m in listed.data] == ["a1", "a2", "b1", "alias", "c-model"]
            owners = {m.id: m.owned_by for m in listed.data}
            assert owners["a1"] == "up" and owners["alias"] == "b" and owners["c-model"] == "down"


def test_models_when_no_backend_answers() -> None:
    config = ProxyConfig([Backend("x", f"http://127.0.0.1:{free_port()}/v1", default=True),
                          Backend("y", f"http://127.0.0.1:{free_port()}/v1")])
    with ServerThread(create_app(config)) as proxy:
        r = httpx.get(proxy.url + "/v1/models")
        assert r.status_code == 502 and r.json()["error"]["code"] == "upstream_unreachable"


def test_one_backend_without_names_is_relayed_as_it_is(up: tuple[ModelServer, ServerThread]) -> None:
    with ServerThread(create_app(ProxyConfig.single(up[1].url + "/v1"))) as proxy:
        r = httpx.get(proxy.url + "/v1/models")
        assert [m["owned_by"] for m in r.json()["data"]] == ["up", "up"]


def test_serve_warns_once_when_the_upstream_does_not_answer() -> None:
    port, dead = free_port(), free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", f"http://127.0.0.1:{dead}/v1",
           "--port", str(port), "--log-level", "warning"]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 30
            while not port_open(port) and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert port_open(port)
            assert httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 503
        finally:
            proc.terminate()
            proc.wait(30)
        err.seek(0)
        text = err.read().decode()
    warnings = [line for line in text.splitlines() if "does not answer" in line]
    assert len(warnings) == 1 and warnings[0].startswith("streamparse serve: warning: backend 'default'"), text
