"""The ASGI middleware: `ToolCallMiddleware` wraps an ASGI app that serves chat completions and rewrites
its answers' tool calls.
"""

# Invariant: an alias only. The code lives in ``streamparse.proxy.middleware``; this module re-exports its public names.

from __future__ import annotations

from .proxy.middleware import *  # noqa: F403
from .proxy.middleware import __all__ as __all__
