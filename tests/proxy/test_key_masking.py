"""A backend key never reaches a client, however the upstream spells or splits it.

The upstream writes the key with JSON escapes (``\\u0073\\u006b...``), which bytes-level masking
cannot see, and splits it across streamed deltas. Real servers on 127.0.0.1, the real openai and
anthropic clients and httpx; plus a property test of the stream masker on its own.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator

import anthropic
import httpx
import openai
import pytest
from hypothesis import given, settings, strategies as st
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import budget
from helpers import TOOLS
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.masking import MaskingWire
from streamparse.proxy.redaction import Redactor
from streamparse.proxy.runner import ServerThread
from streamparse.wire.sse import OpenAIWire, SSEDecoder

KEY = "sk-backend-0123456789abc"
MESSAGES = [{"role": "user", "content": "go"}]


def escaped(text: str) -> str:
    """``text`` as JSON string content written entirely in \\u escapes."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


def chunk(content: str, finish: str | None = None) -> bytes:
    """One SSE chunk event whose content is given as raw JSON string content (escapes kept)."""
    delta = f'{{"content": "{content}"}}' if content else "{}"
    finish_json = json.dumps(finish)
    return (f'data: {{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": '
            f'[{{"index": 0, "delta": {delta}, "finish_reason": {finish_json}}}]}}\n\n').encode()


def leaky_upstream() -> Starlette:
    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        mode, split = str(body["model"]).partition(":")[::2]
        if mode == "error":
            raw = f'{{"error": {{"message": "bad key {escaped(KEY)}", "type": "auth"}}}}'
            return Response(raw.encode(), status_code=401, media_type="application/json")
        if mode == "detail":  # an error body in another shape (FastAPI's)
            return Response(f'{{"detail": "bad key {escaped(KEY)}"}}'.encode(), status_code=500,
                            media_type="application/json")
        if not body.get("stream"):
            raw = (f'{{"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [{{"index": 0, '
                   f'"message": {{"role": "assistant", "content": "key {escaped(KEY)} end"}}, "finish_reason": "stop"}}]}}')
            return Response(raw.encode(), media_type="application/json")
        cut = int(split or 9)

        async def events() -> AsyncIterator[bytes]:
            if mode == "sse_error":
                yield chunk("partial ")
                yield f'data: {{"error": {{"message": "bad key {escaped(KEY)}"}}}}\n\n'.encode()
                return
            yield chunk("your key is " + escaped(KEY[:cut]))
            yield chunk(escaped(KEY[cut:]) + " ok")
            yield chunk("", "stop")
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return Response(f'{{"data": [{{"id": "m", "owner": "{escaped(KEY)}"}}]}}'.encode(), media_type="application/json",
                        headers={"x-upstream-echo": f"Bearer {KEY}"})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models)])


@pytest.fixture()
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("LEAKY_KEY", KEY)
    with ServerThread(leaky_upstream()) as up:
        config = ProxyConfig(backends=[Backend(name="b", upstream=up.url + "/v1", default=True, api_key_env="LEAKY_KEY")])
        with ServerThread(create_app(config)) as px:
            yield px.url


