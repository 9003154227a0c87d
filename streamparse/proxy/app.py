"""The proxy: an ASGI app (Starlette) in front of an OpenAI-compatible server.

Routes, each the top of one path down the layers:
- ``POST /v1/chat/completions``: checked, then the chat ``pipeline``;
- ``POST /v1/messages`` and ``/v1/messages/count_tokens``: ``messages`` (Anthropic in), then the pipeline;
- ``POST /v1/responses``: ``responses`` (the OpenAI Responses API in), then the pipeline; ``GET`` and ``DELETE
  /v1/responses/{id}`` and ``GET /v1/responses/{id}/input_items``: served from its store (``response_store``);
- other ``/v1`` paths: relayed unchanged through the bounded ``exchange``; with several proxy keys, the paths
  that hold state at the backend (files, batches, ...: all but ``relay.STATELESS``) only where a backend's
  ``relay_paths`` lists them or it gives each key its own backend key (``client_api_keys_env``), else a 403;
- ``GET /v1/models``: every backend's models (``catalog``), when there is more than one backend or names
  are configured; else relayed;
- ``GET`` / ``HEAD /api/hello`` (the probe Claude Code sends, answered as Anthropic's API does),
  ``GET /healthz`` (liveness, answered locally), ``GET /readyz`` (does an upstream answer? ``catalog``)
  and ``GET /metrics`` (Prometheus, ``metrics``), for load balancers and monitoring;
- on SIGTERM or Ctrl-C, answers in flight get ``drain_timeout`` to finish (``drain``).

In front of every route, outermost first: ``access_log.RequestLog`` (request ids in and out, the request's record
and JSON line), ``cors.CORS`` (preflights answered here; every ``OPTIONS`` stops there), the body deadline, and,
with proxy keys configured (``api_keys_env``, ``$STREAMPARSE_API_KEYS``, ``serve --api-key``),
``auth.ProxyAuth`` for every route but ``/healthz`` and ``/readyz``. A request's headers and body
must arrive within ``header_timeout`` and ``body_timeout`` (``deadlines``), else a 408.

Invariants: a client gets an error in its API's shape, never a traceback; nothing it receives
holds a backend secret (``redaction``); this module only wires the pieces together, and no
piece calls back into it.
"""

from __future__ import annotations

import contextlib
import gc
from typing import AsyncIterator

import anyio
import httpx
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.middleware import Middleware
from starlette.routing import Route

from ..dialects import warm_up
from ..wire.validation import BadRequest, check_chat_request
from .access_log import ACCESS_LOGGER, RequestLog
from .auth import ProxyAuth
from .catalog import Catalog
from .config import Backend, ProxyConfig
from .cors import CORS
from .deadlines import BodyDeadline
from .drain import Drain, watch_server
from .exchange import Attempt, Upstream
from .fronts import OPENAI
from .metrics import CONTENT_TYPE, STARTED, Metrics, counted, route_label
from .messages import MessagesAPI
from .owners import Owners
from .relay import refused_relay
from .responses import ResponsesAPI, open_store
from .pipeline import ChatPipeline
from .redaction import RedactingFilter, Redactor
from .replies import CLIENT_GONE, Replies
from .upstream import HOP_BY_HOP, Clock, Slot, proxied_path, upstream_url

__all__ = ["create_app", "BadRequest"]

# Response headers that stop being true once httpx has decoded the body.
_RESPONSE_DROP = HOP_BY_HOP | {"content-encoding"}


class OpenAIRoutes:
    """``/v1/chat/completions`` and the relay of everything else under ``/v1``."""

    def __init__(self, config: ProxyConfig, upstream: Upstream, chat: ChatPipeline, keys: int):
        self.config = config
        self.upstream = upstream
        self.replies = upstream.replies
        self.chat = chat
        self.keys = keys  # how many proxy keys there are (several: clients to keep apart)

    async def completions(self, request: Request) -> Response:
        """``POST /v1/chat/completions``."""
        payload = await self.replies.read_json(request)
        if isinstance(payload, Response):
            return payload
        try:
            check_chat_request(payload)
        except BadRequest as exc:
            return self.replies.refuse(exc)
        return await self.chat.run(request, payload, OPENAI)

    async def passthrough(self, request: Request) -> Response:
        """Any other path under ``/v1``: checked, then relayed both ways unchanged (but redacted)."""
        try:
            rest = proxied_path(request.url.path, request.scope.get("raw_path"))
            body = await self.replies.read_body(request)
        except BadRequest as exc:
            return self.replies.refuse(exc)
        except ClientDisconnect:
            return Response(status_code=CLIENT_GONE)
        chain = self.config.chain(self.config.backend_for(None))
        refusals = [refused_relay(request.method, "/v1" + rest, b, self.keys) for b in chain]
        allowed = [b for b, why in zip(chain, refusals) if why is None]
        if not allowed:
            return self.replies.error(403, str(refusals[0]), type_="permission_error", code="relay_refused")
        upstream = self.upstream

        async def attempt(backend: Backend) -> Attempt:
            async def answer(resp: httpx.Response, slot: Slot, clock: Clock) -> Response:
                headers = {k: upstream.redactor.text(v) for k, v in resp.headers.items()
                           if k.lower() not in _RESPONSE_DROP}
                ctype = resp.headers.get("content-type", "")
                sse = ctype.startswith("text/event-stream")
                meter = upstream.metrics.stream(OPENAI.name, request.scope.get(STARTED), backend.name) if sse else None
                body = upstream.relay(resp, clock, sse=sse, json_body="json" in ctype, meter=meter)
                return upstream.cleanup(StreamingResponse(body, status_code=resp.status_code, headers=headers), resp,
                                        slot)

            req = upstream.build(backend, request.method, upstream_url(backend, rest, request.url.query), request,
                                 content=body)
            return Attempt(backend, req, answer)

        return await upstream.exchange(request, allowed, attempt)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def hello(request: Request) -> Response:
    """``/api/hello``: Claude Code's probe of an Anthropic endpoint; a 200, as Anthropic's API gives it."""
    return JSONResponse({"message": "hello"})


