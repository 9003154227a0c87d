"""The proxy in front of a tool-less backend (``tool_prompt``), driven by the real openai client.

The upstream is a scripted model that records every request: the tests check what a
backend that has never seen ``tools`` receives (instructions in the system message,
history as text, no tool fields), and what the client gets back.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import pytest
from openai import OpenAI

from streamparse.proxy.config import ProxyConfig
from streamparse.prompting.requests import ToolChoice, instructions, render_tool_result
from streamparse.dialects.render import render
from streamparse.proxy.runner import ServerThread
from streamparse.proxy.app import create_app

from helpers import accumulate
from upstreams import RecordingModel

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                   "required": ["city"]}}}
CLOCK = {"type": "function", "function": {
    "name": "get_time", "description": "Local time in a timezone",
    "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}}
TOOLS = [WEATHER, CLOCK]
CALL = render("hermes", "get_weather", {"city": "Paris"})
FINAL = "It is sunny in Paris, 21 °C."
QUESTION = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Weather in Paris?"}]


@pytest.fixture(scope="module")
def model() -> Iterator[RecordingModel]:
    yield RecordingModel()


@pytest.fixture(scope="module")
def servers(model: RecordingModel) -> Iterator[dict[str, ServerThread]]:
    with ServerThread(model.app()) as up:
        plain = ProxyConfig.single(up.url + "/v1", {"tool_prompt": "hermes"})
        retrying = ProxyConfig.single(up.url + "/v1", {"tool_prompt": "qwen3_coder", "tool_prompt_retry": True})
        with ServerThread(create_app(plain)) as p1, ServerThread(create_app(retrying)) as p2:
            yield {"hermes": p1, "retry": p2}


def client(server: ServerThread) -> OpenAI:
    return OpenAI(base_url=server.url + "/v1", api_key="sk-test", max_retries=0, timeout=30)


def streamed(oai: OpenAI, **kw: Any) -> dict[str, Any]:
    """A streamed answer, accumulated: content, calls, finish_reason."""
    return accumulate(oai.chat.completions.create(stream=True, **kw)).get(0, {"content": "", "calls": {}, "finish": None})


def upstream_has_no_tool_fields(body: dict[str, Any]) -> None:
    assert not {"tools", "tool_choice", "parallel_tool_calls", "functions", "function_call"} & set(body)
    for message in body["messages"]:
        assert message["role"] in ("system", "user", "assistant")
        assert "tool_calls" not in message and "tool_call_id" not in message


@pytest.mark.parametrize("stream", [False, True])
def test_two_turns_through_a_tool_less_backend(servers: dict[str, ServerThread], model: RecordingModel,
                                               stream: bool) -> None:
    model.reset("Let me check.\n" + CALL, FINAL)
    oai = client(servers["hermes"])
    # Turn 1: the model writes markup, the client gets a call.
    if stream:
        got = streamed(oai, model="m", messages=QUESTION, tools=TOOLS)
        calls = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in got["calls"].values()]
        content, finish = got["content"], got["finish"]
    else:
        answer = oai.chat.completions.create(model="m", messages=QUESTION, tools=TOOLS)
        message = answer.choices[0].message
        calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []]
        content, finish = message.content, answer.choices[0].finish_reason
    assert content.strip() == "Let me check."
    assert finish == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("get_weather", {"city": "Paris"})]
    first = model.requests[0]
    upstream_has_no_tool_fields(first)
    tool_text = instructions(TOOLS, "hermes", ToolChoice("auto"))
    assert first["messages"] == [{"role": "system", "content": "You are terse.\n\n" + tool_text},
                                 {"role": "user", "content": "Weather in Paris?"}]
    assert "get_weather" in tool_text and "Current weather for a city" in tool_text and '"city"' in tool_text
    assert first.get("stream", False) is stream

    # Turn 2: the client sends the result back; the backend sees it as text.
    call_id = calls[0]["id"]
    history = QUESTION + [
        {"role": "assistant", "content": "Let me check.", "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": calls[0]["arguments"]}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny, 21 C"},
    ]
    if stream:
        got = streamed(oai, model="m", messages=history, tools=TOOLS)
        assert (got["content"], got["calls"], got["finish"]) == (FINAL, {}, "stop")
    else:
        answer = oai.chat.completions.create(model="m", messages=history, tools=TOOLS)
        assert answer.choices[0].message.content == FINAL and answer.choices[0].message.tool_calls is None
        assert answer.choices[0].finish_reason == "stop"
    second = model.requests[1]
    upstream_has_no_tool_fields(second)
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {"role": "assistant",
                                     "content": "Let me check.\n" + render("hermes", "get_weather", {"city": "Paris"})}
    assert second["messages"][3] == {"role": "user", "content": render_tool_result(call_id, "get_weather", "sunny, 21 C")}
    assert f'id="{call_id}"' in second["messages"][3]["content"] and "get_weather" in second["messages"][3]["content"]
    assert len(second["messages"]) == 4


def test_tool_choice_none_shows_no_tools_and_parses_nothing(servers: dict[str, ServerThread],
                                                           model: RecordingModel) -> None:
    model.reset("Here: " + CALL)
    answer = client(servers["hermes"]).chat.completions.create(model="m", messages=QUESTION, tools=TOOLS,
                                                               tool_choice="none")
    assert answer.choices[0].message.content == "Here: " + CALL and not answer.choices[0].message.tool_calls
    body = model.requests[0]
    upstream_has_no_tool_fields(body)
    assert body["messages"] == QUESTION  # no instructions at all


def test_auto_without_a_call_is_plain_text(servers: dict[str, ServerThread], model: RecordingModel) -> None:
    model.reset("Paris is in France.")
    answer = client(servers["hermes"]).chat.completions.create(model="m", messages=QUESTION, tools=TOOLS)
    assert answer.choices[0].message.content == "Paris is in France." and answer.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("stream", [False, True])
def test_required_without_a_call_says_so(servers: dict[str, ServerThread], model: RecordingModel, stream: bool) -> None:
    model.reset("I would rather not.")
    payload = {"model": "m", "messages": QUESTION, "tools": TOOLS, "tool_choice": "required", "stream": stream}
    with httpx.Client(timeout=30) as http:
        resp = http.post(servers["hermes"].url + "/v1/chat/completions", json=payload)
    assert resp.status_code == 200
    text = instructions(TOOLS, "hermes", ToolChoice("required"))
    assert model.requests[0]["messages"][0]["content"].endswith(text)
    assert len(model.requests) == 1  # retries are off by default
    if stream:
        assert ": no_tool_call: tool_choice demanded a tool call" in resp.text
        assert resp.text.rstrip().endswith("data: [DONE]")
    else:
        assert resp.headers["x-streamparse-diagnostic"].startswith("no_tool_call:")
        assert resp.json()["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize("stream", [False, True])
def test_required_retries_once_when_configured(servers: dict[str, ServerThread], model: RecordingModel,
                                               stream: bool) -> None:
    qwen_call = render("qwen3_coder", "get_time", {"tz": "UTC"})
    model.reset("I think it is noon.", qwen_call)
    oai = client(servers["retry"])
    choice = {"type": "function", "function": {"name": "get_time"}}
    if stream:
        got = streamed(oai, model="m", messages=QUESTION, tools=TOOLS, tool_choice=choice)
        calls = [(c["name"], json.loads(c["arguments"])) for c in got["calls"].values()]
        finish = got["finish"]
    else:
        answer = oai.chat.completions.create(model="m", messages=QUESTION, tools=TOOLS, tool_choice=choice)
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in answer.choices[0].message.tool_calls]
        finish = answer.choices[0].finish_reason
        assert answer.usage is not None and answer.usage.prompt_tokens == 22  # both attempts counted
    assert calls == [("get_time", {"tz": "UTC"})] and finish == "tool_calls"
    first, second = model.requests
    assert first["stream"] is False and second["stream"] is False  # checked whole before anything is sent
    named = instructions(TOOLS, "qwen3_coder", ToolChoice("named", "get_time"))
    assert first["messages"][0]["content"].endswith(named) and "get_weather" not in named
    assert second["messages"][:-2] == first["messages"]
    assert second["messages"][-2] == {"role": "assistant", "content": "I think it is noon."}
    assert second["messages"][-1]["role"] == "user" and "get_time" in second["messages"][-1]["content"]


def test_parallel_tool_calls_false_allows_one_call(servers: dict[str, ServerThread], model: RecordingModel) -> None:
    second_call = render("hermes", "get_time", {"tz": "UTC"})
    model.reset(CALL + "\n" + second_call)
    answer = client(servers["hermes"]).chat.completions.create(model="m", messages=QUESTION, tools=TOOLS,
                                                               parallel_tool_calls=False)
    message = answer.choices[0].message
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    assert second_call in (message.content or "")  # the extra call is not lost: it stays text
    assert "one" in model.requests[0]["messages"][0]["content"].lower()


def test_drifted_dialect_is_still_parsed(servers: dict[str, ServerThread], model: RecordingModel) -> None:
    """Prompted for Hermes, the model answers in Qwen3-Coder XML: auto-detection still finds the call."""
    model.reset(render("qwen3_coder", "get_weather", {"city": "Oslo", "days": 2}))
    answer = client(servers["hermes"]).chat.completions.create(model="m", messages=QUESTION, tools=TOOLS)
    (call,) = answer.choices[0].message.tool_calls
    assert (call.function.name, json.loads(call.function.arguments)) == ("get_weather", {"city": "Oslo", "days": 2})
