"""An upstream body read as it arrives: everything already received, in one piece.

httpx hands an HTTP/1.1 chunked body over one transfer chunk at a time, and a streaming server sends one SSE
event per transfer chunk, so a socket read holding fifty events became fifty pieces, fifty trips through the
rewriter and fifty writes to the client. ``coalesce`` gives the response a body stream that drains
what the connection has already received (up to ``MAX_PIECE`` bytes) into one piece before it waits for more.
It decodes a chunked body itself (``_Chunks``) and, on a plain TCP connection, reads the socket's queue
itself (``_Wire``): one timer per read timeout instead of one per read, no epoll change per wait.

Invariants: the pieces, joined, are exactly the body httpx would have given, in order; the first transfer
chunk is a piece of its own (a client's first byte waits for no other event); a piece never waits
for a byte that has not arrived (no timer, no read-ahead: the next network read starts only when
nothing received is left to hand over); errors are those httpx raises (``httpx.ReadTimeout``,
``httpx.RemoteProtocolError``, ...), and closing the response closes the connection as before, but for a body
whose reader has seen its last event (``ended``): closing it first reads what is left of the body (the chunked
coding's last chunk, at most ``TAIL_BYTES`` within ``TAIL_SECONDS``), so its connection goes back to the pool
instead of being closed (a client that stops at ``[DONE]`` used to cost a new upstream connection per request).
A response this cannot read directly (HTTP/2, a test transport, another httpcore) keeps its own stream, unchanged.
Each wait for more of the body lasts at most the request's read timeout (its ``timeout`` extension) until
``limit_waits`` sets another (the proxy's answer has begun: ``read_timeout`` instead of ``first_byte_timeout``);
a stream this does not read keeps httpx's read timeout throughout.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, AsyncIterator, Iterator

import anyio
import h11
import httpx
import httpcore

try:  # the mapping httpx applies to every body it reads (private, so looked up once and checked)
    from httpx._transports.default import map_httpcore_exceptions as _map_errors
    from httpcore._async.http11 import AsyncHTTP11Connection as _H11Connection
except ImportError:  # pragma: no cover - another httpx/httpcore: the body is read the usual way
    _map_errors = None  # type: ignore[assignment]
    _H11Connection = None  # type: ignore[assignment,misc]

__all__ = ["coalesce", "dechunk", "ended", "limit_waits", "pieces", "MAX_PIECE"]

MAX_PIECE = 32 * 1024  # more than this already received is handed over in several pieces (none waits)
# What closing an ended body still reads for its connection's sake; past either, the connection is closed as before.
TAIL_BYTES = 64 * 1024
TAIL_SECONDS = 0.5


class _Arrived(httpx.AsyncByteStream):
    """The body of one HTTP/1.1 response, read from its connection's parser: all received events per piece."""

    def __init__(self, outer: httpx.AsyncByteStream, connection: Any, request: Any):
        self._outer = outer  # closing it closes the response (and frees or drops the connection) as httpx does
        self._connection = connection
        timeout = request.extensions.get("timeout") or {}
        self._timeout: float | None = timeout.get("read")
        self._wire: _Wire | None = None  # the socket, read directly (None: through httpcore), set by __aiter__
        self._body: AsyncIterator[bytes] | None = None  # the pieces' generator, once asked for
        self.ended = False  # its reader has seen the body's last event: closing reads the rest (``ended``)

    def __aiter__(self) -> AsyncIterator[bytes]:
        """The body's pieces: one generator (it maps the errors), no layer around it."""
        parser: h11.Connection = self._connection._h11_state
        self._wire = _Wire.of(self._connection._network_stream, self._timeout)
        body = self._chunked(parser) if _chunked_from_start(parser) else self._events(parser)
        self._body = body
        return body

    def limit(self, timeout: float | None) -> None:
        """Each wait from now on lasts at most ``timeout`` seconds."""
        self._timeout = timeout
        if self._wire is not None:
            self._wire.limit(timeout)

    async def _read(self) -> bytes:
        if self._wire is not None:
            return await self._wire.read()
        data: bytes = await self._connection._network_stream.read(self._connection.READ_NUM_BYTES,
                                                                  timeout=self._timeout)
        return data

    async def _chunked(self, parser: h11.Connection) -> AsyncIterator[bytes]:
        """A chunked body parsed here (h11 parses each transfer chunk in Python at several µs apiece); h11 is
        handed an empty terminal chunk at the end, so the connection ends its cycle as usual (kept alive)."""
        with _map_errors():
            buf = bytearray(parser.trailing_data[0])
            parser._receive_buffer = type(parser._receive_buffer)()  # its bytes are ours now
            chunks = _Chunks()
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
                data = await self._read()
                if not data:
                    raise httpcore.RemoteProtocolError("peer closed connection without sending complete message body "
                                                       "(incomplete chunked read)")
                buf += data
            try:
                parser.receive_data(b"0\r\n\r\n" + bytes(buf))
                event = parser.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpcore.RemoteProtocolError(str(exc)) from exc
            if type(event) is not h11.EndOfMessage:  # pragma: no cover - h11 and this reader disagree: do not reuse
                raise httpcore.RemoteProtocolError(f"unexpected end of a chunked body: {event!r}")

    async def _events(self, parser: h11.Connection) -> AsyncIterator[bytes]:
        """Any other body, read through h11's events, all that arrived per piece."""
        with _map_errors():
            parts: list[bytes] = []
            size = 0
            first = True
            while True:
                try:
                    event = parser.next_event()
                except h11.RemoteProtocolError as exc:
                    raise httpcore.RemoteProtocolError(str(exc)) from exc
                if event is h11.NEED_DATA:
                    if parts:  # hand over what has arrived before waiting for more
                        yield parts[0] if len(parts) == 1 else b"".join(parts)
                        parts, size = [], 0
                        continue
                    data = await self._read()
                    if data == b"" and parser.their_state == h11.SEND_RESPONSE:
                        raise httpcore.RemoteProtocolError("Server disconnected without sending a response.")
                    parser.receive_data(data)
                elif type(event) is h11.Data:
                    parts.append(bytes(event.data))
                    size += len(event.data)
                    if size >= MAX_PIECE or first:
                        first = False
                        yield b"".join(parts)
                        parts, size = [], 0
                elif type(event) is h11.EndOfMessage or event is h11.PAUSED:
                    if parts:
                        yield b"".join(parts)
                    return

    async def aclose(self) -> None:
        body, self._body = self._body, None
        try:
            if body is not None and self.ended:
                await _read_tail(body)
        finally:  # (a close cancelled in its tail still frees the connection)
            if self._wire is not None:
                self._wire.close()
            await self._outer.aclose()


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


