"""The proxy: an ASGI app (Starlette) in front of an OpenAI-compatible server.

``POST /v1/chat/completions`` (``chat``) and the Anthropic ``POST /v1/messages``
(``messages``) are checked, forwarded with httpx and their answers rewritten:
SSE (sse-starlette) for ``stream: true``, JSON otherwise. Other ``/v1`` paths are
relayed unchanged. ``GET /healthz`` answers locally, for load balancers. This
module holds what every route shares: errors, the bounded upstream exchange,
relaying.

Invariants: a client gets an error in its API's shape, never a traceback; nothing it
receives holds a backend secret (``redaction``); every upstream request is
bounded in time, size and number (``upstream``), and is cancelled when its
client goes away; a decode that could take more than a few milliseconds runs
in a worker thread, so one huge block does not stall the other streams.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any, AsyncIterator, Awaitable, Callable, Mapping

import anyio
import anyio.to_thread
import httpx
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from .pipeline import ChatPipeline
from .config import Backend, ProxyConfig
from ..dialects import warm_up
from .fronts import OPENAI, Front
from .messages import MessagesAPI
from .redaction import RedactingFilter, Redactor
from ..wire.sse import encode_items, error_body, error_item
from .upstream import HOP_BY_HOP, Clock, Failure, Slot, Slots, UpstreamTimeout, forward_headers, next_piece, not_found_hint, only_comments, proxied_path, upstream_url
from ..wire.validation import BadRequest, parse_json_object, read_body

__all__ = ["create_app", "BadRequest"]

log = logging.getLogger("streamparse.server")

ERROR_BODY_BYTES = 64 * 1024  # how much of an upstream error body is read and relayed
# Response headers that stop being true once httpx has decoded the body.
_RESPONSE_DROP = HOP_BY_HOP | {"content-encoding"}


class ResponseTooLarge(Exception):
    """The upstream body passed ``max_response_bytes``."""


class _Cleanup(Response):
    """A response that runs its cleanups after the wrapped response ends, however it ends."""

    def __init__(self, response: Response, *cleanups: Callable[[], Awaitable[None] | None]):  # noqa: super not called
        self.response = response
        self.cleanups = cleanups
        self.status_code = response.status_code
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.response(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                for cleanup in self.cleanups:
                    result = cleanup()
                    if result is not None:
                        await result


async def _until_disconnect(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


class Proxy:
    """Request handlers; holds the config, the shared httpx client and the in-flight counts."""

    def __init__(self, config: ProxyConfig, client: httpx.AsyncClient | None = None):
        self.config = config
        self.slots = Slots()
        self.redactor = Redactor(s for b in config.backends for s in b.secrets())
        pool = sum(b.max_connections for b in config.backends)
        self._own_client = client is None
        self.client = client or httpx.AsyncClient(timeout=None, limits=httpx.Limits(
            max_connections=pool, max_keepalive_connections=min(pool, 200)))

    async def aclose(self) -> None:
        if self._own_client:
            await self.client.aclose()

    # ------------------------------------------------------------ errors

    def error(self, status: int, message: str, type_: str = "upstream_error", code: Any = None,
              param: str | None = None, front: Front = OPENAI) -> Response:
        body = error_body(self.redactor.text(message), type_=type_, code=code)
        body["error"]["param"] = param
        return front.error_response(status, body)

    def refuse(self, exc: BadRequest, front: Front = OPENAI) -> Response:
        type_ = {404: "not_found_error", 503: "overloaded_error"}.get(exc.status, "invalid_request_error")
        return self.error(exc.status, str(exc), type_=type_, param=exc.param, front=front)

    def connect_failure(self, exc: Exception, backend: Backend, front: Front = OPENAI) -> Response:
        log.warning("upstream %s: %s: %s", backend.display, type(exc).__name__, exc)
        if isinstance(exc, (httpx.TimeoutException, UpstreamTimeout)):
            return self.error(504, f"upstream {backend.display} timed out: {exc or type(exc).__name__}",
                              code="upstream_timeout", front=front)
        return self.error(502, f"upstream {backend.display} unreachable: {type(exc).__name__}",
                          code="upstream_unreachable", front=front)

    async def upstream_error(self, resp: httpx.Response, backend: Backend, clock: Clock,
                             front: Front = OPENAI) -> Response:
        """An upstream 4xx/5xx, its message kept (and redacted), in the client's error shape."""
        try:
            raw = await self.read_all(resp, clock, ERROR_BODY_BYTES)
        except (ResponseTooLarge, UpstreamTimeout, httpx.HTTPError):
            raw = b""
        hint = not_found_hint(backend) if resp.status_code == 404 else ""
        try:
            data = json.loads(self.redactor.data(raw))
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            if hint and isinstance(data["error"].get("message"), str):
                data["error"]["message"] += hint
            return front.error_response(resp.status_code, data)
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return self.error(resp.status_code, data["error"] + hint, code=resp.status_code, front=front)
        text = raw.decode("utf-8", "replace").strip()[:2000] or resp.reason_phrase
        return self.error(resp.status_code, f"upstream returned {resp.status_code}: {text}{hint}",
                          code=resp.status_code, front=front)

    # ------------------------------------------------------------ upstream exchange

    def build(self, backend: Backend, method: str, url: str, request: Request,
              headers: Mapping[str, str] | None = None, **body: Any) -> httpx.Request:
        """The upstream request; ``headers``: the client headers to forward, if not the request's own."""
        wait = min(backend.read_timeout, backend.total_timeout)  # the longest silence httpx allows
        timeout = httpx.Timeout(wait, connect=backend.connect_timeout, pool=backend.connect_timeout)
        headers = forward_headers(request.headers if headers is None else headers, backend)
        headers.pop("accept-encoding", None)  # httpx asks for (and decodes) what it can read
        return self.client.build_request(method, url, headers=headers, timeout=timeout, **body)

    async def open(self, backend: Backend, req: httpx.Request) -> tuple[httpx.Response, Slot, Clock]:
        """Send ``req`` within the backend's slots and deadlines; the caller closes the response."""
        slot = self.slots.take(backend)
        clock = Clock(backend)
        try:
            with anyio.fail_after(backend.total_timeout):
                resp = await self.client.send(req, stream=True)
        except TimeoutError:
            slot.release()
            raise UpstreamTimeout(clock.why()) from None
        except BaseException:
            slot.release()
            raise
        return resp, slot, clock

    async def exchange(self, request: Request, backend: Backend, req: httpx.Request,
                       answer: Callable[[httpx.Response, Slot, Clock], Awaitable[Response]],
                       front: Front = OPENAI) -> Response:
        """Open the upstream request and build the answer, both cancelled if the client goes away first.

        ``answer`` owns the response and the slot: it releases them, or hands
        them to the streaming response it returns.
        """
        result: Response | None = None
        async with anyio.create_task_group() as tg:
            async def watch() -> None:
                await _until_disconnect(request)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            try:
                resp, slot, clock = await self.open(backend, req)
            except BadRequest as exc:
                result = self.refuse(exc, front)
            except (httpx.HTTPError, UpstreamTimeout) as exc:
                result = self.connect_failure(exc, backend, front)
            else:
                try:
                    if resp.status_code >= 400:
                        result = await self.upstream_error(resp, backend, clock, front)
                        await self.finish(resp, slot)
                    else:
                        result = await answer(resp, slot, clock)
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        await self.finish(resp, slot)
                    raise
            tg.cancel_scope.cancel()
        return result if result is not None else Response(status_code=499)  # the client left

    @staticmethod
    async def finish(resp: httpx.Response, slot: Slot) -> None:
        slot.release()
        await resp.aclose()

    async def read_json(self, request: Request, front: Front = OPENAI) -> dict[str, Any] | Response:
        """The request body as a JSON object, or the error response (in ``front``'s shape) to send instead."""
        try:
            body = await read_body(request.headers.get("content-length"), request.stream(), self.config.max_body_bytes)
            return parse_json_object(body)
        except BadRequest as exc:
            return self.refuse(exc, front)
        except ClientDisconnect:
            return Response(status_code=499)

    def cleanup(self, response: Response, resp: httpx.Response, slot: Slot) -> Response:
        """``response`` (streaming from ``resp``) that closes ``resp`` and frees ``slot`` when it ends."""
        return _Cleanup(response, lambda: self.finish(resp, slot))

    async def read_whole(self, resp: httpx.Response, slot: Slot, clock: Clock, backend: Backend) -> bytes:
        """The whole upstream body (redacted), then the exchange is finished; Failure if it cannot be had."""
        try:
            return self.redactor.data(await self.read_all(resp, clock, self.config.max_response_bytes))
        except (ResponseTooLarge, UpstreamTimeout, httpx.HTTPError) as exc:
            raise Failure(504 if isinstance(exc, UpstreamTimeout) else 502,
                          f"upstream {backend.display}: {exc or type(exc).__name__}") from None
        finally:
            await self.finish(resp, slot)

    async def read_all(self, resp: httpx.Response, clock: Clock, limit: int) -> bytes:
        parts: list[bytes] = []
        size = 0
        pieces = resp.aiter_bytes()
        while (piece := await next_piece(pieces, clock)) is not None:
            size += len(piece)
            if size > limit:
                raise ResponseTooLarge(f"the upstream response is larger than the limit of {limit} bytes")
            parts.append(piece)
            clock.data()
        return b"".join(parts)

    async def relay(self, resp: httpx.Response, clock: Clock, *, sse: bool) -> AsyncIterator[bytes]:
        """The upstream body unchanged (but redacted), within the deadlines; for SSE, a timeout
        ends the stream with an error event, otherwise the body is cut short (the client sees it)."""
        redact = self.redactor.stream()
        pieces = resp.aiter_bytes()
        try:
            while (raw := await next_piece(pieces, clock)) is not None:
                if not (sse and only_comments(raw)):
                    clock.data()
                yield redact.feed(raw)
            yield redact.close()
        except (UpstreamTimeout, httpx.HTTPError) as exc:
            if not sse:
                raise
            message = self.redactor.text(f"upstream stream broke: {type(exc).__name__}: {exc}")
            yield encode_items([error_item(message)])

    # ------------------------------------------------------------ everything else under /v1

    async def passthrough(self, request: Request) -> Response:
        try:
            rest = proxied_path(request.url.path, request.scope.get("raw_path"))
            body = await read_body(request.headers.get("content-length"), request.stream(), self.config.max_body_bytes)
        except BadRequest as exc:
            return self.refuse(exc)
        except ClientDisconnect:
            return Response(status_code=499)
        backend = self.config.backend_for(None)
        req = self.build(backend, request.method, upstream_url(backend, rest, request.url.query), request,
                         content=body)

        async def answer(resp: httpx.Response, slot: Slot, clock: Clock) -> Response:
            headers = {k: v for k, v in resp.headers.items() if k.lower() not in _RESPONSE_DROP}
            sse = resp.headers.get("content-type", "").startswith("text/event-stream")
            return self.cleanup(StreamingResponse(self.relay(resp, clock, sse=sse), status_code=resp.status_code,
                                                  headers=headers), resp, slot)

        return await self.exchange(request, backend, req, answer)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def create_app(config: ProxyConfig, *, client: httpx.AsyncClient | None = None) -> Starlette:
    """The proxy as an ASGI app. ``client`` lets tests and embedders supply their own httpx client.

    Raises ConfigError when a backend's ``api_key_env`` is not set.
    """
    config.check_environment()
    proxy = Proxy(config, client)
    chat = ChatPipeline(proxy)
    messages = MessagesAPI(proxy, chat)
    RedactingFilter(proxy.redactor).install("streamparse.server", "uvicorn.error", "uvicorn.access")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warm_up()
        try:
            yield
        finally:
            await proxy.aclose()

    routes = [
        Route("/v1/chat/completions", chat.completions, methods=["POST"]),
        Route("/v1/messages", messages.create, methods=["POST"]),
        Route("/v1/messages/count_tokens", messages.count_tokens, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/{path:path}", proxy.passthrough, methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.proxy = proxy
    return app
