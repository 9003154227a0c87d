"""An upstream body read as it arrives: everything already received, in one piece.

A streaming server sends one SSE event per transfer chunk; read one transfer chunk at a time (as httpx hands a
body over), a socket read holding fifty events became fifty pieces, fifty trips through the rewriter and fifty
writes to the client. ``Body``, the response stream ``transport.BackendPools`` gives each response, hands over
all that its connection has received (up to ``MAX_PIECE`` bytes) as one piece before it waits for more. It
decodes a chunked body itself (``chunked.Chunks``: h11 costs several µs per transfer chunk) and any other body
through h11's events.

Invariants: the pieces, joined, are exactly the body, in order; the first transfer chunk is a piece of its own (a
client's first byte waits for no other event); a piece never waits for a byte that has not arrived (no timer, no
read-ahead: the next network read starts only when nothing received is left to hand over); errors are httpx's
(``httpx.ReadTimeout``, ``httpx.RemoteProtocolError``, ...). A body read to its end gives its connection back for
reuse (unless either side said it would close it); closing a body before its end closes its connection, but for
a body whose reader has seen its last event (``ended``): closing it first reads what is left (the chunked coding's
last chunk, at most ``TAIL_BYTES`` within ``TAIL_SECONDS``), so its connection goes back to the pool instead (a
client that stops at ``[DONE]`` used to cost a new upstream connection per request). Each wait lasts at most the
request's read timeout until ``limit_waits`` sets another (the proxy's answer has begun: ``read_timeout`` instead
of ``first_byte_timeout``). A response from any other transport keeps its own stream and httpx's timeouts: these
functions leave it alone.
"""

from __future__ import annotations

from typing import Any, AsyncGenerator, AsyncIterator, Iterator

import anyio
import h11
import httpx

from .chunked import Chunks
from .connection import Connection

__all__ = ["Body", "BODY", "ended", "limit_waits", "pieces", "MAX_PIECE", "TAIL_BYTES", "TAIL_SECONDS"]

MAX_PIECE = 32 * 1024  # more than this already received is handed over in several pieces (none waits)
# What closing an ended body still reads for its connection's sake; past either, the connection is closed.
TAIL_BYTES = 64 * 1024
TAIL_SECONDS = 0.5
BODY = "streamparse.body"  # the response extension that holds its ``Body``


class Body(httpx.AsyncByteStream):
    """The body of one HTTP/1.1 response, read off its connection: all received data per piece."""

    __slots__ = ("connection", "release", "rest", "chunked", "done", "ended", "closed", "_pieces")

    def __init__(self, connection: Connection, release: Any, rest: bytes, chunked: bool):
        self.connection = connection
        self.release = release  # release(connection, reuse): the pool takes the connection back
        self.rest = rest  # the body's first bytes, received with the head
        self.chunked = chunked
        self.done = False  # read to its end: the connection may serve another request
        self.ended = False  # its reader has seen the body's last event: closing reads the rest (``ended``)
        self.closed = False
        self._pieces: AsyncGenerator[bytes, None] | None = None

    def __aiter__(self) -> AsyncIterator[bytes]:
        """The body's pieces: one generator, no layer around it."""
        if self._pieces is None:
            self._pieces = self._read_chunked() if self.chunked else self._read_events()
        return self._pieces

    async def _read_chunked(self) -> AsyncGenerator[bytes, None]:
        """A chunked body decoded here; h11 is handed an empty last chunk at the end, so its cycle ends as usual."""
        read = self.connection.read
        buf = bytearray(self.rest)
        self.rest = b""
        chunks = Chunks()
        first = True
        while True:
            parts = chunks.feed(buf)
            if parts and first:  # the first transfer chunk leaves alone: the client's first byte waits for nothing
                first = False
                yield parts.pop(0)
            if parts:
                for piece in _bounded(parts):
                    yield piece
            if chunks.error is not None:  # after the data that came before it
                raise chunks.error
            if chunks.done:
                break
            data = await read()
            if not data:
                raise httpx.RemoteProtocolError("peer closed connection without sending complete message body "
                                                "(incomplete chunked read)")
            buf += data
        h = self.connection.h11
        try:
            h.receive_data(b"0\r\n\r\n")
            event = h.next_event()
        except h11.RemoteProtocolError as exc:  # pragma: no cover - h11 and this reader disagree: do not reuse
            raise httpx.RemoteProtocolError(str(exc)) from exc
        if type(event) is not h11.EndOfMessage:  # pragma: no cover - (as above)
            raise httpx.RemoteProtocolError(f"unexpected end of a chunked body: {event!r}")
        self.done = not buf  # (bytes after the body, before a request: the connection is not reused)

    async def _read_events(self) -> AsyncGenerator[bytes, None]:
        """Any other body (a length, or up to the connection's end), read through h11's events: all that
        arrived per piece."""
        h = self.connection.h11
        read = self.connection.read
        parts: list[bytes] = []
        size = 0
        first = True
        try:
            if self.rest:
                h.receive_data(self.rest)  # (b"" would tell h11 the connection ended)
                self.rest = b""
            while True:
                event = h.next_event()
                if event is h11.NEED_DATA:
                    if parts:  # hand over what has arrived before waiting for more
                        yield parts[0] if len(parts) == 1 else b"".join(parts)
                        parts, size = [], 0
                        continue
                    h.receive_data(await read())
                elif type(event) is h11.Data:
                    parts.append(bytes(event.data))
                    size += len(event.data)
                    if size >= MAX_PIECE or first:
                        first = False
                        yield b"".join(parts)
                        parts, size = [], 0
                elif type(event) is h11.EndOfMessage:
                    if parts:
                        yield b"".join(parts)
                    self.done = True
                    return
                else:  # pragma: no cover - h11 gives a client nothing else while a body is read
                    raise httpx.RemoteProtocolError(f"unexpected {event!r} in a response body")
        except h11.RemoteProtocolError as exc:
            raise httpx.RemoteProtocolError(str(exc)) from exc

    def limit(self, timeout: float | None) -> None:
        """Each wait from now on lasts at most ``timeout`` seconds."""
        self.connection.limit(timeout)

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        body = self._pieces
        try:
            if self.ended and not self.done and body is not None:
                await _read_tail(body)
        finally:  # (a close cancelled in its tail still frees the connection)
            connection = self.connection
            self.release(connection, self.done and connection.next_cycle())
            if body is not None and not self.done:
                try:
                    await body.aclose()
                except (RuntimeError, httpx.HTTPError):  # pragma: no cover - already running, or broken
                    pass