def limit_waits(resp: httpx.Response, timeout: float | None) -> None:
    """From now on, each wait for more of ``resp``'s body lasts at most ``timeout`` seconds (a body this module
    does not read keeps httpx's read timeout)."""
    stream = resp.stream
    if type(stream) is _Arrived:
        stream.limit(timeout)


def ended(resp: httpx.Response) -> None:
    """``resp``'s reader has seen the last event of its body (``[DONE]``): when it is closed, read what is left
    (a few bytes: the end of the chunked coding), so its connection can serve another request."""
    stream = resp.stream
    if type(stream) is _Arrived:
        stream.ended = True


class _Wire:
    """Reads of one plain TCP connection (anyio on asyncio or uvloop) straight from its protocol's queue.

    httpcore wraps every read in a cancel scope with its own timer, and anyio stops and restarts reading (two
    epoll changes) around every wait: on a paced stream, one event per read, that cost more than the rest of
    the relay. Here the socket keeps reading while it is quiet (it pauses, as before, once a read brings
    ``HIGH`` bytes: a fast upstream is held back by TCP, not by memory), and one timer per ``timeout`` period
    ends a wait that lasts ``timeout`` with ``httpcore.ReadTimeout``, as httpcore's read would.
    """

    HIGH = 256 * 1024

    def __init__(self, protocol: Any, transport: Any, timeout: float | None):  # asyncio or uvloop transport
        self.protocol = protocol
        self.transport = transport
        self.timeout = timeout
        self.timer: asyncio.TimerHandle | None = None
        self.waiting_since: float | None = None
        self.expired = False

    @classmethod
    def of(cls, network: Any, timeout: float | None) -> "_Wire | None":
        """For httpcore's anyio stream over a plain socket (asyncio or uvloop); None for anything else (TLS, trio)."""
        sock = getattr(network, "_stream", None)
        protocol, transport = getattr(sock, "_protocol", None), getattr(sock, "_transport", None)
        if type(sock).__name__ != "SocketStream" or not _transport_like(transport) or not all(
                hasattr(protocol, name) for name in ("read_queue", "read_event", "is_at_eof", "exception")):
            return None
        return cls(protocol, transport, timeout)

    async def read(self) -> bytes:
        protocol, transport = self.protocol, self.transport
        queue = protocol.read_queue
        if not queue and protocol.exception is None and not protocol.is_at_eof and not transport.is_closing():
            if not transport.is_reading():
                transport.resume_reading()
            loop = asyncio.get_running_loop()
            self.waiting_since = loop.time()
            if self.timeout is not None and self.timer is None:
                self.timer = loop.call_at(self.waiting_since + self.timeout, self._check)
            try:
                while not queue and not self.expired:
                    protocol.read_event.clear()
                    if protocol.exception is not None or protocol.is_at_eof or transport.is_closing():
                        break
                    await protocol.read_event.wait()
            finally:
                self.waiting_since = None
            if self.expired and not queue:
                self.expired = False
                raise httpcore.ReadTimeout(f"no data for {self.timeout} s")
            self.expired = False
        if not queue:
            if protocol.exception is not None:
                raise httpcore.ReadError(str(protocol.exception))
            return b""
        data: bytes = queue.popleft() if len(queue) == 1 else b"".join(queue)
        queue.clear()
        protocol.read_event.clear()
        if len(data) >= self.HIGH:
            transport.pause_reading()  # resumed by the next wait
        return data

    def limit(self, timeout: float | None) -> None:
        """A new limit per wait: the timer set for the old one goes (a wait under way is timed anew from its start)."""
        self.timeout = timeout
        self.close()
        if self.waiting_since is not None and timeout is not None:
            self.timer = asyncio.get_running_loop().call_at(self.waiting_since + timeout, self._check)

    def _check(self) -> None:
        """The timer: a wait that has lasted ``timeout`` ends; one that began later gets the rest of its time."""
        self.timer = None
        if self.waiting_since is None or self.timeout is None:
            return  # not waiting: the next wait sets a timer
        loop = asyncio.get_running_loop()
        due = self.waiting_since + self.timeout
        if loop.time() >= due:
            self.expired = True
            self.protocol.read_event.set()
        else:
            self.timer = loop.call_at(due, self._check)

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


