"""Strings in a tag body's arguments (JSON's and Python's quotes, Gemma 4's ``<|"|>``, FunctionGemma's ``<escape>``):
a tag inside an open string is the string's text. The part of ``TagBody`` that follows them (a mixin; the state
lives in ``TagBody``'s slots).

Invariant: ``TagBody``'s: each character is examined once; these readers follow ``in_str`` exactly as ``scan`` does,
and change nothing when they give up (-1); its fast paths (``fast_lagging``, ``fast_strings``, ``fast_long``) take a
delta as ``scan`` would or return None having changed nothing.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from .block import Block
from .events import Event
from .gaps import partial_tail

__all__ = ["QuotedStrings", "SIMPLE_QUOTES"]


class QuotedStrings:
    """The string half of ``TagBody``'s reading; the attributes are ``TagBody``'s (see there)."""

    b: Block
    limit: int
    strings: tuple[str, ...]
    in_str: str
    tags: tuple[str, ...]
    longest: int
    search: Callable[..., Optional["re.Match[str]"]]
    tag_or_tail: Callable[..., Optional["re.Match[str]"]]
    quote_search: Callable[..., Optional["re.Match[str]"]]
    long_quote: str
    lagged: list[str]

    def fast(self, text: str) -> list[Event] | None:
        raise NotImplementedError  # TagBody's

    def _take(self, text: str, k: int) -> list[Event]:
        raise NotImplementedError  # TagBody's

    def _up_to_tag(self, text: str, m: re.Match[str]) -> list[Event] | None:
        raise NotImplementedError  # TagBody's

    def _cut_tag(self, text: str, m: re.Match[str]) -> bool:
        raise NotImplementedError  # TagBody's

    def fast_lagging(self, text: str) -> list[Event] | None:
        """In an item whose strings are JSON's or Python's quotes, not streamed: ``text`` holding no tag, nor a
        tag's start at its end, is taken unread (``lagged``, written with what follows once read): its quotes
        matter only when a tag could. Else what was lagged is read (``_strings_only``) and ``fast_strings`` reads
        ``text``."""
        b = self.b
        size = b.size + len(text)
        if size >= self.limit:
            return None
        m = self.tag_or_tail(text) if "<" in text else None
        if m is None:
            b.size = size
            self.lagged.append(text)
            return []
        if self.lagged:
            lagged = "".join(self.lagged)
            if lagged.endswith("\\"):  # (an empty delta may have followed the backslash)
                return None  # (an escape may be pending: ``reclaim`` gives the backslash back to the slow path)
            self._strings_only(lagged, tags=False)  # (no tag in it, no backslash ending it: all read)
            self.lagged = []
            b.sink(lagged)
        if not self.in_str and self.quote_search(text) is None:  # no string here: the tag is all that counts
            return self._up_to_tag(text, m)
        return self.fast_strings(text)

    def fast_strings(self, text: str) -> list[Event] | None:
        """In an item whose strings are one-character quotes (a tag inside an open string is text): inside a string
        that goes on (no quote, no backslash), ``text`` is taken whole; else its strings are followed
        (``_strings_only``) and a backslash ending it held; text holding no quote nor backslash is read by ``fast``."""
        b = self.b
        size = b.size + len(text)
        if size >= self.limit:
            return None
        quote = self.in_str
        if quote and quote[0] not in text and "\\" not in text:  # inside a string that goes on: no tag counts
            b.size = size
            b.sink(text)
            return []
        if self.quote_search(text) is None:  # no quote, no backslash (a longer delimiter is a tag)
            return self.fast(text)
        if self.strings not in SIMPLE_QUOTES:
            return None
        k = self._strings_only(text)
        if k < 0:  # a "<" outside a string: read here when it begins a tag's prefix that ends the text
            k = self._strings_before_cut_tag(text)
        # -1: a tag outside a string, or a string opening or closing around one: the slow path reads it;
        # else what ends the text is held: a backslash before its escape, a tag's prefix
        return None if k < 0 else self._take(text, k)

    def _strings_before_cut_tag(self, text: str) -> int:
        """Where a tag's prefix ending ``text`` begins, when the strings before it are read whole and it stands
        outside them (as ``scan`` reads it: the strings followed, the prefix held); -1 (nothing changed): else."""
        m = self.tag_or_tail(text)
        if m is None or not self._cut_tag(text, m):
            return -1
        j, quote = m.start(), self.in_str
        if self._strings_only(text[:j]) == j and not self.in_str:
            return j
        self.in_str = quote
        return -1

    def fast_long(self, text: str) -> list[Event] | None:
        """In an item whose one string delimiter is a tag (Gemma 4's ``<|"|>``, FunctionGemma's ``<escape>``: the
        same closes it, no escapes): text with no ``<`` is taken whole; outside a string it is read as ``fast``
        reads it unless its first tag is the delimiter; else ``_long_strings`` follows the strings, and what ends
        the text (a tag's or the delimiter's prefix) is held."""
        b = self.b
        size = b.size + len(text)
        if size >= self.limit:
            return None
        if "<" not in text:  # (every tag, the delimiter too, begins with one)
            b.size = size
            b.sink(text)
            return []
        long = self.long_quote
        i = 0
        if not self.in_str:
            m = self.tag_or_tail(text)
            if m is None:
                b.size = size
                b.sink(text)
                return []
            if m.group().lower() != long:
                return self._up_to_tag(text, m)
            i = m.end()  # (the delimiter opens a string there)
        k = self._long_strings(text, long, i)
        return None if k < 0 else self._take(text, k)  # (-1: a tag outside a string)

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
                    return partial_tail(text, i, n, (quote,), len(quote))  # (the delimiter's prefix ending it)
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
