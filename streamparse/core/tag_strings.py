"""Strings in a tag body's arguments (JSON's and Python's quotes, Gemma 4's ``<|"|>``, FunctionGemma's ``<escape>``):
a tag inside an open string is the string's text. The part of ``TagBody`` that follows them (a mixin; the state
lives in ``TagBody``'s slots).

Invariant: ``TagBody``'s: each character is examined once; these readers follow ``in_str`` exactly as ``scan`` does,
and change nothing when they give up (-1).
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from .gaps import partial_tail

__all__ = ["QuotedStrings", "SIMPLE_QUOTES"]


class QuotedStrings:
    """The string half of ``TagBody``'s reading; the attributes are ``TagBody``'s (see there)."""

    strings: tuple[str, ...]
    in_str: str
    tags: tuple[str, ...]
    longest: int
    search: Callable[..., Optional["re.Match[str]"]]

    def _strings_only(self, text: str, tags: bool = True) -> int:
        """``text`` read as ``scan`` reads it when every ``<`` in it is inside a string (``tags=False``: it holds no
        tag at all): ``in_str`` follows its quotes and escapes. Returns how much of it was read: all, or all but a
        backslash ending it inside a string (its escaped character is still to come); -1 (nothing changed): a
        ``<`` outside a string."""
        quote, i, n = self.in_str, 0, len(text)
        outside = (SIMPLE_QUOTES if tags else _QUOTES)[self.strings]
        while i < n:
            if quote:  # the string's characters and escapes in one match, up to its closing quote
                j = _STRING_BODY[quote](text, i).end()  # type: ignore[union-attr]  # (a `*` pattern always matches)
                if j == n:
                    break
                if text[j] != quote:  # a backslash ending the text
                    self.in_str = quote
                    return j
                quote, i = "", j + 1
                continue
            m = outside.search(text, i)
            if m is None:
                break
            if m.group() == "<":
                return -1
            quote, i = m.group(), m.end()
        self.in_str = quote
        return n

    def _long_strings(self, text: str, quote: str, i: int = 0) -> int:
        """``text`` read as ``scan`` reads it (``_skip_string`` inside a string) when its only tags outside strings
        are ``quote``, the one string delimiter, which is longer than a character (no escapes): ``in_str`` follows
        it. Returns how much was read: all, or all but a tag's prefix ending it (held); -1 (nothing changed): a tag
        outside a string. ``i``: where to begin, past a delimiter that opened a string (the caller found it)."""
        n, inside = len(text), quote if i else self.in_str
        while True:
            if inside:  # (the same delimiter closes it, as written)
                k = text.find(quote, i)
                if k < 0:
                    self.in_str = quote
                    j = text.find(quote[0], max(i, n - len(quote) + 1))  # (``partial_tail`` for one tag, inline)
                    while j >= 0 and not quote.startswith(text[j:].lower()):
                        j = text.find(quote[0], j + 1)
                    return n if j < 0 else j
                inside, i = "", k + len(quote)
                continue
            if text.find("<", i) < 0:  # (every tag of these dialects begins with "<", as the delimiter does)
                self.in_str = ""
                return n
            m = self.search(text, i)
            if m is None:
                self.in_str = ""
                return partial_tail(text, i, n, self.tags, self.longest)
            if m.group().lower() != quote:
                return -1  # (``in_str`` untouched: nothing changed)
            inside, i = quote, m.end()

    def _skip_string(self, text: str, i: int, end: int, final: bool) -> int:
        """Inside a string: past its closing delimiter (the string ends), to ``end`` (it goes on), or ``-1 - k``:
        hold from k (a backslash ending the text, whose escaped character is still to come; a cut delimiter)."""
        quote = self.in_str
        if len(quote) > 1:
            k = text.find(quote, i, end)
            if k >= 0:
                self.in_str = ""
                return k + len(quote)
            hold = end if final else partial_tail(text, i, end, (quote,), len(quote))
            return end if hold == end else -1 - hold
        j = _STRING_BODY[quote](text, i, end).end()  # type: ignore[union-attr]  # (a `*` pattern always matches)
        if j == end:
            return end
        if text[j] == quote:
            self.in_str = ""
            return j + 1
        return end if final else -1 - j  # a backslash ending the text


# Dialects whose strings are one-character quotes: outside a string, a quote or a tag's "<" is what matters.
SIMPLE_QUOTES = {('"',): re.compile('[<"]'), ("'", '"'): re.compile("[<'\"]")}
_QUOTES = {('"',): re.compile('"'), ("'", '"'): re.compile("['\"]")}  # (in text that holds no tag)
# A string's inside: runs of plain characters, one escape between runs (sre reads a run in one step; the plain
# ``(?:[^q\\]|\\.)*`` took about 20 ns a character)
_STRING_BODY = {q: re.compile(f"[^{q}\\\\]*+(?:\\\\.[^{q}\\\\]*+)*+", re.S).match for q in ("'", '"')}
