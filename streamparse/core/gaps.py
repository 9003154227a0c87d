"""What a body reads between its parts: whitespace within a budget, and a closer or tag cut by a delta's end.

Invariant: positional and chunking-invariant: the whitespace budget (``MAX_GAP``) counts characters from where
the gap began, and a cut tag is always the earliest prefix of one that ends the text, so any chunking holds the
same text and reads the same gap.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple
from .literals import literals

__all__ = ["MAX_GAP", "NON_WS", "Stop", "closer_at", "partial_tail"]

MAX_GAP = 64  # whitespace allowed between a value and an optional closer (positional: chunking-invariant)
NON_WS = re.compile(r"\S")


class Stop(NamedTuple):
    """A body reader's answer when its scan stops at ``at``: the text from there waits for more (held), or the
    block ended there. Any other answer is an ``int``: where the scan goes on."""

    at: int


def closer_at(text: str, j: int, end: int, closers: tuple[str, ...], final: bool) -> str | int | None:
    """At ``text[j]``: the closer written there, PARTIAL_CLOSER (-1) if the text ends inside one, or None
    (``closers`` lowercase; see ``literals.Literals.at``)."""
    return literals(closers).at(text, j, end, final)


def partial_tail(text: str, pos: int, end: int, tags: tuple[str, ...], longest: int) -> int:
    """Where ``text[:end]`` ends with a prefix of one of ``tags`` (else ``end``): the earliest such start,
    tried at every character that begins a tag (``<`` for most) in the last ``longest`` characters, since a tag
    may hold another ``<`` (``<|close|>tools<|sep|>``)."""
    firsts, prefixes = _tails(tags)
    start, best = max(pos, end - longest + 1), end
    for first in firsts:
        k = text.find(first, start, best)
        while k >= 0:
            if text[k:end].lower() in prefixes:
                best = k
                break
            k = text.find(first, k + 1, best)
    return best


@functools.lru_cache(maxsize=256)
def _tails(tags: tuple[str, ...]) -> tuple[str, frozenset[str]]:
    """``partial_tail``'s table for ``tags``, in one lookup: their first characters and every prefix."""
    return _first_characters(tags), _prefixes(tags)


@functools.lru_cache(maxsize=256)
def _first_characters(tags: tuple[str, ...]) -> str:
    """The characters the tags begin with (``<`` for most; ``[`` for Mistral's ``[/THINK]``), once each, in either
    case (the tags are given lowercase; harmony's ``to=user<|message|>`` may be written ``TO=USER…``)."""
    return "".join(sorted({ch for t in tags if t for ch in (t[0], t[0].upper())}))


@functools.lru_cache(maxsize=256)
def _prefixes(tags: tuple[str, ...]) -> frozenset[str]:
    """Every prefix of every tag, lowercase (the tags are given lowercase)."""
    return frozenset(t[:k] for t in tags for k in range(1, len(t) + 1))
