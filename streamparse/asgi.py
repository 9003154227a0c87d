"""ASGI middleware: rewrite an OpenAI-compatible app's chat-completion responses in place.

For people who already serve such an app in Python (and so need no proxy hop):

    app = ToolCallMiddleware(app)

SSE responses are rewritten event by event as the app sends them (never
buffered); JSON responses are rewritten whole. The request's ``tools`` gate and
type the parsing, as in the proxy.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable, MutableMapping

from .openai import rewrite_completion
from .sse import ChatStreamRewriter

__all__ = ["ToolCallMiddleware"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class ToolCallMiddleware:
    def __init__(self, app: ASGIApp, *, tools: Any = None, path: str = "/v1/chat/completions", **parser_options: Any):
        self.app = app
        self.tools = tools
        self.path = path
        self.options = parser_options

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        # Read the request body (small) to learn the tools, then hand it to the app unchanged.
        received: list[Message] = []
        body = b""
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            request = {}

        async def replay() -> Message:
            return received.pop(0) if received else await receive()

        await self.app(scope, replay, _ResponseRewriter(send, self.tools, request, self.options).send)


class _ResponseRewriter:
    """Wraps ``send``: decides on the response start whether (and how) to rewrite the body."""

    def __init__(self, send: Send, tools: Any, request: dict[str, Any], options: dict[str, Any]):
        self._send = send
        self._tools = tools
        self._request = request
        self._options = options
        self._mode = "pass"
        self._start: Message | None = None
        self._stream: ChatStreamRewriter | None = None
        self._json = bytearray()

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", [])]
            ctype = next((v.decode("latin-1") for k, v in headers if k.lower() == b"content-type"), "")
            if message.get("status", 200) == 200 and ctype.startswith("text/event-stream"):
                self._mode = "sse"
                self._stream = ChatStreamRewriter(self._tools, request=self._request, **self._options)
                headers = [(k, v) for k, v in headers if k.lower() != b"content-length"]
                await self._send({**message, "headers": headers})
            elif message.get("status", 200) == 200 and ctype.startswith("application/json"):
                self._mode = "json"
                self._start = {**message, "headers": [(k, v) for k, v in headers if k.lower() != b"content-length"]}
            else:
                await self._send(message)
            return
        if kind != "http.response.body" or self._mode == "pass":
            await self._send(message)
            return
        more = message.get("more_body", False)
        chunk = message.get("body", b"")
        if self._mode == "sse":
            assert self._stream is not None
            data = self._stream.feed_bytes(chunk)
            if not more:
                data += self._stream.end_bytes()
            if data or not more:
                await self._send({"type": "http.response.body", "body": data, "more_body": more})
            return
        self._json += chunk
        if more:
            return
        try:
            data = json.dumps(rewrite_completion(json.loads(self._json), self._tools, request=self._request,
                                                 **self._options)).encode()
        except ValueError:
            data = bytes(self._json)  # not a completion we understand: as it was
        assert self._start is not None
        start = {**self._start, "headers": [*self._start["headers"], (b"content-length", str(len(data)).encode())]}
        await self._send(start)
        await self._send({"type": "http.response.body", "body": data, "more_body": False})
