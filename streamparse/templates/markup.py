"""Text comparisons for reading markup out of renderings: shared prefixes and suffixes, the parts that change
between two renderings, JSON values found in text.

Invariant: pure functions of their arguments; nothing here knows a format or renders anything.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Sequence

__all__ = ["common_suffix", "token_suffix", "Pattern", "pattern_of", "find_json", "JsonSpan"]

_DECODER = json.JSONDecoder()


def common_suffix(a: str, b: str) -> int:
    """The length of the longest common suffix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        n += 1
    return n


def _boundary(text: str, i: int) -> bool:
    """Does a markup token begin at ``text[i]`` (a tag's or a bracket's opening, after one's closing, at a change
    between whitespace and text)?"""
    if i <= 0 or i >= len(text):
        return True
    before, here = text[i - 1], text[i]
    return here in "<[" or before in ">]" or before.isspace() != here.isspace()


def token_suffix(a: str, b: str) -> int:
    """The length of the longest common suffix of ``a`` and ``b`` that begins where a markup token begins in both
    (so ``|><x>`` shared after two different tags is not taken: only ``<x>`` is)."""
    n = common_suffix(a, b)
    while n > 0 and not (_boundary(a, len(a) - n) and _boundary(b, len(b) - n)):
        n -= 1
    return n


@dataclass(frozen=True)
class Pattern:
    """Markup that is the same in every rendering but for some holes (a call's id or index): literal pieces with a
    hole between each two."""

    pieces: tuple[str, ...]

    @property
    def fixed(self) -> bool:
        return len(self.pieces) == 1

    @property
    def text(self) -> str:
        """The markup when it has no hole (else its first piece)."""
        return self.pieces[0]

    def regex(self, hole: str = r"[^\n]*?") -> str:
        return hole.join(re.escape(p) for p in self.pieces)

    def __bool__(self) -> bool:
        return any(self.pieces)


def pattern_of(variants: Sequence[str]) -> Pattern | None:
    """The pattern the variants share: their common beginning and end around one hole (none when they are all
    equal); None when they share too little to be one piece of markup with a hole."""
    first = variants[0]
    if all(v == first for v in variants):
        return Pattern((first,))
    head = len(os.path.commonprefix(list(variants)))
    tail = min(common_suffix(first, v) for v in variants[1:])
    tail = min(tail, min(len(v) for v in variants) - head)
    if tail < 0:
        return None
    return Pattern((first[:head], first[len(first) - tail:] if tail else ""))


@dataclass(frozen=True)
class JsonSpan:
    start: int
    end: int
    value: Any


def find_json(text: str, want: Any, start: int = 0) -> JsonSpan | None:
    """The first JSON value in ``text`` (from ``start``) that ``want(value)`` accepts, as written."""
    i = start
    while True:
        candidates = [k for k in (text.find("{", i), text.find("[", i)) if k >= 0]
        if not candidates:
            return None
        k = min(candidates)
        try:
            value, end = _DECODER.raw_decode(text, k)
        except ValueError:
            i = k + 1
            continue
        if want(value):
            return JsonSpan(k, end, value)
        i = k + 1
