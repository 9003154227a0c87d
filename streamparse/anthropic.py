"""The Anthropic Messages adapter: OpenAI chunks and completions as Anthropic stream events and messages,
and Anthropic requests as OpenAI ones.
"""

# Invariant: an alias only. The code lives in ``streamparse.wire.anthropic``; this module re-exports its public names.

from __future__ import annotations

from .wire.anthropic import *  # noqa: F403
from .wire.anthropic import __all__ as __all__
