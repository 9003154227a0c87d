"""Deadlines for slow clients: a request's headers and its body must arrive in time.

- Headers: ``HeaderDeadlineProtocol``, uvicorn's HTTP protocol (httptools when installed, as
  uvicorn's ``auto`` picks, else h11) with one timer per connection, armed when it opens and when
  the first bytes of each later request arrive; if that request's headers have not all been read
  when it fires, the client gets a 408 and the connection is closed (a connection that sent
  nothing is closed without a word; an idle keep-alive one is uvicorn's ``timeout_keep_alive``'s). The time comes from ``state.header_timeout`` of the served app
  (``create_app`` sets it from ``[server] header_timeout``), else ``DEFAULT_HEADER_TIMEOUT``.
- Body: ``BodyDeadline``, an ASGI layer: the whole body must arrive within ``body_timeout`` of the
  request's start; past it the app sees the client as gone and the client gets a 408
  (``Connection: close``) instead of the app's answer.

Invariants: a connection that trickles its headers, or a request that declares more body than it
sends, is closed within its deadline (plus one timer tick); a request within its deadlines is
untouched (the body deadline ends once the last body piece arrives, so long answers are not cut).
"""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _HTTPProtocol
except ImportError:  # pragma: no cover - without httptools uvicorn uses h11
    from uvicorn.protocols.http.h11_impl import H11Protocol as _HTTPProtocol  # type: ignore[assignment]

__all__ = ["HeaderDeadlineProtocol", "BodyDeadline", "PROTOCOL", "DEFAULT_HEADER_TIMEOUT"]

DEFAULT_HEADER_TIMEOUT = 10.0
PROTOCOL = "streamparse.proxy.deadlines:HeaderDeadlineProtocol"  # for uvicorn.Config(http=...)
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\nconnection: close\r\n"
                     b"content-length: %d\r\n\r\n%s")
_HEADER_BODY = b'{"error": {"message": "request headers did not arrive in time", "type": "timeout_error"}}'


def _app_setting(app: Any, name: str) -> Any:
    """``app.state.<name>`` of the app or of one it wraps (uvicorn wraps the app it serves)."""
    for _ in range(8):
        value = getattr(getattr(app, "state", None), name, None)
        if value is not None or app is None:
            return value
        app = getattr(app, "app", None)
    return None


class HeaderDeadlineProtocol(_HTTPProtocol):
    """uvicorn's HTTP protocol, with a deadline for each request's headers (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        timeout = _app_setting(self.app, "header_timeout")
        self.header_timeout = float(timeout) if timeout else DEFAULT_HEADER_TIMEOUT
        self._header_timer: asyncio.TimerHandle | None = None
        self._armed_cycle: Any = None
        self._started_headers = False

    def _arm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._armed_cycle = self.cycle  # a new cycle starts once a request's headers are read
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_late)

    def _between_requests(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _headers_late(self) -> None:
        self._header_timer = None
        if self.cycle is not self._armed_cycle or self.transport.is_closing():
            return  # the headers came in time
        if self._started_headers:  # part of a request came: say why it is refused
            self.transport.write(_TIMEOUT_RESPONSE % (len(_HEADER_BODY), _HEADER_BODY))
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._started_headers = False
        self._arm()  # a connection that never sends a request is closed too

    def data_received(self, data: bytes) -> None:
        if self._between_requests() and not self._started_headers:
            self._started_headers = True  # the first bytes of a request's headers
            if self._header_timer is None:
                self._arm()
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # Idle until the next request begins (uvicorn's keep-alive timeout closes an idle connection).
        self._started_headers = False
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None


class BodyDeadline:
    """The body of each HTTP request must arrive within ``timeout`` seconds (see the module docstring)."""

    def __init__(self, app: ASGIApp, timeout: float):
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = anyio.current_time() + self.timeout
        state = {"body_done": False, "late": False, "sent": False}

        async def timed_receive() -> Message:
            if state["late"]:
                return {"type": "http.disconnect"}
            if state["body_done"]:
                return await receive()
            try:
                with anyio.fail_after(max(0.0, deadline - anyio.current_time())):
                    message = await receive()
            except TimeoutError:
                state["late"] = True
                return {"type": "http.disconnect"}  # the app stops as for a client that left
            if message["type"] != "http.request" or not message.get("more_body", False):
                state["body_done"] = True
            return message

        async def guarded_send(message: Message) -> None:
            if state["late"]:
                return  # the app's answer to a "disconnect": the client gets the 408 instead
            state["sent"] = True
            await send(message)

        await self.app(scope, timed_receive, guarded_send)
        if state["late"] and not state["sent"]:
            body = (b'{"error": {"message": "the request body did not arrive within %.3g s", '
                    b'"type": "timeout_error"}}' % self.timeout)
            await send({"type": "http.response.start", "status": 408, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": body})
