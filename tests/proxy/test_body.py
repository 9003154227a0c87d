"""The upstream body read as it arrives (``proxy.body``, through ``transport.BackendPools``): what arrived together
comes out as one piece, nothing waits for bytes still on their way, and the bytes and errors are those httpx's own
transport gives."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

import anyio
import httpx
import pytest
from hypothesis import given, settings, strategies as st

from streamparse.proxy.body import MAX_PIECE, limit_waits, pieces as body_pieces
from streamparse.proxy.chunked import Chunks
from streamparse.proxy.transport import BackendPools

Writer = Callable[[asyncio.StreamWriter, "Server"], Awaitable[None]]
HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n" % len(data) + data + b"\r\n"


def event(n: int) -> bytes:
    return b'data: {"n": %d}\n\n' % n


LOOPS = [pytest.param({}, id="asyncio"), pytest.param({"use_uvloop": True}, id="uvloop")]  # serve runs on uvloop


def loop_options(options: dict[str, bool]) -> dict[str, bool]:
    if options:
        pytest.importorskip("uvloop")
    return options


class Server:
    """A raw HTTP/1.1 server on loopback: each request is answered by ``writer``; counts connections."""

    def __init__(self, writer: Writer):
        self.writer = writer
        self.connections = 0
        self.handlers: list[asyncio.Task[Any]] = []
        self.go_on = asyncio.Event()  # set by the client when the server may send its next batch

    async def handle(self, reader: asyncio.StreamReader, out: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.handlers.append(asyncio.current_task())  # type: ignore[arg-type]
        try:
            while (await reader.readuntil(b"\r\n\r\n")):
                await self.writer(out, self)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            out.close()


async def read(writer: Writer, *, coalesced: bool = True, requests: int = 1,
               on_piece: Callable[[Server, list[bytes]], None] | None = None) -> tuple[list[list[bytes]], Any, Server]:
    """Each request's pieces (``aiter_bytes``: through ``BackendPools``, or with ``coalesced`` False httpx's own
    transport), the exception that ended the last one (or None), and the server."""
    server = Server(writer)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    results: list[list[bytes]] = []
    error: Any = None
    try:
        async with httpx.AsyncClient(transport=BackendPools([]) if coalesced else None) as client:
            for _ in range(requests):
                got: list[bytes] = []
                results.append(got)
                with anyio.fail_after(10):  # a reader that waited for more than had arrived would hang here
                    async with client.stream("GET", f"http://127.0.0.1:{port}/") as resp:
                        try:
                            async for piece in resp.aiter_bytes():
                                got.append(piece)
                                if on_piece:
                                    on_piece(server, got)
                        except httpx.HTTPError as exc:
                            error = exc
        with anyio.fail_after(10):  # the client closed its connections: each handler sees the end and returns
            await asyncio.gather(*server.handlers)
    finally:
        listener.close()
    return results, error, server


async def together(out: asyncio.StreamWriter, server: Server) -> None:
    out.write(HEAD + b"".join(chunk(event(n)) for n in range(50)) + chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
    await out.drain()


def test_events_that_arrive_together_come_out_as_one_piece_and_the_connection_is_kept() -> None:
    (first, second), error, server = anyio.run(lambda: read(together, requests=2))
    body = b"".join(event(n) for n in range(50)) + b"data: [DONE]\n\n"
    assert error is None
    assert b"".join(first) == b"".join(second) == body
    assert first[0] == event(0)  # the first event leaves alone, at once
    assert len(first) < 6  # then the rest of the socket read, maybe split by the kernel; never fifty
    assert server.connections == 1  # the body was read to its end: the connection went back to the pool


def test_httpx_own_transport_gives_one_piece_per_transfer_chunk() -> None:
    async def plain() -> tuple[list[list[bytes]], Any, Server]:
        return await read(together, coalesced=False)

    (pieces,), _, _ = anyio.run(plain)
    assert len(pieces) == 51  # what the proxy used to rewrite, and write, one by one


async def in_two_batches(out: asyncio.StreamWriter, server: Server) -> None:
    out.write(HEAD + chunk(event(1)) + chunk(event(2)))
    await out.drain()
    await server.go_on.wait()  # only once the client holds the first batch
    out.write(chunk(event(3)) + b"0\r\n\r\n")
    await out.drain()


@pytest.mark.parametrize("loop", LOOPS)
def test_a_piece_never_waits_for_bytes_still_on_their_way(loop: dict[str, bool]) -> None:
    def release(server: Server, pieces: list[bytes]) -> None:
        server.go_on.set()

    (pieces,), error, _ = anyio.run(lambda: read(in_two_batches, on_piece=release), backend_options=loop_options(loop))
    assert error is None
    assert pieces[:2] == [event(1), event(2)]  # handed over before the third event was even sent
    assert b"".join(pieces) == event(1) + event(2) + event(3)


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize(("size", "count"), [(4000, 40), (8000, 90)], ids=["160KB", "720KB_past_the_pause_mark"])
def test_a_large_arrival_is_read_whole_and_in_order_in_bounded_pieces(loop: dict[str, bool], size: int,
                                                                      count: int) -> None:
    # A read of 256 KB or more pauses the socket (TCP holds the upstream back); the next wait resumes it.
    big = [b"data: " + bytes([65 + n % 26]) * size + b"\n\n" for n in range(count)]

    async def large(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(HEAD + b"".join(chunk(e) for e in big) + b"0\r\n\r\n")
        await out.drain()

    (pieces,), error, server = anyio.run(lambda: read(large), backend_options=loop_options(loop))
    assert error is None and b"".join(pieces) == b"".join(big) and server.connections == 1
    assert max(len(p) for p in pieces) < MAX_PIECE + size + 100  # at most one transfer chunk past the bound


@pytest.mark.parametrize("coalesced", [True, False])
def test_a_body_cut_short_ends_with_the_error_httpx_raises_after_the_bytes_that_came(coalesced: bool) -> None:
    async def cut(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(HEAD + chunk(event(1)) + b"40\r\ndata: {\"n\"")  # a transfer chunk that never ends
        await out.drain()
        out.close()

    (pieces,), error, _ = anyio.run(lambda: read(cut, coalesced=coalesced))
    assert b"".join(pieces) == event(1) + b'data: {"n"'  # what arrived of the cut event comes too, as before
    assert isinstance(error, httpx.RemoteProtocolError)


def test_a_response_from_another_transport_is_read_by_httpx() -> None:
    async def main() -> bytes:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, content=b"data: x\n\n"))
        async with httpx.AsyncClient(transport=transport) as client:
            async with client.stream("GET", "http://upstream/") as resp:
                limit_waits(resp, 1.0)  # (nothing to limit: a no-op)
                return b"".join([p async for p in body_pieces(resp)])

    assert anyio.run(main) == b"data: x\n\n"


# The chunked transfer coding, decoded by ``chunked.Chunks`` (h11 only sees an empty terminal chunk).



def encode_chunked(parts: list[bytes], *, extension: bytes = b"", trailer: bytes = b"") -> bytes:
    return b"".join(b"%x%s\r\n%s\r\n" % (len(p), extension, p) for p in parts if p) + b"0\r\n" + trailer + b"\r\n"


def decode_in_pieces(wire: bytes, cuts: list[int]) -> tuple[bytes, bool, bytes]:
    """``wire`` fed in pieces cut at ``cuts``: (the data, whether the end was seen, what was left unread)."""
    chunks, buf, out = Chunks(), bytearray(), []
    points = sorted({c % (len(wire) + 1) for c in cuts} | {0, len(wire)})
    for start, end in zip(points, points[1:]):
        buf += wire[start:end]
        out += chunks.feed(buf)
        if chunks.done:
            buf += wire[end:]  # (nothing should follow; kept to check it is left alone)
            break
    return b"".join(out), chunks.done, bytes(buf)


@settings(max_examples=100)
@given(st.lists(st.binary(max_size=70), max_size=8), st.lists(st.integers(min_value=0), max_size=12),
       st.sampled_from([b"", b";name=value", b" ; x"]), st.sampled_from([b"", b"X-Tail: 1\r\n"]))
def test_a_chunked_body_decodes_the_same_however_its_bytes_arrive(parts: list[bytes], cuts: list[int],
                                                                   extension: bytes, trailer: bytes) -> None:
    data, done, rest = decode_in_pieces(encode_chunked(parts, extension=extension, trailer=trailer), cuts)
    assert data == b"".join(parts)
    assert done and rest == b""


@pytest.mark.parametrize("wire", [b"zz\r\nab\r\n0\r\n\r\n", b"+2\r\nab\r\n0\r\n\r\n", b"1_0\r\n", b"\r\n",
                                  b"2\r\nabXY0\r\n\r\n", b"2" * 5000])
def test_a_malformed_chunk_header_or_footer_is_a_protocol_error(wire: bytes) -> None:
    chunks, buf = Chunks(), bytearray(wire)
    with pytest.raises(httpx.RemoteProtocolError):
        data = chunks.feed(buf)  # data before the fault comes first; the error with the next call
        assert data == [b"ab"]
        chunks.feed(buf)


def test_a_malformed_chunk_from_the_network_reaches_the_caller_as_httpx_raises_it() -> None:
    async def bad(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(HEAD + chunk(event(1)) + b"nothex\r\n")
        await out.drain()

    (pieces,), error, _ = anyio.run(lambda: read(bad))
    assert b"".join(pieces) == event(1)
    assert isinstance(error, httpx.RemoteProtocolError)


def test_a_content_length_body_is_read_through_h11_and_keeps_the_connection() -> None:
    body = b"".join(event(n) for n in range(30))

    async def sized(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n" % len(body) + body)
        await out.drain()

    (first, second), error, server = anyio.run(lambda: read(sized, requests=2))
    assert error is None and b"".join(first) == b"".join(second) == body
    assert first[0].startswith(event(0)) and len(first) < 6 and server.connections == 1


# No timer per read, but a wait still ends at the read timeout (and at the one ``limit_waits`` sets).

async def read_with_timeout(writer: Writer, timeout: float, later: float | None = None) -> tuple[list[bytes], Any]:
    """The pieces and the error that ended the body; with ``later``, each wait after the first piece lasts that."""
    server = Server(writer)
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    pieces: list[bytes] = []
    error: Any = None
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=5), transport=BackendPools([])) as client:
            with anyio.fail_after(20):
                async with client.stream("GET", f"http://127.0.0.1:{port}/") as resp:
                    try:
                        async for piece in resp.aiter_bytes():
                            pieces.append(piece)
                            if later is not None:
                                limit_waits(resp, later)
                    except httpx.HTTPError as exc:
                        error = exc
        with anyio.fail_after(10):
            await asyncio.gather(*server.handlers)
    finally:
        listener.close()
    return pieces, error


@pytest.mark.parametrize("loop", LOOPS)
def test_a_silent_upstream_ends_with_httpx_read_timeout_after_what_it_sent(loop: dict[str, bool]) -> None:
    async def silent(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(HEAD + chunk(event(1)))  # and nothing more, until the client leaves
        await out.drain()

    got, error = anyio.run(read_with_timeout, silent, 0.3, backend_options=loop_options(loop))
    assert got == [event(1)]
    assert isinstance(error, httpx.ReadTimeout)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_stream_longer_than_the_read_timeout_is_not_cut_while_its_events_keep_coming(loop: dict[str, bool]) -> None:
    async def steady(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(HEAD)
        for n in range(30):  # 1.5 s of events, 50 ms apart, under a 0.5 s read timeout
            out.write(chunk(event(n)))
            await out.drain()
            await asyncio.sleep(0.05)
        out.write(b"0\r\n\r\n")
        await out.drain()

    got, error = anyio.run(read_with_timeout, steady, 0.5, backend_options=loop_options(loop))
    assert error is None
    assert b"".join(got) == b"".join(event(n) for n in range(30))


@pytest.mark.parametrize("loop", LOOPS)
def test_limit_waits_shortens_every_later_wait(loop: dict[str, bool]) -> None:
    """The proxy's answer has begun: a wait lasts ``read_timeout`` (here 0.3 s), not the head's 30 s."""
    async def silent(out: asyncio.StreamWriter, server: Server) -> None:
        out.write(HEAD + chunk(event(1)))
        await out.drain()

    got, error = anyio.run(read_with_timeout, silent, 30.0, 0.3, backend_options=loop_options(loop))
    assert got == [event(1)]
    assert isinstance(error, httpx.ReadTimeout)  # (within the 20 s the reader is given, not after 30 s)
