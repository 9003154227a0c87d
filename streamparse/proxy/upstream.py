"""How the proxy talks to one backend: which path, which headers, how many at once, how long.

Invariants:
- a forwarded URL is the backend's base plus a path with no dot segments (nor ``..;``) and
  no encoded separators at any depth of percent-encoding, so it can only name something
  under that base, however often the upstream (or a server behind it) decodes it;
- a backend with its own key never receives the client's credentials, and no backend
  receives them when the proxy has keys of its own (the client's key is then the proxy's);
- at most ``max_connections`` requests per backend are in flight; one more is
  refused at once (503) rather than queued behind a full pool;
- a wait for the upstream ends at ``total_timeout``, and before that: until its answer's first data (the
  response head included) at ``first_byte_timeout`` after the request, or after its last sign of life (llama.cpp's
  prompt progress); from then on at ``read_timeout`` after the last *data*. Keep-alive comments count as neither.
"""

from __future__ import annotations

import time
from typing import AsyncIterator, Callable, Mapping
from urllib.parse import unquote, urlsplit

import httpx

from .auth import presented_key
from .config import Backend
from ..wire.validation import BadRequest

__all__ = ["Failure", "HOP_BY_HOP", "CREDENTIALS", "proxied_path", "upstream_url", "forward_headers", "client_key", "backend_key", "Slots", "Clock",
           "UpstreamTimeout", "next_piece", "only_comments", "not_found_hint"]

# Headers that describe one connection, not the message: never forwarded.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
    "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
})
# The client's credentials: dropped when the backend has its own key.
CREDENTIALS = frozenset({"authorization", "x-api-key", "cookie", "api-key"})

_ENCODED_SEPARATORS = ("%2e", "%2f", "%5c", "%00")
_MAX_DECODINGS = 8  # layers of percent-encoding looked through (more is refused)


class Failure(Exception):
    """The upstream's answer cannot be used (too large, too slow, broken): the status and code to report."""

    def __init__(self, status: int, message: str, code: str = "upstream_bad_response"):
        super().__init__(message)
        self.status = status
        self.code = code


def proxied_path(path: str, raw_path: bytes | None) -> str:
    """The part of a proxy path to append to the backend base: ``/v1/models`` -> ``/models``.

    The path is decoded again and again until it stops changing (``%252e`` -> ``%2e`` -> ``.``), and
    every layer is checked, the once-decoded one (what is forwarded) included: encoded dots,
    slashes, backslashes or NULs (``%2e``, ``%2f``, ``%5c``, ``%00`` in any case, at any depth),
    dot segments, ``..;`` and empty segments are refused (400); anything outside ``/v1`` is refused (404).
    """
    raw = (raw_path or path.encode()).decode("latin-1")
    layers = [raw, path]
    while len(layers) < _MAX_DECODINGS and (deeper := unquote(layers[-1])) != layers[-1]:
        layers.append(deeper)
    if layers[-1] != unquote(layers[-1]):
        raise BadRequest(f"path {raw!r} is percent-encoded too many times; refused")
    for layer in layers:
        lowered = layer.lower()
        if any(code in lowered for code in _ENCODED_SEPARATORS) or "\\" in layer or "\x00" in layer:
            raise BadRequest(f"path {raw!r} holds an encoded separator; refused")
        segments = layer.split("/")[1:]
        if any(s in (".", "..") or s.startswith("..;") or s.startswith(".;") for s in segments) \
                or "" in segments[:-1]:
            raise BadRequest(f"path {raw!r} holds '.', '..', '..;' or an empty segment; refused")
    if path == "/v1" or path.startswith("/v1/"):
        return path[3:]
    raise BadRequest(f"streamparse forwards only paths under /v1, not {path!r}", status=404)


def upstream_url(backend: Backend, rest: str, query: str = "") -> str:
    """``<upstream base><rest>``: ``rest`` comes from :func:`proxied_path`."""
    return backend.upstream + rest + (f"?{query}" if query else "")


def client_key(headers: Mapping[str, str]) -> str | None:
    """The key a client presents, read as ``auth`` reads it (``presented_key``)."""
    key = presented_key((name.encode("latin-1", "replace"), value.encode("latin-1", "replace"))
                        for name, value in headers.items())
    return key.decode("latin-1") if key is not None else None


def backend_key(headers: Mapping[str, str], backend: Backend) -> str | None:
    """The key this client's requests carry to ``backend``: its own backend key when ``client_api_keys_env`` gives
    the proxy key it presented one, else the backend's ``api_key`` (None: none configured)."""
    if backend.client_api_keys_env:
        presented = client_key(headers)
        own = backend.client_api_keys().get(presented) if presented is not None else None
        if own is not None:
            return own
    return backend.api_key


def forward_headers(headers: Mapping[str, str], backend: Backend, *, keep_credentials: bool = True) -> dict[str, str]:
    """The client's headers minus hop-by-hop ones; with a backend key, or without ``keep_credentials``
    (the client's key is the proxy's own), minus the client's credentials."""
    key = backend_key(headers, backend)
    drop = HOP_BY_HOP | CREDENTIALS if key or not keep_credentials else HOP_BY_HOP
    out = {k: v for k, v in headers.items() if k.lower() not in drop}
    if key:
        out["authorization"] = f"Bearer {key}"
    return out


