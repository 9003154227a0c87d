"""One HTTP/1.1 connection to an upstream: an asyncio protocol holding what its socket delivered, and h11's state.

The loop hands each received block to ``data_received``; ``read`` takes everything received so far in one call
and waits only when nothing is left, so a reader never waits for a byte that has not arrived. The socket keeps
reading while the connection is quiet (no epoll change per wait); it pauses once ``HIGH`` bytes are held unread
(a fast upstream is held back by TCP, not by memory) and resumes at the next wait. A wait ends after ``timeout``
seconds with ``httpx.ReadTimeout``, timed by one timer per timeout period rather than one per wait (a paced
stream waits once per event). The request is written and the response head read through h11's
public API (``send``, ``receive_data``, ``next_event``); the body is the reader's (``proxy.body``).

Invariants: bytes are handed over once each, in the order received; a wait lasts at most the ``timeout`` in force,
measured from its start (``limit`` re-times a wait under way); errors are httpx's public exceptions
(``ReadTimeout``, ``ReadError``, ``WriteTimeout``, ``WriteError``, ``RemoteProtocolError``,
``LocalProtocolError``); ``next_cycle`` readies a connection for another request only after a cycle that ended
cleanly on both sides, with nothing received since, no end of file and the socket open. asyncio (and uvloop) only:
the proxy runs on uvicorn's loop.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import anyio
import h11
import httpx

__all__ = ["Connection", "Key", "HIGH", "MAX_HEAD"]

HIGH = 256 * 1024  # held unread past this, the socket stops reading until the next wait
MAX_HEAD = 64 * 1024  # a response head longer than this is refused
_HEAD_END = re.compile(rb"\n\r?\n")  # the blank line that ends a head, as h11 finds it

Key = tuple[bytes, bytes, int]  # an origin: (scheme, host, port)


class Connection(asyncio.Protocol):
    """One upstream connection (see the module docstring). ``expire_at``, ``idle`` and ``pool`` are its pool's."""

    def __init__(self, key: Key, loop: asyncio.AbstractEventLoop):
        self.key = key
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.received: list[bytes] = []
        self.size = 0  # bytes in ``received``
        self.eof = False
        self.lost = False
        self.error: BaseException | None = None  # why the connection was lost, if it broke
        self.paused = False  # reading paused (HIGH bytes held)
        self.waiter: asyncio.Future[None] | None = None
        self.timeout: float | None = None  # the longest wait for more
        self.timer: asyncio.TimerHandle | None = None
        self.waiting_since: float | None = None
        self.expired = False  # the wait under way has lasted ``timeout``
        self.write_paused = False
        self.write_waiter: asyncio.Future[None] | None = None
        self.h11 = h11.Connection(h11.CLIENT)
        self.expire_at = 0.0  # idle: when its keep-alive ends (loop time)
        self.idle = False
        self.pool: Any = None  # told when an idle connection is lost (``transport.Pool.lost``)

    # The protocol: called by the loop.

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.received.append(data)
        self.size += len(data)
        if self.size >= HIGH and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # (the transport closes itself)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        self._wake()
        waiter = self.write_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.idle and self.pool is not None:
            self.pool.lost(self)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        waiter = self.write_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # Reading.

    async def read(self) -> bytes:
        """Everything received and not read yet; when nothing is, the next bytes to arrive (waiting at most
        ``timeout``: ``httpx.ReadTimeout``); b"" at the end of the stream."""
        if not self.received:
            if not (self.eof or self.lost):
                await self._wait()
            if not self.received:
                if self.expired:
                    self.expired = False
                    raise httpx.ReadTimeout(f"no data for {self.timeout} s")
                if self.error is not None:
                    raise httpx.ReadError(str(self.error) or type(self.error).__name__)
                return b""
        self.expired = False
        received = self.received
        data = received[0] if len(received) == 1 else b"".join(received)
        self.received = []
        self.size = 0
        return data

    async def _wait(self) -> None:
        loop = self.loop
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        self.waiting_since = now = loop.time()
        if self.timeout is not None and self.timer is None:
            self.timer = loop.call_at(now + self.timeout, self._check)
        self.waiter = waiter = loop.create_future()
        try:
            await waiter
        finally:
            self.waiter = None
            self.waiting_since = None

    def _check(self) -> None:
        """The timer: a wait that has lasted ``timeout`` ends; one that began later gets the rest of its time."""
        self.timer = None
        since, timeout = self.waiting_since, self.timeout
        if since is None or timeout is None:
            return  # not waiting: the next wait sets a timer
        due = since + timeout
        if self.loop.time() >= due:
            self.expired = True
            self._wake()
        else:
            self.timer = self.loop.call_at(due, self._check)

    def limit(self, timeout: float | None) -> None:
        """Each wait from now on lasts at most ``timeout`` seconds (a wait under way: from its start)."""
        self.timeout = timeout
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.waiting_since is not None and timeout is not None:
            self.timer = self.loop.call_at(self.waiting_since + timeout, self._check)

    # One request cycle.

    async def send(self, request: httpx.Request, write_timeout: float | None) -> None:
        """Write ``request`` (its head and body, framed by h11 from its headers)."""
        h = self.h11
        try:
            out = [h.send(h11.Request(method=request.method, target=request.url.raw_path,
                                      headers=request.headers.raw))]
            size = len(out[0])
            async for part in request.stream:  # type: ignore[union-attr]
                data = h.send(h11.Data(data=part))
                if data:
                    out.append(data)
                    size += len(data)
                if size >= HIGH:
                    await self._write(out, write_timeout)
                    out, size = [], 0
            out.append(h.send(h11.EndOfMessage()))
        except h11.LocalProtocolError as exc:
            raise httpx.LocalProtocolError(str(exc)) from exc
        await self._write(out, write_timeout)

    async def _write(self, out: list[bytes], timeout: float | None) -> None:
        transport = self.transport
        if transport is None or self.lost or transport.is_closing():
            raise httpx.WriteError("the connection was closed before the request was sent")
        transport.write(out[0] if len(out) == 1 else b"".join(out))
        if self.write_paused:
            self.write_waiter = waiter = self.loop.create_future()
            try:
                with anyio.fail_after(timeout):
                    await waiter
            except TimeoutError:
                raise httpx.WriteTimeout(f"the request was not sent within {timeout} s") from None
            finally:
                self.write_waiter = None
            if self.lost:
                raise httpx.WriteError(str(self.error) if self.error else "the connection was closed while sending")

    async def receive_head(self) -> tuple[h11.Response, bytes]:
        """The response head (interim 1xx heads skipped) and the bytes received after it (the body's start)."""
        h = self.h11
        buf = b""
        while True:
            found = _HEAD_END.search(buf)
            if found is None:
                if len(buf) > MAX_HEAD:
                    raise httpx.RemoteProtocolError(f"a response head longer than {MAX_HEAD} bytes")
                data = await self.read()
                if not data:
                    raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
                buf += data
                continue
            end = found.end()
            try:
                h.receive_data(buf[:end])
                event = h.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from exc
            buf = buf[end:]
            if type(event) is h11.Response:
                return event, buf
            if type(event) is not h11.InformationalResponse:
                raise httpx.RemoteProtocolError(f"a response head h11 cannot read: {event!r}")

    def next_cycle(self) -> bool:
        """Start the next request cycle if this one ended cleanly on both sides and the server has sent nothing
        since nor closed; False: the connection cannot be reused."""
        h = self.h11
        if (self.lost or self.eof or self.received or h.our_state is not h11.DONE or h.their_state is not h11.DONE
                or self.transport is None or self.transport.is_closing()):
            return False
        h.start_next_cycle()
        return True

    def usable(self, now: float) -> bool:
        """An idle connection may take a request: its keep-alive has not expired and the server has sent
        nothing (a close included) since its last answer."""
        return not (self.lost or self.eof or self.received) and now < self.expire_at

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.transport is not None:
            self.transport.close()
