"""The Anthropic Messages adapter (events, messages, request translation), under the public name ``streamparse.anthropic``.

Invariant: an alias only. The code lives in ``streamparse.wire.anthropic``; this module re-exports its public names.
"""

from __future__ import annotations

from .wire.anthropic import *  # noqa: F403
from .wire.anthropic import __all__ as __all__
