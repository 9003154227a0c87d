"""Literal markup read at a position: which of a few literals is written there, or whether the text ends
inside one; and the searches built from literals (any of them; the characters they begin with, for the gate).
The one mechanism behind a body's tags and closers (``bodies.closer_at``, ``TagBody``) and a head's literal steps
(``scanner``). Pure functions over ``str``, no other core module imported.

Invariant: ``Literals(texts).at(text, k, end, final)`` is the first of ``texts``, in order, that ``text[k:end]``
begins with, compared after ``str.lower()``; else ``PARTIAL_CLOSER`` when the text ends inside one and ``final``
is false; else None.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Callable, Sequence

__all__ = ["ASCII_NOCASE", "PARTIAL_CLOSER", "Literals", "first_characters", "literals", "literal_pattern",
           "prefix_pattern"]

PARTIAL_CLOSER = -1  # the text ends inside one of the literals
# Markers are ASCII (or have no cased letters). Case-insensitive matching is ASCII-only, so that it agrees
# with the str.lower() used for partial markers: "ı", "İ", "ſ" never stand for "i"/"s" (chunking-invariant).
ASCII_NOCASE = re.I | re.A


@functools.lru_cache(maxsize=256)
def literal_pattern(markers: tuple[str, ...]) -> re.Pattern[str]:
    """One search for any of these literal markers (ASCII case-insensitive), built once per tuple."""
    return re.compile("|".join(re.escape(m) for m in sorted(markers, key=len, reverse=True)), ASCII_NOCASE)


def prefix_pattern(words: Sequence[str], depth: int) -> str:
    """A regex for "a word may start here": each word's first ``depth`` characters, where every proper prefix
    also matches at the end of the text (the rest may come with the next delta). One trie, so ``<div`` or
    ``<b>`` in prose never matches while ``<tool_call>``, ``<thi`` (end of text) and ``<`` do."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for ch in word[:depth]:
            node = node.setdefault(ch, {})
        node[""] = {}  # a word (or its checked part) ends here

    def alternatives(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        return "(?:" + "|".join([re.escape(ch) + alternatives(child) for ch, child in sorted(node.items())] + [r"\Z"]) + ")"

    return "|".join(re.escape(ch) + alternatives(child) for ch, child in sorted(trie.items()))


@functools.lru_cache(maxsize=256)
def first_characters(tokens: tuple[str, ...]) -> Callable[[str], re.Match[str] | None]:
    """A search for any character one of ``tokens`` may begin with, in either case: a text holding none holds
    no token, nor the start of one cut by its end (the gate's test)."""
    firsts = sorted({ch for t in tokens if t for ch in (t[0], t[0].lower(), t[0].upper())})
    return re.compile(f"[{re.escape(''.join(firsts))}]" if firsts else "(?!)").search


class Literals:
    """A tuple of literals (lowercase), read at a position; built once per tuple (:func:`literals`)."""

    __slots__ = ("texts", "widest")

    def __init__(self, texts: tuple[str, ...]):
        self.texts = texts
        self.widest = max(map(len, texts), default=0)

    def at(self, text: str, k: int, end: int, final: bool) -> str | int | None:
        """The literal written at ``text[k]`` (as written), ``PARTIAL_CLOSER`` if ``text[:end]`` ends inside
        one (never when ``final``), or None."""
        seg = text[k : min(end, k + self.widest)]
        low = seg.lower()
        for t in self.texts:
            if low.startswith(t):
                return seg[: len(t)]
        if not final and k + len(seg) == end:
            for t in self.texts:
                if t.startswith(low):
                    return PARTIAL_CLOSER
        return None


@functools.lru_cache(maxsize=1024)
def literals(texts: tuple[str, ...]) -> Literals:
    """The reader of these literals (lowercase), built once per tuple."""
    return Literals(texts)
