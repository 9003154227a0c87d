"""The OpenAI Responses adapter (events, response objects, request translation), under the public name
``streamparse.responses``.

Invariant: an alias only. The code lives in ``streamparse.wire.responses``; this module re-exports its public names.
"""

from __future__ import annotations

from .wire.responses import *  # noqa: F403
from .wire.responses import __all__ as __all__
