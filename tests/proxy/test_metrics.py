"""GET /metrics: Prometheus text format, read back with prometheus-client's own parser, after real traffic from
the openai and anthropic clients — in one process, and summed over two `streamparse serve` workers."""

from __future__ import annotations

import sys
import threading
from typing import Any, Iterator

import httpx
import pytest
from anthropic import Anthropic
from openai import OpenAI
from prometheus_client.parser import text_string_to_metric_families

from helpers import TOOLS
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port, port_open, started_process
from upstreams import wait_for

QWEN = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>"
SCRIPTS = {
    "hermes": 'Looking. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    "mixed": "<tool_call>{bad json</tool_call> then " + QWEN,  # one rejected block, one qwen3_coder call
    "slow": "word " * 40,
}


def samples(base: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``base``/metrics: (name, sorted labels) -> value."""
    text = httpx.get(base + "/metrics", timeout=10).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict[tuple[str, Any], float], name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in found.items() if n == name and set(labels.items()) <= set(ls))


@pytest.fixture(scope="module")
def upstream() -> Iterator[ServerThread]:
    script = create_replay_app(lambda request, _: SCRIPTS[str(request.get("model"))], token_delay=0.01)
    with ServerThread(script) as server:
        yield server


def test_metrics_after_real_traffic(upstream: ServerThread) -> None:
    down = free_port()  # nothing listens there
    config = ProxyConfig(backends=[Backend("local", upstream.url + "/v1", default=True),
                                   Backend("gone", f"http://127.0.0.1:{down}/v1", models=["offline"])])
    with ServerThread(create_app(config)) as proxy:
        base = proxy.url
        page = httpx.get(base + "/metrics")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
        client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
        for model in ("hermes", "mixed"):
            for _ in client.chat.completions.create(model=model, messages=[{"role": "user", "content": "go"}],
                                                    tools=TOOLS, stream=True):
                pass
        whole = client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}], tools=TOOLS)
        assert whole.choices[0].message.tool_calls
        with pytest.raises(Exception):
            client.chat.completions.create(model="offline", messages=[{"role": "user", "content": "go"}])
        anthropic = Anthropic(base_url=base, api_key="sk-test", max_retries=0)
        anthropic.messages.create(model="hermes", max_tokens=50, messages=[{"role": "user", "content": "go"}])

        found = samples(base)
    chat = {"route": "/v1/chat/completions", "front": "openai"}
    assert value(found, "streamparse_requests_total", **chat, backend="local", status="200") == 3
    assert value(found, "streamparse_requests_total", **chat, backend="gone", status="502") == 1
    assert value(found, "streamparse_requests_total", route="/v1/messages", front="anthropic", backend="local",
                 status="200") == 1
    assert value(found, "streamparse_tool_calls_total", dialect="hermes") == 1
    assert value(found, "streamparse_tool_calls_total", dialect="qwen3_coder") == 1
    assert value(found, "streamparse_tool_calls_total", dialect="unknown") == 1  # the whole answer (the Anthropic one offered no tools)
    assert value(found, "streamparse_diagnostics_total", code="rejected") == 1
    assert value(found, "streamparse_upstream_errors_total", backend="gone", kind="unreachable") == 1
    assert value(found, "streamparse_streams_in_flight") == 0
    assert value(found, "streamparse_time_to_first_byte_seconds_count", front="openai") == 2
    assert value(found, "streamparse_added_latency_seconds_count") >= 2  # each stream's first read, at least


def test_streams_in_flight_while_they_run(upstream: ServerThread) -> None:
    config = ProxyConfig.single(upstream.url + "/v1")
    with ServerThread(create_app(config)) as proxy:
        started = threading.Event()

        def stream() -> None:
            with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=30, json={
                    "model": "slow", "stream": True, "tools": TOOLS,
                    "messages": [{"role": "user", "content": "go"}]}) as resp:
                for _ in resp.iter_bytes():
                    started.set()

        threads = [threading.Thread(target=stream) for _ in range(3)]
        for t in threads:
            t.start()
        assert started.wait(10)
        assert wait_for(lambda: value(samples(proxy.url), "streamparse_streams_in_flight", front="openai") == 3)
        for t in threads:
            t.join(30)
        assert value(samples(proxy.url), "streamparse_streams_in_flight") == 0


def test_two_workers_report_one_sum(upstream: ServerThread) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "streamparse", "serve", "--upstream", upstream.url + "/v1", "--port", str(port),
           "--workers", "2", "--log-level", "warning"]
    with started_process(cmd, lambda: port_open(port)) as _proc:
        base = f"http://127.0.0.1:{port}"
        assert wait_for(lambda: httpx.get(base + "/healthz").status_code == 200, 30)

        def some(n: int) -> None:
            client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0)
            for _ in range(n):
                for _ in client.chat.completions.create(model="hermes", messages=[{"role": "user", "content": "go"}],
                                                        tools=TOOLS, stream=True):
                    pass

        threads = [threading.Thread(target=some, args=(5,)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        found = samples(base)
        assert value(found, "streamparse_requests_total", route="/v1/chat/completions", status="200") == 20
        assert value(found, "streamparse_tool_calls_total", dialect="hermes") == 20
        assert value(found, "streamparse_streams_in_flight") == 0
