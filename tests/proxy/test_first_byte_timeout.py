"""The wait for an answer's first byte is not the wait between its chunks: an upstream still reading its prompt
(llama.cpp sends nothing while it prefills, not even its response head) is given ``first_byte_timeout``, and
``read_timeout`` starts with the first data. llama.cpp's prompt progress, asked for once the backend is known to
be llama.cpp, keeps the first wait alive and never reaches the client, who gets keep-alive pings meanwhile.

Real servers on 127.0.0.1 (uvicorn in threads: a scripted upstream and the proxy); the openai client where a
client is needed, raw httpx where the bytes on the wire are the point.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, AsyncIterator, Iterator

import anyio
import httpx
import openai
import pytest
from openai import OpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from streamparse.proxy import pipeline
from streamparse.proxy.app import create_app
from streamparse.proxy.config import Backend, ProxyConfig
from streamparse.proxy.runner import ServerThread

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
ASK = [{"role": "user", "content": "weather?"}]
ANSWER = ["Let me ", "look. ", CALL]
PREFILL = 1.6  # seconds the scripted upstream "reads its prompt": past every timeout below but total_timeout
PROGRESS_EVERY = 0.2  # seconds between two of its prompt progress events: within read_timeout


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
    """A chat chunk as llama-server writes it."""
    chunk = {"choices": [{"finish_reason": finish, "index": 0, "delta": delta}], "created": 1, "id": "chatcmpl-1",
             "model": "m", "system_fingerprint": "b7000-0000000", "object": "chat.completion.chunk", **extra}
    return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def _progress(processed: int, total: int) -> bytes:
    """llama-server's prompt progress event (``return_progress``): a role-only chunk carrying ``prompt_progress``."""
    return _chunk({"role": "assistant", "content": None},
                  prompt_progress={"total": total, "cache": 0, "processed": processed, "time_ms": processed})


def _answer() -> list[bytes]:
    first, *rest = ANSWER
    return ([_chunk({"role": "assistant", "content": first})] + [_chunk({"content": text}) for text in rest]
            + [_chunk({}, "stop"), b"data: [DONE]\n\n"])


def _whole() -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "".join(ANSWER)}, "finish_reason": "stop"}]}


class Slow:
    """A chat upstream whose answer starts late, as the request's ``model`` says, recording each request body:

    - ``late_head``: its response head (and answer) only after ``PREFILL`` seconds, as llama.cpp holds it;
    - ``late_body``: its head at once, its first event after ``PREFILL`` seconds (vLLM, SGLang);
    - ``stall``: one event, then nothing until its client goes;
    - ``silent`` / ``silent_body``: nothing (no head / a head only) until its client goes;
    - ``llama`` (``Server: llama.cpp``): asked for ``return_progress``, a progress event every ``PROGRESS_EVERY``
      seconds while it reads its prompt, its head with the first; else its head only after ``PREFILL`` seconds;
    - ``llama_quick`` (``Server: llama.cpp``): answers at once.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = json.loads(await request.body())
            with self.lock:
                self.requests.append(body)
            mode = body["model"]
            headers = {"server": "llama.cpp"} if mode.startswith("llama") else {}
            if mode in ("silent", "late_head") or (mode == "llama" and not body.get("return_progress")):
                deadline = time.monotonic() + (3600 if mode == "silent" else PREFILL)
                while time.monotonic() < deadline:
                    if await request.is_disconnected():
                        return Response(status_code=499)
                    await anyio.sleep(0.05)
            if not body.get("stream"):
                return JSONResponse(_whole(), headers=headers)

            async def events() -> AsyncIterator[bytes]:
                if mode == "late_body":
                    await anyio.sleep(PREFILL)
                if mode in ("silent_body", "stall"):
                    if mode == "stall":
                        yield _answer()[0]
                    await anyio.sleep(3600)  # (cancelled when the proxy goes away)
                if mode == "llama" and body.get("return_progress"):
                    steps = round(PREFILL / PROGRESS_EVERY)
                    for step in range(steps + 1):
                        yield _progress(step * 100, steps * 100)
                        await anyio.sleep(PROGRESS_EVERY)
                for event in _answer():
                    yield event

            return StreamingResponse(events(), media_type="text/event-stream", headers=headers)

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture()
def slow() -> Iterator[tuple[Slow, ServerThread]]:
    upstream = Slow()
    with ServerThread(upstream.app()) as server:
        yield upstream, server


def _proxy(upstream: ServerThread, **timeouts: float) -> ServerThread:
    return ServerThread(create_app(ProxyConfig([Backend("b", upstream.url + "/v1", default=True, **timeouts)])))


def _streamed(client: OpenAI, model: str, tools: bool) -> tuple[str, list[str]]:
    """The text and the calls' names of a streamed answer (an error event raises ``openai.APIError``)."""
    text, calls = "", []
    for chunk in client.chat.completions.create(model=model, messages=ASK, stream=True,
                                                **({"tools": TOOLS} if tools else {})):
        delta = chunk.choices[0].delta if chunk.choices else None
        text += (delta.content or "") if delta else ""
        calls += [c.function.name for c in (delta.tool_calls or []) if c.function and c.function.name] if delta else []
    return text, calls


