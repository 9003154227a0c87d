"""The proxy's upstream transport: an httpx transport with one connection pool per backend origin.

``BackendPools`` is an ``httpx.AsyncBaseTransport`` (httpx's documented extension point). It routes each request
to its origin's ``Pool`` (one per backend's scheme, host and port, sized to its backends' ``max_connections``;
anything else to a shared pool), which sends it on an HTTP/1.1 ``connection.Connection`` (an asyncio protocol
driven by h11; TLS through an ``httpx.create_ssl_context()`` context, so https upstreams are verified as httpx
verifies them) and returns an ``httpx.Response`` whose stream is a ``body.Body``, also held in its extensions
(``body.BODY``) for ``body.pieces``, ``ended`` and ``limit_waits``.

What it fixes over httpcore's pool: that pool re-checked every connection it held on each request and response
(an idle one's socket polled each time: 200 idle connections after a burst made the next burst 14.6 % of the
proxy's CPU), gave the first idle connection to every request of a burst (all but one then queued again), and
could close an idle connection as expired while a request it was given had not been sent yet (a 502). Here a
connection learns that its server closed it from the loop (``connection_lost``, ``eof_received``) and leaves the
pool then, so no socket is ever asked; a request takes the most recently used idle connection, checked by a
flag and a clock; a connection freed while requests wait goes to the first of them.

Invariants: a request goes out on a connection of its own origin's pool, never waiting behind another origin's;
a pool holds at most ``size`` connections (open, opening or idle); a request that finds none free waits, in
arrival order, up to its pool timeout (``httpx.PoolTimeout``), and never fails for want of one; an idle
connection is reused only if its keep-alive (``KEEPALIVE_EXPIRY`` since its last answer) has not expired and
the server has not sent or closed anything since; a connection given to a request is never given to another nor
closed before that request is sent; a connection whose response was not read to its end, or that failed, or
whose request was cancelled, is closed; errors are httpx's public exceptions (``ConnectError``,
``ConnectTimeout``, ``PoolTimeout`` and the connection's and body's).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Iterable

import anyio
import httpx

from .body import BODY, Body
from .connection import Connection, Key

__all__ = ["BackendPools", "Pool", "origin_key", "KEEPALIVE_EXPIRY"]

# An idle connection older than this is closed, not reused: below the 5 s after which uvicorn (vLLM's and SGLang's
# server, the replay upstream) closes an idle one, so a request is never sent on a connection closing under it.
KEEPALIVE_EXPIRY = 4.0


def origin_key(url: httpx.URL) -> Key:
    """The pool a URL's requests go to: its scheme, host and port (the scheme's default when none is given)."""
    scheme = url.raw_scheme
    return scheme, url.raw_host, url.port or (443 if scheme == b"https" else 80)


class _TLS:
    """The TLS context of a transport's https connections, made once when first needed (it costs ~20 ms)."""

    def __init__(self) -> None:
        self.context: ssl.SSLContext | None = None

    def get(self) -> ssl.SSLContext:
        if self.context is None:
            context = httpx.create_ssl_context()
            context.set_alpn_protocols(["http/1.1"])
            self.context = context
        return self.context


