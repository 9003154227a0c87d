"""The AFTER state: a call block's optional closers (``</tool_call>`` after a body that ended without it,
a fence's closing backticks), read after the block.

Invariant: whitespace before a closer belongs to the block only up to ``MAX_GAP`` characters and only if a
closer follows; otherwise it leaves as text, once, in order, and the text after it is read as prose.
Closers are taken in their order, each at most once. The reader owns its state (the closers still allowed, the
whitespace read); the parser owns the moves (the reader asks it for ``states.Move.CLOSERS_END``).
"""

from __future__ import annotations

import re
from typing import Protocol

from .gaps import MAX_GAP, closer_at
from .states import CLOSERS_END, Move

__all__ = ["AfterReader"]

_WS_RUN = re.compile(r"\s*")


class Owner(Protocol):
    """What the reader asks of its parser: where text goes, and the move that ends the closers."""

    def _text(self, s: str) -> None: ...
    def _go(self, move: Move) -> None: ...


class AfterReader:
    """Optional closers after a block, made as the block ends with them: ``scan`` the text after the block, ``end``
    at the stream's end. Whitespace that turned out to be text goes to the owner's text; the owner moves when the
    closers end."""

    __slots__ = ("closers", "ws", "_owner")

    def __init__(self, owner: Owner, closers: list[str]) -> None:
        self.closers = closers  # optional closers still allowed, lowercase, in order
        self.ws = ""  # whitespace read while waiting for a closer
        self._owner = owner

    def scan(self, text: str, pos: int, final: bool) -> int:
        n = len(text)
        k = min(_WS_RUN.match(text, pos).end(), pos + MAX_GAP + 1 - len(self.ws))  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
        self.ws += text[pos:k]
        if len(self.ws) > MAX_GAP:
            return self.end(k)
        if k >= n:
            return n if not final else self.end(n)
        r = closer_at(text, k, n, tuple(self.closers), final)
        if r == -1:
            return k
        if isinstance(r, str):
            self.closers = self.closers[self.closers.index(r.lower()) + 1 :]
            self.ws = ""
            if not self.closers:
                self._owner._go(CLOSERS_END)
            return k + len(r)
        return self.end(k)

    def end(self, resume: int) -> int:
        """No closer follows: the whitespace read is text, and reading resumes at ``resume``."""
        self.closers = []
        self._owner._go(CLOSERS_END)
        ws, self.ws = self.ws, ""
        self._owner._text(ws)
        return resume
