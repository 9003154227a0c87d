"""Backend options of issue 18 through the real proxy (uvicorn on 127.0.0.1, openai and anthropic clients):
``calls_in_reasoning`` takes a call written inside ``<think>`` as a call on both fronts, streamed or not;
a pinned ``dialect`` reads its bare forms; the config file and the ``serve`` flags set both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import anthropic
import pytest
from openai import OpenAI

from streamparse.harness.replay import create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import ConfigError, ProxyConfig, load_config
from streamparse.proxy.runner import ServerThread
from streamparse.proxy.workers import config_from_settings

WEATHER: dict[str, Any] = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
CLAUDE_WEATHER = {"name": "get_weather", "input_schema": WEATHER["function"]["parameters"]}
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
SCRIPTS = {
    "thinks": f"<think>I need the weather. {CALL} That should do.</think>Checking now.",
    "bare": 'Here:\n{"name": "get_weather", "parameters": {"city": "Oslo"}}',
}
ASK = [{"role": "user", "content": "weather?"}]


@pytest.fixture(scope="module")
def proxies() -> Iterator[dict[str, str]]:
    upstream = create_replay_app(lambda request, _choice: SCRIPTS[str(request.get("model"))])
    with ServerThread(upstream) as up:
        url = up.url + "/v1"
        configs = {"reasoning": ProxyConfig.single(url, {"calls_in_reasoning": True}),
                   "plain": ProxyConfig.single(url),
                   "pinned": ProxyConfig.single(url, {"dialect": "llama3", "parse_without_tools": True})}
        with ServerThread(create_app(configs["reasoning"])) as a, ServerThread(create_app(configs["plain"])) as b, \
                ServerThread(create_app(configs["pinned"])) as c:
            yield {"reasoning": a.url, "plain": b.url, "pinned": c.url}


def openai_answer(base: str, model: str, stream: bool, tools: list[Any] | None) -> tuple[str, list[tuple[str, Any]], str]:
    client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    extra: dict[str, Any] = {"tools": tools} if tools else {}
    if not stream:
        message = client.chat.completions.create(model=model, messages=ASK, **extra).choices[0].message  # type: ignore[arg-type]
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        return message.content or "", calls, getattr(message, "reasoning_content", None) or ""
    text, reasoning, calls = [], [], {}
    for chunk in client.chat.completions.create(model=model, messages=ASK, stream=True, **extra):  # type: ignore[arg-type]
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            reasoning.append(getattr(choice.delta, "reasoning_content", None) or "")
            for piece in choice.delta.tool_calls or []:
                name, args = calls.get(piece.index, ("", ""))
                calls[piece.index] = (name + (piece.function.name or ""), args + (piece.function.arguments or ""))
    return "".join(text), [(n, json.loads(a)) for n, a in calls.values()], "".join(reasoning)


@pytest.mark.parametrize("stream", [False, True])
def test_openai_front_takes_the_call_out_of_the_reasoning(proxies: dict[str, str], stream: bool) -> None:
    content, calls, reasoning = openai_answer(proxies["reasoning"], "thinks", stream, [WEATHER])
    assert calls == [("get_weather", {"city": "Paris"})]
    assert content == "Checking now."
    assert reasoning == "I need the weather.  That should do." and "tool_call" not in reasoning


@pytest.mark.parametrize("stream", [False, True])
def test_off_the_call_stays_in_the_reasoning(proxies: dict[str, str], stream: bool) -> None:
    content, calls, reasoning = openai_answer(proxies["plain"], "thinks", stream, [WEATHER])
    assert calls == [] and content == "Checking now." and CALL in reasoning


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_front_gives_thinking_then_tool_use(proxies: dict[str, str], stream: bool) -> None:
    client = anthropic.Anthropic(base_url=proxies["reasoning"], api_key="sk-ant-test", max_retries=0, timeout=30)
    request: dict[str, Any] = {"model": "thinks", "max_tokens": 100, "messages": ASK, "tools": [CLAUDE_WEATHER]}
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    kinds = [block.type for block in message.content]
    assert kinds.count("tool_use") == 1 and kinds[0] == "thinking"
    use = next(block for block in message.content if block.type == "tool_use")
    assert (use.name, use.input) == ("get_weather", {"city": "Paris"})
    assert message.stop_reason == "tool_use"
    thinking = "".join(getattr(block, "thinking", "") for block in message.content)
    assert "tool_call" not in thinking and "weather" in thinking


@pytest.mark.parametrize("stream", [False, True])
def test_a_pinned_dialect_reads_bare_json_without_tools(proxies: dict[str, str], stream: bool) -> None:
    content, calls, _ = openai_answer(proxies["pinned"], "bare", stream, None)
    assert calls == [("get_weather", {"city": "Oslo"})] and content == "Here:\n"
    content, calls, _ = openai_answer(proxies["plain"], "bare", stream, None)
    assert calls == [] and content == SCRIPTS["bare"]


def test_config_file_and_serve_flags(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text('[backends.local]\nupstream = "http://127.0.0.1:9/v1"\ndialect = "llama3"\n'
                    "calls_in_reasoning = true\ndefault = true\n")
    backend = load_config(str(path)).backends[0]
    assert backend.dialects == ["llama3_json"] and backend.calls_in_reasoning
    assert backend.parser_options()["calls_in_reasoning"] is True
    path.write_text('[backends.local]\nupstream = "http://127.0.0.1:9/v1"\ndialect = "llama3"\ndialects = ["hermes"]\n')
    with pytest.raises(ConfigError, match="dialect"):
        load_config(str(path))
    settings = {"upstream": "http://127.0.0.1:9/v1", "backend": {"dialects": ["qwen3_xml"], "calls_in_reasoning": True}}
    backend = config_from_settings(settings).backends[0]
    assert backend.dialects == ["qwen3_coder"] and backend.calls_in_reasoning