def create_app(config: ProxyConfig, *, client: httpx.AsyncClient | None = None) -> Starlette:
    """The proxy as an ASGI app. ``client`` lets tests and embedders supply their own httpx client.

    Raises ConfigError when a backend's ``api_key_env`` (or the server's ``api_keys_env``) is not set.
    """
    config.check_environment()
    keys = config.proxy_keys()
    redactor = Redactor(s for b in config.backends for s in b.secrets())
    replies = Replies(redactor, config.max_body_bytes)
    drain = Drain(config.drain_timeout)
    metrics = Metrics()
    upstream = Upstream(replies, config.backends, config.max_response_bytes, client, keep_credentials=not keys,
                        drain=drain, metrics=metrics)
    chat = ChatPipeline(config, upstream)
    openai_routes = OpenAIRoutes(config, upstream, chat, len(keys))
    messages = MessagesAPI(config, replies, chat)
    store = open_store(config)
    responses = ResponsesAPI(replies, chat, store, Owners.from_environment(keys, config.owner_secret_env))
    RedactingFilter(redactor).install("streamparse.server", "uvicorn.error", "uvicorn.access", ACCESS_LOGGER)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warm_up()
        # What start-up built (tables, grammars, modules) lives as long as the process: out of the collector's
        # sight, so the full collections under load no longer walk it (they were about a tenth of the CPU at
        # 200 streams). Objects made later are collected as usual.
        gc.collect()
        gc.freeze()
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch_server, drain)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()
                await upstream.aclose()
                await store.aclose()
                metrics.process_exit()

    async def metrics_page(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)

    def refused(path: str) -> None:
        front = "anthropic" if path.startswith("/v1/messages") else "responses" if path == "/v1/responses" else "openai"
        metrics.request(route_label(path), front, "", 401)

    catalog = Catalog(config, upstream, drain, store, chat.templates)
    models = [Route("/v1/models", counted(metrics, catalog.models), methods=["GET"])] if catalog.merges_models() else []
    routes = models + [
        Route("/v1/chat/completions", counted(metrics, openai_routes.completions), methods=["POST"]),
        Route("/v1/messages", counted(metrics, messages.create, "anthropic"), methods=["POST"]),
        Route("/v1/messages/count_tokens", counted(metrics, messages.count_tokens, "anthropic"), methods=["POST"]),
        Route("/v1/responses", counted(metrics, responses.create, "responses"), methods=["POST"]),
        Route("/v1/responses/{response_id}", counted(metrics, responses.retrieve, "responses"), methods=["GET"]),
        Route("/v1/responses/{response_id}", counted(metrics, responses.delete, "responses"), methods=["DELETE"]),
        Route("/v1/responses/{response_id}/input_items", counted(metrics, responses.input_items, "responses"),
              methods=["GET"]),
        Route("/api/hello", hello, methods=["GET", "HEAD"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", catalog.readyz, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        Route("/{path:path}", counted(metrics, openai_routes.passthrough),
              methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]),  # OPTIONS: ``cors``
    ]
    middleware = [Middleware(RequestLog, json_lines=config.log_format == "json"),
                  Middleware(CORS, origins=config.cors_origins), Middleware(BodyDeadline, timeout=config.body_timeout)]
    middleware += [Middleware(ProxyAuth, keys=keys, on_refuse=refused)] if keys else []
    app = Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
    app.state.upstream = upstream
    app.state.drain = drain  # read by the runners (deadlines of their own shutdown)
    app.state.metrics = metrics
    app.state.header_timeout = config.header_timeout  # read by the runner's protocol (deadlines)
    return app
