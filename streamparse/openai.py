"""The OpenAI chat-completions adapter: streamed chunks and whole completions rewritten, tool calls parsed
out of their text.
"""

# Invariant: an alias only. The code lives in ``streamparse.wire.openai``; this module re-exports its public names.

from __future__ import annotations

from .wire.openai import *  # noqa: F403
from .wire.openai import __all__ as __all__
