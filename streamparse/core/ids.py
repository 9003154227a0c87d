"""The ids streamparse mints: call ids, and the ``resp_`` / ``msg_`` / ``fc_`` / ``toolu_`` / request ids above it.

Invariant: every random part comes from the operating system's secure source (``os.urandom``), read afresh for
each id, so no id can be predicted from others, and a forked worker shares no state that could repeat another's;
at least 96 random bits an id.
"""

from __future__ import annotations

import os

__all__ = ["fresh_id", "ID_BYTES"]

ID_BYTES = 12  # 96 bits: the fewest an id carries


def fresh_id(prefix: str = "", random_bytes: int = ID_BYTES) -> str:
    """``prefix`` and ``random_bytes`` secure random bytes as hex (at least :data:`ID_BYTES` of them)."""
    return prefix + os.urandom(max(random_bytes, ID_BYTES)).hex()