class Pool:
    """The connections to one origin (the shared pool: to any), at most ``size`` of them."""

    def __init__(self, size: int, tls: _TLS | None = None):
        self.size = size
        self.count = 0  # connections open or opening, idle ones included
        self.idle: list[Connection] = []  # most recently used last
        self.open: set[Connection] = set()
        self.waiters: deque[tuple[Key, asyncio.Future[Connection | None]]] = deque()
        self.tls = tls or _TLS()
        self.closed = False

    async def handle(self, request: httpx.Request, key: Key) -> httpx.Response:
        timeouts = request.extensions.get("timeout") or {}
        connection = await self._acquire(key, timeouts.get("pool"))
        try:
            if connection is None:
                connection = await self._connect(key, timeouts.get("connect"))
            connection.limit(timeouts.get("read"))
            await connection.send(request, timeouts.get("write"))
            head, rest = await connection.receive_head()
        except BaseException:
            if connection is None:
                self._free_slot()
            else:
                self.release(connection, False)
            raise
        chunked = (request.method != "HEAD" and head.status_code not in (204, 304)
                   and any(name == b"transfer-encoding" for name, _ in head.headers))
        body = Body(connection, self.release, rest, chunked)
        return httpx.Response(head.status_code, headers=head.headers.raw_items(), stream=body, extensions={
            "http_version": b"HTTP/" + head.http_version, "reason_phrase": head.reason, BODY: body})

    async def _acquire(self, key: Key, timeout: float | None) -> Connection | None:
        """An idle connection to ``key`` that may be reused, or None: a slot is the caller's, to connect with."""
        idle = self.idle
        if idle:
            now = asyncio.get_running_loop().time()
            while idle and not idle[0].usable(now):  # the oldest first: expired ones go
                self._drop(idle[0])
            for n in range(len(idle) - 1, -1, -1):
                connection = idle[n]
                if connection.key == key:
                    del idle[n]
                    if connection.usable(now):
                        connection.idle = False
                        return connection
                    self._drop(connection, listed=False)
                    break
        if self.count < self.size:
            self.count += 1
            return None
        if idle:  # full, and an idle connection to another origin (the shared pool): it makes room
            self._drop(idle[0], free=False)
            return None
        waiter: asyncio.Future[Connection | None] = asyncio.get_running_loop().create_future()
        self.waiters.append((key, waiter))
        try:
            with anyio.fail_after(timeout):
                return await waiter
        except BaseException as exc:
            if waiter.done() and not waiter.cancelled():  # given a connection (or a slot) on the way out
                given = waiter.result()
                if given is None:
                    self._free_slot()
                else:
                    self.release(given, True)
            else:
                waiter.cancel()
            if isinstance(exc, TimeoutError):
                raise httpx.PoolTimeout(f"no connection to {key[1].decode()} came free within {timeout} s") from None
            raise

    async def _connect(self, key: Key, timeout: float | None) -> Connection:
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        name = host.decode("ascii")
        tls = self.tls.get() if scheme == b"https" else None
        try:
            with anyio.fail_after(timeout):
                _, connection = await loop.create_connection(lambda: Connection(key, loop), name, port, ssl=tls,
                                                             server_hostname=name if tls else None)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"no connection to {name}:{port} within {timeout} s") from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        connection.pool = self
        self.open.add(connection)
        return connection

    def release(self, connection: Connection, reuse: bool) -> None:
        """``connection``'s request is done: kept for reuse (given to the first waiter, else idle), or closed."""
        if not reuse or self.closed:
            self._drop(connection, listed=False)
            return
        connection.expire_at = asyncio.get_running_loop().time() + KEEPALIVE_EXPIRY
        while self.waiters:
            key, waiter = self.waiters.popleft()
            if waiter.done():
                continue
            if key == connection.key:
                waiter.set_result(connection)
            else:  # (the shared pool: a waiter for another origin gets its slot)
                self.open.discard(connection)
                connection.close()
                waiter.set_result(None)
            return
        connection.idle = True
        self.idle.append(connection)

    def lost(self, connection: Connection) -> None:
        """An idle connection's server closed it: it leaves the pool (its slot goes to a waiter)."""
        if connection.idle and not self.closed:
            self._drop(connection)

    def _drop(self, connection: Connection, listed: bool = True, free: bool = True) -> None:
        """Close ``connection`` (``listed``: it is idle, in ``idle``); its slot goes to a waiter or is freed
        (``free`` False: the caller takes it)."""
        if listed:
            self.idle.remove(connection)
        connection.idle = False
        self.open.discard(connection)
        connection.close()
        if free:
            self._free_slot()

    def _free_slot(self) -> None:
        while self.waiters:
            _, waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot is the waiter's: it connects
                return
        self.count -= 1

    async def aclose(self) -> None:
        self.closed = True
        for connection in list(self.open):
            connection.idle = False
            connection.close()
        self.open.clear()
        self.idle.clear()


class BackendPools(httpx.AsyncBaseTransport):
    """An httpx transport with one connection pool per origin in ``sizes`` (origin URL -> ``max_connections``,
    summed when several backends share an origin), and one more, of ``default`` connections, for any other."""

    def __init__(self, sizes: Iterable[tuple[str, int]], default: int = 100):
        totals: dict[Key, int] = {}
        for url, size in sizes:
            key = origin_key(httpx.URL(url))
            totals[key] = totals.get(key, 0) + size
        tls = _TLS()
        self._pools = {key: Pool(size, tls) for key, size in totals.items()}
        self._default = Pool(default, tls)

    def pool_for(self, url: httpx.URL) -> Pool:
        return self._pools.get(origin_key(url), self._default)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.raw_scheme not in (b"http", b"https"):
            raise httpx.UnsupportedProtocol(f"the upstream transport speaks http and https, not {request.url.scheme}")
        key = origin_key(request.url)
        return await self._pools.get(key, self._default).handle(request, key)

    async def aclose(self) -> None:
        for pool in [*self._pools.values(), self._default]:
            await pool.aclose()