async def _read_tail(body: AsyncIterator[bytes]) -> None:
    """Read ``body`` to its end if that takes at most ``TAIL_BYTES`` and ``TAIL_SECONDS``; anything else (more,
    later, an error) leaves it unfinished, and its connection is closed, not reused."""
    size = 0
    with anyio.move_on_after(TAIL_SECONDS):
        try:
            async for piece in body:
                size += len(piece)
                if size > TAIL_BYTES:
                    return
        except Exception:  # noqa: BLE001 - the reader is done with this body: an error only costs its connection
            return


def _bounded(parts: list[bytes]) -> Iterator[bytes]:
    """``parts`` joined into pieces of about ``MAX_PIECE`` bytes at most (one part may pass it alone)."""
    piece: list[bytes] = []
    size = 0
    for part in parts:
        if piece and size + len(part) > MAX_PIECE:
            yield b"".join(piece)
            piece, size = [], 0
        piece.append(part)
        size += len(part)
    if piece:
        yield piece[0] if len(piece) == 1 else b"".join(piece)


def _body(resp: httpx.Response) -> Body | None:
    body = resp.extensions.get(BODY)
    return body if type(body) is Body else None


def limit_waits(resp: httpx.Response, timeout: float | None) -> None:
    """From now on, each wait for more of ``resp``'s body lasts at most ``timeout`` seconds (a body from another
    transport keeps httpx's read timeout)."""
    body = _body(resp)
    if body is not None:
        body.limit(timeout)


def ended(resp: httpx.Response) -> None:
    """``resp``'s reader has seen the last event of its body (``[DONE]``): when it is closed, read what is left
    (a few bytes: the end of the chunked coding), so its connection can serve another request."""
    body = _body(resp)
    if body is not None:
        body.ended = True


def pieces(resp: httpx.Response) -> AsyncIterator[bytes]:
    """The pieces of ``resp``'s body (sent with ``stream=True``, not read yet), as ``resp.aiter_bytes()`` gives
    them: a ``Body`` with nothing to decode (no ``content-encoding``) is read straight from its stream, without
    httpx's two generators around it (they would only pass each piece on); any other, by httpx. Either way the
    response is marked consumed; closing it closes the stream."""
    body = _body(resp)
    if body is not None and "content-encoding" not in resp.headers and not resp.is_stream_consumed:
        resp.is_stream_consumed = True  # (as httpx marks it: a second read is refused)
        return body.__aiter__()
    return resp.aiter_bytes()
