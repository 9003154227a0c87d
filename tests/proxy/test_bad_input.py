"""Bad input never becomes a 500 or an aborted stream: from the client, from the upstream, in the middleware.

Real servers on 127.0.0.1 (the proxy, and upstreams that send what real ones sometimes do), the real
openai and anthropic clients, and httpx for bytes no client would send.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator

import anthropic
import httpx
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from helpers import TOOLS
from streamparse.proxy.app import create_app
from streamparse.proxy.config import ProxyConfig
from streamparse.proxy.runner import ServerThread
from upstreams import RecordingModel

MESSAGES = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def plain_proxy() -> Iterator[str]:
    with ServerThread(RecordingModel("fine").app()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        yield px.url


# ---------------------------------------------------------------- from the client

def test_a_lone_surrogate_in_the_request_is_a_400_and_the_connection_stays_usable(plain_proxy: str) -> None:
    lone = b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "a \\ud800 b"}]}'
    with httpx.Client(base_url=plain_proxy, timeout=10) as client:
        for path in ("/v1/chat/completions", "/v1/messages", "/v1/messages/count_tokens"):
            r = client.post(path, content=lone, headers={"content-type": "application/json"})
            assert r.status_code == 400, (path, r.text)
            body = r.json()
            message = body["error"]["message"]
            assert "surrogate" in message
            if path.startswith("/v1/messages"):
                assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
            assert r.headers.get("connection") != "close"
            ok = client.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES})
            assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == "fine"
        paired = b'{"model": "m", "messages": [{"role": "user", "content": "\\ud83d\\ude00"}]}'
        assert client.post("/v1/chat/completions", content=paired).status_code == 200  # a real pair is text


ODD_BODIES = {
    "huge exponent": b'{"model": "m", "messages": [], "temperature": 1e999}',
    "negative huge": b'{"model": "m", "max_tokens": 5, "messages": [], "x": -1e400}',
    "long integer": b'{"model": "m", "messages": [], "x": ' + b"9" * 5000 + b"}",
    "nested 100k": b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "invalid utf-8": b'{"model": "m", "messages": [{"role": "user", "content": "\xff"}]}',
    "utf-16": '{"model": "m", "messages": []}'.encode("utf-16"),
    "messages object": b'{"model": "m", "max_tokens": 5, "messages": {"a": 1}}',
    "model object": b'{"model": {"a": 1}, "max_tokens": 5, "messages": []}',
    "empty": b"",
    "array": b"[]",
}


@pytest.mark.parametrize("name", sorted(ODD_BODIES))
def test_odd_request_bodies_get_a_4xx_never_a_5xx(plain_proxy: str, name: str) -> None:
    with httpx.Client(base_url=plain_proxy, timeout=30) as client:
        for path in ("/v1/chat/completions", "/v1/messages", "/v1/messages/count_tokens"):
            r = client.post(path, content=ODD_BODIES[name], headers={"content-type": "application/json"})
            assert r.status_code < 500, (path, r.status_code, r.text[:300])
        assert client.get("/healthz").status_code == 200  # the connection is still usable


# ---------------------------------------------------------------- from the upstream

def _chunk(content: str) -> bytes:
    """An SSE chunk whose content is raw JSON string content (escapes kept as written)."""
    return (b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": '
            b'[{"index": 0, "delta": {"content": "' + content.encode("latin-1") + b'"}, "finish_reason": null}]}\n\n')


# Each: the raw JSON string pieces the upstream streams, and the text the client must read.
STREAMS: dict[str, tuple[list[str], str]] = {
    "split_pair": (["hi \\ud83d", "\\ude00 there"], "hi \U0001f600 there"),
    "pair_then_end": (["x \\ud83d"], "x \ufffd"),
    "lone_high": (["a \\ud800 b"], "a \ufffd b"),
    "lone_low": (["a \\udc00", " b"], "a \ufffd b"),
    "high_then_text": (["a \\ud83d", "b"], "a \ufffdb"),
    "bad_utf8": (["caf\xe9 \xff ok"], "caf\ufffd \ufffd ok"),
}
WHOLE: dict[str, tuple[str, str]] = {
    "w_pair": ("hi \\ud83d\\ude00", "hi \U0001f600"),
    "w_lone": ("a \\ud800 b", "a \ufffd b"),
    "w_bad_utf8": ("caf\xe9 \xff ok", "caf\ufffd \ufffd ok"),
}


def odd_upstream() -> Starlette:
    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        model = body["model"]
        if model in WHOLE:
            raw = (b'{"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{"index": 0, '
                   b'"message": {"role": "assistant", "content": "' + WHOLE[model][0].encode("latin-1")
                   + b'"}, "finish_reason": "stop"}]}')
            return Response(raw, media_type="application/json")

        async def events() -> AsyncIterator[bytes]:
            for piece in STREAMS[model][0]:
                yield _chunk(piece)
            yield (b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", '
                   b'"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n')

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture(scope="module")
def odd_proxy() -> Iterator[str]:
    with ServerThread(odd_upstream()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        yield px.url


@pytest.mark.parametrize("tools", [None, TOOLS])
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_surrogates_and_bad_utf8_in_a_chat_stream_never_end_it(odd_proxy: str, name: str, tools: Any) -> None:
    client = openai.OpenAI(base_url=odd_proxy + "/v1", api_key="k", max_retries=0)
    extra: Any = {"tools": tools} if tools else {}
    text, finish = "", None
    for chunk in client.chat.completions.create(model=name, messages=MESSAGES, stream=True, **extra):  # type: ignore[call-overload]
        for choice in chunk.choices:
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    expected = STREAMS[name][1]
    if tools is None and name != "bad_utf8":  # relayed untouched: the client's own decoder reads each event
        expected = "".join(json.loads(f'"{piece}"') for piece in STREAMS[name][0])
    assert text == expected and finish == "stop"


@pytest.mark.parametrize("tools", [None, TOOLS])
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_surrogates_and_bad_utf8_in_a_messages_stream_never_end_it(odd_proxy: str, name: str, tools: Any) -> None:
    claude = anthropic.Anthropic(base_url=odd_proxy, api_key="k", max_retries=0)
    extra: Any = {"tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]} if tools else {}
    with claude.messages.stream(model=name, max_tokens=10, messages=MESSAGES, **extra) as events:  # type: ignore[arg-type]
        message = events.get_final_message()
    assert "".join(b.text for b in message.content if b.type == "text") == STREAMS[name][1]
    assert message.stop_reason == "end_turn"


@pytest.mark.parametrize("tools", [None, TOOLS])
@pytest.mark.parametrize("name", sorted(WHOLE))
def test_surrogates_and_bad_utf8_in_a_whole_answer_read_as_in_a_stream(odd_proxy: str, name: str, tools: Any) -> None:
    client = openai.OpenAI(base_url=odd_proxy + "/v1", api_key="k", max_retries=0)
    extra: Any = {"tools": tools} if tools else {}
    answer = client.chat.completions.create(model=name, messages=MESSAGES, **extra)
    expected = WHOLE[name][1]
    if tools is None and name == "w_lone":  # relayed byte for byte: the client's own decoder reads the escape
        expected = "a \ud800 b"
    assert answer.choices[0].message.content == expected
    claude = anthropic.Anthropic(base_url=odd_proxy, api_key="k", max_retries=0)
    message = claude.messages.create(model=name, max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
    assert message.content[0].text == WHOLE[name][1]  # type: ignore[union-attr]


def _frame(delta: Any, finish: str | None = None) -> bytes:
    return b"data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).encode() + b"\n\n"


# Events no upstream should send, each followed by good text: the stream must go on to its end.
SHAPES: dict[str, bytes] = {
    "number": b"data: 42\n\n",
    "array": b"data: []\n\n",
    "null": b"data: null\n\n",
    "choice not an object": b'data: {"choices": ["x"]}\n\n',
    "content a number": _frame({"content": 5}),
    "content parts": _frame({"content": [{"type": "text", "text": "hi"}]}),
    "lone CR line ends": _frame({"content": "cr "}).replace(b"\n", b"\r"),
    "CRLF cut between reads": _frame({"content": "crlf "}).replace(b"\n", b"\r\n"),
}


def shapes_upstream() -> Starlette:
    async def chat(request: Request) -> Response:
        odd = SHAPES[json.loads(await request.body())["model"]]

        async def events() -> AsyncIterator[bytes]:
            yield _frame({"content": "before "})
            if odd.endswith(b"\r\n\r\n"):  # cut inside a \r\n
                yield odd[:-1]
                yield odd[-1:]
            else:
                yield odd
            yield _frame({"content": "after"}) + _frame({}, "stop") + b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_an_unreadable_upstream_event_does_not_end_the_stream(name: str) -> None:
    with ServerThread(shapes_upstream()) as up, ServerThread(create_app(ProxyConfig.single(up.url + "/v1"))) as px:
        client = openai.OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        for extra in ({"tools": TOOLS}, {}):
            text, finish = "", None
            for chunk in client.chat.completions.create(model=name, messages=MESSAGES, stream=True, **extra):  # type: ignore[call-overload]
                for choice in chunk.choices if isinstance(getattr(chunk, "choices", None), list) else ():
                    content = getattr(getattr(choice, "delta", None), "content", None)  # passed-on oddities too
                    text += content if isinstance(content, str) else ""
                    finish = getattr(choice, "finish_reason", None) or finish
            assert text.startswith("before ") and text.endswith("after") and finish == "stop", (extra, text)
        claude = anthropic.Anthropic(base_url=px.url, api_key="k", max_retries=0)
        with claude.messages.stream(model=name, max_tokens=10, messages=MESSAGES) as events:  # type: ignore[arg-type]
            message = events.get_final_message()
        said = "".join(b.text for b in message.content if b.type == "text")
        assert said.startswith("before ") and said.endswith("after") and message.stop_reason == "end_turn"
