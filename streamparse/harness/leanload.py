"""A load client and an upstream that cost next to nothing, so a throughput run measures the proxy.

The load test's client (httpx, an SSE decode per read) and the replay upstream (Starlette, one send per event) each
spend more CPU on a request than the proxy does: on a 2-core machine they set the pace, and a second proxy worker
has no core to run on. Here the upstream (``python -m streamparse.harness.leanload --port N``) answers every chat
request with the replay's own frames for it, rendered once at start (one transfer chunk per event, as a streaming
server sends them) and written in one piece; the client writes a prepared request on a new connection (clients
that come and go: each connection is spread over the proxy's workers anew) and reads the raw answer to its end.
Each answer is decoded only after the clock has stopped.

Invariant: a round counts only if every answer, decoded off the clock, holds the same text, calls and finish
as the reference (``LoadError`` otherwise); nothing here is timed but the requests themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

import httpx

from ..proxy.chunked import dechunk
from ..wire.sse import SSEDecoder
from .examples import EXAMPLE_TOOLS
from .replay import _finish, completion_chunks, example_script, sse_frames

__all__ = ["answer_frames", "lean_round", "decode_answer", "serve_lean_upstream", "run_lean"]

_END = b"\r\n0\r\n\r\n"  # the last data chunk's CRLF, then the chunked coding's end


def answer_frames(model: str = "long") -> list[bytes]:
    """The SSE frames the replay upstream streams for a request naming ``model`` (its example script)."""
    text = example_script()({"model": model, "messages": [{"role": "user", "content": "go"}]}, 0)
    return list(sse_frames(completion_chunks([text], model, finish_reason=_finish(text))))


def _response(frames: list[bytes]) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(f), f) for f in frames if f) + b"0\r\n\r\n"
    return b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" + body


def _plain(status: str, body: bytes) -> bytes:
    return b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        status.encode(), len(body), body)


async def serve_lean_upstream(port: int, model: str = "long") -> None:
    """Answer every ``POST .../chat/completions`` on ``port`` with ``model``'s frames (whatever was asked),
    ``GET .../models`` with that one model; connections kept alive. Runs until cancelled."""
    answer = _response(answer_frames(model))
    models = _plain("200 OK", json.dumps({"object": "list", "data": [{"id": model, "object": "model"}]}).encode())
    missing = _plain("404 Not Found", b'{"error": {"message": "not found"}}')

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if length:
                    await reader.readexactly(length)
                path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b""
                writer.write(answer if path.endswith(b"/chat/completions") else models if path.endswith(b"/models")
                             else missing)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def request_bytes(host: str, port: int, path: str, payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    return (b"POST %s HTTP/1.1\r\nhost: %s:%d\r\ncontent-type: application/json\r\naccept: text/event-stream\r\n"
            b"content-length: %d\r\n\r\n%s" % (path.encode(), host.encode(), port, len(body), body))


async def _client(host: str, port: int, request: bytes, count: int) -> list[bytes]:
    """``count`` requests in turn, each on a connection of its own (as a pool of clients that come and go:
    each connection is spread over the workers anew): each raw answer."""
    answers = []
    for _ in range(count):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(request)
            got = bytearray()
            while not got.endswith(_END):
                data = await reader.read(1 << 16)
                if not data:
                    break
                got += data
            answers.append(bytes(got))
        finally:
            writer.close()
    return answers


async def lean_round(host: str, port: int, request: bytes, concurrency: int, each: int = 1
                     ) -> tuple[list[bytes], float]:
    """``concurrency`` clients at once, each sending ``request`` ``each`` times in turn: the raw answers and the
    seconds from the first request sent to the last answer read."""
    start = time.perf_counter()
    answers = await asyncio.gather(*(_client(host, port, request, each) for _ in range(concurrency)))
    return [a for batch in answers for a in batch], time.perf_counter() - start


def decode_answer(raw: bytes) -> dict[str, Any]:
    """A raw streaming answer (status line to the chunked end) as ``loadtest._stream`` reads one: its text,
    calls (name, arguments JSON), finish reason and chunk count. ``ValueError`` for anything else."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/1.1 200"):
        raise ValueError(f"not a 200 answer: {raw[:600]!r}")
    content: list[str] = []
    calls: list[tuple[str, str]] = []
    finish = None
    chunks = 0
    try:
        data = b"".join(dechunk(body))
    except httpx.RemoteProtocolError as exc:
        raise ValueError(f"not a whole chunked body: {exc}") from None
    for event in SSEDecoder().feed(data):
        if event.data is None or event.data == "[DONE]":
            continue
        chunk = json.loads(event.data)
        if "error" in chunk:
            raise ValueError(f"error event: {chunk['error']}")
        chunks += 1
        for choice in chunk.get("choices", []):
            delta = choice.get("delta", {})
            content.append(delta.get("content") or "")
            calls += [(c["function"]["name"], c["function"]["arguments"]) for c in delta.get("tool_calls") or []]
            finish = choice.get("finish_reason") or finish
    return {"content": "".join(content), "calls": calls, "finish": finish, "chunks": chunks}


def lean_payload(model: str = "long") -> dict[str, Any]:
    return {"model": model, "stream": True, "messages": [{"role": "user", "content": "go"}], "tools": EXAMPLE_TOOLS}


def _main() -> None:
    parser = argparse.ArgumentParser(description="the lean upstream of the proxy's throughput runs")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="long")
    args = parser.parse_args()
    try:
        run_lean(serve_lean_upstream(args.port, args.model))
    except KeyboardInterrupt:
        pass


def run_lean(coro: Any) -> Any:
    """Run the lean upstream or a lean client's round on uvloop when it is installed (the cheaper loop), else on
    asyncio's."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - asyncio's own loop
        return asyncio.run(coro)
    return uvloop.run(coro)


if __name__ == "__main__":
    _main()
