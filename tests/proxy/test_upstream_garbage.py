"""What an upstream sends that is not what it should be is the same error with or without tools, on every front: a
stream event whose data is not JSON ends the stream with an error event, a whole answer that is not a JSON object
is a 502 in the API's error shape. Well-formed answers relayed untouched still go on byte for byte; other ``/v1``
paths (files: binary) are relayed as they are, JSON or not.

Real servers on 127.0.0.1 (uvicorn in threads); the openai and anthropic clients where a client is needed, raw
httpx where the bytes on the wire are the point.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator

import anthropic
import anyio
import httpx
import openai
import pytest
from hypothesis import given, settings, strategies as st
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.rewrite import UpstreamEvents
from streamparse.proxy.runner import ServerThread

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
ASK = [{"role": "user", "content": "hi"}]
BINARY = bytes(range(256)) * 4


def _chunk(text: str | None, finish: str | None = None) -> bytes:
    delta = {} if text is None else {"content": text}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


GOOD = [b": upstream says hello\n\n", _chunk("Hello "), _chunk("wor"), _chunk("ld"),
        b'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],\n'
        b'data:  "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}\n\n',  # two data lines
        _chunk(None, "stop"), b"data: [DONE]\n\n"]
# Streams (model name -> pieces as the upstream writes them) and whole bodies (model name -> (content type, body)).
STREAMS: dict[str, list[bytes]] = {
    "bad_event": [_chunk("Hello "), b"data: {this is not json\n\n", _chunk("never seen"), b"data: [DONE]\n\n"],
    "bad_event_crlf": [_chunk("Hello ").replace(b"\n", b"\r\n"), b"data: <html>oops</html>\r\n\r\n", _chunk("no")],
    "bad_split": [_chunk("Hello "), b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"x", b"\"}}]\n\n",
                  _chunk("never seen")],
    "good": GOOD,
    "good_in_bits": [bytes([b]) for b in b"".join(GOOD)],  # every byte a piece of its own
}
WHOLE: dict[str, tuple[str, bytes]] = {
    "text_body": ("text/plain", b"model is loading"),
    "html_body": ("text/html", b"<html><body>502 Bad Gateway</body></html>"),
    "cut_json": ("application/json", b'{"id": "c", "choices": [{"message": {"content": "Hi'),
    "array_body": ("application/json", b"[1, 2, 3]"),
    "sse_body": ("text/event-stream", b"".join(GOOD)),  # a stream where a whole answer was asked for
    "good_body": ("application/json", b'{"id": "c", "object": "chat.completion", "created": 1, "model": "m", '
                                      b'"choices": [{"index": 0, "message": {"role": "assistant", '
                                      b'"content": "Hi \\u00e9"}, "finish_reason": "stop"}],  "usage": {"n": 1}}'),
}


def garbage_upstream() -> Starlette:
    async def chat(request: Request) -> Response:
        model = json.loads(await request.body())["model"]
        if model in WHOLE:
            media, body = WHOLE[model]
            return Response(body, media_type=media)

        async def pieces() -> AsyncIterator[bytes]:
            for piece in STREAMS[model]:
                yield piece
                await anyio.sleep(0.001 if model == "good_in_bits" else 0.02)

        return StreamingResponse(pieces(), media_type="text/event-stream")

    async def file_content(request: Request) -> Response:
        return Response(BINARY, media_type="application/octet-stream")

    async def other_stream(request: Request) -> Response:
        return Response(b"data: not json at all\n\ndata: [DONE]\n\n", media_type="text/event-stream")

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/v1/files/{id}/content", file_content, methods=["GET"]),
                             Route("/v1/other/stream", other_stream, methods=["POST"])])


@pytest.fixture(scope="module")
def proxy() -> Iterator[ServerThread]:
    with ServerThread(garbage_upstream()) as up, \
            ServerThread(create_app(ProxyConfig([Backend("b", up.url + "/v1", default=True)]))) as px:
        yield px


def _sse_data(wire: bytes) -> list[Any]:
    lines = [line[6:] for line in wire.replace(b"\r\n", b"\n").split(b"\n") if line.startswith(b"data: ")]
    return [line.decode() if line == b"[DONE]" else json.loads(line) for line in lines]


def _stream(proxy: ServerThread, model: str, **extra: Any) -> bytes:
    with httpx.stream("POST", proxy.url + "/v1/chat/completions", timeout=30,
                      json={"model": model, "messages": ASK, "stream": True, **extra}) as resp:
        assert resp.status_code == 200
        return resp.read()


@pytest.mark.parametrize("model", ["bad_event", "bad_event_crlf", "bad_split"])
@pytest.mark.parametrize("tools", [False, True], ids=["relayed", "rewritten"])
def test_a_stream_event_that_is_not_json_ends_the_stream_with_an_error_event(proxy: ServerThread, model: str,
                                                                             tools: bool) -> None:
    items = _sse_data(_stream(proxy, model, **({"tools": TOOLS} if tools else {})))
    *chunks, error = items
    assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["Hello "]  # what came before it, then
    assert error["error"]["message"].startswith("upstream sent invalid JSON in its stream: ")  # the same error
    assert error["error"]["type"] == "upstream_error"


@pytest.mark.parametrize("tools", [False, True], ids=["relayed", "rewritten"])
def test_the_openai_client_sees_an_api_error_not_a_json_decode_error(proxy: ServerThread, tools: bool) -> None:
    client = OpenAI(base_url=proxy.url + "/v1", api_key="k", max_retries=0)
    extra: dict[str, Any] = {"tools": TOOLS} if tools else {}
    seen = ""
    with pytest.raises(openai.APIError, match="invalid JSON in its stream"):
        for chunk in client.chat.completions.create(model="bad_event", messages=ASK, stream=True, **extra):
            seen += chunk.choices[0].delta.content or ""
    assert seen == "Hello "
    for model in ("text_body", "html_body", "cut_json", "array_body", "sse_body"):
        with pytest.raises(openai.APIStatusError) as info:
            client.chat.completions.create(model=model, messages=ASK, **extra)
        assert info.value.status_code == 502 and "unusable response" in info.value.message, model


@pytest.mark.parametrize("model", ["text_body", "html_body", "cut_json", "array_body", "sse_body"])
@pytest.mark.parametrize("tools", [False, True], ids=["relayed", "rewritten"])
def test_a_whole_answer_that_is_not_a_json_object_is_a_502_in_openai_shape(proxy: ServerThread, model: str,
                                                                          tools: bool) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", timeout=30,
                   json={"model": model, "messages": ASK, **({"tools": TOOLS} if tools else {})})
    assert r.status_code == 502
    error = r.json()["error"]
    assert error["code"] == "upstream_bad_response" and error["type"] == "upstream_error"
    assert error["message"].startswith("upstream sent an unusable response (")


def test_the_other_fronts_give_the_same_errors(proxy: ServerThread) -> None:
    client = anthropic.Anthropic(base_url=proxy.url, api_key="k", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as info:
        client.messages.create(model="text_body", max_tokens=10, messages=ASK)
    assert info.value.status_code == 502 and "unusable response" in str(info.value.message)
    with httpx.stream("POST", proxy.url + "/v1/messages", timeout=30,
                      json={"model": "bad_event", "max_tokens": 10, "messages": ASK, "stream": True}) as resp:
        wire = resp.read()
    assert b"event: error" in wire and b"invalid JSON in its stream" in wire and b"never seen" not in wire
    r = httpx.post(proxy.url + "/v1/responses", json={"model": "text_body", "input": "hi"}, timeout=30)
    assert r.status_code == 502 and "unusable response" in r.json()["error"]["message"]
    with httpx.stream("POST", proxy.url + "/v1/responses", timeout=30,
                      json={"model": "bad_event", "input": "hi", "stream": True}) as resp:
        wire = resp.read()
    assert b"event: response.failed" in wire and b"invalid JSON in its stream" in wire and b"never seen" not in wire


@pytest.mark.parametrize("model", ["good", "good_in_bits"])
def test_a_well_formed_stream_without_tools_is_relayed_byte_for_byte(proxy: ServerThread, model: str) -> None:
    assert _stream(proxy, model) == b"".join(GOOD)


def test_a_well_formed_whole_answer_without_tools_is_relayed_byte_for_byte(proxy: ServerThread) -> None:
    r = httpx.post(proxy.url + "/v1/chat/completions", json={"model": "good_body", "messages": ASK}, timeout=30)
    assert r.status_code == 200 and r.content == WHOLE["good_body"][1]


def test_other_paths_are_relayed_as_they_are_json_or_not(proxy: ServerThread) -> None:
    r = httpx.get(proxy.url + "/v1/files/f1/content", timeout=30)
    assert r.status_code == 200 and r.content == BINARY
    r = httpx.post(proxy.url + "/v1/other/stream", json={}, timeout=30)
    assert r.status_code == 200 and r.content == b"data: not json at all\n\ndata: [DONE]\n\n"


def _progress(processed: int, content: str | None = None) -> bytes:
    chunk = {"choices": [{"finish_reason": None, "index": 0, "delta": {"role": "assistant", "content": content}}],
             "object": "chat.completion.chunk", "prompt_progress": {"total": 9, "cache": 0, "processed": processed}}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


# A body with every kind of event: llama.cpp's progress (one carrying text too), CRLF and lone-CR line ends, two
# data lines, comments, [DONE]; then a bad event, and what must never follow it.
BODY = [b": hello\r\n\r\n", _progress(0), _progress(9, "Hi"), _chunk("a").replace(b"\n", b"\r\n"), b": ping\r\r",
        _chunk("b"), _chunk("c").replace(b"\n", b"\r"), GOOD[4], b"data: [DONE]\r\n\r\n", b"data: {oops\n\n",
        _chunk("after")]
STRIPPED = (b'data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":"Hi"}}],'
            b'"object":"chat.completion.chunk"}\n\n')


def _cut_and_fed(cuts: list[int]) -> tuple[bytes, str | None]:
    body = b"".join(BODY)
    bounds = [0, *sorted(cuts), len(body)]
    events = UpstreamEvents(check=True, progress=True, limit=4096)
    return b"".join(events.feed(body[a:b]) for a, b in zip(bounds, bounds[1:])) + events.close(), events.failed


EXPECTED = (BODY[0] + STRIPPED + b"".join(BODY[3:9]),  # progress out (its text kept), the rest as it came, until
            "upstream sent invalid JSON in its stream: '{oops'")  # the bad event, which ends it


def test_upstream_events_are_the_same_wherever_the_body_is_cut() -> None:
    for cut in range(len(b"".join(BODY)) + 1):
        assert _cut_and_fed([cut]) == EXPECTED, cut


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(b"".join(BODY))), max_size=12))
def test_upstream_events_are_the_same_however_the_body_is_cut(cuts: list[int]) -> None:
    assert _cut_and_fed(cuts) == EXPECTED
