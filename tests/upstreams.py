"""Upstream test servers: a scripted OpenAI-compatible server (the replay app with test scripts)
and a faulty one (error statuses, broken streams, invalid JSON, slow and endless streams)."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any, AsyncIterator, Mapping

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from streamparse.harness.replay import completion_chunks, create_replay_app, sse_frames

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"

SCRIPTS: dict[str, Any] = {
    "hermes": "Let me look.\n" + HERMES + "\nDone.",
    "qwen3": "Checking " + QWEN3 + " now.",
    "name_tag": '<search_recipes>{"query": "vegan pasta"}</function>\nEnjoy!',
    "bare_json": '```json\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "ünïcode ✓"}}\n```',
    "plain": "Just text, with <b>html</b> and a < b.",
    "two": ["First " + HERMES, "Second " + QWEN3],
}


def script(request: Mapping[str, Any], choice: int) -> str:
    value = SCRIPTS[str(request.get("model"))]
    return value[choice] if isinstance(value, list) else value


def scripted_upstream() -> Starlette:
    return create_replay_app(script)


class FaultLog:
    """What the faulty upstream saw (read by the tests, written from the server thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.open_streams = 0
        self.cancelled = 0
        self.requests: list[dict[str, Any]] = []


def _chunk(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {} if content is None else {"content": content}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def faulty_upstream(log: FaultLog) -> Starlette:
    async def chat(request: Request) -> Response:
        body = json.loads(await request.body())
        with log.lock:
            log.requests.append({"body": body, "headers": dict(request.headers)})
        mode = body.get("model")
        if mode == "status500":
            return JSONResponse({"error": {"message": "model crashed", "type": "server_error"}}, status_code=500)
        if mode == "status404text":
            return PlainTextResponse("no such model here", status_code=404)
        if mode == "json_instead_of_sse":
            return JSONResponse({"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "Hi " + HERMES}, "finish_reason": "stop"}]})
        if mode == "text_instead_of_sse":
            return PlainTextResponse("model is loading")
        if mode == "echo_key":  # an upstream error that repeats the credentials it was sent
            auth = request.headers.get("authorization", "")
            return JSONResponse({"error": {"message": f"invalid key {auth}", "type": "auth"}}, status_code=401)
        if mode == "huge_body":
            return Response(b'{"choices": [{"message": {"content": "' + b"x" * 3_000_000 + b'"}}]}',
                            media_type="application/json")
        if mode == "hang":  # a non-streaming answer that never comes; stops when its client leaves, as servers do
            with log.lock:
                log.open_streams += 1
            try:
                while not await request.is_disconnected():
                    await anyio.sleep(0.05)
                with log.lock:
                    log.cancelled += 1
                return Response(status_code=499)
            finally:
                with log.lock:
                    log.open_streams -= 1
        if mode == "echo_headers":
            text = json.dumps({k: v for k, v in request.headers.items() if k in ("authorization", "x-custom", "connection")})
            return StreamingResponse(sse_frames(completion_chunks([text], "m")), media_type="text/event-stream")

        async def stream() -> AsyncIterator[bytes]:
            with log.lock:
                log.open_streams += 1
            try:
                yield _chunk("Hello ")
                yield _chunk("<tool_")
                if mode == "invalid_json":
                    yield b"data: {this is not json\n\n"
                    yield _chunk("never seen")
                    return
                if mode == "broken":
                    raise RuntimeError("upstream died mid-stream")
                if mode == "pings_only":  # keep-alive comments and nothing else, forever
                    while True:
                        await anyio.sleep(0.05)
                        yield b": ping\n\n"
                if mode == "huge_line":  # one data line that never ends
                    yield b'data: {"choices": [{"index": 0, "delta": {"content": "'
                    while True:
                        yield b"x" * 65536
                        await anyio.sleep(0)
                if mode in ("slow", "endless"):
                    for i in range(10_000 if mode == "endless" else 5):
                        await anyio.sleep(0.2)
                        yield _chunk(f" tick{i}")
                yield _chunk(None, "stop")
                yield b"data: [DONE]\n\n"
            except BaseException:
                with log.lock:
                    log.cancelled += 1
                raise
            finally:
                with log.lock:
                    log.open_streams -= 1

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def other(request: Request) -> Response:
        return JSONResponse({"path": request.url.path, "query": request.url.query, "method": request.method})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/v1/{rest:path}", other, methods=["GET", "POST"])])


def wait_for(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


class RecordingModel:
    """A tool-less model server: answers the scripted texts in turn (the last one repeats) and records each
    request body and its headers. An answer may be ``(text, finish_reason)``. With ``status`` set, every request
    gets that status and an OpenAI error body instead (recorded all the same)."""

    def __init__(self, *answers: str | tuple[str, str], status: int | None = None):
        self.answers = list(answers)
        self.status = status
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []

    def reset(self, *answers: str | tuple[str, str]) -> None:
        with self.lock:
            self.answers = list(answers)
            self.requests.clear()
            self.headers.clear()

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = json.loads(await request.body())
            with self.lock:
                turn = len(self.requests)
                self.requests.append(body)
                self.headers.append(dict(request.headers))
                answer = self.answers[min(turn, len(self.answers) - 1)]
            if self.status is not None:
                return JSONResponse({"error": {"message": f"status {self.status} on purpose", "type": "server_error"}},
                                    status_code=self.status)
            text, finish = answer if isinstance(answer, tuple) else (answer, "stop")
            model = str(body.get("model"))
            if not body.get("stream"):
                return JSONResponse({
                    "id": f"chatcmpl-{turn}", "object": "chat.completion", "created": 1, "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}})
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = completion_chunks([text], model, include_usage=usage, finish_reason=finish)
            return StreamingResponse(sse_frames(chunks), media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def raw_get(port: int, path: str) -> tuple[int, bytes]:
    """A GET with the path exactly as written (clients would normalise it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


async def serve_lifespan(receive: Any, send: Any) -> None:
    """A bare ASGI app's side of the lifespan protocol: start-up and shut-down acknowledged."""
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def read_body(receive: Any) -> bytes:
    """A bare ASGI app reads the whole request body."""
    pieces = []
    while True:
        message = await receive()
        pieces.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(pieces)


def metric(base: str, name: str, **labels: str) -> float:
    """The sum of ``base``/metrics' samples called ``name`` whose labels include ``labels``."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(base + "/metrics", timeout=10).text
    return sum(s.value for family in text_string_to_metric_families(text) for s in family.samples
               if s.name == name and set(labels.items()) <= set(s.labels.items()))
