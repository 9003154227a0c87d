"""CORS, answered by the proxy itself, so a page in a browser (the Vercel AI SDK, the openai or anthropic SDK with
``dangerouslyAllowBrowser``) can call it from another origin.

- ``cors_origins`` (``[server]``, ``serve --cors-origins``) lists the origins allowed, or ``*`` for any. Empty (the
  default): CORS is off, and no response carries CORS headers.
- A preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``) from an allowed origin gets a 204
  here: the methods the proxy serves, every header the preflight asks for (the SDKs send ``authorization``,
  ``x-api-key``, ``anthropic-version``, ``x-stainless-*``, ``x-request-id`` ...: the origin is the gate, not the
  header names), ``Access-Control-Max-Age``. From any other origin: a 403. Any other ``OPTIONS`` (or any ``OPTIONS``
  while CORS is off): a 405 in OpenAI's error shape. So an ``OPTIONS`` never reaches an upstream.
- Every other response to an allowed origin carries ``Access-Control-Allow-Origin`` and exposes ``x-request-id``
  and the proxy's ``x-streamparse-*`` headers.

Invariants: the CORS headers a client sees are this layer's alone: any ``access-control-*`` header of the wrapped
app's response (an upstream's own, relayed) is dropped, so a browser never sees two policies; no credentials
(cookies) are allowed, the proxy's keys travel in headers; a plain ASGI callable, with no I/O of its own.
"""

from __future__ import annotations

import re
from typing import Any, Sequence
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..wire.sse import dumps, error_body

__all__ = ["CORS", "check_origins", "EXPOSED", "METHODS"]

METHODS = "GET, POST, PUT, PATCH, DELETE, HEAD"  # what the proxy's routes answer (OPTIONS is this layer's)
# The proxy's own response headers a page may read (pipeline, messages, wire.diagnostics name them).
EXPOSED = ("x-request-id, x-streamparse-diagnostic, x-streamparse-diagnostics, x-streamparse-constraint, "
           "x-streamparse-estimate")
MAX_AGE = "600"  # seconds a browser may keep a preflight's answer
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name


def check_origins(value: Any) -> list[str]:
    """``cors_origins`` (a list, or one comma-separated string) checked: ``*``, or origins such as
    ``https://app.example.com`` (scheme, host, optional port; no path). ValueError names the bad one."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(o, str) for o in items):
        raise ValueError("must be a list of origins (or \"*\")")
    origins = [o.strip().rstrip("/") for o in items if o.strip()]
    for origin in origins:
        parts = urlsplit(origin)
        if origin != "*" and (parts.scheme not in ("http", "https") or not parts.hostname or parts.path
                              or parts.query or parts.fragment or "@" in origin):
            raise ValueError(f"{origin!r} is not an origin such as https://app.example.com (scheme and host, "
                             "optional port, no path) nor \"*\"")
    return list(dict.fromkeys(origins))


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value)
    return None


class CORS:
    """Preflights answered here, CORS headers on the answers to allowed origins (see the module docstring)."""

    def __init__(self, app: ASGIApp, origins: Sequence[str] = ()):
        self.app = app
        self.any = "*" in origins
        self.origins = {o.lower().encode() for o in origins if o != "*"}

    def allows(self, origin: bytes | None) -> bool:
        return origin is not None and (self.any or origin.lower() in self.origins)

    def _allow(self, origin: bytes) -> list[tuple[bytes, bytes]]:
        if self.any:
            return [(b"access-control-allow-origin", b"*")]
        return [(b"access-control-allow-origin", origin), (b"vary", b"Origin")]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        if scope["method"] == "OPTIONS":
            await self._options(scope, origin, send)
            return
        allowed = self.allows(origin)

        async def cors_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if not k.lower().startswith(b"access-control-")]
                if allowed and origin is not None:
                    headers += [*self._allow(origin), (b"access-control-expose-headers", EXPOSED.encode())]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, cors_send)

    async def _options(self, scope: Scope, origin: bytes | None, send: Send) -> None:
        asked = _header(scope, b"access-control-request-method")
        if not (self.any or self.origins) or origin is None or asked is None:
            await _reply(send, 405, "OPTIONS is answered only as a CORS preflight"
                         + ("" if self.any or self.origins else " (CORS is off: set cors_origins)"),
                         [(b"allow", METHODS.encode())])
            return
        if not self.allows(origin):
            await _reply(send, 403, "this origin is not in the proxy's cors_origins")
            return
        names = [n.strip().lower() for n in (_header(scope, b"access-control-request-headers") or b"").split(b",")]
        headers = [*self._allow(origin), (b"access-control-allow-methods", METHODS.encode()),
                   (b"access-control-max-age", MAX_AGE.encode())]
        wanted = b", ".join(n for n in names if _TOKEN.fullmatch(n))
        if wanted:
            headers.append((b"access-control-allow-headers", wanted))
        if (_header(scope, b"access-control-request-private-network") or b"").lower() == b"true":
            headers.append((b"access-control-allow-private-network", b"true"))  # a public page calling loopback
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


async def _reply(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    kind = "method_not_allowed" if status == 405 else "cors_origin_not_allowed"
    body = dumps(error_body(message, type_="invalid_request_error", code=kind)).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
