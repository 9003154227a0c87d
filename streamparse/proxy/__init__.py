"""The proxy: an ASGI app in front of any OpenAI-compatible server, its configuration, its
workers, and the ASGI middleware for apps that need no proxy hop.

Invariant: the only layer (with ``harness``) that does network I/O. A request flows down one
path: ``app`` (route) -> ``messages`` (Anthropic in) -> ``pipeline`` (plan, exchange, rewrite,
respond) -> ``exchange`` (the bounded upstream request) -> ``replies`` (errors in the client's shape).
Submodules are imported on use, so ``import streamparse`` never loads starlette or httpx.
"""

from __future__ import annotations

from .._lazy import lazy_submodules  # noqa: E402

__getattr__, __dir__ = lazy_submodules(__name__, __path__, lambda: globals())