def stream_text(url: str, payload: dict[str, Any]) -> tuple[str, bytes]:
    text, raw = "", b""
    decoder = SSEDecoder()
    with httpx.stream("POST", url + "/v1/chat/completions", json=payload, timeout=10) as resp:
        for piece in resp.iter_bytes():
            raw += piece
            for event in decoder.feed(piece):
                if event.data and event.data != "[DONE]":
                    for choice in json.loads(event.data).get("choices", []):
                        text += choice["delta"].get("content") or ""
    return text, raw


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_escaped_keys_in_error_bodies_are_masked_on_both_fronts(proxy: str, tools: Any) -> None:
    extra: Any = {"tools": tools} if tools else {}
    client = openai.OpenAI(base_url=proxy + "/v1", api_key="client", max_retries=0)
    for stream in (False, True):
        with pytest.raises(openai.AuthenticationError) as info:
            client.chat.completions.create(model="error", messages=MESSAGES, stream=stream, **extra)  # type: ignore[call-overload]
        assert KEY not in json.dumps(info.value.body) and "bad key ***" in info.value.message
    claude = anthropic.Anthropic(base_url=proxy, api_key="client", max_retries=0)
    for stream in (False, True):
        with pytest.raises(anthropic.AuthenticationError) as ainfo:
            claude.messages.create(model="error", max_tokens=10, messages=MESSAGES, stream=stream)  # type: ignore[call-overload]
        assert KEY not in json.dumps(ainfo.value.body) and "bad key ***" in json.dumps(ainfo.value.body)


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_escaped_keys_in_whole_answers_and_relayed_bodies_are_masked(proxy: str, tools: Any) -> None:
    extra: Any = {"tools": tools} if tools else {}
    client = openai.OpenAI(base_url=proxy + "/v1", api_key="client", max_retries=0)
    answer = client.chat.completions.create(model="whole", messages=MESSAGES, **extra)
    assert answer.choices[0].message.content == "key *** end"
    claude = anthropic.Anthropic(base_url=proxy, api_key="client", max_retries=0)
    message = claude.messages.create(model="whole", max_tokens=10, messages=MESSAGES)  # type: ignore[arg-type]
    assert message.content[0].text == "key *** end"  # type: ignore[union-attr]
    r = httpx.get(proxy + "/v1/models", timeout=10)
    assert r.json() == {"data": [{"id": "m", "owner": "***"}]} and r.headers["x-upstream-echo"] == "Bearer ***"
    for front in ("/v1/chat/completions", "/v1/messages"):
        r = httpx.post(proxy + front, json={"model": "detail", "max_tokens": 5, "messages": MESSAGES}, timeout=10)
        assert r.status_code == 500 and "bad key ***" in json.dumps(r.json()) and KEY not in json.dumps(r.json())


@pytest.mark.parametrize("tools", [None, TOOLS])
def test_a_key_split_across_deltas_is_masked_wherever_it_is_cut(proxy: str, tools: Any) -> None:
    for cut in range(0, len(KEY) + 1, 3):
        payload: dict[str, Any] = {"model": f"split:{cut}", "messages": MESSAGES, "stream": True}
        if tools:
            payload["tools"] = tools
        text, raw = stream_text(proxy, payload)
        assert text == "your key is *** ok", (cut, text)
        assert KEY.encode() not in raw and escaped(KEY[:6]).encode() not in raw
    text, raw = stream_text(proxy, {"model": "sse_error", "messages": MESSAGES, "stream": True, "tools": TOOLS})
    assert b"bad key ***" in raw and KEY.encode() not in raw


def test_the_anthropic_stream_masks_a_split_key(proxy: str) -> None:
    claude = anthropic.Anthropic(base_url=proxy, api_key="client", max_retries=0)
    for cut in (1, 5, 12, 23):
        with claude.messages.stream(model=f"split:{cut}", max_tokens=10, messages=MESSAGES) as events:  # type: ignore[arg-type]
            message = events.get_final_message()
        assert "".join(b.text for b in message.content if b.type == "text") == "your key is *** ok"


@settings(max_examples=budget.examples(200), deadline=None)
@given(st.lists(st.sampled_from(["a", " ", KEY[:3], KEY[3:9], KEY[9:], KEY, "sk-", "s"]), max_size=12),
       st.data())
def test_the_stream_masker_is_chunking_invariant(parts: list[str], data: st.DataObject) -> None:
    text = "".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    redactor = Redactor([KEY, "sk-back"])
    wire = MaskingWire(OpenAIWire(), redactor)
    raw = b"".join(wire.encode([("chunk", {"id": "c", "choices": [{"index": 0, "delta": {"content": p},
                                                                       "finish_reason": None}]})]) for p in pieces)
    raw += wire.encode([("done", None)])
    got = "".join(json.loads(e.data)["choices"][0]["delta"]["content"] for e in SSEDecoder().feed(raw)
                  if e.data and e.data != "[DONE]")
    assert got == redactor.text(text)


def test_the_responses_front_masks_a_split_key_streamed_and_whole(proxy: str) -> None:
    client = openai.OpenAI(base_url=proxy + "/v1", api_key="client", max_retries=0)
    for cut in (1, 5, 12, 23):
        with client.responses.stream(model=f"split:{cut}", input="go", tools=[
                {"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]) as events:
            response = events.get_final_response()
        assert response.output_text == "your key is *** ok"
    assert client.responses.create(model="whole", input="go").output_text == "key *** end"
    with pytest.raises(openai.AuthenticationError) as info:
        client.responses.create(model="error", input="go")
    assert KEY not in str(info.value.body) and "***" in str(info.value.body)