def not_found_hint(backend: Backend) -> str:
    """A 404 from an upstream whose base lacks ``/v1`` is nearly always that."""
    if urlsplit(backend.upstream).path.rstrip("/").endswith("/v1"):
        return ""
    return f" (hint: the upstream base {backend.display} does not end in /v1; OpenAI-compatible servers usually need it)"


class Slots:
    """In-flight upstream requests per backend; ``take`` fails at once when a backend is full."""

    def __init__(self) -> None:
        self.in_flight: dict[str, int] = {}

    def take(self, backend: Backend) -> "Slot":
        used = self.in_flight.get(backend.name, 0)
        if used >= backend.max_connections:
            raise BadRequest(f"backend {backend.name!r} has {used} requests in flight (its max_connections); "
                             "try again shortly", status=503)
        self.in_flight[backend.name] = used + 1
        return Slot(self, backend.name)


class Slot:
    """One taken slot; ``release`` may be called any number of times."""

    __slots__ = ("_slots", "_name")

    def __init__(self, slots: Slots, name: str):
        self._slots: Slots | None = slots
        self._name = name

    def release(self) -> None:
        if self._slots is not None:
            self._slots.in_flight[self._name] -= 1
            self._slots = None


class UpstreamTimeout(Exception):
    """The upstream's answer did not begin within ``first_byte_timeout``, it sent no data for ``read_timeout``
    seconds after that, or it ran past ``total_timeout``."""


def _seconds(value: float) -> str:
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


class Clock:
    """The deadlines of one upstream request: ``first_byte_timeout`` until its answer begins (its first data),
    ``read_timeout`` between its data after that, ``total_timeout`` for all of it."""

    __slots__ = ("first_byte_timeout", "read_timeout", "wait", "started", "last_data", "total_deadline", "answering",
                 "on_answer")

    def __init__(self, backend: Backend):
        self.first_byte_timeout = backend.first_byte_timeout
        self.read_timeout = backend.read_timeout
        self.wait = backend.first_byte_timeout  # the longest silence allowed now
        self.started = self.last_data = time.monotonic()
        self.total_deadline = self.started + backend.total_timeout
        self.answering = False  # the answer's first data has arrived
        self.on_answer: Callable[[], None] | None = None  # told once, when it does (``Upstream.open``)

    def data(self) -> None:
        """Data arrived: the read timeout starts again (the first data ends the first-byte wait)."""
        self.last_data = time.monotonic()
        if not self.answering:
            self.answering = True
            self.wait = self.read_timeout
            if self.on_answer is not None:
                self.on_answer()

    def life(self) -> None:
        """A sign of life that is not the answer (llama.cpp's prompt progress): the wait starts again, as long as
        it was (before the answer: ``first_byte_timeout``)."""
        self.last_data = time.monotonic()

    def budget(self) -> float:
        return min(self.last_data + self.wait, self.total_deadline) - time.monotonic()

    def why(self) -> str:
        """Which deadline has passed, in words."""
        now = time.monotonic()
        if now >= self.total_deadline:
            return f"the upstream ran past total_timeout ({_seconds(now - self.started)} s)"
        silent = _seconds(now - self.last_data)
        if self.answering:
            return f"the upstream sent no data for {silent} s (read_timeout = {_seconds(self.read_timeout)} s)"
        since = "since its last prompt progress" if self.last_data > self.started else "after the request"
        return (f"the upstream's answer had not begun {silent} s {since} "
                f"(first_byte_timeout = {_seconds(self.first_byte_timeout)} s)")


async def next_piece(pieces: AsyncIterator[bytes], clock: Clock) -> bytes | None:
    """The next piece of an upstream body (None at its end), or UpstreamTimeout once a deadline has passed.

    No timer per piece (that costs more than the rest of the relay): the body's own read timeout ends a
    silent wait (httpx's, set to ``min(first_byte_timeout, total_timeout)`` for the response head and the
    first wait of the body; ``body.limit_waits`` shortens it to ``min(read_timeout, total_timeout)`` once
    the answer has begun: ``Clock.on_answer``), and the deadlines are checked as each piece arrives, so an
    upstream that sends only pings is cut at the first ping past its deadline. ``rewrite.rewrite_sse`` keeps an
    inlined copy of this step in its read loop (one coroutine less per read): a change here belongs there too.
    """
    try:
        piece = await pieces.__anext__()
    except StopAsyncIteration:
        return None
    except httpx.ReadTimeout:
        raise UpstreamTimeout(clock.why()) from None
    if clock.budget() <= 0:
        raise UpstreamTimeout(clock.why())
    return piece


def only_comments(piece: bytes) -> bool:
    """An SSE piece with nothing but comment lines (``: ping``): it does not count as data."""
    if piece[:1] not in (b":", b"\r", b"\n"):
        return False
    return all(not line or line.startswith(b":") for line in piece.splitlines())
