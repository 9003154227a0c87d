"""Backend options of issue 18 through the real proxy (uvicorn on 127.0.0.1, openai and anthropic clients):
``calls_in_reasoning`` takes a call written inside ``<think>`` as a call on both fronts, streamed or not;
a pinned ``dialect`` reads its bare forms; the config file and the ``serve`` flags set both."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import anthropic
import pytest

from streamparse.harness.replay import create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import ConfigError, ProxyConfig, load_config
from streamparse.proxy.runner import ServerThread
from streamparse.proxy.workers import config_from_settings
from openai_reading import chat_read

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
    return chat_read(base, ASK, stream=stream, model=model, tools=tools)


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
