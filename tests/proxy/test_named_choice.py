"""A named ``tool_choice`` is enforced: a call to another declared tool is not the demanded call.

Real servers on 127.0.0.1 (the proxy and a recording model), the real openai and anthropic clients;
both fronts, streaming or not, plain / ``tool_prompt`` / ``stream_arguments``, and the retry.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pytest

from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.pipeline import DIAGNOSTIC_HEADER
from streamparse.proxy.runner import ServerThread
from upstreams import RecordingModel

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {
    "type": "object", "properties": {"zone": {"type": "string"}}}}}
OTHER_CALL = 'Sure. <tool_call>{"name": "get_time", "arguments": {"zone": "UTC"}}</tool_call>'
WANTED_CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
MESSAGES = [{"role": "user", "content": "weather?"}]
MODES = {"plain": {}, "tool_prompt": {"tool_prompt": "hermes"}, "stream_arguments": {"stream_arguments": True}}


def _openai_answer(client: openai.OpenAI, stream: bool) -> tuple[str, list[str]]:
    kwargs: Any = dict(model="m", messages=MESSAGES, tools=[WEATHER, TIME],
                       tool_choice={"type": "function", "function": {"name": "get_weather"}})
    if not stream:
        message = client.chat.completions.create(**kwargs).choices[0].message
        return message.content or "", [c.function.name for c in message.tool_calls or []]  # type: ignore[union-attr]
    text, names = "", []
    for chunk in client.chat.completions.create(stream=True, **kwargs):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            names += [c.function.name for c in choice.delta.tool_calls or [] if c.function and c.function.name]
    return text, names


def _anthropic_answer(client: anthropic.Anthropic, stream: bool) -> tuple[str, list[str]]:
    tools: Any = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in (WEATHER, TIME)]
    kwargs: Any = dict(model="m", max_tokens=100, messages=MESSAGES, tools=tools,
                       tool_choice={"type": "tool", "name": "get_weather"})
    if stream:
        with client.messages.stream(**kwargs) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**kwargs)
    text = "".join(b.text for b in message.content if b.type == "text")
    return text, [b.name for b in message.content if b.type == "tool_use"]


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("front", ["openai", "anthropic"])
def test_a_call_to_another_tool_stays_text(front: str, stream: bool, mode: str) -> None:
    model = RecordingModel(OTHER_CALL)
    with ServerThread(model.app()) as up, \
            ServerThread(create_app(ProxyConfig.single(up.url + "/v1", MODES[mode]))) as px:
        if front == "openai":
            text, names = _openai_answer(openai.OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0), stream)
        else:
            text, names = _anthropic_answer(anthropic.Anthropic(base_url=px.url, api_key="k", max_retries=0), stream)
    assert names == []  # get_time is declared, but it is not the call the client demanded
    assert "get_time" in text and text.startswith("Sure.")  # kept as the model wrote it


@pytest.mark.parametrize("stream", [False, True])
def test_the_named_call_still_leaves_as_a_call_and_the_miss_is_reported(stream: bool) -> None:
    import httpx

    model = RecordingModel(OTHER_CALL + WANTED_CALL)
    with ServerThread(model.app()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        text, names = _openai_answer(openai.OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0), stream)
        assert names == ["get_weather"] and "get_time" in text
        model.reset(OTHER_CALL)
        r = httpx.post(px.url + "/v1/chat/completions", timeout=10, json={
            "model": "m", "messages": MESSAGES, "tools": [WEATHER, TIME],
            "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})
        assert "get_weather" in r.headers[DIAGNOSTIC_HEADER] and "tool_calls" not in r.json()["choices"][0]["message"]


def test_with_tool_prompt_retry_a_call_to_another_tool_is_asked_again() -> None:
    model = RecordingModel(OTHER_CALL, WANTED_CALL)
    with ServerThread(model.app()) as up, ServerThread(create_app(ProxyConfig.single(
            up.url + "/v1", {"tool_prompt": "hermes", "tool_prompt_retry": True}))) as px:
        client = openai.OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        text, names = _openai_answer(client, stream=False)
    assert names == ["get_weather"] and len(model.requests) == 2
    assert "get_weather" in json.dumps(model.requests[1]["messages"][-1])
