"""The proxy's upstream connections: one pool per backend origin, sized to its backends' ``max_connections``.

httpcore's pool re-checks every connection it holds each time a request arrives or a response closes: closed,
expired, readable (a ``poll`` call per idle socket), and, for each idle connection, a count over all of them. With
200 idle connections kept from a burst, each new request cost some 10-20 ms of the event loop before it was sent,
and the next burst's 200 requests queued for seconds behind one another. ``BackendPools`` routes each request
to its origin's pool (one per backend's scheme, host and port; anything else to a shared pool), and each pool
assigns a connection in one pass that only reads connection states: an idle connection's socket is polled once,
when it is about to be reused (a connection the server has closed is dropped then and another taken).

Invariants: a request goes out on a connection of its own origin's pool, never waiting behind another origin's
(each pool keeps ``max_connections`` and as many idle connections, ``keepalive_expiry`` apart); an idle connection
whose server has closed it, or whose keep-alive has expired, is never reused; a pool this cannot speed up (HTTP/2,
another httpcore) keeps httpcore's own assignment, so behaviour never depends on it; the responses are httpx's
own (``coalesce`` reads them as before).
"""

from __future__ import annotations

import time
from typing import Any, Iterable

import httpcore
import httpx

__all__ = ["BackendPools", "origin_key"]

KEEPALIVE_EXPIRY = 5.0  # httpx's default: an idle connection older than this is closed, not reused

_Key = tuple[bytes, bytes, int]  # (scheme, host, port)


def origin_key(url: httpx.URL) -> _Key:
    """The pool a URL's requests go to: its scheme, host and port (the scheme's default when none is given)."""
    scheme = url.raw_scheme
    return scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80)


def _expired(connection: Any, now: float) -> bool:
    """An idle connection's keep-alive has run out (the time alone: no socket call)."""
    inner = getattr(connection, "_connection", connection)
    expire_at = getattr(inner, "_expire_at", None)
    return expire_at is not None and now > expire_at


class _Pool(httpcore.AsyncConnectionPool):
    """httpcore's pool with a connection assigned in one pass (see the module docstring); HTTP/1.1 only."""

    def _assign_requests_to_connections(self) -> list[Any]:
        if self._http2:  # pragma: no cover - the proxy's client speaks HTTP/1.1 only
            return super()._assign_requests_to_connections()
        closing: list[Any] = []
        now = time.monotonic()
        live: list[Any] = []
        idle: list[Any] = []
        for connection in self._connections:
            if connection.is_closed():
                continue
            if connection.is_idle():
                if _expired(connection, now):
                    closing.append(connection)
                    continue
                idle.append(connection)
            live.append(connection)
        surplus = len(live) - self._max_keepalive_connections
        if surplus > 0 and idle:  # the oldest idle connections beyond the keep-alive count are closed
            dropped = set(map(id, idle[:surplus]))
            closing += idle[:surplus]
            idle = idle[surplus:]
            live = [c for c in live if id(c) not in dropped]
        for pool_request in self._requests:
            if not pool_request.is_queued():
                continue
            origin = pool_request.request.url.origin
            connection = self._reusable(idle, origin, live, closing)
            if connection is None:
                if len(live) >= self._max_connections:
                    if not idle:
                        continue  # it waits for a connection to come free
                    old = idle.pop(0)  # another origin's idle connection makes room
                    live.remove(old)
                    closing.append(old)
                connection = self.create_connection(origin)
                live.append(connection)
            pool_request.assign_to_connection(connection)
        self._connections = live
        return closing

    @staticmethod
    def _reusable(idle: list[Any], origin: httpcore.Origin, live: list[Any], closing: list[Any]) -> Any:
        """The most recently used idle connection to ``origin`` that the server has not closed (taken from
        ``idle``; the closed ones found on the way go to ``closing``), else None."""
        for i in range(len(idle) - 1, -1, -1):
            connection = idle[i]
            if not connection.can_handle_request(origin):
                continue
            del idle[i]
            if connection.is_available() and not connection.has_expired():  # (a poll of its socket)
                return connection
            live.remove(connection)
            closing.append(connection)
        return None


def _transport(max_connections: int) -> httpx.AsyncHTTPTransport:
    transport = httpx.AsyncHTTPTransport(limits=httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections, keepalive_expiry=KEEPALIVE_EXPIRY))
    pool = getattr(transport, "_pool", None)
    if type(pool) is httpcore.AsyncConnectionPool and all(
            hasattr(pool, name) for name in ("_connections", "_requests", "_max_connections", "_max_keepalive_connections", "_http2",
                                   "create_connection")):
        pool.__class__ = _Pool  # (no state of its own: the same object, assigned faster)
    return transport


class BackendPools(httpx.AsyncBaseTransport):
    """An httpx transport with one connection pool per origin in ``sizes`` (origin URL -> ``max_connections``,
    summed when several backends share an origin), and one more, of ``default`` connections, for any other."""

    def __init__(self, sizes: Iterable[tuple[str, int]], default: int = 100):
        totals: dict[_Key, int] = {}
        for url, size in sizes:
            key = origin_key(httpx.URL(url))
            totals[key] = totals.get(key, 0) + size
        self._pools = {key: _transport(size) for key, size in totals.items()}
        self._default = _transport(default)

    def pool_for(self, url: httpx.URL) -> httpx.AsyncHTTPTransport:
        return self._pools.get(origin_key(url), self._default)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.pool_for(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        for transport in [*self._pools.values(), self._default]:
            await transport.aclose()
