"""The proxy's upstream connections: one pool per backend origin, sized to its backends' ``max_connections``.

httpcore's pool re-checks every connection it holds each time a request arrives or a response closes, and for
each idle one it also counts all of them again: with 200 idle connections kept from a burst, 40,000 calls per
request or response closed (14.6 % of a bare pass-through's CPU at 200 streams). ``BackendPools`` routes each
request to its origin's pool (one per backend's scheme, host and port; anything else to a shared pool), each sized
to its backends' ``max_connections`` and keeping as many idle; each pool assigns as httpcore does, that count
taken once (the same number), and stops when no request waits.

Invariants: a request goes out on a connection of its own origin's pool, never waiting behind another origin's
(each pool keeps ``max_connections`` and as many idle connections, ``keepalive_expiry`` apart); an idle connection
whose server has closed it, or whose keep-alive has expired, is never reused; a pool this cannot speed up (HTTP/2,
another httpcore) keeps httpcore's own assignment, so behaviour never depends on it; the responses are httpx's
own (``coalesce`` reads them as before).
"""

from __future__ import annotations

from typing import Any, Iterable

import httpcore
import httpx

__all__ = ["BackendPools", "origin_key"]

# An idle connection older than this is closed, not reused: below the 5 s after which uvicorn (vLLM's and SGLang's
# server, the replay upstream) closes an idle one, so a request is never sent on a connection closing under it.
KEEPALIVE_EXPIRY = 4.0

_Key = tuple[bytes, bytes, int]  # (scheme, host, port)


def origin_key(url: httpx.URL) -> _Key:
    """The pool a URL's requests go to: its scheme, host and port (the scheme's default when none is given)."""
    scheme = url.raw_scheme
    return scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80)


class _Pool(httpcore.AsyncConnectionPool):
    """httpcore's pool, its assignment unchanged but for the count of connections it made for every idle one
    (the same number, counted once; see the module docstring); HTTP/1.1 only."""

    def _assign_requests_to_connections(self) -> list[Any]:
        if self._http2:  # pragma: no cover - the proxy's client speaks HTTP/1.1 only
            return super()._assign_requests_to_connections()
        closing: list[Any] = []
        connections = self._connections
        for connection in list(connections):  # (as httpcore: closed dropped, expired and surplus idle closed)
            if connection.is_closed():
                connections.remove(connection)
            elif connection.has_expired():
                connections.remove(connection)
                closing.append(connection)
            elif connection.is_idle() and len(connections) > self._max_keepalive_connections:
                connections.remove(connection)
                closing.append(connection)
        queued = [request for request in self._requests if request.is_queued()]
        if not queued:
            return closing
        for pool_request in queued:
            origin = pool_request.request.url.origin
            available = next((c for c in connections if c.can_handle_request(origin) and c.is_available()), None)
            if available is not None:
                pool_request.assign_to_connection(available)
                continue
            if len(connections) >= self._max_connections:
                idle = next((c for c in connections if c.is_idle()), None)
                if idle is None:
                    continue  # it waits for a connection to come free
                connections.remove(idle)
                closing.append(idle)
            connection = self.create_connection(origin)
            connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing


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
