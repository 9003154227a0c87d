"""``body.pieces``: an upstream body read straight from its ``Body`` gives the pieces, the bytes and the errors
``aiter_bytes`` gives; a body httpx must decode (gzip) is read by httpx."""

from __future__ import annotations

import asyncio
import gzip
from typing import Any, Awaitable, Callable

import anyio
import httpx
import pytest

from helpers import RawServer
from streamparse.proxy.body import pieces
from streamparse.proxy.transport import BackendPools

Answer = Callable[[asyncio.StreamWriter], Awaitable[None]]
EVENTS = b"".join(b'data: {"n": %d}\n\n' % n for n in range(40))


def chunked(*parts: bytes, end: bool = True) -> bytes:
    body = b"".join(b"%x\r\n" % len(p) + p + b"\r\n" for p in parts)
    return b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" + body + (
        b"0\r\n\r\n" if end else b"")


async def fetch(answer: Answer, *, direct: bool, requests: int = 1) -> tuple[list[list[bytes]], Any, int, bool]:
    """Each request's pieces (``pieces`` or ``aiter_bytes``), the error that ended the last, the connections
    the server saw, and whether ``pieces`` read the last body without httpx's generators (not ``aiter_bytes``)."""
    results: list[list[bytes]] = []
    error: Any = None
    arrived = False
    async with RawServer(answer) as server:
        async with httpx.AsyncClient(transport=BackendPools([(server.url, 2)])) as client:
            for _ in range(requests):
                got: list[bytes] = []
                results.append(got)
                with anyio.fail_after(10):
                    async with client.stream("GET", server.url) as resp:
                        body = pieces(resp) if direct else resp.aiter_bytes()
                        arrived = body.__qualname__.startswith("Body.")  # type: ignore[attr-defined]
                        try:
                            async for piece in body:
                                got.append(piece)
                        except httpx.HTTPError as exc:
                            error = exc
                        assert resp.is_stream_consumed
    return results, error, server.connections, arrived


def both(answer: Answer, requests: int = 1) -> tuple[tuple[list[list[bytes]], Any, int, bool], ...]:
    return tuple(anyio.run(lambda d=direct: fetch(answer, direct=d, requests=requests)) for direct in (True, False))


@pytest.mark.parametrize("kind", ["chunked", "content-length"])
def test_the_same_pieces_and_bytes_as_httpx_gives_and_the_connection_kept(kind: str) -> None:
    async def answer(out: asyncio.StreamWriter) -> None:
        if kind == "chunked":
            out.write(chunked(*(EVENTS[i:i + 21] for i in range(0, len(EVENTS), 21))))
        else:
            out.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(EVENTS) + EVENTS)
        await out.drain()

    (direct, error, connections, arrived), (through_httpx, error2, _, _) = both(answer, requests=2)
    assert error is None and error2 is None and arrived
    assert [b"".join(p) for p in direct] == [b"".join(p) for p in through_httpx] == [EVENTS, EVENTS]
    assert direct[0][0] == through_httpx[0][0]  # the first piece leaves alone either way
    assert connections == 1  # read to its end and closed: the connection went back to the pool


def test_a_body_cut_short_raises_what_httpx_raises_after_the_bytes_that_came() -> None:
    async def answer(out: asyncio.StreamWriter) -> None:
        out.write(chunked(b"data: 1\n\n", end=False) + b"ff\r\ndata: 2")
        await out.drain()
        out.close()

    (direct, error, _, _), (through_httpx, error2, _, _) = both(answer)
    assert b"".join(direct[0]) == b"".join(through_httpx[0])
    assert type(error) is type(error2) is httpx.RemoteProtocolError


def test_a_compressed_body_is_decoded_by_httpx() -> None:
    packed = gzip.compress(EVENTS)

    async def answer(out: asyncio.StreamWriter) -> None:
        out.write(b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(packed) + packed)
        await out.drain()

    (direct, error, _, _), _ = both(answer)
    assert error is None and b"".join(direct[0]) == EVENTS
