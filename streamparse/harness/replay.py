"""A built-in upstream that replays recorded model outputs as an OpenAI-compatible server.

It streams token by token the way a llama.cpp server does — a first event
holding only the role, ``: ping`` comment lines between events, ``\\u``-escaped
non-ASCII, one token per event (so markers are split across events), a last
event with an empty delta and ``finish_reason``, and no usage unless asked for.
The request's ``model`` picks the recording (see ``examples.EXAMPLES``).

With ``log_requests`` (the demo, where the replay upstream and the proxy share a process and uvicorn's access
log would print each request twice, alike), uvicorn's access log is left to the proxy and each request the replay
answers is one line on the ``streamparse.replay`` logger, which the demo's log setup marks ``[replay]``.

Invariant: the concatenated deltas of a replayed stream are exactly the recording's text.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any, AsyncIterator, Callable, Iterator, Mapping

import anyio
from anyio.lowlevel import checkpoint
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .examples import DEFAULT_EXAMPLE, EXAMPLES, big_write

__all__ = ["create_replay_app", "tokens", "completion_chunks", "sse_frames", "Script", "Answer"]

# (request body, choice index) -> the text that choice "generates".
Script = Callable[[Mapping[str, Any], int], str]

_TOKEN = re.compile(r"\s+|\w{1,4}|[^\w\s]")


def tokens(text: str) -> list[str]:
    """Split text roughly the way a tokenizer does: short word pieces, punctuation alone."""
    return _TOKEN.findall(text)


BIG_WRITE = "write_file:"  # model "write_file:<chars>": a call writing that many characters, sent unpaced


def tool_result(request: Mapping[str, Any]) -> str | None:
    """The text of the tool result a chat request ends with (a ``tool`` message, or one written into a user
    message by tool prompting), else None."""
    messages = request.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages and isinstance(messages[-1], dict) else {}
    content = last.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    if last.get("role") == "tool" or (last.get("role") == "user" and "<tool_response" in text):
        return text
    return None


def example_script(outputs: Mapping[str, str] = EXAMPLES) -> Script:
    """The recorded answer the request's model names; once the tools have answered (the request ends with a
    tool result), a short text that quotes it, so an agent's loop ends as it would with a model."""
    def script(request: Mapping[str, Any], _choice: int) -> str:
        result = tool_result(request)
        if result is not None:
            return f"The tools answered: {' '.join(result.split())[:200]}"
        model = str(request.get("model"))
        if model.startswith(BIG_WRITE) and model[len(BIG_WRITE):].isdigit():
            return big_write(min(int(model[len(BIG_WRITE):]), 64 << 20))
        return outputs.get(model, outputs.get(DEFAULT_EXAMPLE, next(iter(outputs.values()))))

    return script


class Answer(str):
    """A script's text together with how it ended: ``Answer(text, "length")`` replays an answer cut off by max
    tokens (the default is ``"stop"``; a plain ``str`` is a stopped answer)."""

    finish_reason: str

    def __new__(cls, text: str, finish_reason: str = "stop") -> Answer:
        answer = super().__new__(cls, text)
        answer.finish_reason = finish_reason
        return answer


def _finish(text: str) -> str:
    return text.finish_reason if isinstance(text, Answer) else "stop"


def completion_chunks(texts: list[str], model: str, *, include_usage: bool = False, finish_reason: str = "stop",
                      created: int | None = None) -> Iterator[dict[str, Any]]:
    """The chunk dicts a llama.cpp-like server sends for one completion with ``len(texts)`` choices."""
    base = {"id": f"chatcmpl-replay{int(time.time() * 1000)}", "object": "chat.completion.chunk",
            "created": created or int(time.time()), "model": model}
    streams = [tokens(t) for t in texts]
    for i in range(len(texts)):
        yield {**base, "choices": [{"index": i, "delta": {"role": "assistant", "content": None}, "finish_reason": None}]}
    for step in range(max((len(s) for s in streams), default=0)):
        for i, stream in enumerate(streams):
            if step < len(stream):
                yield {**base, "choices": [{"index": i, "delta": {"content": stream[step]}, "finish_reason": None}]}
    for i in range(len(texts)):
        yield {**base, "choices": [{"index": i, "delta": {}, "finish_reason": finish_reason}]}
    if include_usage:
        n = sum(len(s) for s in streams)
        yield {**base, "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": 10 + n}}


STAMP_EVERY = 8  # one chunk in this many carries the send stamp


def sse_frames(chunks: Iterator[dict[str, Any]], *, ping_every: int = 8, stamp: bool = False) -> Iterator[bytes]:
    """Chunk dicts -> SSE bytes, llama.cpp style (ASCII-escaped JSON, periodic comment pings, [DONE]).

    ``stamp`` adds ``x_sent`` (wall-clock seconds) to one chunk in ``STAMP_EVERY``, produced lazily so it is the
    send time: the load test measures added latency with it. Not to every chunk: a real upstream writes its text
    chunks alike but for the text, and the proxy joins such chunks arriving in one read; a stamp in each would make
    every chunk unique and the proxy's cost unlike a real upstream's.
    """
    for n, chunk in enumerate(chunks):
        if ping_every and n and n % ping_every == 0:
            yield f": ping - {time.strftime('%a %b %d %H:%M:%S %Y')}\n\n".encode()
        if stamp and n % STAMP_EVERY == 0:
            chunk = {**chunk, "x_sent": time.time()}
        yield b"data: " + json.dumps(chunk, ensure_ascii=True).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


class _RequestLines:
    """One ``streamparse.replay`` log line per request answered: method, path, status."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0

        async def noted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, noted)
        finally:
            logging.getLogger("streamparse.replay").info('"%s %s" %s', scope["method"], scope["path"], status or 499)


def create_replay_app(script: Script | None = None, *, token_delay: float = 0.0, ping_every: int = 8,
                      stamp: bool = False, log_requests: bool = False) -> Starlette:
    """An OpenAI-compatible upstream that replays ``script``'s text (default: the built-in examples); with
    ``log_requests``, one ``streamparse.replay`` line per request (see the module docstring)."""
    script = script or example_script()

    async def chat(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"error": {"message": "body is not JSON", "type": "invalid_request_error"}}, 400)
        n = int(body.get("n") or 1)
        texts = [script(body, i) for i in range(n)]
        model = str(body.get("model") or DEFAULT_EXAMPLE)
        if not body.get("stream"):
            return JSONResponse({
                "id": "chatcmpl-replay", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": _finish(t)}
                            for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": 10, "completion_tokens": sum(len(tokens(t)) for t in texts),
                          "total_tokens": 10 + sum(len(tokens(t)) for t in texts)},
            })
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        frames = sse_frames(completion_chunks(texts, model, include_usage=include_usage, finish_reason=_finish(texts[0])),
                            ping_every=ping_every, stamp=stamp)

        delay = 0.0 if model.startswith(BIG_WRITE) else token_delay

        async def paced() -> AsyncIterator[bytes]:
            for frame in frames:
                yield frame
                if delay:
                    await anyio.sleep(delay)
                else:
                    await checkpoint()

        return StreamingResponse(paced(), media_type="text/event-stream")

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "streamparse-replay"} for name in EXAMPLES]})

    return Starlette(routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ], middleware=[Middleware(_RequestLines)] if log_requests else [])
