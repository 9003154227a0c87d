"""Which ``/v1`` paths the proxy relays untouched when several clients share it.

Every client reaches a backend as the one identity of its backend key. A path that holds state at the backend
(``/v1/files``, ``/v1/uploads``, ``/v1/batches``, ``/v1/vector_stores``, ``/v1/assistants``, ``/v1/threads``,
``/v1/fine_tuning``, ``/v1/containers``, ``/v1/conversations``, …) would let one client read or change what
another left there.

Invariant: with more than one proxy key, a path is relayed to a backend only when it is one of :data:`STATELESS`
(nothing is kept at the backend; ``/v1/models`` only read), when the backend's ``relay_paths`` lists it (a path or
a parent of it, opted in), or when the backend gives each proxy key its own backend key (``client_api_keys_env``,
which ``config`` holds to cover every proxy key: each client is itself there); a request goes only to the backends
of its chain (fallbacks too) that allow it, and gets a 403 that names the settings when none does. With one
proxy key or none, every path is relayed.
"""

from __future__ import annotations

from typing import Iterable

from .config import Backend

__all__ = ["STATELESS", "READ_ONLY", "refused_relay"]

READ_ONLY = ("/v1/models",)  # stateless when read (GET, HEAD); a DELETE there removes a shared fine-tuned model
# Paths whose requests leave nothing at the backend for another client to find.
STATELESS = ("/v1/completions", "/v1/embeddings", "/v1/moderations", "/v1/rerank", "/v1/score",
             "/v1/tokenize", "/v1/detokenize", "/v1/audio/speech", "/v1/audio/transcriptions",
             "/v1/audio/translations", "/v1/images/generations", "/v1/images/edits", "/v1/images/variations",
             "/v1/responses/input_tokens")


def _under(path: str, prefixes: Iterable[str]) -> bool:
    """Is ``path`` one of ``prefixes``, or below one of them (at a ``/``)?"""
    return any(path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def refused_relay(method: str, path: str, backend: Backend, proxy_keys: int) -> str | None:
    """Why ``method path`` (normalized, from ``/v1``) is not relayed to ``backend``, or None when it is."""
    if (proxy_keys <= 1 or _under(path, STATELESS) or (method in ("GET", "HEAD") and _under(path, READ_ONLY))
            or _under(path, backend.relay_paths) or backend.client_api_keys_env):
        return None
    return (f"{path} is not relayed: it keeps state at the backend, which every client of this proxy reaches as one "
            f"identity, and this proxy has {proxy_keys} keys. To allow it, list the path in backend "
            f"{backend.name!r}'s relay_paths, or give each proxy key its own backend key with client_api_keys_env "
            "(docs/proxy.md)")
