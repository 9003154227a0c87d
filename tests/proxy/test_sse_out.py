"""The proxy's own SSE response (``proxy.sse_out``): one send per piece, pings only between events during
silence, the body closed when the client goes away, errors raised as themselves."""

from __future__ import annotations

from typing import Any, AsyncIterator, MutableMapping

import anyio
import pytest

from streamparse.proxy.sse_out import PING, SSEResponse

SCOPE = {"type": "http", "method": "GET", "path": "/v1/chat/completions", "headers": []}


class Client:
    """The ASGI side: records what is sent; ``leave()`` makes ``receive`` report a disconnect."""

    def __init__(self) -> None:
        self.sent: list[MutableMapping[str, Any]] = []
        self.gone = anyio.Event()
        self.pinged = anyio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        self.sent.append(message)
        if message.get("body") == PING:
            self.pinged.set()

    def leave(self) -> None:
        self.gone.set()

    @property
    def bodies(self) -> list[bytes]:
        return [m["body"] for m in self.sent if m["type"] == "http.response.body"]

    @property
    def headers(self) -> dict[bytes, bytes]:
        return dict(self.sent[0]["headers"])


def serve(response: SSEResponse, client: Client, scope: dict[str, Any] = SCOPE) -> None:
    async def main() -> None:
        with anyio.fail_after(20):  # a response that never ends would hang the test run
            await response(scope, client.receive, client.send)

    anyio.run(main)


def test_each_piece_is_one_send_in_order_then_one_final_message() -> None:
    client = Client()
    serve(SSEResponse([b"data: 1\n\n", b"", b"data: 2\n\n"], headers={"x-streamparse-diagnostic": "d"}), client)
    assert client.sent[0]["status"] == 200
    assert client.bodies == [b"data: 1\n\n", b"data: 2\n\n", b""]  # the empty piece is not sent
    assert client.sent[-1]["more_body"] is False
    headers = client.headers
    assert headers[b"content-type"].startswith(b"text/event-stream")
    assert headers[b"cache-control"] == b"no-store" and headers[b"x-accel-buffering"] == b"no"
    assert headers[b"x-streamparse-diagnostic"] == b"d"


def test_a_silent_stream_gets_a_ping_between_two_events() -> None:
    client = Client()

    async def body() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        await client.pinged.wait()  # silence until the ping went out
        yield b"data: 2\n\n"

    serve(SSEResponse(body(), ping=0.01), client)
    assert client.bodies[0] == b"data: 1\n\n" and client.bodies[-2:] == [b"data: 2\n\n", b""]
    assert set(client.bodies[1:-2]) == {PING}


def test_no_ping_is_written_inside_an_event_a_relayed_body_left_open() -> None:
    client = Client()

    async def body() -> AsyncIterator[bytes]:
        yield b'data: {"half": '
        with anyio.move_on_after(0.3):  # thirty ping intervals of silence, in the middle of an event
            await client.pinged.wait()
        yield b'"done"}\n\n'

    serve(SSEResponse(body(), ping=0.01), client)
    assert client.bodies == [b'data: {"half": ', b'"done"}\n\n', b""]


def test_a_client_that_goes_away_stops_the_stream_and_closes_its_body() -> None:
    client = Client()
    closed = []

    async def endless() -> AsyncIterator[bytes]:
        try:
            while True:
                yield b"data: x\n\n"
                client.leave()
                await anyio.sleep(0.01)
        finally:
            closed.append(True)

    serve(SSEResponse(endless(), ping=15), client)
    assert closed == [True]
    assert all(m.get("more_body") is not False for m in client.sent)  # no final message to a client that left
    assert client.bodies and set(client.bodies) == {b"data: x\n\n"}


def test_an_error_in_the_body_is_raised_as_itself() -> None:
    client = Client()

    async def broken() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        raise ValueError("bug")

    with pytest.raises(ValueError, match="bug"):
        serve(SSEResponse(broken(), ping=15), client)
    assert client.bodies == [b"data: 1\n\n"]


def test_head_gets_the_headers_and_an_empty_body_without_starting_the_stream() -> None:
    client = Client()
    started = []

    async def body() -> AsyncIterator[bytes]:
        started.append(True)
        yield b"data: 1\n\n"

    serve(SSEResponse(body()), client, {**SCOPE, "method": "HEAD"})
    assert started == []
    assert client.bodies == [b""]
