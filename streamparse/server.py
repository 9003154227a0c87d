"""The proxy: an ASGI app (Starlette) that sits in front of an OpenAI-compatible server.

``POST /v1/chat/completions`` is forwarded upstream with httpx (streaming) and
its answer rewritten by the OpenAI adapter: SSE (sse-starlette) when the
request says ``stream: true``, JSON otherwise. Every other path is proxied
unchanged. Upstream faults become OpenAI-style errors, never tracebacks.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any, AsyncIterator, Mapping

import anyio
import httpx
from sse_starlette.sse import EventSourceResponse
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .config import Backend, ProxyConfig
from .dialects import warm_up
from .openai import completion_to_chunks, rewrite_completion
from .sse import ChatStreamRewriter, encode_items, error_body

__all__ = ["create_app", "BadRequest"]

log = logging.getLogger("streamparse.server")

# Headers that describe one connection, not the message: never forwarded.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
})


class BadRequest(Exception):
    """The client's request cannot be forwarded; becomes a 400 with this message."""


def error_response(status: int, message: str, type_: str = "upstream_error", code: Any = None) -> JSONResponse:
    return JSONResponse(error_body(message, type_=type_, code=code), status_code=status)


def forward_headers(headers: Mapping[str, str], backend: Backend) -> dict[str, str]:
    out = {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}
    key = backend.api_key
    if key:
        out = {k: v for k, v in out.items() if k.lower() != "authorization"}
        out["authorization"] = f"Bearer {key}"
    return out


def upstream_url(backend: Backend, path: str, query: str = "") -> str:
    """``/v1/x`` on the proxy -> ``<upstream base>/x`` (the base already ends in ``/v1``)."""
    rest = path[3:] if path == "/v1" or path.startswith("/v1/") else path
    return backend.upstream + rest + (f"?{query}" if query else "")


async def read_json_body(request: Request, limit: int) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"request body is {declared} bytes; the limit is {limit}")
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > limit:
            raise BadRequest(f"request body is larger than the limit of {limit} bytes")
    try:
        payload = json.loads(body)
    except ValueError as exc:
        raise BadRequest(f"request body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise BadRequest("request body must be a JSON object")
    return payload


async def upstream_error(resp: httpx.Response) -> JSONResponse:
    """An upstream 4xx/5xx, its message kept, in OpenAI's error shape."""
    raw = await resp.aread()
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("error"), (dict, str)):
        err = data["error"]
        body = data if isinstance(err, dict) else error_body(err, code=resp.status_code)
    else:
        text = raw.decode("utf-8", "replace").strip() or resp.reason_phrase
        body = error_body(f"upstream returned {resp.status_code}: {text[:2000]}", code=resp.status_code)
    return JSONResponse(body, status_code=resp.status_code)


def _connect_failure(exc: Exception, backend: Backend) -> JSONResponse:
    if isinstance(exc, httpx.TimeoutException):
        return error_response(504, f"upstream {backend.upstream} timed out: {type(exc).__name__}", code="upstream_timeout")
    return error_response(502, f"upstream {backend.upstream} unreachable: {exc or type(exc).__name__}", code="upstream_unreachable")


