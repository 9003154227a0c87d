"""The OpenAI Responses adapter: OpenAI chunks and completions as Responses stream events and response
objects, and Responses requests as chat-completions ones.
"""

# Invariant: an alias only. The code lives in ``streamparse.wire.responses``; this module re-exports its public names.

from __future__ import annotations

from .wire.responses import *  # noqa: F403
from .wire.responses import __all__ as __all__
