"""ASGI middleware: rewrite an OpenAI-compatible app's chat-completion responses in place.

For people who already serve such an app in Python (and so need no proxy hop):

    app = ToolCallMiddleware(app)

Invariants:

- Only an answer the library's one rule says to parse is touched (``should_parse``, the same in
  the library and the proxy): an answer is parsed unless the request's ``tool_choice`` is
  ``"none"``, or no tools are offered (the middleware's ``tools``, else the request's, missing or
  empty) and ``parse_without_tools`` is false (its default here). Any other response reaches the
  client byte for byte.
- SSE responses are rewritten event by event as the app sends them, never buffered; JSON
  responses are held and rewritten whole (their start is sent with the rewritten body).
- Nothing the parser held back is lost: if the app raises after an SSE response has started,
  the client gets the held text, an SSE error event (OpenAI error shape) and the end of the
  body; then the exception propagates so the server logs it. If the app raises before that
  (nothing sent yet, or a JSON body still held) we send nothing and the server answers 500.
- Linear in the request and response sizes: bodies are collected as pieces and joined once.
- Never a 500 for a shape alone: a request body nested deeper than Python's JSON decoder reads
  gets a 400 (the app is not called); an answer too deep to read passes through untouched (a
  JSON body whole, an SSE event as it was).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, Awaitable, Callable, MutableMapping

from ..wire.openai import Tools, rewrite_completion, should_parse
from ..wire.sse import ChatStreamRewriter, error_body

__all__ = ["ToolCallMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ToolCallMiddleware:
    """Wraps an ASGI app; rewrites the responses of ``POST path``: streamed (SSE) answers event by event as
    the app sends them, JSON answers whole. Any other response reaches the client byte for byte.

    ``tools`` (default: the request's own ``tools``) gate and type the parsing; without tools,
    responses pass untouched unless ``parse_without_tools`` (then explicitly tagged blocks are
    parsed). Other keyword arguments go to ``StreamParser``.
    """

    def __init__(self, app: ASGIApp, *, tools: Tools = None, path: str = "/v1/chat/completions",
                 parse_without_tools: bool = False, **parser_options: Any):
        self.app = app
        self.tools = tools
        self.path = path
        self.parse_without_tools = parse_without_tools
        self.options = parser_options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        # Read the request body to learn the tools, then hand the same messages to the app.
        received, body = await _read_request(receive)

        async def replay() -> Message:
            return received.popleft() if received else await receive()

        try:
            request = _json_object(body)
        except RecursionError:  # deeper than any decoder here can read: the client's fault, said as a 400
            await _refuse(send, "request body is nested too deeply to read")
            return
        del body  # the app reads the pieces: no second copy of a large body while it runs
        if not should_parse(self.tools, request, parse_without_tools=self.parse_without_tools):
            await self.app(scope, replay, send)
            return
        options = {**self.options, "parse_without_tools": self.parse_without_tools}
        rewriter = _ResponseRewriter(send, self.tools, request, options)
        try:
            await self.app(scope, replay, rewriter.send)
        except Exception as exc:
            await rewriter.abort(exc)
            raise


async def _read_request(receive: Receive) -> tuple[deque[Message], bytes]:
    """The request's messages up to its last body piece (or a disconnect), and its body joined once."""
    messages: deque[Message] = deque()
    pieces: list[bytes] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        pieces.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return messages, b"".join(pieces)


def _json_object(body: bytes) -> dict[str, Any]:
    """The request as a JSON object; ``{}`` for anything else (the app will answer it as it sees fit).
    RecursionError for JSON nested deeper than Python's decoder can read."""
    try:
        request = json.loads(body)
    except ValueError:
        return {}
    return request if isinstance(request, dict) else {}


async def _refuse(send: Send, message: str) -> None:
    data = json.dumps(error_body(message, type_="invalid_request_error")).encode()
    await send({"type": "http.response.start", "status": 400, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data, "more_body": False})


class _ResponseRewriter:
    """Wraps ``send``: decides on the response start whether (and how) to rewrite the body."""

    def __init__(self, send: Send, tools: Tools, request: dict[str, Any], options: dict[str, Any]):
        self._send = send
        self._tools = tools
        self._request = request
        self._options = options
        self._stream: ChatStreamRewriter | None = None  # set for an SSE response: rewritten as it goes
        self._start: Message | None = None  # set for a JSON response: held with its body
        self._json: list[bytes] = []
        self._ended = False  # our last body message (more_body False) was sent

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            await self._on_start(message)
        elif kind != "http.response.body" or (self._stream is None and self._start is None):
            await self._send(message)
        elif self._stream is not None:
            more = message.get("more_body", False)
            data = self._stream.feed_bytes(message.get("body", b""))
            if not more:
                data += self._stream.end_bytes()
            if data or not more:
                await self._body(data, more)
        else:
            self._json.append(message.get("body", b""))
            if not message.get("more_body", False):
                raw = b"".join(self._json)
                self._json.clear()
                await self._send_json(raw)

    async def abort(self, exc: Exception) -> None:
        """The app raised. An SSE body in progress is finished: held text, an error event, the end.

        Anything else is left to the server: no start sent (a held JSON start included) means
        a 500; a finished body stays as it is. The exception's message is not sent (it may
        hold internals), only its type.
        """
        if self._stream is not None and not self._ended:
            await self._body(self._stream.fail_bytes(f"the server failed mid-stream ({type(exc).__name__})"), False)

    async def _on_start(self, message: Message) -> None:
        headers = [(k, v) for k, v in message.get("headers", [])]
        ctype = next((v.decode("latin-1").lower() for k, v in headers if k.lower() == b"content-type"), "")
        if message.get("status", 200) != 200 or not ctype.startswith(("text/event-stream", "application/json")):
            await self._send(message)
            return
        start = {**message, "headers": [(k, v) for k, v in headers if k.lower() != b"content-length"]}
        if ctype.startswith("text/event-stream"):
            self._stream = ChatStreamRewriter(self._tools, request=self._request, **self._options)
            await self._send(start)
        else:
            self._start = start

    async def _send_json(self, raw: bytes) -> None:
        try:
            data = json.dumps(rewrite_completion(json.loads(raw), self._tools, request=self._request,
                                                 **self._options)).encode()
        except (ValueError, TypeError, AttributeError, RecursionError):
            data = raw  # not a completion we understand: as it was
        assert self._start is not None
        start = {**self._start, "headers": [*self._start["headers"], (b"content-length", str(len(data)).encode())]}
        await self._send(start)
        await self._body(data, False)

    async def _body(self, data: bytes, more: bool) -> None:
        self._ended = not more
        await self._send({"type": "http.response.body", "body": data, "more_body": more})