def _transport_like(transport: Any) -> bool:
    """An asyncio transport, or one that reads like it (uvloop's, which the proxy runs on, is no subclass)."""
    return isinstance(transport, asyncio.Transport) or all(callable(getattr(transport, name, None)) for name in (
        "is_reading", "pause_reading", "resume_reading", "is_closing"))


_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_HEAD = re.compile(rb"([0-9A-Fa-f]{1,15})\r\n")  # the usual chunk header: a size alone (anything else: read by line)
_MAX_LINE = 4096  # a chunk header or trailer line longer than this is refused


class _Chunks:
    """Chunked transfer coding, decoded from a growing buffer: ``feed`` takes what it can and returns the data."""

    __slots__ = ("left", "crlf", "trailer", "done", "error")

    def __init__(self) -> None:
        self.left = 0  # data bytes still to come in the current chunk
        self.crlf = False  # the CRLF after a chunk's data is next
        self.trailer = False  # after the last chunk: trailer lines until an empty one
        self.done = False
        self.error: httpcore.RemoteProtocolError | None = None

    def feed(self, buf: bytearray) -> list[bytes]:
        """The data in ``buf`` (consumed from it); what cannot be decoded yet stays in it. Data decoded before a
        malformed part is returned first; the error is raised by the next call."""
        if self.error is not None:
            raise self.error
        out: list[bytes] = []
        try:
            self._decode(buf, out)
        except httpcore.RemoteProtocolError as exc:
            if not out:
                raise
            self.error = exc
        return out

    def _decode(self, buf: bytearray, out: list[bytes]) -> None:
        pos, end = 0, len(buf)
        try:
            if not (self.left or self.crlf or self.trailer):  # whole chunks with a bare size line: one match each
                head = _HEAD.match
                while (m := head(buf, pos)) is not None:
                    start = m.end()
                    stop = start + int(m.group(1), 16)
                    if stop == start or stop + 2 > end or buf[stop:stop + 2] != b"\r\n":
                        break  # the last chunk, a part, or a malformed footer: read below
                    out.append(bytes(buf[start:stop]))
                    pos = stop + 2
            while not self.done:
                if self.left:
                    take = min(self.left, end - pos)
                    if not take:
                        break
                    out.append(bytes(buf[pos:pos + take]))
                    pos += take
                    self.left -= take
                    self.crlf = not self.left
                    continue
                if self.crlf:
                    if end - pos < 2:
                        break
                    if buf[pos:pos + 2] != b"\r\n":
                        raise httpcore.RemoteProtocolError(f"malformed chunk footer: {bytes(buf[pos:pos + 2])!r}")
                    pos += 2
                    self.crlf = False
                    continue
                line_end = buf.find(b"\r\n", pos, pos + _MAX_LINE)
                if line_end < 0:
                    if end - pos >= _MAX_LINE:
                        raise httpcore.RemoteProtocolError("chunk header or trailer line too long")
                    break
                line = bytes(buf[pos:line_end])
                pos = line_end + 2
                if self.trailer:
                    self.done = not line  # (trailer fields are dropped, as httpx drops them)
                    continue
                size = line.split(b";", 1)[0].rstrip(b" \t")
                if not _HEX.fullmatch(size):
                    raise httpcore.RemoteProtocolError(f"illegal chunk header: {line[:80]!r}")
                self.left = int(size, 16)
                self.trailer = not self.left
        finally:
            del buf[:pos]


