"""The proxy's SSE response: sse-starlette's ``EventSourceResponse`` with a leaner send loop.

sse-starlette sets the response up (its headers, media type, ping interval and ``: ping`` comment, written
by its ``ServerSentEvent``); the send loop is ours: its own loop opened a cancel scope, logged and copied
every piece, and could put a ping inside an event a relayed body had left open; its shutdown watcher is of
no use here (the ``drain`` ends streams). Kept: a ``: ping`` comment (or the stream's own ``Keepalive`` event)
after ``ping`` seconds without a write, the stream stopped (and its body closed) as soon as the client goes away, HEAD answered with
headers only.

Invariants: pieces go out whole, in order, one send each; a ping is only written between two events (never
inside an event a relayed body left open) and never while a piece is being sent; the response ends with one
empty final body message unless the client has gone.
"""

from __future__ import annotations

from time import monotonic
from typing import AsyncIterable, AsyncIterator, Iterable, Mapping, Protocol, runtime_checkable

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

__all__ = ["SSEResponse", "PING", "Keepalive"]

PING = ServerSentEvent(comment="ping", sep="\n").encode()  # b": ping\n\n"
_ENDS = (b"\n\n", b"\r\r", b"\r\n\r\n")


@runtime_checkable
class Keepalive(Protocol):
    """A stream's own keep-alive event, for clients whose idle timer a comment does not reset (Codex waits for
    an event): ``frame()`` is the event's bytes, or ``b""`` when one cannot be written now (a piece the stream
    made is not sent yet); ``sent()`` is told each time a piece has gone."""

    def frame(self) -> bytes: ...

    def sent(self) -> None: ...


async def _pieces(pieces: Iterable[bytes]) -> AsyncIterator[bytes]:
    for piece in pieces:
        yield piece


class SSEResponse(EventSourceResponse):
    """``text/event-stream`` from encoded pieces (bytes): an async iterable, or an iterable of pieces at hand
    (read in the event loop: no thread)."""

    def __init__(self, body: AsyncIterable[bytes] | Iterable[bytes], *, ping: float = 0,
                 headers: Mapping[str, str] | None = None, status_code: int = 200, keepalive: Keepalive | None = None):
        pieces = body if isinstance(body, AsyncIterable) else _pieces(body)
        super().__init__(pieces, status_code=status_code, headers=headers)  # (its send loop and pings: ours, below)
        self.body_iterator = self._body = pieces  # (_body: the same, typed as the bytes it holds)
        self.ping = ping
        self._last = monotonic()  # when the last piece was sent (a ping is due ``ping`` s after it)
        self._between = True  # the last piece sent ended an event
        self._sending = False
        self.keepalive = keepalive  # what a ping writes (else the ``: ping`` comment)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if scope.get("method", "GET").upper() == "HEAD":
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            return
        error: BaseException | None = None
        gone = False
        async with anyio.create_task_group() as tg:
            async def watch() -> None:
                nonlocal gone
                while (await receive())["type"] != "http.disconnect":
                    pass
                gone = True
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            if self.ping > 0:
                tg.start_soon(self._pings, send)
            try:
                async for piece in self._body:
                    if piece:
                        self._sending = True
                        await send({"type": "http.response.body", "body": piece, "more_body": True})
                        self._sending = False
                        self._last = monotonic()
                        self._between = piece.endswith(_ENDS)
                        if self.keepalive is not None:
                            self.keepalive.sent()
                if not gone:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
            except Exception as exc:  # raised after the task group, unwrapped, as from any response
                error = exc
            finally:
                close = getattr(self._body, "aclose", None)
                if close is not None:
                    with anyio.CancelScope(shield=True):
                        await close()
            tg.cancel_scope.cancel()
        if error is not None:
            raise error

    async def _pings(self, send: Send) -> None:
        while True:
            idle = monotonic() - self._last
            if idle < self.ping or not self._between or self._sending:
                await anyio.sleep(max(self.ping - idle, self.ping / 10))
                continue
            self._sending = True
            frame = self.keepalive.frame() if self.keepalive is not None else b""
            await send({"type": "http.response.body", "body": frame or PING, "more_body": True})
            self._sending = False
            self._last = monotonic()
