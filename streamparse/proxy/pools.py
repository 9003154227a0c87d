"""The proxy's upstream connections: one pool per backend origin, sized to its backends' ``max_connections``.

httpcore's pool re-checks every connection it holds each time a request arrives or a response closes: it counts
all of them again for each idle one, and asks each idle one's socket whether the server closed it (a poll, through
anyio's attribute lookup: ~10 µs). It also gives the first idle connection to every request of a burst (all but
one then fail to send on it and queue again), and may close an idle connection as expired while a request it was
given has not been sent on it yet (a ReadError: a 502). With 200 idle connections kept from a burst, the next burst
spent 14.6 % of the proxy's CPU here and queued for seconds before its first byte. ``BackendPools`` routes each
request to its origin's pool (one per backend's scheme, host and port; anything else to a shared pool), each sized
to its backends' ``max_connections`` and keeping as many idle; each pool assigns as httpcore does, but reads an
HTTP/1.1 connection's state instead of asking it, checks an idle one's keep-alive by its clock alone and asks its
socket only when it is about to be reused, and leaves alone a connection already given to a request.

Invariants: a request goes out on a connection of its own origin's pool, never waiting behind another origin's
(each pool keeps ``max_connections`` and as many idle connections, ``keepalive_expiry`` apart); an idle connection
whose server has closed it, or whose keep-alive has expired, is never reused (checked as httpcore checks it, by
``has_expired``, before it is handed a request); a connection given to a request is neither given to another nor
closed before that request has been sent on it; a pool this cannot speed up (HTTP/2, another httpcore) keeps
httpcore's own assignment, so behaviour never depends on it; the responses are httpx's own (``coalesce`` reads
them as before).
"""

from __future__ import annotations

import time
from typing import Any, Iterable

import httpcore
import httpx

try:  # httpcore's HTTP/1.1 connections, whose state is read directly (private: looked up once, checked)
    from httpcore._async.connection import AsyncHTTPConnection as _Connection
    from httpcore._async.http11 import AsyncHTTP11Connection as _H11, HTTPConnectionState
    _IDLE: object = HTTPConnectionState.IDLE
    _CLOSED: object = HTTPConnectionState.CLOSED
except ImportError:  # pragma: no cover - another httpcore: every connection is asked as httpcore asks it
    _Connection = _H11 = None  # type: ignore[assignment,misc]
    _IDLE = _CLOSED = object()

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
    """httpcore's pool, its assignment unchanged in what it decides: an HTTP/1.1 connection's state is read rather
    than asked, and an idle one's socket is polled only when it is about to be reused (see the module docstring)."""

    def _assign_requests_to_connections(self) -> list[Any]:
        if self._http2:  # pragma: no cover - the proxy's client speaks HTTP/1.1 only
            return super()._assign_requests_to_connections()
        closing: list[Any] = []
        connections = self._connections
        queued: list[Any] = []
        taken: set[Any] = set()  # connections given to a request: busy, or idle only until that request is sent
        for request in self._requests:
            if request.connection is None:  # (is_queued)
                queued.append(request)
            else:
                taken.add(request.connection)
        now = time.monotonic()
        for connection in list(connections):  # (as httpcore: closed dropped, expired and surplus idle closed)
            fate = _swept(connection, connection in taken, now)
            if fate is _SPARE and len(connections) > self._max_keepalive_connections:
                fate = _ENDED
            if fate is _DROPPED or fate is _ENDED:
                connections.remove(connection)
                if fate is _ENDED:
                    closing.append(connection)
        for pool_request in queued:
            origin = pool_request.request.url.origin
            available = self._available(origin, closing, taken)
            if available is None:
                if len(connections) >= self._max_connections:
                    spare = next((c for c in connections if c not in taken and c.is_idle()), None)
                    if spare is None:
                        continue  # it waits for a connection to come free
                    connections.remove(spare)
                    closing.append(spare)
                available = self.create_connection(origin)
                connections.append(available)
            pool_request.assign_to_connection(available)
            taken.add(available)
        return closing

    def _available(self, origin: Any, closing: list[Any], taken: set[Any]) -> Any:
        """The first idle connection for ``origin`` that no request has been given yet, its server asked first
        whether it closed it (httpcore's ``has_expired``); one that did is closed and the next one tried.
        (httpcore gives the first idle one to every request of a burst: all but one then fail to send on it and
        queue again, n * n / 2 tries for n requests.)"""
        connections = self._connections
        while True:
            found = next((c for c in connections if c not in taken and _free(c) and c.can_handle_request(origin)),
                         None)
            if found is None or not found.has_expired():
                return found
            connections.remove(found)
            closing.append(found)


_KEPT, _SPARE, _DROPPED, _ENDED = "kept", "spare", "dropped", "ended"  # what the sweep does with a connection


def _swept(connection: Any, taken: bool, now: float) -> str:
    """What httpcore's sweep does with ``connection``: drop it (closed), end it (expired: it is closed), keep it
    while the pool keeps that many idle ones (spare), or keep it. One given to a request is only ever dropped once closed (it is
    not closed under that request); an idle HTTP/1.1 one's keep-alive is read by its clock (its socket is asked
    when it is about to be reused), its state read, not asked; any other is asked as httpcore asks."""
    state = _state(connection)
    if state is None:
        if connection.is_closed():
            return _DROPPED
        if taken:
            return _KEPT
        if connection.has_expired():
            return _ENDED
        return _SPARE if connection.is_idle() else _KEPT
    if state is _CLOSED:
        return _DROPPED
    if taken or state is not _IDLE:
        return _KEPT
    expire_at = getattr(connection._connection, "_expire_at", None)
    return _ENDED if expire_at is not None and now > expire_at else _SPARE


def _free(connection: Any) -> bool:
    """httpcore's ``is_available``, read from the state of an HTTP/1.1 connection."""
    state = _state(connection)
    return state is _IDLE if state is not None else bool(connection.is_available())


def _state(connection: Any) -> Any:
    """The state of an httpcore HTTP/1.1 connection (read, not asked: this runs for every connection on every
    request and response), or None for any other."""
    inner = connection._connection if type(connection) is _Connection else None
    return getattr(inner, "_state", None) if type(inner) is _H11 else None


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
