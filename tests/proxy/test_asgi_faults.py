"""ToolCallMiddleware when the wrapped app fails, and when it must not touch a response: a raw ASGI
app served by uvicorn (streamparse.proxy.runner.ServerThread), read with httpx and the openai client."""

from __future__ import annotations

import json
from typing import Any, Iterator

import anyio
import httpx
import openai
import pytest

from helpers import TOOLS
from streamparse.proxy.middleware import ToolCallMiddleware
from streamparse.proxy.runner import ServerThread
from streamparse.wire.sse import SSEDecoder
from upstreams import HERMES, read_body, serve_lifespan
from upstreams import _chunk as frame  # one SSE chunk frame: (content, finish_reason)

MESSAGES = [{"role": "user", "content": "go"}]

FIXED_SSE = b": ping\n\n" + frame("Hi ") + frame(HERMES[:20]) + frame(HERMES[20:]) + frame(None, "stop") + b"data: [DONE]\n\n"
FIXED_JSON = json.dumps({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "Hi " + HERMES}, "finish_reason": "stop"}]}).encode()
SSE_HEADERS = [(b"content-type", b"text/event-stream")]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers by the request's ``model``: fixed responses, or a failure at a chosen moment."""
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    mode = json.loads(await read_body(receive))["model"]
    if mode == "raise_before_start":
        raise RuntimeError("secret internals")
    if mode == "fixed_json":
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(FIXED_JSON)).encode())]})
        await send({"type": "http.response.body", "body": FIXED_JSON})
        return
    if mode == "raise_mid_json":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": FIXED_JSON[:30], "more_body": True})
        raise RuntimeError("secret internals")
    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
    if mode == "fixed_sse":
        await send({"type": "http.response.body", "body": FIXED_SSE})
        return
    await send({"type": "http.response.body", "body": frame("Hello "), "more_body": True})
    if mode == "raise_mid_stream":
        await send({"type": "http.response.body", "body": frame("<tool_"), "more_body": True})
        await anyio.sleep(0.05)  # the client has what was sent so far
        raise RuntimeError("secret internals")
    assert mode == "raise_after_end"
    await send({"type": "http.response.body", "body": frame(HERMES) + frame(None, "stop") + b"data: [DONE]\n\n"})
    raise RuntimeError("secret internals")


@pytest.fixture(scope="module")
def server() -> Iterator[ServerThread]:
    with ServerThread(ToolCallMiddleware(app)) as running:
        yield running


@pytest.fixture(scope="module")
def plain_server() -> Iterator[ServerThread]:
    with ServerThread(app) as running:
        yield running


def post(server: ServerThread, model: str, **body: Any) -> httpx.Response:
    return httpx.post(server.url + "/v1/chat/completions", json={"model": model, "messages": MESSAGES, **body}, timeout=30)


def events(raw: bytes) -> list[dict[str, Any] | str]:
    decoder = SSEDecoder()
    return [e.data if e.data == "[DONE]" else json.loads(e.data)
            for e in decoder.feed(raw) + decoder.close() if e.data is not None]


def content(items: list[dict[str, Any] | str]) -> str:
    return "".join(c["delta"].get("content") or "" for e in items if isinstance(e, dict) for c in e.get("choices", []))


def test_app_failing_mid_stream_flushes_held_text_then_reports_an_error(server: ServerThread) -> None:
    response = post(server, "raise_mid_stream", tools=TOOLS, stream=True)
    assert response.status_code == 200
    items = events(response.content)
    assert content(items) == "Hello <tool_"  # the held "<tool_" came back as text
    assert isinstance(items[-1], dict) and items[-1]["error"]["type"] == "upstream_error"
    assert "RuntimeError" in items[-1]["error"]["message"] and "secret" not in response.text
    assert "[DONE]" not in items


def test_openai_client_sees_the_text_then_an_api_error(server: ServerThread) -> None:
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0, timeout=30)
    seen = ""
    with pytest.raises(openai.APIError, match="failed mid-stream"):
        for chunk in client.chat.completions.create(model="raise_mid_stream", messages=MESSAGES, tools=TOOLS, stream=True):
            seen += "".join(c.delta.content or "" for c in chunk.choices)
    assert seen == "Hello <tool_"


@pytest.mark.parametrize("mode", ["raise_before_start", "raise_mid_json"])
def test_app_failing_before_anything_was_sent_is_a_plain_500(server: ServerThread, mode: str) -> None:
    response = post(server, mode, tools=TOOLS)
    assert (response.status_code, response.text) == (500, "Internal Server Error")


def test_app_failing_after_its_body_ended_leaves_the_response_whole(server: ServerThread) -> None:
    items = events(post(server, "raise_after_end", tools=TOOLS, stream=True).content)
    calls = [tc for e in items if isinstance(e, dict) for c in e["choices"] for tc in c["delta"].get("tool_calls", [])]
    assert content(items) == "Hello " and calls[0]["function"]["name"] == "get_weather"
    assert items[-1] == "[DONE]" and not any(isinstance(e, dict) and "error" in e for e in items)


@pytest.mark.parametrize("body", [{}, {"tools": []}, {"tools": TOOLS, "tool_choice": "none"}],
                         ids=["no_tools", "empty_tools", "tool_choice_none"])
@pytest.mark.parametrize("mode", ["fixed_sse", "fixed_json"])
def test_no_tools_means_the_response_is_untouched(server: ServerThread, plain_server: ServerThread, mode: str,
                                                  body: dict[str, Any]) -> None:
    wrapped, direct = post(server, mode, **body), post(plain_server, mode, **body)
    assert wrapped.content == direct.content == (FIXED_SSE if mode == "fixed_sse" else FIXED_JSON)
    assert wrapped.headers.get("content-length") == direct.headers.get("content-length")
    assert wrapped.headers["content-type"] == direct.headers["content-type"]


@pytest.mark.parametrize("mode", ["fixed_sse", "fixed_json"])
def test_with_tools_the_same_response_is_rewritten(server: ServerThread, mode: str) -> None:
    response = post(server, mode, tools=TOOLS)
    if mode == "fixed_json":
        message = response.json()["choices"][0]["message"]
        assert message["tool_calls"][0]["function"]["name"] == "get_weather"
        assert int(response.headers["content-length"]) == len(response.content)
    else:
        assert content(events(response.content)) == "Hi "


def test_request_body_in_many_pieces_reaches_the_app_unchanged() -> None:
    body = json.dumps({"model": "m", "tools": TOOLS, "messages": [{"role": "user", "content": "x" * 10_000}]}).encode()
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    inbox = [{"type": "http.request", "body": p, "more_body": n < len(pieces) - 1} for n, p in enumerate(pieces)]
    seen: list[Any] = []

    async def receive() -> Any:
        return inbox.pop(0)

    async def echo(scope: Any, receive: Any, send: Any) -> None:
        while True:
            seen.append(await receive())
            if not seen[-1].get("more_body"):
                break
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def send(message: Any) -> None:
        pass

    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions"}
    anyio.run(ToolCallMiddleware(echo), scope, receive, send)
    assert b"".join(m["body"] for m in seen) == body and len(seen) == len(pieces)