def _expect(text: str, calls: list[str], tools: bool) -> None:
    if tools:
        assert (text, calls) == ("Let me look. ", ["get_weather"])
    else:
        assert (text, calls) == ("".join(ANSWER), [])


@pytest.mark.parametrize("tools", [False, True], ids=["relayed", "rewritten"])
@pytest.mark.parametrize("mode", ["late_head", "late_body"])
def test_an_answer_that_begins_after_read_timeout_is_not_cut(slow: tuple[Slow, ServerThread], mode: str,
                                                             tools: bool) -> None:
    _, up = slow
    with _proxy(up, read_timeout=0.3, first_byte_timeout=5) as px:
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        start = time.monotonic()
        _expect(*_streamed(client, mode, tools), tools)
        assert time.monotonic() - start >= PREFILL
        whole = client.chat.completions.create(model=mode, messages=ASK, **({"tools": TOOLS} if tools else {}))
        assert whole.choices[0].message.content == ("Let me look. " if tools else "".join(ANSWER))


def _cut(client: OpenAI, mode: str, tools: bool) -> tuple[openai.APIError, float]:
    """A streamed request that must fail: its error, and the seconds it took."""
    start = time.monotonic()
    with pytest.raises(openai.APIError) as info:
        _streamed(client, mode, tools)
    return info.value, time.monotonic() - start


@pytest.mark.parametrize("tools", [False, True], ids=["relayed", "rewritten"])
def test_a_stream_that_stalls_after_its_first_byte_is_cut_at_read_timeout(slow: tuple[Slow, ServerThread],
                                                                          tools: bool) -> None:
    _, up = slow
    with _proxy(up, read_timeout=0.3, first_byte_timeout=5) as px:
        error, took = _cut(OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0), "stall", tools)
    message = str(error.message)
    assert "read_timeout = 0.3 s" in message and "first_byte_timeout" not in message, message
    assert 0.3 <= took < 3  # read_timeout, not first_byte_timeout, once the answer has begun


@pytest.mark.parametrize("mode", ["silent", "silent_body"])
def test_an_upstream_that_never_answers_is_cut_at_first_byte_timeout(slow: tuple[Slow, ServerThread],
                                                                     mode: str) -> None:
    _, up = slow
    with _proxy(up, read_timeout=0.3, first_byte_timeout=1) as px:
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        error, took = _cut(client, mode, tools=False)
        if mode == "silent":  # no response head: a 504 before anything is streamed, streamed or not
            assert isinstance(error, openai.APIStatusError) and error.status_code == 504
            with pytest.raises(openai.APIStatusError) as whole:
                client.chat.completions.create(model=mode, messages=ASK)
            assert whole.value.status_code == 504 and "first_byte_timeout = 1.0 s" in str(whole.value.message)
    message = str(error.message)
    assert "first_byte_timeout = 1.0 s" in message and "read_timeout" not in message, message
    assert 1 <= took < 4


