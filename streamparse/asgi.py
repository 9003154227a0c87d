"""The ASGI middleware (``ToolCallMiddleware``), under the public name ``streamparse.asgi``.

Invariant: an alias only. The code lives in ``streamparse.proxy.middleware``; this module re-exports its public names.
"""

from __future__ import annotations

from .proxy.middleware import *  # noqa: F403
from .proxy.middleware import __all__ as __all__