class Proxy:
    """Request handlers; holds the config and the shared httpx client."""

    def __init__(self, config: ProxyConfig, client: httpx.AsyncClient | None = None):
        self.config = config
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=10.0), limits=httpx.Limits(
            max_connections=1000, max_keepalive_connections=100))

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    async def chat_completions(self, request: Request) -> Response:
        try:
            payload = await read_json_body(request, self.config.max_body_bytes)
        except BadRequest as exc:
            return error_response(400, str(exc), type_="invalid_request_error")
        except ClientDisconnect:
            return Response(status_code=499)
        backend = self.config.backend_for(payload.get("model"))
        upstream_payload = dict(payload)
        if "model" in payload:
            upstream_payload["model"] = backend.upstream_model(payload["model"])
        options = backend.parser_options()
        req = self.client.build_request(
            "POST", upstream_url(backend, "/v1/chat/completions"), json=upstream_payload,
            headers=forward_headers(request.headers, backend), timeout=httpx.Timeout(backend.read_timeout, connect=backend.connect_timeout),
        )
        stream = payload.get("stream") is True
        try:
            resp = await self.client.send(req, stream=True)
        except httpx.HTTPError as exc:
            return _connect_failure(exc, backend)
        if resp.status_code >= 400:
            try:
                return await upstream_error(resp)
            finally:
                await resp.aclose()
        if not stream:
            try:
                data = json.loads(await resp.aread())
                return JSONResponse(rewrite_completion(data, request=payload, **options), status_code=resp.status_code)
            except (ValueError, httpx.HTTPError) as exc:
                return error_response(502, f"upstream sent an unusable response: {exc}", code="upstream_bad_response")
            finally:
                await resp.aclose()
        if not resp.headers.get("content-type", "").startswith("text/event-stream"):
            # Asked to stream, the upstream answered with one body: send it as a stream anyway.
            return EventSourceResponse(self._body_as_stream(resp, payload, options), ping=15, sep="\n")
        rewriter = ChatStreamRewriter(request=payload, **options)
        return EventSourceResponse(self._stream(resp, rewriter), ping=15, sep="\n")

    async def _body_as_stream(self, resp: httpx.Response, request: dict[str, Any], options: dict[str, Any]
                              ) -> AsyncIterator[bytes]:
        try:
            raw = await resp.aread()
        finally:
            await resp.aclose()
        try:
            chunks = completion_to_chunks(rewrite_completion(json.loads(raw), request=request, **options))
            items = [("data", json.dumps(c, ensure_ascii=False)) for c in chunks] + [("done", "[DONE]")]
        except (ValueError, AttributeError, TypeError):
            text = raw.decode("utf-8", "replace")[:2000]
            items = [("error", json.dumps(error_body(f"upstream answered a streaming request with: {text!r}")))]
        yield encode_items(items)

    async def _stream(self, resp: httpx.Response, rewriter: ChatStreamRewriter) -> AsyncIterator[bytes]:
        """Upstream SSE -> rewritten SSE, one write per upstream read (events that arrive
        together leave together). Cancelled when the client goes away; the upstream closes with it."""
        try:
            try:
                async for raw in resp.aiter_bytes():
                    data = rewriter.feed_bytes(raw)
                    if data:
                        yield data
                    if rewriter.finished:
                        return
                data = rewriter.end_bytes()
            except httpx.HTTPError as exc:
                data = rewriter.fail_bytes(f"upstream stream broke: {type(exc).__name__}: {exc}")
            except Exception as exc:  # a bug of ours must end the stream clearly, not hang it
                log.exception("rewriting the upstream stream failed")
                data = encode_items([("error", json.dumps(error_body(f"streamparse failed: {type(exc).__name__}: {exc}",
                                                                     type_="server_error")))])
            if data:
                yield data
        finally:
            with anyio.CancelScope(shield=True):
                await resp.aclose()

    async def passthrough(self, request: Request) -> Response:
        backend = self.config.backend_for(None)
        try:
            body = await request.body()
        except ClientDisconnect:
            return Response(status_code=499)
        req = self.client.build_request(
            request.method, upstream_url(backend, request.url.path, request.url.query), content=body,
            headers=forward_headers(request.headers, backend), timeout=httpx.Timeout(backend.read_timeout, connect=backend.connect_timeout),
        )
        try:
            resp = await self.client.send(req, stream=True)
        except httpx.HTTPError as exc:
            return _connect_failure(exc, backend)
        headers = {k: v for k, v in resp.headers.items() if k.lower() not in HOP_BY_HOP}
        return StreamingResponse(resp.aiter_raw(), status_code=resp.status_code, headers=headers,
                                 background=BackgroundTask(resp.aclose))


def create_app(config: ProxyConfig, *, client: httpx.AsyncClient | None = None) -> Starlette:
    """The proxy as an ASGI app. ``client`` lets tests and embedders supply their own httpx client."""
    proxy = Proxy(config, client)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warm_up()
        try:
            yield
        finally:
            await proxy.aclose()

    routes = [
        Route("/v1/chat/completions", proxy.chat_completions, methods=["POST"]),
        Route("/{path:path}", proxy.passthrough, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = proxy
    return app
