"""One Responses store for every worker: ``serve --workers 2 --responses-store redis://…`` with a real
redis-server serves every chained turn on new connections, whichever worker each reaches; a Redis that dies
costs chained requests a prompt 503 and nothing else; the memory store with workers is said at start-up."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any, Iterator

import httpx
import openai
import pytest

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.responses import store_warnings
from streamparse.proxy.runner import ServerThread, free_port, port_open, started_process

from redis_server import RedisServer, redis_server  # noqa: F401 (a fixture)
from upstreams import HERMES, RecordingModel

WEATHER = {"type": "function", "name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


@pytest.fixture
def model() -> Iterator[tuple[RecordingModel, ServerThread]]:
    recording = RecordingModel()
    with ServerThread(recording.app()) as server:
        yield recording, server


def fresh_client(port: int) -> openai.OpenAI:
    """A client with a connection of its own: each turn may reach either worker."""
    return openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sk-test", max_retries=0, timeout=30,
                         http_client=httpx.Client(limits=httpx.Limits(max_keepalive_connections=0)))


def test_chains_hold_across_two_workers_with_redis(model: tuple[RecordingModel, ServerThread],
                                                   redis_server: RedisServer) -> None:
    recording, upstream = model
    port = free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1", "--port", str(port),
           "--workers", "2", "--responses-store", redis_server.url, "--log-level", "warning"]
    with started_process(cmd, lambda: port_open(port), timeout=60):
        recording.reset("Noted.")
        previous: str | None = None
        for turn in range(24):  # previous_response_id, a new connection each turn
            stream = turn % 2 == 1
            kw: dict[str, Any] = {"model": "m", "input": f"turn {turn}", "previous_response_id": previous}
            if stream:
                with fresh_client(port).responses.stream(**kw) as s:
                    for _ in s:
                        pass
                    previous = s.get_final_response().id
            else:
                previous = fresh_client(port).responses.create(**kw).id
        said = [m["content"] for m in recording.requests[-1]["messages"] if m["role"] == "user"]
        assert said == [f"turn {n}" for n in range(24)]

        recording.reset("Checking.\n" + HERMES, "Sunny.")
        for loop in range(6):  # the Vercel AI SDK's default: the earlier step's items by reference
            recording.reset("Checking.\n" + HERMES, "Sunny.")
            first = fresh_client(port).responses.create(model="m", input="Weather?", tools=[WEATHER])
            message, call = first.output
            second = fresh_client(port).responses.create(model="m", tools=[WEATHER], input=[
                {"role": "user", "content": "Weather?"}, {"type": "item_reference", "id": message.id},
                {"type": "item_reference", "id": call.id},
                {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}])  # type: ignore[union-attr]
            assert second.output_text == "Sunny.", loop
            fetched = fresh_client(port).responses.retrieve(first.id)
            assert fetched.id == first.id


def test_a_redis_that_dies_costs_chained_requests_a_503_and_nothing_else(
        model: tuple[RecordingModel, ServerThread], redis_server: RedisServer) -> None:
    recording, upstream = model
    config = ProxyConfig.single(upstream.url + "/v1", responses_store=redis_server.url, responses_store_timeout=1.0)
    with ServerThread(create_app(config)) as proxy:
        client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0, timeout=30)
        recording.reset("Hi.")
        first = client.responses.create(model="m", input="hello")
        ready = httpx.get(proxy.url + "/readyz").json()["responses_store"]
        assert ready["state"] == "up" and ready["shared"] is True
        redis_server.stop()
        for call in (lambda: client.responses.create(model="m", input="more", previous_response_id=first.id),
                     lambda: client.responses.retrieve(first.id),
                     lambda: client.responses.delete(first.id),
                     lambda: client.responses.create(model="m", input=[{"type": "item_reference", "id": "msg_1"}])):
            with pytest.raises(openai.InternalServerError) as info:
                call()
            assert info.value.status_code == 503
            assert info.value.body["code"] == "store_unavailable"  # type: ignore[index]
            assert "shared Redis store" in info.value.message and "whole conversation" in info.value.message
            assert str(redis_server.port) not in info.value.message  # its address is the operator's, not the client's
        answered = client.responses.create(model="m", input="no chain needed")  # served; storing it failed
        assert answered.output_text == "Hi."
        with client.responses.stream(model="m", input="streamed, no chain") as s:
            for _ in s:
                pass
            assert s.get_final_response().output_text == "Hi."
        ready = httpx.get(proxy.url + "/readyz").json()["responses_store"]
        assert ready["state"] == "down" and "shared Redis store" in ready["error"]
        assert str(redis_server.port) not in json.dumps(ready)
        metrics = httpx.get(proxy.url + "/metrics").text
        assert 'streamparse_responses_store_errors_total{operation="put"} 2.0' in metrics
        assert 'streamparse_responses_store_errors_total{operation="read"} 4.0' in metrics


def test_the_memory_store_with_workers_is_said_at_start(model: tuple[RecordingModel, ServerThread]) -> None:
    _, upstream = model
    config = ProxyConfig.single(upstream.url + "/v1", workers=2)
    (warning,) = store_warnings(config)
    assert "sticky sessions" in warning and "--responses-store redis://" in warning
    assert store_warnings(ProxyConfig.single(upstream.url + "/v1")) == []
    port = free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1", "--port", str(port),
           "--workers", "2", "--log-level", "warning"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not port_open(port) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "each worker keeps its own" in err.decode()


def test_a_shared_store_that_does_not_answer_is_said_at_start() -> None:
    port = free_port()  # nothing listens there
    (warning,) = store_warnings(ProxyConfig.single("http://127.0.0.1:9/v1", responses_store=f"redis://127.0.0.1:{port}/0",
                                                   responses_store_timeout=0.5))
    assert f"redis://127.0.0.1:{port}/0" in warning and "503" in warning  # (serve's own console: the operator's)


def test_readyz_names_the_memory_store(model: tuple[RecordingModel, ServerThread]) -> None:
    _, upstream = model
    with ServerThread(create_app(ProxyConfig.single(upstream.url + "/v1"))) as proxy:
        page = httpx.get(proxy.url + "/readyz").json()
    assert page["responses_store"] == {"store": "this process's memory store", "shared": False, "state": "up"}


def test_without_a_shared_store_two_workers_lose_chains_and_say_why(
        model: tuple[RecordingModel, ServerThread]) -> None:
    """The control for the Redis run above: the same turns on the memory store miss on the other worker, and the
    miss names the store and the remedies that work."""
    recording, upstream = model
    port = free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1", "--port", str(port),
           "--workers", "2", "--log-level", "error"]
    misses: list[str] = []
    with started_process(cmd, lambda: port_open(port), timeout=60):
        recording.reset("Noted.")
        previous = fresh_client(port).responses.create(model="m", input="turn 0").id
        for turn in range(1, 16):
            try:
                previous = fresh_client(port).responses.create(model="m", input=f"turn {turn}",
                                                               previous_response_id=previous).id
            except openai.BadRequestError as exc:
                misses.append(exc.message)
    assert misses, "every turn reached the worker that stored the one before"
    assert all("memory store" in m and "--responses-store redis://" in m and "whole conversation" in m for m in misses)
