"""The proxy with ``stream_arguments = true`` on its backend, for real: uvicorn on 127.0.0.1, a scripted
upstream that streams token by token, the real openai and anthropic clients (and httpx for the raw SSE).

A call's arguments reach the client while the model writes them: OpenAI chunks (first piece with index,
id, type, name and ``"arguments": ""``, then arguments pieces alone), Anthropic events (``tool_use`` start
with ``input: {}``, ``input_json_delta`` pieces, stop). Streamed or not, the calls are the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import anthropic
import httpx
import pytest
from openai import OpenAI

from streamparse.proxy.config import ConfigError, ProxyConfig, load_config
from streamparse.dialects.render import render
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.runner import ServerThread
from streamparse.proxy.app import create_app
from streamparse.proxy.workers import config_from_settings

WRITE: dict[str, Any] = {"type": "function", "function": {"name": "write_file", "description": "Write a file",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                        "required": ["path", "content"]}}}
WEATHER: dict[str, Any] = {"type": "function", "function": {"name": "get_weather", "description": "Current weather",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                          "required": ["city"]}}}
TOOLS = [WRITE, WEATHER]
ANTHROPIC_TOOLS = [{"name": t["function"]["name"], "description": t["function"]["description"],
                    "input_schema": t["function"]["parameters"]} for t in TOOLS]

BIG = "\n".join(f"line {n}: the quick brown fox jumps over the lazy dog, \"quoted\" and \\ backslashed"
                for n in range(260))  # ~20 KB, with characters JSON escapes
assert len(BIG) > 20_000
SCRIPTS = {
    "hermes_big": "I will write it.\n" + render("hermes", "write_file", {"path": "big.txt", "content": BIG}) + "\nDone.",
    "qwen3_big": "Writing.\n" + render("qwen3_coder", "write_file", {"path": "big.txt", "content": BIG}) + "\nDone.",
    "two": ("First Paris, " + render("hermes", "get_weather", {"city": "Paris", "days": 3})
            + " then Oslo: " + render("qwen3_coder", "get_weather", {"city": "Oslo"}) + " That is all."),
    "pythonic": '[get_weather(city="Rome", days=2)]',
    "plain": "No call here, just <b>text</b>.",
}
BIG_ARGS = {"path": "big.txt", "content": BIG}
EXPECTED: dict[str, list[tuple[str, Any]]] = {
    "hermes_big": [("write_file", BIG_ARGS)],
    "qwen3_big": [("write_file", BIG_ARGS)],
    "two": [("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Oslo"})],
    "pythonic": [("get_weather", {"city": "Rome", "days": 2})],
    "plain": [],
}
ASK = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def proxies() -> Iterator[dict[str, ServerThread]]:
    upstream = create_replay_app(lambda request, _choice: SCRIPTS[str(request.get("model"))])
    with ServerThread(upstream) as up:
        url = up.url + "/v1"
        streaming = ProxyConfig.single(url, {"stream_arguments": True})
        plain = ProxyConfig.single(url)
        prompted = ProxyConfig.single(url, {"stream_arguments": True, "tool_prompt": "hermes"})
        with ServerThread(create_app(streaming)) as p1, ServerThread(create_app(plain)) as p2, \
                ServerThread(create_app(prompted)) as p3:
            yield {"streaming": p1, "plain": p2, "prompted": p3}


def oai(server: ServerThread) -> OpenAI:
    return OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0, timeout=60)


def claude(server: ServerThread) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="sk-ant-test", max_retries=0, timeout=60)


def raw_sse(server: ServerThread, path: str, body: dict[str, Any]) -> list[tuple[str | None, Any]]:
    """The stream as sent: (event name or None, data parsed as JSON; '[DONE]' kept as a string)."""
    out: list[tuple[str | None, Any]] = []
    with httpx.Client(timeout=60) as http, http.stream("POST", server.url + path, json=body,
                                                     headers={"x-api-key": "k", "anthropic-version": "2023-06-01",
                                                              "authorization": "Bearer k"}) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                out.append((name, line[6:] if line[6:] == "[DONE]" else json.loads(line[6:])))
                name = None
    return out


def openai_chunks(server: ServerThread, model: str) -> list[dict[str, Any]]:
    events = raw_sse(server, "/v1/chat/completions", {"model": model, "messages": ASK, "tools": TOOLS, "stream": True})
    assert events[-1] == (None, "[DONE]")
    return [data for _, data in events[:-1]]


def call_entries(chunks: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    return [(n, tc) for n, c in enumerate(chunks) for ch in c["choices"] for tc in ch["delta"].get("tool_calls") or []]


def parsed(calls: list[tuple[str, str]]) -> list[tuple[str, Any]]:
    return [(name, json.loads(arguments)) for name, arguments in calls]


# ---------------------------------------------------------------- OpenAI: /v1/chat/completions

@pytest.mark.parametrize("model", ["hermes_big", "qwen3_big"])
def test_raw_chunks_stream_a_long_argument(proxies: dict[str, ServerThread], model: str) -> None:
    chunks = openai_chunks(proxies["streaming"], model)
    entries = call_entries(chunks)
    (first_at, first), rest = entries[0], entries[1:]
    assert set(first) == {"index", "id", "type", "function"}
    assert (first["index"], first["type"], first["function"]) == (0, "function", {"name": "write_file", "arguments": ""})
    assert first["id"].startswith("call_")
    assert all(set(tc) == {"index", "function"} and set(tc["function"]) == {"arguments"} and tc["index"] == 0
               for _, tc in rest)
    assert len(rest) > 100, "a 20 KB argument arrives in many pieces, not one"
    assert all(len(c["choices"][0]["delta"].get("tool_calls") or []) <= 1 for c in chunks)
    arguments = "".join(tc["function"]["arguments"] for _, tc in rest)
    assert json.loads(arguments) == BIG_ARGS
    text = [(n, c["choices"][0]["delta"]["content"]) for n, c in enumerate(chunks)
            if c["choices"] and c["choices"][0]["delta"].get("content")]
    before = "".join(t for n, t in text if n < first_at)
    after = "".join(t for n, t in text if n > rest[-1][0])
    assert before.strip() == SCRIPTS[model].split("\n")[0].strip() and after.strip() == "Done."
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("model", sorted(SCRIPTS))
def test_sdk_stream_equals_non_streaming_and_the_plain_proxy(proxies: dict[str, ServerThread], model: str) -> None:
    client = oai(proxies["streaming"])
    with client.chat.completions.stream(model=model, messages=ASK, tools=TOOLS) as stream:  # type: ignore[arg-type]
        streamed = stream.get_final_completion()
    whole = client.chat.completions.create(model=model, messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    plain: Any = oai(proxies["plain"]).chat.completions.create(model=model, messages=ASK, tools=TOOLS,  # type: ignore[arg-type]
                                                               stream=True)
    plain_calls: dict[int, list[str]] = {}
    for chunk in plain:
        for tc in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
            assert tc.index not in plain_calls, "without stream_arguments a call comes whole"
            assert tc.function is not None and tc.function.name and tc.function.arguments is not None
            plain_calls[tc.index] = [tc.function.name, tc.function.arguments]

    got = [(c.function.name, c.function.arguments) for c in streamed.choices[0].message.tool_calls or []]
    assert got == [(c.function.name, c.function.arguments)  # type: ignore[union-attr]
                   for c in whole.choices[0].message.tool_calls or []]
    assert parsed(got) == EXPECTED[model]
    assert parsed([(n, a) for n, a in plain_calls.values()]) == EXPECTED[model]
    ids = [c.id for c in streamed.choices[0].message.tool_calls or []]
    assert all(i.startswith("call_") for i in ids) and len(set(ids)) == len(ids)
    assert streamed.choices[0].message.content == whole.choices[0].message.content
    assert streamed.choices[0].finish_reason == whole.choices[0].finish_reason == (
        "tool_calls" if EXPECTED[model] else "stop")


def test_two_calls_and_text_keep_their_order(proxies: dict[str, ServerThread]) -> None:
    chunks = openai_chunks(proxies["streaming"], "two")
    order: list[str] = []
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"] if chunk["choices"] else {}
        for kind in (["text"] if delta.get("content", "").strip() else []) + [
                f"call{tc['index']}" for tc in delta.get("tool_calls") or []]:
            if not order or order[-1] != kind:
                order.append(kind)
    assert order == ["text", "call0", "text", "call1", "text"]
    starts = [tc for _, tc in call_entries(chunks) if "id" in tc]
    assert [(s["index"], s["function"]["name"]) for s in starts] == [(0, "get_weather"), (1, "get_weather")]
    for index, expected in enumerate(EXPECTED["two"]):
        joined = "".join(tc["function"]["arguments"] for _, tc in call_entries(chunks) if tc["index"] == index)
        assert json.loads(joined) == expected[1]
        assert sum(1 for _, tc in call_entries(chunks) if tc["index"] == index) > 2


def test_without_the_option_calls_come_whole(proxies: dict[str, ServerThread]) -> None:
    chunks = openai_chunks(proxies["plain"], "hermes_big")
    (_, call), = call_entries(chunks)
    assert call["function"]["name"] == "write_file" and json.loads(call["function"]["arguments"]) == BIG_ARGS


def test_a_tool_prompt_backend_streams_arguments_too(proxies: dict[str, ServerThread]) -> None:
    chunks = openai_chunks(proxies["prompted"], "hermes_big")
    entries = call_entries(chunks)
    assert entries[0][1]["function"] == {"name": "write_file", "arguments": ""} and len(entries) > 100
    assert json.loads("".join(tc["function"].get("arguments", "") for _, tc in entries)) == BIG_ARGS


# ---------------------------------------------------------------- Anthropic: /v1/messages

def messages_body(model: str, stream: bool) -> dict[str, Any]:
    return {"model": model, "max_tokens": 1024, "messages": ASK, "tools": ANTHROPIC_TOOLS, "stream": stream}


@pytest.mark.parametrize("model", ["hermes_big", "qwen3_big"])
def test_raw_anthropic_events_for_a_streamed_call(proxies: dict[str, ServerThread], model: str) -> None:
    events = [data for _, data in raw_sse(proxies["streaming"], "/v1/messages", messages_body(model, True))]
    block = next(e for e in events if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use")
    index = block["index"]
    assert block["content_block"]["input"] == {} and block["content_block"]["name"] == "write_file"
    assert block["content_block"]["id"].startswith("toolu_")
    mine = [e for e in events if e.get("index") == index]
    assert mine[0] is block and mine[-1] == {"type": "content_block_stop", "index": index}
    deltas = mine[1:-1]
    assert len(deltas) > 100 and all(d["type"] == "content_block_delta" and d["delta"]["type"] == "input_json_delta"
                                     for d in deltas)
    assert json.loads("".join(d["delta"]["partial_json"] for d in deltas)) == BIG_ARGS
    kinds = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
    assert kinds == ["text", "tool_use", "text"]
    assert events[-2]["delta"]["stop_reason"] == "tool_use" and events[-1] == {"type": "message_stop"}


@pytest.mark.parametrize("model", sorted(SCRIPTS))
def test_anthropic_stream_equals_messages_create(proxies: dict[str, ServerThread], model: str) -> None:
    client = claude(proxies["streaming"])
    kw: Any = {"model": model, "max_tokens": 1024, "messages": ASK, "tools": ANTHROPIC_TOOLS}
    with client.messages.stream(**kw) as stream:
        streamed = stream.get_final_message()
    whole = client.messages.create(**kw)
    plain = claude(proxies["plain"]).messages.create(**kw)
    calls = [(b.name, b.input) for b in streamed.content if b.type == "tool_use"]
    assert calls == [(b.name, b.input) for b in whole.content if b.type == "tool_use"] == EXPECTED[model]
    assert calls == [(b.name, b.input) for b in plain.content if b.type == "tool_use"]
    text = "".join(b.text for b in streamed.content if b.type == "text")
    assert text == "".join(b.text for b in whole.content if b.type == "text")
    assert streamed.stop_reason == whole.stop_reason == ("tool_use" if EXPECTED[model] else "end_turn")


def test_anthropic_two_calls_keep_their_order(proxies: dict[str, ServerThread]) -> None:
    with claude(proxies["streaming"]).messages.stream(model="two", max_tokens=100, messages=ASK,  # type: ignore[arg-type]
                                                      tools=ANTHROPIC_TOOLS) as stream:  # type: ignore[arg-type]
        message = stream.get_final_message()
    assert [(b.type, getattr(b, "input", None)) for b in message.content] == [
        ("text", None), ("tool_use", {"city": "Paris", "days": 3}), ("text", None), ("tool_use", {"city": "Oslo"}),
        ("text", None)]


def test_anthropic_without_the_option_one_delta_per_call(proxies: dict[str, ServerThread]) -> None:
    events = [data for _, data in raw_sse(proxies["plain"], "/v1/messages", messages_body("hermes_big", True))]
    deltas = [e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]
    assert len(deltas) == 1 and json.loads(deltas[0]["delta"]["partial_json"]) == BIG_ARGS


# ---------------------------------------------------------------- configuration and command line

def test_stream_arguments_in_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "p.toml"
    config.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\nstream_arguments = true\n'
                      '[backends.b]\nupstream = "http://127.0.0.1:9/v1"\nmodels = ["b"]\n')
    loaded = load_config(str(config))
    assert loaded.backends[0].stream_arguments is True and loaded.backends[1].stream_arguments is False
    assert loaded.backends[0].parser_options()["stream_arguments"] is True
    assert "stream_arguments" not in loaded.backends[1].parser_options()  # the default: as before
    config.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\nstream_arguments = "yes"\n')
    with pytest.raises(ConfigError, match="'stream_arguments' must be true or false"):
        load_config(str(config))


def test_stream_arguments_handed_to_workers() -> None:
    single = config_from_settings({"upstream": "http://127.0.0.1:9/v1", "backend": {"stream_arguments": True}})
    assert single.backends[0].stream_arguments is True


def test_serve_stream_arguments_option(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    from streamparse import cli
    from streamparse.cli import serve as serve_command

    seen: list[dict[str, Any]] = []

    def serve(settings: dict[str, Any], log_level: str, out: Any) -> int:
        seen.append(settings)
        return 0

    monkeypatch.setattr(serve_command, "_serve", serve)
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--stream-arguments"]) == 0
    assert seen[-1]["backend"] == {"stream_arguments": True}
    assert config_from_settings(seen[-1]).backends[0].stream_arguments is True
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1", "--stream-arguments", "--tool-prompt",
                     "qwen3_coder"]) == 0
    assert seen[-1]["backend"] == {"tool_prompt": "qwen3_coder", "tool_prompt_retry": False, "stream_arguments": True}
    assert cli.main(["serve", "--upstream", "http://127.0.0.1:9/v1"]) == 0
    assert "backend" not in seen[-1]
    config = tmp_path / "p.toml"
    config.write_text('[backends.a]\nupstream = "http://127.0.0.1:9/v1"\n')
    assert cli.main(["serve", "--config", str(config), "--stream-arguments"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "--stream-arguments goes with --upstream; in a config file set stream_arguments per backend")
