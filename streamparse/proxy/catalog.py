"""What the proxy knows of its backends without a chat request: are they up (``/readyz``), and which
models do they serve (``GET /v1/models``).

- ``/readyz``: each backend's upstream is asked ``GET <base>/models`` (a cheap call every
  OpenAI-compatible server answers); any HTTP answer below 500 counts as up. The result is kept
  ``ready_cache`` seconds, and one probe at a time runs, however many load balancers ask. Ready (200) when
  every backend is served: it answers, or one of its ``fallback`` backends does (a backend covered by a
  fallback that answers may be down: it is reported, and the proxy stays ready); else 503; 503 too once
  draining. The body names each backend's state (``backends``) and which backend answers its requests now
  (``served_by``: itself, a fallback, or null), and the Responses store (``responses_store``: which, whether it
  is shared, and whether it answers a ping now; a store that is down is reported and does not make the proxy
  unready), and the chat templates known so far (``chat_templates``, for the backends whose template was read
  from a path or asked for: where it came from, for which model, what it decided; never its text): ``/readyz``
  asks no backend for one. ``/healthz`` stays liveness: it touches no upstream.
- ``GET /v1/models`` with more than one backend, or with configured names (``models``, ``model_map``
  keys): every backend's upstream list, merged with the configured names, first seen first; a
  backend that is down (or answers badly) is left out and the others are listed. 502 only when no
  backend answered and no name is configured. One backend without configured names: the upstream's
  answer is relayed as it is (``app``'s pass-through).

Invariants: a probe never outlives ``PROBE_TIMEOUT`` (nor the backend's ``connect_timeout``); a
probe's failure is a state, never an exception; no backend key or URL credential reaches a body.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .chat_templates import ChatTemplates
from .config import Backend, ProxyConfig
from .drain import Drain
from .exchange import Upstream
from .fronts import JSONBody
from .masking import mask_value
from .response_store import ResponseStore, StoreUnavailable
from .upstream import upstream_url

__all__ = ["Catalog", "PROBE_TIMEOUT", "probe_upstreams"]

log = logging.getLogger("streamparse.server")
PROBE_TIMEOUT = 3.0  # seconds a readiness or model-list probe may take


def _timeout(backend: Backend) -> httpx.Timeout:
    limit = min(PROBE_TIMEOUT, backend.connect_timeout, backend.read_timeout)
    return httpx.Timeout(limit)


def _listed(backend: Backend) -> list[str]:
    return list(dict.fromkeys([*backend.models, *backend.model_map]))


class Catalog:
    """Readiness and the merged model list of one proxy's backends."""

    def __init__(self, config: ProxyConfig, upstream: Upstream, drain: Drain, store: ResponseStore | None = None,
                 templates: ChatTemplates | None = None):
        self.config = config
        self.upstream = upstream
        self.drain = drain
        self.store = store
        self.templates = templates
        self._checked = -float("inf")
        self._states: dict[str, str] = {}
        self._lock = anyio.Lock()

    async def probe(self, backend: Backend, headers: Any = None) -> httpx.Response | str:
        """``GET <base>/models``: the response (read), or why there is none."""
        try:
            with anyio.fail_after(PROBE_TIMEOUT + 1):
                return await self.upstream.client.get(upstream_url(backend, "/models"), timeout=_timeout(backend),
                                                      headers=headers or _key_headers(backend))
        except (httpx.HTTPError, TimeoutError) as exc:
            return self.upstream.redactor.text(f"{type(exc).__name__}: {exc}".rstrip(": "))

    async def states(self) -> dict[str, str]:
        """Each backend: ``"up"`` or why not; cached ``ready_cache`` seconds."""
        async with self._lock:
            if time.monotonic() - self._checked < self.config.ready_cache:
                return self._states
            found: dict[str, str] = {}

            async def one(backend: Backend) -> None:
                answer = await self.probe(backend)
                if isinstance(answer, str):
                    found[backend.name] = f"unreachable: {answer}"
                else:
                    found[backend.name] = "up" if answer.status_code < 500 else f"answers {answer.status_code}"

            async with anyio.create_task_group() as tg:
                for backend in self.config.backends:
                    tg.start_soon(one, backend)
            self._states = {b.name: found[b.name] for b in self.config.backends}
            self._checked = time.monotonic()
            return self._states

    async def readyz(self, request: Request) -> Response:
        """``GET /readyz``."""
        if self.drain.draining:
            return JSONResponse({"status": "draining"}, status_code=503)
        states = await self.states()
        served_by = {b.name: next((c.name for c in self.config.chain(b) if states.get(c.name) == "up"), None)
                     for b in self.config.backends}
        ready = all(served_by.values())
        page: dict[str, Any] = {"status": "ready" if ready else "unavailable", "backends": states,
                                "served_by": served_by}
        if self.store is not None:
            page["responses_store"] = await self._store_state(self.store)
        shown = self.templates.detail() if self.templates is not None else {}
        if shown:
            page["chat_templates"] = mask_value(self.upstream.redactor, shown)[0]
        return JSONResponse(page, status_code=200 if ready else 503)

    @staticmethod
    async def _store_state(store: ResponseStore) -> dict[str, Any]:
        """What the Responses store is and whether it answers (it does not decide readiness: every route but
        the chained Responses requests works without it)."""
        try:
            await store.ping()
            state, why = "up", None
        except StoreUnavailable as exc:
            state, why = "down", str(exc)
        return {"store": store.description, "shared": store.shared, "state": state, **({"error": why} if why else {})}

    def merges_models(self) -> bool:
        """Is ``GET /v1/models`` answered here (else relayed as it is)?"""
        return len(self.config.backends) > 1 or any(_listed(b) for b in self.config.backends)

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``, merged over the backends (see the module docstring)."""
        answers: dict[str, list[dict[str, Any]] | None] = {}

        async def one(backend: Backend) -> None:
            headers = self.upstream.build(backend, "GET", upstream_url(backend, "/models"), request).headers
            answer = await self.probe(backend, headers)
            answers[backend.name] = _model_list(answer)
            if answers[backend.name] is None:
                why = answer if isinstance(answer, str) else f"status {answer.status_code}"
                log.warning("GET /v1/models: backend %r left out (%s)", backend.name, why)

        async with anyio.create_task_group() as tg:
            for backend in self.config.backends:
                tg.start_soon(one, backend)
        data: dict[str, dict[str, Any]] = {}
        for backend in self.config.backends:
            for entry in answers.get(backend.name) or []:
                data.setdefault(entry["id"], entry)
            for name in _listed(backend):
                data.setdefault(name, {"id": name, "object": "model", "created": 0, "owned_by": backend.name})
        if not data and all(answer is None for answer in answers.values()):
            return self.upstream.replies.error(502, "no backend answered GET /models", code="upstream_unreachable")
        return JSONBody(mask_value(self.upstream.redactor, {"object": "list", "data": list(data.values())})[0])


def _key_headers(backend: Backend) -> dict[str, str]:
    key = backend.api_key
    return {"authorization": f"Bearer {key}"} if key else {}


def _model_list(answer: httpx.Response | str) -> list[dict[str, Any]] | None:
    """The entries of an upstream's model list (each with a string ``id``), or None if it gave none."""
    if isinstance(answer, str) or answer.status_code >= 400:
        return None
    try:
        body = answer.json()
    except ValueError:
        return None
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        return None
    return [entry for entry in data if isinstance(entry, dict) and isinstance(entry.get("id"), str)]


def probe_upstreams(config: ProxyConfig) -> list[str]:
    """At start-up (blocking): one line for each backend whose upstream does not answer ``GET /models``."""
    lines = []
    with httpx.Client() as client:
        for backend in config.backends:
            try:
                client.get(upstream_url(backend, "/models"), timeout=_timeout(backend), headers=_key_headers(backend))
            except httpx.HTTPError as exc:
                then = (f"requests go to its fallback ({', '.join(backend.fallback)}) until it does" if backend.fallback
                        else "/readyz says 503 until it does")
                lines.append(f"backend {backend.name!r}: upstream {backend.display} does not answer "
                             f"({type(exc).__name__}); {then}")
    return lines
