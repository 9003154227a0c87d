"""The dialect writers (``render``, ``RENDERERS``), under the public name ``streamparse.render``.

Invariant: an alias only. The code lives in ``streamparse.dialects.render``; this module re-exports its public names.
"""

from __future__ import annotations

from .dialects.render import *  # noqa: F403
from .dialects.render import __all__ as __all__
