"""The AFTER state: a call block's optional closers (``</tool_call>`` after a body that ended without it,
a fence's closing backticks), read after the block.

Invariant: whitespace before a closer belongs to the block only up to ``MAX_GAP`` characters and only if a
closer follows; otherwise it leaves as text, once, in order, and the text after it is read as prose.
Closers are taken in their order, each at most once.
"""

from __future__ import annotations

import re
from typing import Callable

from .gaps import MAX_GAP, closer_at
from .output import Output
from .states import Move

__all__ = ["AfterReader"]

_WS_RUN = re.compile(r"\s*")


class AfterReader(Output):
    """The part of the parser that reads optional closers after a block (the parser sets the attributes)."""

    _go: Callable[[Move], None]  # the parser's one state change (states.py)
    _closers: list[str]  # optional closers still allowed, lowercase, in order
    _after_ws: str  # whitespace read while waiting for a closer

    def _scan_after(self, text: str, pos: int, final: bool) -> int:
        n = len(text)
        k = min(_WS_RUN.match(text, pos).end(), pos + MAX_GAP + 1 - len(self._after_ws))  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
        self._after_ws += text[pos:k]
        if len(self._after_ws) > MAX_GAP:
            return self._end_after(k)
        if k >= n:
            return n if not final else self._end_after(n)
        r = closer_at(text, k, n, tuple(self._closers), final)
        if r == -1:
            return k
        if isinstance(r, str):
            self._closers = self._closers[self._closers.index(r.lower()) + 1 :]
            self._after_ws = ""
            if not self._closers:
                self._go(Move.CLOSERS_END)
            return k + len(r)
        return self._end_after(k)

    def _end_after(self, resume: int) -> int:
        self._closers = []
        self._go(Move.CLOSERS_END)
        ws, self._after_ws = self._after_ws, ""
        self._text(ws)
        return resume
