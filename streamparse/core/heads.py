"""What reading an opener's head answers (``head_match.match_head``): a head matched, the text ending inside one
(``PARTIAL``), or not one; and the head's positional limits.

Invariant: data and constants only; the limits count characters from the head's start, so any chunking reads the
same head.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["PARTIAL", "Partial", "HeadMatch", "MAX_WS", "MAX_NAME"]

PARTIAL: Final = "partial"  # "could still become a marker or head: wait for more text"
Partial = Literal["partial"]
MAX_NAME = 128
MAX_WS = 32  # whitespace allowed inside a head; past it the head fails (positional, so chunking-invariant)


@dataclass
class HeadMatch:
    end: int  # where the head (consumed parts) ends: the body starts here
    name: str | None
