"""The replies the proxy writes itself: errors in the client's API shape, and the client's JSON body
read (or refused).

Invariants: every message passes the redactor before it is put into a reply, so no backend secret
reaches a client this way; every reply has the shape of the client's front (OpenAI or Anthropic),
with the status that says what went wrong.
"""

from __future__ import annotations

import logging
from typing import Any

import httpx
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from ..wire.sse import error_body
from ..wire.validation import BadRequest, parse_json_object, read_body
from .config import Backend
from .fronts import OPENAI, Front
from .redaction import Redactor
from .upstream import UpstreamTimeout

__all__ = ["Replies", "CLIENT_GONE"]

log = logging.getLogger("streamparse.server")
CLIENT_GONE = 499  # nginx's status for a client that closed the connection before the answer


class Replies:
    """Error replies and request reading for one proxy (its redactor and body limit)."""

    def __init__(self, redactor: Redactor, max_body_bytes: int):
        self.redactor = redactor
        self.max_body_bytes = max_body_bytes

    def error(self, status: int, message: str, type_: str = "upstream_error", code: Any = None,
              param: str | None = None, front: Front = OPENAI) -> Response:
        body = error_body(self.redactor.text(message), type_=type_, code=code)
        body["error"]["param"] = param
        return front.error_response(status, body)

    def refuse(self, exc: BadRequest, front: Front = OPENAI) -> Response:
        """A request we will not forward, in the client's shape."""
        type_ = {404: "not_found_error", 503: "overloaded_error"}.get(exc.status, "invalid_request_error")
        return self.error(exc.status, str(exc), type_=type_, param=exc.param, front=front)

    def connect_failure(self, exc: Exception, backend: Backend, front: Front = OPENAI) -> Response:
        """The upstream could not be reached, or did not answer in time: 502 or 504."""
        log.warning("upstream %s: %s: %s", backend.display, type(exc).__name__, exc)
        if isinstance(exc, (httpx.TimeoutException, UpstreamTimeout)):
            return self.error(504, f"upstream {backend.display} timed out: {exc or type(exc).__name__}",
                              code="upstream_timeout", front=front)
        return self.error(502, f"upstream {backend.display} unreachable: {type(exc).__name__}",
                          code="upstream_unreachable", front=front)

    async def read_body(self, request: Request) -> bytes:
        """The request body within the size limit (BadRequest past it; ClientDisconnect if the client left)."""
        return await read_body(request.headers.get("content-length"), request.stream(), self.max_body_bytes)

    async def read_json(self, request: Request, front: Front = OPENAI) -> dict[str, Any] | Response:
        """The request body as a JSON object, or the error response (in ``front``'s shape) to send instead."""
        try:
            return parse_json_object(await self.read_body(request))
        except BadRequest as exc:
            return self.refuse(exc, front)
        except ClientDisconnect:
            return Response(status_code=CLIENT_GONE)
