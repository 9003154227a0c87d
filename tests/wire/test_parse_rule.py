"""The rule for requests without tools, the same in the library, the middleware and the proxy (issue 17, §2.2).

    An answer is parsed unless the request's ``tool_choice`` is ``"none"``, or no tools are offered (the
    ``tools`` argument, else the request's ``tools``, is missing or empty) and ``parse_without_tools`` is false.

One table of requests runs through ``rewrite_completion`` and ``rewrite_stream_sync`` (the library), through
``ToolCallMiddleware`` around a scripted app (JSON and SSE), and, where the layer has no ``tools`` argument,
through the proxy (``parse_without_tools`` on the backend); every layer must give the same answer, and that
answer must be the rule's.
"""

from __future__ import annotations

import json
from typing import Any, Iterator, Mapping

import httpx
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk
from starlette.testclient import TestClient

from helpers import TOOLS
from streamparse.harness.replay import completion_chunks, create_replay_app
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.middleware import ToolCallMiddleware
from streamparse.proxy.runner import ServerThread
from streamparse.wire import openai as sp_openai
from streamparse.wire.sse import SSEDecoder

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
NAME_TAG = '<search_recipes>{"query": "vegan pasta"}</function>'  # looks like prose: a call only with its tool known
ANSWER = "<think>hm</think>Let me look.\n" + HERMES + "\n" + NAME_TAG + "\nDone."
MESSAGES = [{"role": "user", "content": "go"}]

REQUESTS: dict[str, dict[str, Any]] = {
    "no_tools": {},
    "empty_tools": {"tools": []},
    "tools": {"tools": TOOLS},
    "tools_auto": {"tools": TOOLS, "tool_choice": "auto"},
    "tools_required": {"tools": TOOLS, "tool_choice": "required"},
    "tools_choice_none": {"tools": TOOLS, "tool_choice": "none"},
    "no_tools_choice_none": {"tool_choice": "none"},
}
TOOLS_ARGUMENT: dict[str, Any] = {"no_argument": None, "empty_argument": [], "tools_argument": TOOLS}

# What the answer becomes: (content, reasoning, calls, finish_reason).
UNTOUCHED = (ANSWER, None, [], "stop")
TAGGED_ONLY = ("Let me look.\n\n" + NAME_TAG + "\nDone.", "hm", ["get_weather"], "tool_calls")
# the "\n" between the two calls is a run of only whitespace: layout, not content (wire/chunks.py)
ALL_CALLS = ("Let me look.\n\nDone.", "hm", ["get_weather", "search_recipes"], "tool_calls")


def by_the_rule(request: Mapping[str, Any], tools: Any, parse_without_tools: bool) -> tuple[Any, ...]:
    """The rule, read off its sentence (the code under test decides through ``should_parse``)."""
    offered = tools if tools is not None else request.get("tools")
    if request.get("tool_choice") == "none" or (not offered and not parse_without_tools):
        return UNTOUCHED
    return ALL_CALLS if offered else TAGGED_ONLY


def outcome(message: Mapping[str, Any], finish: Any) -> tuple[Any, ...]:
    calls = [c["function"]["name"] for c in message.get("tool_calls") or []]
    return message.get("content"), message.get("reasoning_content"), calls, finish


