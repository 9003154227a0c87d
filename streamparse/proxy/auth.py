"""The proxy's own keys: who may use it (and so its backends' keys) at all.

A pure ASGI layer in front of every route. With keys configured (``ProxyConfig.proxy_keys``), a
request passes only when it presents one of them as ``Authorization: Bearer KEY`` or
``x-api-key: KEY``; otherwise it gets a 401 in its front's error shape (Anthropic's under
``/v1/messages``, OpenAI's elsewhere) and nothing is forwarded.

Invariants: a presented key is compared with every configured key, each in constant time
(``hmac.compare_digest``), so neither the answer nor its timing says which key came close;
``/healthz``, ``/readyz`` and ``/api/hello`` stay open (load balancers and probes carry no key); without keys this layer
passes everything untouched. The presented key is never forwarded upstream (``Upstream`` drops
the client's credentials whenever proxy keys are configured).
"""

from __future__ import annotations

import hmac
from typing import Callable, Iterable

from starlette.types import ASGIApp, Receive, Scope, Send

from ..wire.anthropic import error_body as anthropic_error
from ..wire.sse import dumps, error_body

__all__ = ["ProxyAuth", "OPEN_PATHS", "presented_key"]

OPEN_PATHS = frozenset({"/healthz", "/readyz", "/api/hello"})


def presented_key(headers: Iterable[tuple[bytes, bytes]]) -> bytes | None:
    """The key a request presents: ``Authorization: Bearer KEY`` first, else ``x-api-key``."""
    bearer = api_key = None
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"authorization" and bearer is None:
            scheme, _, token = value.strip().partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                bearer = token.strip()
        elif lowered == b"x-api-key" and api_key is None and value.strip():
            api_key = value.strip()
    return bearer if bearer is not None else api_key


class ProxyAuth:
    """Refuses (401) requests that present none of ``keys``; see the module invariants."""

    def __init__(self, app: ASGIApp, keys: Iterable[str], on_refuse: Callable[[str], None] | None = None):
        self.app = app
        self.keys = [key.encode() for key in keys]
        self.on_refuse = on_refuse  # told the path of each refused request (the metrics)

    def allowed(self, presented: bytes | None) -> bool:
        if presented is None:
            return False
        ok = False
        for key in self.keys:  # every key, always: the time does not depend on which one matched
            ok |= hmac.compare_digest(presented, key)
        return ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (not self.keys or scope["type"] != "http" or scope.get("path") in OPEN_PATHS
                or self.allowed(presented_key(scope.get("headers", [])))):
            await self.app(scope, receive, send)
            return
        message = "a valid API key for this proxy is required (Authorization: Bearer KEY, or x-api-key: KEY)"
        if str(scope.get("path", "")).startswith("/v1/messages"):
            body = anthropic_error(401, message)
        else:
            body = error_body(message, type_="invalid_request_error", code="invalid_api_key")
        data = dumps(body).encode()
        if self.on_refuse is not None:
            self.on_refuse(str(scope.get("path", "")))
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
            (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": data})
