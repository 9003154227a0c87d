"""The proxy for real: uvicorn on 127.0.0.1, driven with the openai client and httpx."""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import httpx
import openai
import pytest
from openai import OpenAI

from helpers import TOOLS, accumulate
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread, free_port
from streamparse.proxy.app import create_app
from streamparse.wire.sse import SSEDecoder
from upstreams import SCRIPTS, FaultLog, faulty_upstream, scripted_upstream, wait_for

MESSAGES = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[ServerThread]:
    with ServerThread(scripted_upstream()) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(upstream: ServerThread) -> Iterator[ServerThread]:
    config = ProxyConfig.single(upstream.url + "/v1", max_body_bytes=64 * 1024)
    with ServerThread(create_app(config)) as server:
        yield server


@pytest.fixture(scope="module")
def client(proxy: ServerThread) -> OpenAI:
    return OpenAI(base_url=proxy.url + "/v1", api_key="sk-test", max_retries=0, timeout=30)


@pytest.fixture(scope="module")
def faults() -> Iterator[tuple[FaultLog, ServerThread]]:
    log = FaultLog()
    with ServerThread(faulty_upstream(log)) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        yield log, px


def stream_events(client: OpenAI, model: str, **kw: Any) -> dict[int, dict[str, Any]]:
    return accumulate(client.chat.completions.create(model=model, messages=MESSAGES, tools=TOOLS, stream=True, **kw))


EXPECTED = {
    "hermes": ("Let me look.\n\nDone.", [("get_weather", {"city": "Paris"})]),
    "qwen3": ("Checking  now.", [("get_weather", {"city": "Oslo", "days": 2})]),
    "name_tag": ("\nEnjoy!", [("search_recipes", {"query": "vegan pasta"})]),
    "bare_json": ("", [("write_file", {"path": "a.txt", "content": "ünïcode ✓"})]),
    "plain": (SCRIPTS["plain"], []),
}


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_streaming_through_the_proxy(client: OpenAI, model: str) -> None:
    slot = stream_events(client, model)[0]
    text, calls = EXPECTED[model]
    assert slot["content"] == text
    assert [(c["name"], json.loads(c["arguments"])) for _, c in sorted(slot["calls"].items())] == calls
    assert slot["finish"] == ("tool_calls" if calls else "stop")
    assert all(c["id"].startswith("call_") for c in slot["calls"].values())


@pytest.mark.parametrize("model", sorted(EXPECTED))
def test_non_streaming_through_the_proxy(client: OpenAI, model: str) -> None:
    result = client.chat.completions.create(model=model, messages=MESSAGES, tools=TOOLS)
    message = result.choices[0].message
    text, calls = EXPECTED[model]
    assert message.content == (text if text.strip() else None)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []] == calls
    assert result.choices[0].finish_reason == ("tool_calls" if calls else "stop")


def test_sdk_stream_helper_accumulates_tool_calls(client: OpenAI) -> None:
    with client.chat.completions.stream(model="qwen3", messages=MESSAGES, tools=TOOLS) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    (call,) = final.choices[0].message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Oslo", "days": 2}
    assert final.choices[0].message.content == "Checking  now."


def test_two_choices(client: OpenAI) -> None:
    acc = stream_events(client, "two", n=2)
    assert acc[0]["content"] == "First " and acc[1]["content"] == "Second "
    assert json.loads(acc[0]["calls"][0]["arguments"]) == {"city": "Paris"}
    assert json.loads(acc[1]["calls"][0]["arguments"]) == {"city": "Oslo", "days": 2}
    full = client.chat.completions.create(model="two", messages=MESSAGES, tools=TOOLS, n=2)
    assert [c.message.tool_calls[0].function.name for c in full.choices] == ["get_weather", "get_weather"]


def test_without_tools_gated_forms_stay_text(client: OpenAI) -> None:
    chunks = client.chat.completions.create(model="name_tag", messages=MESSAGES, stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == SCRIPTS["name_tag"]


def test_models_and_other_paths_are_proxied(client: OpenAI) -> None:
    assert [m.id for m in client.models.list()] == ["qwen3_xml", "hermes", "mixed", "long"]


def test_bad_request_bodies(proxy: ServerThread) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", content=b"{not json", timeout=10)
    assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]
    r = httpx.post(proxy.url + "/v1/chat/completions", json=[1, 2], timeout=10)
    assert r.status_code == 400 and "JSON object" in r.json()["error"]["message"]
    big = {"model": "plain", "messages": [{"role": "user", "content": "x" * 70_000}]}
    r = httpx.post(proxy.url + "/v1/chat/completions", json=big, timeout=10)
    assert r.status_code == 413 and "limit" in r.json()["error"]["message"]


# ---------------------------------------------------------------- faults

def _sse(proxy: ServerThread, model: str, **kw: Any) -> tuple[list[Any], float]:
    """Raw SSE from the proxy: (data items, seconds to the first content)."""
    items: list[Any] = []
    first = None
    start = time.monotonic()
    decoder = SSEDecoder()
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=30,
                      json={"model": model, "messages": MESSAGES, "stream": True, **kw}) as resp:
        assert resp.status_code == 200
        for raw in resp.iter_bytes():
            for event in decoder.feed(raw):
                if event.data is None:
                    continue
                item = event.data if event.data == "[DONE]" else json.loads(event.data)
                if first is None and isinstance(item, dict) and item.get("choices"):
                    first = time.monotonic() - start
                items.append(item)
    return items, first or 0.0


def _text(items: list[Any]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in items if isinstance(c, dict) and c.get("choices"))