def from_chunks(chunks: list[dict[str, Any]]) -> tuple[Any, ...]:
    """What the openai SDK accumulates from a stream."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    choice = state.get_final_completion().choices[0]
    return outcome(choice.message.model_dump(mode="json"), choice.finish_reason)


def from_completion(completion: Mapping[str, Any]) -> tuple[Any, ...]:
    choice = completion["choices"][0]
    return outcome(choice["message"], choice["finish_reason"])


def from_sse(body: str) -> tuple[Any, ...]:
    events = SSEDecoder().feed(body) + [None]
    return from_chunks([json.loads(e.data) for e in events if e is not None and e.data and e.data != "[DONE]"])


def upstream_completion() -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}]}


def script(request: Mapping[str, Any], choice: int) -> str:
    return ANSWER


def through_library(request: dict[str, Any], tools: Any, parse_without_tools: bool) -> dict[str, tuple[Any, ...]]:
    body = {"model": "m", "messages": MESSAGES, **request}
    chunks = list(completion_chunks([ANSWER], "m"))
    return {
        "rewrite_completion": from_completion(sp_openai.rewrite_completion(
            upstream_completion(), tools, request=body, parse_without_tools=parse_without_tools)),
        "rewrite_stream_sync": from_chunks(list(sp_openai.rewrite_stream_sync(
            chunks, tools, request=body, parse_without_tools=parse_without_tools))),
    }


def through_middleware(request: dict[str, Any], tools: Any, parse_without_tools: bool) -> dict[str, tuple[Any, ...]]:
    app = ToolCallMiddleware(create_replay_app(script), tools=tools, parse_without_tools=parse_without_tools)
    with TestClient(app) as client:
        body = {"model": "m", "messages": MESSAGES, **request}
        whole = client.post("/v1/chat/completions", json=body)
        streamed = client.post("/v1/chat/completions", json={**body, "stream": True})
    assert whole.status_code == streamed.status_code == 200
    return {"middleware json": from_completion(whole.json()), "middleware sse": from_sse(streamed.text)}


@pytest.mark.parametrize("parse_without_tools", [False, True], ids=["strict", "parse_without_tools"])
@pytest.mark.parametrize("tools", list(TOOLS_ARGUMENT))
@pytest.mark.parametrize("request_", list(REQUESTS))
def test_library_and_middleware_agree_with_the_rule(request_: str, tools: str, parse_without_tools: bool) -> None:
    request, argument = REQUESTS[request_], TOOLS_ARGUMENT[tools]
    found = {**through_library(request, argument, parse_without_tools),
             **through_middleware(request, argument, parse_without_tools)}
    expected = by_the_rule(request, argument, parse_without_tools)
    assert found == dict.fromkeys(found, expected)


def test_the_defaults() -> None:
    """The library's rewriters parse unless told otherwise (calling one asks for it: parse_without_tools=True);
    the middleware, in front of clients that did not ask, does not (parse_without_tools=False)."""
    body = {"model": "m", "messages": MESSAGES}
    assert from_completion(sp_openai.rewrite_completion(upstream_completion(), request=body)) == TAGGED_ONLY
    assert from_chunks(list(sp_openai.rewrite_stream_sync(completion_chunks([ANSWER], "m"), request=body))) == TAGGED_ONLY
    assert from_completion(sp_openai.rewrite_completion(upstream_completion())) == TAGGED_ONLY  # no request at all
    with TestClient(ToolCallMiddleware(create_replay_app(script))) as client:
        assert from_completion(client.post("/v1/chat/completions", json=body).json()) == UNTOUCHED
    with TestClient(ToolCallMiddleware(create_replay_app(script), parse_without_tools=True)) as client:
        assert from_completion(client.post("/v1/chat/completions", json=body).json()) == TAGGED_ONLY


# ---------------------------------------------------------------- the proxy (no tools argument: the request's)

@pytest.fixture(scope="module")
def proxies() -> Iterator[dict[bool, ServerThread]]:
    with ServerThread(create_replay_app(script)) as up:
        configs = {flag: ProxyConfig(backends=[Backend(name="b", upstream=up.url + "/v1", default=True,
                                                       parse_without_tools=flag)]) for flag in (False, True)}
        with ServerThread(create_app(configs[False])) as strict, ServerThread(create_app(configs[True])) as loose:
            yield {False: strict, True: loose}


@pytest.mark.parametrize("parse_without_tools", [False, True], ids=["strict", "parse_without_tools"])
@pytest.mark.parametrize("request_", list(REQUESTS))
def test_the_proxy_agrees(proxies: dict[bool, ServerThread], request_: str, parse_without_tools: bool) -> None:
    request = REQUESTS[request_]
    body = {"model": "m", "messages": MESSAGES, **request}
    url = proxies[parse_without_tools].url + "/v1/chat/completions"
    whole = httpx.post(url, json=body, timeout=30)
    streamed = httpx.post(url, json={**body, "stream": True}, timeout=30)
    assert whole.status_code == streamed.status_code == 200
    found = {"proxy json": from_completion(whole.json()), "proxy sse": from_sse(streamed.text),
             **through_library(request, None, parse_without_tools),
             **through_middleware(request, None, parse_without_tools)}
    assert found == dict.fromkeys(found, by_the_rule(request, None, parse_without_tools))
