"""ToolCallMiddleware around an OpenAI-compatible ASGI app, served by uvicorn, read by the openai client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any, Iterator

import httpx
import pytest
from openai import OpenAI

from helpers import TOOLS
from streamparse.proxy.middleware import ToolCallMiddleware
from streamparse.harness.replay import create_replay_app
from streamparse.proxy.runner import ServerThread
from streamparse.wire.sse import SSEDecoder
from upstreams import SCRIPTS, script

MESSAGES = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def wrapped() -> Iterator[ServerThread]:
    with ServerThread(ToolCallMiddleware(create_replay_app(script, token_delay=0.01))) as server:
        yield server


@pytest.fixture(scope="module")
def tagged() -> Iterator[ServerThread]:
    with ServerThread(ToolCallMiddleware(create_replay_app(script), parse_without_tools=True)) as server:
        yield server


def streamed(server: ServerThread, **request: Any) -> Any:
    client = OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0)
    with client.chat.completions.stream(model="hermes", messages=MESSAGES, **request) as stream:
        for _ in stream:
            pass
        return stream.get_final_completion().choices[0]


def test_streaming_response_rewritten_in_place(wrapped: ServerThread) -> None:
    client = OpenAI(base_url=wrapped.url + "/v1", api_key="k", max_retries=0)
    with client.chat.completions.stream(model="hermes", messages=MESSAGES, tools=TOOLS) as stream:
        for _ in stream:
            pass
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Let me look.\n\nDone."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert final.choices[0].finish_reason == "tool_calls"


def test_json_response_rewritten(wrapped: ServerThread) -> None:
    client = OpenAI(base_url=wrapped.url + "/v1", api_key="k", max_retries=0)
    result = client.chat.completions.create(model="qwen3", messages=MESSAGES, tools=TOOLS)
    (call,) = result.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"city": "Oslo", "days": 2}


def test_stream_is_not_buffered(wrapped: ServerThread) -> None:
    decoder = SSEDecoder()
    start = time.monotonic()
    first = None
    with httpx.stream("POST", wrapped.url + "/v1/chat/completions", timeout=30,
                      json={"model": "plain", "messages": MESSAGES, "stream": True, "tools": TOOLS}) as resp:
        for raw in resp.iter_bytes():
            for event in decoder.feed(raw):
                if first is None and event.data and "content" in event.data:
                    first = time.monotonic() - start
    total = time.monotonic() - start
    assert first is not None and first < total / 2


def test_other_paths_untouched(wrapped: ServerThread) -> None:
    r = httpx.get(wrapped.url + "/v1/models", timeout=10)
    assert r.status_code == 200 and r.json()["object"] == "list"


@pytest.mark.parametrize("request_", [{}, {"tools": TOOLS, "tool_choice": "none"}], ids=["no_tools", "tool_choice_none"])
def test_no_tools_no_calls(wrapped: ServerThread, request_: dict[str, Any]) -> None:
    choice = streamed(wrapped, **request_)
    assert choice.message.content == SCRIPTS["hermes"]  # the Hermes block stays text
    assert not choice.message.tool_calls and choice.finish_reason == "stop"
    client = OpenAI(base_url=wrapped.url + "/v1", api_key="k", max_retries=0)
    result = client.chat.completions.create(model="hermes", messages=MESSAGES, **request_)
    assert result.choices[0].message.content == SCRIPTS["hermes"] and not result.choices[0].message.tool_calls


def test_parse_without_tools_parses_tagged_blocks(tagged: ServerThread) -> None:
    choice = streamed(tagged)
    assert choice.message.content == "Let me look.\n\nDone."
    assert [c.function.name for c in choice.message.tool_calls] == ["get_weather"]
    assert choice.finish_reason == "tool_calls"


def test_parse_without_tools_still_honours_tool_choice_none(tagged: ServerThread) -> None:
    choice = streamed(tagged, tools=TOOLS, tool_choice="none")
    assert choice.message.content == SCRIPTS["hermes"] and not choice.message.tool_calls


def test_submodules_are_attributes_of_the_package_and_load_lazily() -> None:
    code = """if True:
        import sys, streamparse
        assert not {"starlette", "httpx", "uvicorn", "anyio"} & set(sys.modules), "import streamparse stays cheap"
        assert streamparse.asgi.ToolCallMiddleware and streamparse.proxy.app.create_app and streamparse.openai.rewrite_stream
        assert "asgi" in dir(streamparse) and "asgi" not in streamparse.__all__
        try:
            streamparse.no_such_module
        except AttributeError:
            pass
        else:
            raise AssertionError("unknown names must raise AttributeError")
    """
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
