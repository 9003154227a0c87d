"""Incremental body scanners: where a block's items and its end are. Pure, no decoding. This module
holds the bracket body (JSON values, a Python list) and what every body shares; ``tag_body`` the other.

Invariant: each character of a body is examined once (searches start at new
text; a held partial tag is at most one tag long), and nothing recurses on
nesting depth, so any ``str`` is scanned in linear time without raising.
A scanner writes what it consumes into its :class:`Block`, closes complete items
into ``block.items`` (the block notes in ``item_runs`` where each stands among its
runs of text outside items), and sets ``block.done`` at the block's end.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from .block import Block
from .json_lexis import comment_end
from .gaps import MAX_GAP, NON_WS, Stop
from .literals import PARTIAL_CLOSER, literals
from .value_tables import Search

__all__ = ["BracketBody"]

_BEFORE, _VALUE, _AFTER, _INNER = range(4)  # bracket body states: before a value, in one, after one, after an inner one
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_IN_DQ = re.compile(r'["\\]')
_IN_SQ = re.compile(r"['\\]")
_DQ_SEARCH, _SQ_SEARCH = _IN_DQ.search, _IN_SQ.search  # (the gate's, bound once)


class BracketBody:
    """JSON values (or one Python list): strings and depth tracked; top-level ``{`` and the ``{``
    elements of a top-level ``[`` are items. Ends at an end marker, or with its value."""

    tags: tuple[str, ...] = ()  # no tags inside items: their ends are brackets
    tentative = False  # never waits on what follows a closer to know what it was
    fallback = ""  # the end of the stream never settles a body by a fallback
    __slots__ = ("b", "closers", "has_end", "seps", "several", "python", "missing_brace", "depth", "quote",
                 "esc", "top", "state", "pending", "sep_seen", "struct", "skip", "opens", "blank", "closer_at")

    def __init__(self, block: Block, end_tags: tuple[str, ...], fenced: bool, separators: str, several: bool,
                 python: bool, missing_brace: bool):
        self.b = block
        self.closers, self.closer_at = _closers(end_tags, fenced)
        self.has_end = bool(end_tags)
        self.seps, self.several, self.python, self.missing_brace = separators, several, python, missing_brace
        self.depth = 0
        self.quote = ""
        self.esc = False  # inside a string, the previous piece ended with a lone backslash
        self.top = ""
        self.state = _BEFORE
        self.pending = ""  # whitespace/separator after a value, not yet known to be the block's
        self.sep_seen = False
        self.struct, self.skip = _struct_patterns(python, bool(end_tags), fenced)
        # A Python list is checked as it goes, so prose that opened one ("[Intro(part one", "[TODO(me] …") is
        # released at once, not held to the stream's end: its brackets must pair (``opens``, the ones open) and
        # a blank line outside strings ends it (``blank``: only whitespace since a newline).
        self.opens = ""
        self.blank = False

    def unread(self) -> str:
        """What the scanner holds that is not written to the block: the whitespace after a value (``pending``)."""
        return self.pending

    def gate(self) -> Search | None:
        """The parser's gate inside a value: a search for the characters that matter there (a string's quote or a
        backslash, in a string; outside one, what ``scan`` looks for), so a delta holding none is the value's text,
        written as it is. None elsewhere, where every character counts: before or after a value, a comment, an
        escape cut by the last delta, a Python list's blank-line watch."""
        if self.state != _VALUE or self.esc or self.blank:
            return None
        quote = self.quote
        if quote:
            return _DQ_SEARCH if quote == '"' else _SQ_SEARCH if quote == "'" else None  # (else a comment)
        return self.struct.search

    def may_finish(self, delta: str) -> bool:
        """Could ``delta`` complete an item (and so start a decode)? False only when it surely cannot:
        inside a string, the string must close first (or a marker may begin)."""
        if self.quote[:1] == "/":
            return True  # inside a comment: its end may come, then anything
        if self.quote:
            return self.quote in delta or "<" in delta
        return any(c in delta for c in "}])<`;")

    def scan(self, text: str, pos: int, end: int, final: bool) -> int:
        b = self.b
        write = b.write
        i = pos
        while i < end and not b.done:
            if self.quote:
                if self.quote[0] == "/":  # in a // or /* */ comment (JSON bodies): its quotes and brackets are text
                    self.quote, i = comment_end(self.quote, text, i, end)
                    continue
                j = _string_end(text, i + 1 if self.esc else i, end, _IN_DQ if self.quote == '"' else _IN_SQ)
                self.esc = j == _ESCAPE_PENDING
                if j < 0:
                    i = end
                    break
                self.quote = ""
                i = j + 1
                continue
            if self.state != _VALUE:
                if pos < i:
                    write(text[pos:i])
                r = self._between(text, i, end, final)
                if type(r) is Stop:
                    return r.at
                pos = i = r  # type: ignore[assignment]  # (an int here)
                continue
            j = self.skip(text, i, end).end()  # type: ignore[union-attr]  # (a `*` pattern always matches)
            if self.blank and NON_WS.search(text, i, j):
                self.blank = False
            if j == end:
                i = end
                break
            ch = text[j]
            i = j + 1
            if self.python and not self._python_goes_on(ch):
                write(text[pos:j])
                return self._end_without(j)
            if ch in "{[(":
                depth = self.depth = self.depth + 1
                if depth == 2 and ch == "{" and self.top == "[" and not self.python:
                    write(text[pos:j])
                    pos = j
                    b.open_item()
            elif ch in "}])":
                depth = self.depth = self.depth - 1
                if b.in_item and (depth == 0 or (depth == 1 and self.top == "[" and not self.python)):
                    write(text[pos:i])
                    pos = i
                    b.close_item()
                if depth <= 0:
                    if pos < i:
                        write(text[pos:i])
                        pos = i
                    self.depth = 0
                    if not self.has_end and not self.seps and not self.several:
                        b.end()
                        return i
                    self.state, self.pending, self.sep_seen = _AFTER, "", False
                elif depth == 1 and (self.top == "{" and self.missing_brace or self.python and ch == ")"):
                    # after an inner value (a call in a Python list): only a separator or a closer may follow,
                    # so prose after "[f(x)" ends the block at once instead of holding it to the stream's end
                    write(text[pos:i])
                    pos = i
                    self.state, self.pending = _INNER, ""
            elif ch == "\n":
                continue
            elif ch == '"' or ch == "'":
                self.quote = ch
            elif ch == "/":  # a comment opens only with "//" or "/*" (a "/" at the end waits for the next text)
                if i == end and not final:
                    write(text[pos:j])
                    return j
                if i < end and text[i] in "/*":
                    self.quote, i = "/" + text[i], i + 1
            else:  # "<" or "`": an end marker at any depth ends the block (an open value is repaired)
                closer = self.closer_at(text, j, end, final)
                if closer == PARTIAL_CLOSER:
                    write(text[pos:j])
                    return j
                if isinstance(closer, str):
                    write(text[pos:j])
                    b.close_item()
                    b.end(closer)
                    return j + len(closer)
        if pos < i:
            write(text[pos:i])
        return i

    def _python_goes_on(self, ch: str) -> bool:
        """In a Python list, ``ch`` (outside strings) keeps it one: a newline unless it makes a blank line, an
        opener, a closer that pairs with the last one open."""
        if ch == "\n":
            blank, self.blank = self.blank, True
            return not blank
        self.blank = False
        if ch in "([{":
            self.opens += ch
        elif ch in ")]}":
            if not self.opens or _PAIRS[self.opens[-1]] != ch:
                return False
            self.opens = self.opens[:-1]
        return True

    def _between(self, text: str, i: int, end: int, final: bool) -> int | Stop:
        """Outside a value: before the first, after one (AFTER), or after an inner value (INNER).
        Writes what it takes; returns where to go on, or a ``Stop`` where it waits for more text."""
        b = self.b
        m = NON_WS.search(text, i, end)
        k = m.start() if m else end
        if self.state != _BEFORE:
            self.pending += text[i:k]
            if len(self.pending) > MAX_GAP:
                return self._end_without(k)
            if m is None:
                return Stop(end) if not final else self._end_without(end)
        elif m is None:
            b.write(text[i:end])
            return end
        ch = text[k]
        if self.state == _BEFORE:
            if ch in "{[":
                self.top, self.depth, self.state, self.opens = ch, 1, _VALUE, ch
                if ch == "{" or self.python:
                    if i < k:
                        b.write(text[i:k])
                    b.open_item()
                    b.write(ch)
                    return k + 1
                b.write(text[i : k + 1])
                return k + 1
            self.pending += text[i:k]
            return self._end_without(k)
        if self.state == _INNER:
            if ch in ",}]`" or ch == "<":
                b.write(self.pending)
                self.pending, self.state = "", _VALUE
                return k
            return self._end_without(k)
        # AFTER a complete top-level value
        if ch in self.seps and not self.sep_seen:
            self.pending += ch
            self.sep_seen = True
            return k + 1
        if ch in "{[" and (self.several or self.sep_seen):
            b.write(self.pending)
            self.pending, self.state = "", _BEFORE
            return k
        if self.closers and (ch == "<" or ch == "`"):
            r = self.closer_at(text, k, end, final)
            if r == PARTIAL_CLOSER:
                return Stop(k)
            if isinstance(r, str):
                b.write(self.pending)
                b.end(r)
                return k + len(r)
        if self.has_end and ch in "}]":
            b.write(self.pending + ch)  # a stray closer after the value belongs to the block
            self.pending = ""
            return k + 1
        return self._end_without(k)

    def _end_without(self, k: int) -> int:
        """The block ends before the whitespace at hand: that whitespace is text again.
        A value still open here (an inner value closed, then prose) is missing its final brace."""
        self.b.close_item()
        self.b.end("", self.pending)
        self.pending = ""
        return k

    def finish(self) -> None:
        """End of stream inside the block: a value missing only its outermost brace still counts."""
        b = self.b
        if b.done:
            return
        if b.in_item and not self.quote and self.depth == 1 and self.state in (_VALUE, _INNER):
            item = b.current_item().rstrip()
            if item[-1:] in ("}", "]") and len(item) > 1:
                self.b.close_item()
        b.end("", self.pending if self.state in (_AFTER, _INNER) else "")


@functools.lru_cache(maxsize=256)
def _closers(end_tags: tuple[str, ...], fenced: bool) -> tuple[tuple[str, ...], Callable[..., str | int | None]]:
    """A bracket body's end markers, lowercase, and a fence's closer, with their reader's ``at``
    (``literals.Literals.at``): made once per (end, fenced), not per block."""
    closers = tuple(t.lower() for t in end_tags) + (("```",) if fenced else ())
    return closers, literals(closers).at


@functools.lru_cache(maxsize=None)
def _struct_patterns(python: bool, tagged: bool, fenced: bool) -> tuple[re.Pattern[str], Search]:
    """The characters that matter outside strings in a bracket body (a search: the gate's), and the match that
    reads on to the next of them that is not inside a complete string (a value's run of plain text and whole
    strings in one step; a string the text does not close stops it at its quote)."""
    chars = "\"'{}\\[\\]" + ("()\n" if python else "/") + ("<" if tagged else "") + ("`" if fenced else "")
    strings = "|".join(f"{q}(?:[^{q}\\\\]++|\\\\.)*+{q}" for q in "\"'")
    return re.compile(f"[{chars}]"), re.compile(f"(?:[^{chars}]++|{strings})*+", re.S).match


_STRING_OPEN = -1
_ESCAPE_PENDING = -2


def _string_end(text: str, start: int, end: int, pattern: re.Pattern[str]) -> int:
    """Inside a string from ``start``: index of its closing quote, _STRING_OPEN, or _ESCAPE_PENDING."""
    search = pattern.search
    m = search(text, start, end)
    while m is not None:
        j = m.start()
        if text[j] != "\\":
            return j
        if j + 1 >= end:
            return _ESCAPE_PENDING
        m = search(text, j + 2, end)
    return _STRING_OPEN
