"""Which serving engine a backend's ``constrain`` aims at: the one it names, or (``auto``) the one probed; and
whether a backend is llama.cpp's server (``llamacpp``), whose prompt progress the proxy then asks for.

``auto`` asks the upstream, once, in this order:

- ``GET <server root>/props`` (the root is the base without its ``/v1``): llama.cpp's server answers
  with its ``default_generation_settings`` (or ``build_info``, ``total_slots``);
- ``GET <base>/models``: each entry's ``owned_by`` is ``llamacpp``, ``vllm`` or ``sglang`` on those servers;
- ``GET <server root>/get_server_info``: SGLang's server arguments (``model_path``, ``tp_size``).

A backend is known to be llama.cpp's server when its ``constrain`` says so (``llamacpp``), when ``auto`` found it,
or once any of its chat answers came with llama-server's ``Server: llama.cpp`` header (``saw``: no request of its
own, so a backend is never probed for this alone; its first request goes without progress).

Invariants: a probe never outlives ``PROBE_TIMEOUT`` per request, and its failure is a state, never an
exception; an upstream that answered is probed once per process (per worker), what was found (an engine,
or none: no constraint) is remembered for the backend and logged once; an upstream that could not be reached
is asked again ``RETRY_AFTER`` seconds later, and its requests go unconstrained until then. Only one probe
per backend runs at a time. A backend is called llama.cpp only on one of the three signs above.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Mapping, cast
from urllib.parse import urlsplit, urlunsplit

import anyio
import httpx

from ..constraints import Backend as Engine
from .config import Backend

__all__ = ["Engines", "server_root", "engine_from", "PROBE_TIMEOUT", "RETRY_AFTER"]

log = logging.getLogger("streamparse.server")
PROBE_TIMEOUT = 3.0  # seconds one probe request may take
RETRY_AFTER = 30.0  # seconds before an unreachable upstream is probed again
_OWNERS: dict[str, Engine] = {"llamacpp": "llamacpp", "llama.cpp": "llamacpp", "vllm": "vllm", "sglang": "sglang"}


def server_root(upstream: str) -> str:
    """``http://host:8000/v1`` -> ``http://host:8000``: where a server's own endpoints (``/props``) live."""
    parts = urlsplit(upstream)
    path = parts.path.rstrip("/")
    path = path[:-3] if path.endswith("/v1") else path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def engine_from(path: str, body: Any) -> Engine | None:
    """The engine a probe's JSON ``body`` (from ``path``: props, models or get_server_info) reveals, if any."""
    if not isinstance(body, dict):
        return None
    if path == "props":
        settings = ("default_generation_settings", "build_info", "total_slots")
        return "llamacpp" if any(key in body for key in settings) else None
    if path == "models":
        data = body.get("data")
        owners = {e.get("owned_by") for e in data if isinstance(e, dict)} if isinstance(data, list) else set()
        found = {_OWNERS[o] for o in owners if isinstance(o, str) and o in _OWNERS}
        return found.pop() if len(found) == 1 else None
    if path == "get_server_info":
        return "sglang" if "model_path" in body or "tp_size" in body else None
    return None


class Engines:
    """The engine each backend's ``constrain`` aims at, probed for ``auto`` and remembered."""

    def __init__(self, client: httpx.AsyncClient):
        self.client = client
        self.found: dict[str, Engine | None] = {}  # backend name -> what its probe found
        self._unreachable: dict[str, float] = {}  # backend name -> when its probe last failed
        self._locks: dict[str, anyio.Lock] = {}
        self._llamacpp: set[str] = set()  # backends whose answers said ``Server: llama.cpp``

    def llamacpp(self, backend: Backend) -> bool:
        """Is ``backend`` known to be llama.cpp's server (configured, probed or seen)?"""
        return (backend.name in self._llamacpp or backend.constrain == "llamacpp"
                or self.found.get(backend.name) == "llamacpp")

    def saw(self, backend: Backend, headers: Mapping[str, str]) -> None:
        """An answer from ``backend`` came with these headers: llama-server names itself in ``Server``."""
        if backend.name not in self._llamacpp and any(  # (a server in front of it may add its own name)
                name.strip().lower().startswith("llama.cpp") for name in headers.get("server", "").split(",")):
            self._llamacpp.add(backend.name)
            log.info("backend %r is llama.cpp's server (its Server header): streamed requests ask for its prompt "
                     "progress", backend.name)

    async def engine(self, backend: Backend, headers: Mapping[str, str] | None = None) -> Engine | None:
        """The engine to constrain for on ``backend`` (None: no constraint). ``headers``: what a probe sends
        (the forwarded request's, so a key-protected upstream answers)."""
        if backend.constrain == "off" or not backend.tool_prompt:
            return None
        if backend.constrain != "auto":
            return cast(Engine, backend.constrain)
        if backend.name in self.found:
            return self.found[backend.name]
        lock = self._locks.setdefault(backend.name, anyio.Lock())
        async with lock:
            if backend.name in self.found:
                return self.found[backend.name]
            if time.monotonic() - self._unreachable.get(backend.name, -RETRY_AFTER) < RETRY_AFTER:
                return None
            answered, engine, how = await self._probe(backend, dict(headers or {}))
            if not answered:
                self._unreachable[backend.name] = time.monotonic()
                log.warning("backend %r: constrain = \"auto\": the upstream did not answer (%s); no constraint, "
                            "asking again in %.0f s", backend.name, how, RETRY_AFTER)
                return None
            self.found[backend.name] = engine
            if engine is None:
                log.warning("backend %r: constrain = \"auto\": no llama.cpp, vLLM or SGLang found at %s (%s); "
                            "requests go unconstrained", backend.name, backend.display, how)
            else:
                log.info("backend %r: constrain = \"auto\" chose %s (%s)", backend.name, engine, how)
            return engine

    async def _probe(self, backend: Backend, headers: dict[str, str]) -> tuple[bool, Engine | None, str]:
        """``(did anything answer, the engine found, how)``."""
        root = server_root(backend.upstream)
        limit = min(PROBE_TIMEOUT, backend.connect_timeout, backend.read_timeout)
        answered, seen = False, []
        for path, url in (("props", root + "/props"), ("models", backend.upstream + "/models"),
                          ("get_server_info", root + "/get_server_info")):
            try:
                with anyio.fail_after(limit + 1):
                    resp = await self.client.get(url, headers=headers, timeout=httpx.Timeout(limit))
            except (httpx.HTTPError, TimeoutError) as exc:
                seen.append(f"/{path}: {type(exc).__name__}")
                continue
            answered = True
            seen.append(f"/{path}: {resp.status_code}")
            if resp.status_code != 200:
                continue
            try:
                engine = engine_from(path, resp.json())
            except ValueError:
                continue
            if engine is not None:
                return True, engine, f"GET /{path}"
        return answered, None, ", ".join(seen)
