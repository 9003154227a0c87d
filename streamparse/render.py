"""The dialect writers: `render` writes calls as a dialect's markup (`RENDERERS`: one writer per dialect).
"""

# Invariant: an alias only. The code lives in ``streamparse.dialects.render``; this module re-exports its public names.

from __future__ import annotations

from .dialects.render import *  # noqa: F403
from .dialects.render import __all__ as __all__
