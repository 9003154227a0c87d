"""An upstream body read as it arrives: everything already received, in one piece.

httpx hands an HTTP/1.1 chunked body over one transfer chunk at a time, and a streaming server sends one SSE
event per transfer chunk, so a socket read holding fifty events became fifty pieces, fifty trips through the
rewriter and fifty writes to the client. ``coalesce`` gives the response a body stream that drains
what the connection has already received (up to ``MAX_PIECE`` bytes) into one piece before it waits for more.

Invariants: the pieces, joined, are exactly the body httpx would have given, in order; a piece never waits
for a byte that has not arrived (no timer, no read-ahead: the next network read starts only when
nothing received is left to hand over); errors are those httpx raises (``httpx.ReadTimeout``,
``httpx.RemoteProtocolError``, ...), and closing the response closes the connection as before. A response
this cannot read directly (HTTP/2, a test transport, another httpcore) keeps its own stream, unchanged.
"""

from __future__ import annotations

from typing import Any, AsyncIterator

import h11
import httpx
import httpcore

try:  # the mapping httpx applies to every body it reads (private, so looked up once and checked)
    from httpx._transports.default import map_httpcore_exceptions as _map_errors
    from httpcore._async.http11 import AsyncHTTP11Connection as _H11Connection
except ImportError:  # pragma: no cover - another httpx/httpcore: the body is read the usual way
    _map_errors = None  # type: ignore[assignment]
    _H11Connection = None  # type: ignore[assignment,misc]

__all__ = ["coalesce", "MAX_PIECE"]

MAX_PIECE = 32 * 1024  # more than this already received is handed over in several pieces (none waits)


class _Arrived(httpx.AsyncByteStream):
    """The body of one HTTP/1.1 response, read from its connection's parser: all received events per piece."""

    def __init__(self, outer: httpx.AsyncByteStream, connection: Any, request: Any):
        self._outer = outer  # closing it closes the response (and frees or drops the connection) as httpx does
        self._connection = connection
        timeout = request.extensions.get("timeout") or {}
        self._timeout: float | None = timeout.get("read")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        parser: h11.Connection = self._connection._h11_state
        network = self._connection._network_stream
        read_size = self._connection.READ_NUM_BYTES
        parts: list[bytes] = []
        size = 0
        with _map_errors():
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
                    data = await network.read(read_size, timeout=self._timeout)
                    if data == b"" and parser.their_state == h11.SEND_RESPONSE:
                        raise httpcore.RemoteProtocolError("Server disconnected without sending a response.")
                    parser.receive_data(data)
                elif type(event) is h11.Data:
                    parts.append(bytes(event.data))
                    size += len(event.data)
                    if size >= MAX_PIECE:
                        yield b"".join(parts)
                        parts, size = [], 0
                elif type(event) is h11.EndOfMessage or event is h11.PAUSED:
                    if parts:
                        yield b"".join(parts)
                    return

    async def aclose(self) -> None:
        await self._outer.aclose()


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
