"""ToolCallMiddleware against depth: a request body nested 100k deep, an app's answer nested 5,000 deep.

A raw ASGI app under uvicorn (ServerThread), read with httpx: the middleware answers a request it
cannot read with a 400, passes an answer it cannot read through untouched, and never gives a 500.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import httpx
import pytest

from helpers import TOOLS
from streamparse.proxy.middleware import ToolCallMiddleware
from streamparse.proxy.runner import ServerThread
from upstreams import _chunk as frame
from upstreams import read_body, serve_lifespan

DEEP_ANSWER = ('{"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", '
               '"content": "hi", "extra": ' + "[" * 5000 + "]" * 5000 + '}, "finish_reason": "stop"}]}').encode()
DEEP_EVENT = (b'data: {"choices": [{"index": 0, "delta": {"content": "x", "extra": ' + b"[" * 5000 + b"]" * 5000
              + b'}, "finish_reason": null}]}\n\n')


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    body = await read_body(receive)
    if b"deep_sse" in body:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        await send({"type": "http.response.body", "body": frame("Hello ") + DEEP_EVENT + b"data: [DONE]\n\n"})
        return
    answer = DEEP_ANSWER if b"deep_json" in body else b'{"seen": %d}' % len(body)
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]})
    await send({"type": "http.response.body", "body": answer})


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with ServerThread(ToolCallMiddleware(app, tools=TOOLS)) as s:
        yield s.url + "/v1/chat/completions"


def test_a_request_nested_too_deep_is_a_400_not_a_500(server: str) -> None:
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"model": "m", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"):
        r = httpx.post(server, content=deep, timeout=30)
        assert r.status_code == 400, r.text
        assert "nested" in r.json()["error"]["message"]
    r = httpx.post(server, content=b"not json at all", timeout=10)  # other bodies are the app's to answer
    assert r.status_code == 200 and r.json() == {"seen": 15}


def test_an_answer_nested_too_deep_passes_through_untouched(server: str) -> None:
    r = httpx.post(server, json={"model": "deep_json", "messages": []}, timeout=30)
    assert r.status_code == 200 and r.content == DEEP_ANSWER
    r = httpx.post(server, json={"model": "deep_sse", "messages": []}, timeout=30)
    assert r.status_code == 200 and DEEP_EVENT in r.content and r.content.endswith(b"data: [DONE]\n\n")
    assert json.loads(r.text.split("data: ")[1])["choices"][0]["delta"]["content"] == "Hello "