def _raw_stream(url: str, body: dict[str, Any], path: str = "/v1/chat/completions") -> list[tuple[float, bytes]]:
    """Each piece of a streamed answer with the time it arrived."""
    pieces: list[tuple[float, bytes]] = []
    with httpx.stream("POST", url + path, json=body, timeout=30) as resp:
        assert resp.status_code == 200, resp.read()
        for piece in resp.iter_raw():
            pieces.append((time.monotonic(), piece))
    return pieces


@pytest.mark.parametrize("tools", [False, True], ids=["relayed", "rewritten"])
def test_llamacpp_prompt_progress_keeps_the_first_wait_alive_and_never_reaches_the_client(
        slow: tuple[Slow, ServerThread], tools: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "SSE_PING_SECONDS", 0.25)
    upstream, up = slow
    extra: dict[str, Any] = {"tools": TOOLS} if tools else {}
    with _proxy(up, read_timeout=0.3, first_byte_timeout=0.8) as px:
        client = OpenAI(base_url=px.url + "/v1", api_key="k", max_retries=0)
        # Not known as llama.cpp yet: no return_progress, and a prefill past first_byte_timeout is cut.
        with pytest.raises(openai.APIStatusError) as info:
            _streamed(client, "llama", tools)
        assert info.value.status_code == 504 and "first_byte_timeout" in str(info.value.message)
        assert "return_progress" not in upstream.requests[-1]
        client.chat.completions.create(model="llama_quick", messages=ASK, **extra)  # its Server header says it
        assert "return_progress" not in upstream.requests[-1]  # (and a whole answer never asks)

        start = time.monotonic()
        _expect(*_streamed(client, "llama", tools), tools)
        assert time.monotonic() - start >= PREFILL  # longer than both timeouts, not cut
        assert upstream.requests[-1]["return_progress"] is True

        pieces = _raw_stream(px.url, {"model": "llama", "messages": ASK, "stream": True, **extra})
        wire = b"".join(piece for _, piece in pieces)
        assert b"prompt_progress" not in wire and b'"processed"' not in wire
        first_data = next(at for at, piece in pieces if b"data:" in piece)
        pings = [at for at, piece in pieces if piece.startswith(b": ping") and at < first_data]
        assert len(pings) >= 3, pieces  # the client heard from the proxy all through the prefill
        if not tools:  # relayed: the answer's events as llama.cpp wrote them, the progress events left out
            assert wire.replace(b": ping\n\n", b"") == b"".join(_answer())


def test_the_messages_api_never_sees_prompt_progress(slow: tuple[Slow, ServerThread]) -> None:
    upstream, up = slow
    with _proxy(up, read_timeout=0.3, first_byte_timeout=0.8) as px:
        httpx.post(px.url + "/v1/chat/completions", json={"model": "llama_quick", "messages": ASK}, timeout=30)
        body = {"model": "llama", "max_tokens": 50, "messages": ASK, "stream": True}
        pieces = _raw_stream(px.url, body, "/v1/messages")
        assert upstream.requests[-1]["return_progress"] is True
    wire = b"".join(piece for _, piece in pieces)
    assert b"prompt_progress" not in wire and b"event: message_stop" in wire and b"error" not in wire
    text = "".join(json.loads(line[6:])["delta"]["text"] for line in wire.split(b"\n")
                   if line.startswith(b"data: ") and b'"text_delta"' in line)
    assert text == "".join(ANSWER)


def test_keepalive_pings_reach_the_client_while_the_first_byte_is_awaited(
        slow: tuple[Slow, ServerThread], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "SSE_PING_SECONDS", 0.25)
    _, up = slow
    with _proxy(up, read_timeout=0.3, first_byte_timeout=5) as px:
        for tools in (False, True):
            body = {"model": "late_body", "messages": ASK, "stream": True, **({"tools": TOOLS} if tools else {})}
            pieces = _raw_stream(px.url, body)
            first_data = next(at for at, piece in pieces if b"data:" in piece)
            pings = [at for at, piece in pieces if piece.startswith(b": ping") and at < first_data]
            assert len(pings) >= 3, (tools, pieces)
