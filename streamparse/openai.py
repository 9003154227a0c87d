"""The OpenAI adapter (chunk and completion rewriting), under the public name ``streamparse.openai``.

Invariant: an alias only. The code lives in ``streamparse.wire.openai``; this module re-exports its public names.
"""

from __future__ import annotations

from .wire.openai import *  # noqa: F403
from .wire.openai import __all__ as __all__