def test_upstream_error_status_keeps_its_message(faults: tuple[FaultLog, ServerThread]) -> None:
    _, px = faults
    client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.InternalServerError, match="model crashed"):
        client.chat.completions.create(model="status500", messages=MESSAGES, stream=True)
    with pytest.raises(openai.NotFoundError, match="no such model here"):
        client.chat.completions.create(model="status404text", messages=MESSAGES)


def test_upstream_unreachable_is_a_502() -> None:
    dead = free_port()  # nothing listens there
    with ServerThread(create_app(ProxyConfig.single(f"http://127.0.0.1:{dead}/v1"))) as px:
        r = httpx.post(px.url + "/v1/chat/completions", json={"model": "m", "messages": MESSAGES, "stream": True}, timeout=10)
        assert r.status_code == 502 and "unreachable" in r.json()["error"]["message"]
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model="m", messages=MESSAGES)
        assert info.value.status_code == 502


@pytest.mark.parametrize("model", ["invalid_json", "broken"])
def test_broken_upstream_stream_flushes_then_errors(faults: tuple[FaultLog, ServerThread], model: str) -> None:
    _, px = faults
    items, _ = _sse(px, model, tools=TOOLS)
    assert _text(items) == "Hello <tool_"  # the held-back "<tool_" is flushed, not lost
    errors = [i for i in items if isinstance(i, dict) and "error" in i]
    assert len(errors) == 1 and "upstream" in errors[0]["error"]["message"]
    assert items.index(errors[0]) > max(i for i, c in enumerate(items) if isinstance(c, dict) and c.get("choices"))
    client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
    with pytest.raises(openai.APIError):
        for _ in client.chat.completions.create(model=model, messages=MESSAGES, stream=True, tools=TOOLS):
            pass


def test_slow_upstream_streams_chunk_by_chunk(faults: tuple[FaultLog, ServerThread]) -> None:
    _, px = faults
    start = time.monotonic()
    items, first = _sse(px, "slow")
    total = time.monotonic() - start
    assert total >= 1.0 and first < total / 2  # text arrived long before the upstream finished
    assert _text(items) == "Hello <tool_ tick0 tick1 tick2 tick3 tick4"


def test_client_disconnect_cancels_the_upstream(faults: tuple[FaultLog, ServerThread]) -> None:
    log, px = faults
    before = log.cancelled
    with httpx.stream("POST", px.url + "/v1/chat/completions", timeout=30,
                      json={"model": "endless", "messages": MESSAGES, "stream": True}) as resp:
        for raw in resp.iter_bytes():
            if b"tick1" in raw:
                break
    assert wait_for(lambda: log.cancelled > before and log.open_streams == 0), (log.cancelled, log.open_streams)


def test_headers_authorization_forwarded_hop_by_hop_dropped(faults: tuple[FaultLog, ServerThread]) -> None:
    _, px = faults
    items, _ = _sse(px, "echo_headers")
    seen = json.loads(_text(items))
    assert seen.get("authorization") is None
    log = faults[0]
    httpx.post(px.url + "/v1/chat/completions", json={"model": "echo_headers", "messages": MESSAGES},
               headers={"Authorization": "Bearer sk-client", "X-Custom": "1", "Proxy-Authorization": "x"}, timeout=10)
    headers = log.requests[-1]["headers"]
    assert headers["authorization"] == "Bearer sk-client" and headers["x-custom"] == "1"
    assert "proxy-authorization" not in headers


def test_configured_key_replaces_the_clients(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from streamparse.proxy.config import load_config

    log = FaultLog()
    monkeypatch.setenv("UPSTREAM_KEY", "sk-from-env")
    with ServerThread(faulty_upstream(log)) as up:
        cfg = tmp_path / "proxy.toml"
        cfg.write_text(f'[backends.main]\nupstream = "{up.url}/v1"\napi_key_env = "UPSTREAM_KEY"\n'
                       f'models = ["alias"]\n[backends.main.model_map]\nalias = "status404text"\n')
        with ServerThread(create_app(load_config(str(cfg)))) as px:
            r = httpx.post(px.url + "/v1/chat/completions", json={"model": "alias", "messages": MESSAGES},
                           headers={"Authorization": "Bearer sk-client"}, timeout=10)
    assert r.status_code == 404
    assert log.requests[-1]["headers"]["authorization"] == "Bearer sk-from-env"
    assert log.requests[-1]["body"]["model"] == "status404text"


def test_passthrough_keeps_path_query_and_method(faults: tuple[FaultLog, ServerThread]) -> None:
    _, px = faults
    r = httpx.get(px.url + "/v1/files/abc?limit=2", timeout=10)
    assert r.json() == {"path": "/v1/files/abc", "query": "limit=2", "method": "GET"}


def test_upstream_answering_a_stream_with_one_json_body(faults: tuple[FaultLog, ServerThread]) -> None:
    _, px = faults
    client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
    with client.chat.completions.stream(model="json_instead_of_sse", messages=MESSAGES, tools=TOOLS) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    assert final.choices[0].message.content == "Hi "
    assert final.choices[0].message.tool_calls[0].function.name == "get_weather"
    assert final.choices[0].finish_reason == "tool_calls"
    items, _ = _sse(px, "text_instead_of_sse")
    assert "model is loading" in items[0]["error"]["message"]


def test_an_internal_failure_ends_the_stream_with_an_error_event(faults: tuple[FaultLog, ServerThread],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from streamparse.wire.sse import ChatStreamRewriter

    def broken(self: Any, event: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(ChatStreamRewriter, "write", broken)
    _, px = faults
    items, _ = _sse(px, "slow", tools=TOOLS)
    assert len(items) == 1 and "streamparse failed: RuntimeError: boom" in items[0]["error"]["message"]