def dechunk(body: bytes) -> list[bytes]:
    """A whole chunked body's data, chunk by chunk (``httpcore.RemoteProtocolError``: malformed, or cut short)."""
    chunks = _Chunks()
    parts = chunks.feed(bytearray(body))
    if chunks.error is not None or not chunks.done:
        raise chunks.error or httpcore.RemoteProtocolError("the chunked body ends before its last chunk")
    return parts


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


def _chunked_from_start(parser: h11.Connection) -> bool:
    """h11 is about to read a chunked body from its first chunk (so this reader can take it over)."""
    reader = getattr(parser, "_reader", None)
    return (type(reader).__name__ == "ChunkedReader" and parser.their_state is h11.SEND_BODY
            and hasattr(parser, "_receive_buffer") and getattr(reader, "_bytes_in_chunk", None) == 0
            and getattr(reader, "_bytes_to_discard", None) == b"" and getattr(reader, "_reading_trailer", None) is False)


def coalesce(resp: httpx.Response) -> bool:
    """Give ``resp`` (sent with ``stream=True``, body not read yet) a body stream that hands over all that has
    arrived at once; False (and ``resp`` untouched) when its connection is not one this can read directly."""
    if _map_errors is None or _H11Connection is None or resp.http_version != "HTTP/1.1" or resp.is_stream_consumed:
        return False
    outer = resp.stream
    try:  # httpx BoundAsyncStream -> AsyncResponseStream -> httpcore PoolByteStream -> HTTP11ConnectionByteStream
        inner = outer._stream._httpcore_stream._stream  # type: ignore[union-attr]
        connection, request = inner._connection, inner._request
        connection._h11_state, connection._network_stream, connection.READ_NUM_BYTES  # noqa: B018 - all present
    except AttributeError:
        return False
    if type(connection) is not _H11Connection or "trace" in request.extensions:
        return False
    if not isinstance(outer, httpx.AsyncByteStream):
        return False
    resp.stream = _Arrived(outer, connection, request)
    return True


def pieces(resp: httpx.Response) -> AsyncIterator[bytes]:
    """The pieces of ``resp``'s body (sent with ``stream=True``, not read yet), as ``resp.aiter_bytes()`` gives
    them: a coalesced body with nothing to decode (no ``content-encoding``) is read straight from its stream,
    without httpx's two generators around it (they would only pass each piece on); any other, by httpx.
    Either way the response is marked consumed; closing it closes the stream."""
    stream = resp.stream
    if type(stream) is _Arrived and "content-encoding" not in resp.headers and not resp.is_stream_consumed:
        resp.is_stream_consumed = True  # (as httpx marks it: a second read is refused)
        return stream.__aiter__()
    return resp.aiter_bytes()
