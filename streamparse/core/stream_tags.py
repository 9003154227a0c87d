"""Streaming XML-style parameters (Qwen3-Coder, Seed-OSS, MiniMax, GLM) as JSON, as they are written.

Invariant: what is emitted is always a prefix of ``json.dumps`` of the arguments the
whole-call decoder gives for the finished item (the caller checks that at the end and
sends the rest), so streamed and whole calls agree. A parameter's key leaves as its tag
completes; a string value leaves as it arrives, escaped, holding back only what layout
rules may still remove (the newline after the tag, trailing whitespace, and the leading
whitespace of a value that may end up on one line). Anything unusual (a parameter tag
inside a value, a repeated key, a key that holds markup or a line break) stops the stream of
fragments; the end settles it. Nothing is invented: a typed value is held whole, and its key
leaves only with it, so a value cut off before its closer is left out (never given ``null``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping

from ..arguments.schema import declared_types
from ..arguments.xml_values import coerce_xml_value, settle_layout
from ..dialects.spec import TagParams
from .json_lexis import ESCAPES, escaped as _escaped
from .gaps import Stop

__all__ = ["TagStream"]


_HEAD, _BETWEEN, _VALUE, _CLOSING, _STOPPED = range(5)
_BAD_KEY = re.compile(r"[<>\n\r]")  # a parameter key never holds markup or a line break
_HEAD_LIMIT = 512  # a head not complete within this many characters: the call is decoded whole at the end


class _Compiled:
    def __init__(self, spec: TagParams):
        self.head = re.compile(spec.head, re.I)
        self.param = re.compile(spec.param, re.I)
        self.close = spec.value_close.lower()
        self.item_close = spec.item_close.lower()
        self.bare_name = spec.bare_name
        self.param_start = re.sub(r"[\\(\[].*", "", spec.param).lower()  # the literal a parameter head starts with
        tag = re.match(r"<[\w:-]+", self.param_start)
        self.param_tag = tag.group() if tag else ""  # its tag name: "<parameter" of "<parameter="


_COMPILED: dict[TagParams, _Compiled] = {}




class _LayoutValue:
    """A string value streamed while its layout (``arguments.strip_layout``) may still be removed from it: the
    newline right after its tag is held until the next character, a trailing whitespace run until more follows.
    A value whose first line is indented waits whole: that indentation may be the closing tag's (layout)."""

    __slots__ = ("exact", "lead", "pend", "started", "whole")

    def __init__(self, layout: bool = True) -> None:
        self.exact = not layout  # the dialect writes no layout: the value is exactly what is between its tags
        self.lead: str | None = None if self.exact else ""  # the first characters, until the newline after the tag is settled
        self.pend: list[str] = []  # a trailing whitespace run, not yet sent (pieces: no copy per delta)
        self.started = self.exact  # a character of the value was sent (or the value has no layout to settle)
        self.whole: list[str] | None = None  # the value, held to its end (its first line is indented)

    def add(self, s: str) -> str:
        """More raw text; returns the escaped text now safe to send."""
        if self.lead is not None:
            self.lead += s
            if self.lead in ("", "\r"):
                return ""
            cut = 1 if self.lead.startswith("\n") else 2 if self.lead.startswith("\r\n") else 0
            s, self.lead = self.lead[cut:], None
        return self.release(s)

    def release(self, s: str) -> str:
        """Send what is held and ``s``, except a trailing whitespace run (layout, maybe). A piece of
        whitespace only is held as it is: a long run costs one join when something follows it."""
        if self.whole is not None:
            self.whole.append(s)
            return ""
        if not s or s.isspace():
            if s:
                self.pend.append(s)
            return ""
        if self.pend:
            s = "".join(self.pend) + s
        if not self.started:  # the value's first character that is not whitespace
            self.started = True
            first = len(s) - len(s.lstrip())
            if first > s.rfind("\n", 0, first) + 1:  # indented
                self.whole, self.pend = [s], []
                return ""
        if s[-1:].isspace():
            keep = len(s.rstrip())
            s, self.pend = s[:keep], [s[keep:]]
        else:
            self.pend = []
        if s.isprintable() and '"' not in s and "\\" not in s:
            return s  # nothing to escape (ESCAPES: control characters, quote, backslash): no per-character lookups
        return s.translate(ESCAPES)

    def end(self) -> str:
        """The value is complete: the escaped rest of its final text."""
        if self.lead is not None:  # nothing came after the tag but a lone "\r"
            return _escaped(self.lead)
        if self.whole is not None:
            return _escaped(settle_layout("".join(self.whole)))
        rest = "".join(self.pend)
        return _escaped(rest if self.exact else settle_layout(rest))


class TagStream:
    """One item of an XML-style dialect in, JSON argument text out (through ``out``)."""

    def __init__(self, spec: TagParams, out: Callable[[str], None], on_name: Callable[[str], Any],
                 schema_for: Callable[[str], Any], layout: bool = True):
        c = _COMPILED.get(spec)
        if c is None:
            c = _COMPILED[spec] = _Compiled(spec)
        self._c = c
        self._out = out
        self._on_name = on_name
        self._schema_for = schema_for  # name -> the tool's parameters schema (None: untyped)
        self._layout = layout  # newlines just inside a value's tags are layout (see arguments.strip_layout)
        self._props: Mapping[str, Any] = {}
        self._state = _HEAD
        self._tail = ""  # text not yet consumed (a partial tag at most, outside values)
        self._keys: set[str] = set()
        self._value: _LayoutValue | None = None  # a string value being streamed
        self._typed: list[str] | None = None  # a value held whole (typed by its schema at its end)
        self._key = ""
        self._typed_key = ""  # a typed value's member prefix (comma, key, colon): it leaves with the value
        self._members = 0  # members whose key has left
        self._closing = ""  # _CLOSING: the value closer and the whitespace after it, not yet known to end the value
        self.emitted = False  # anything sent yet

    @property
    def stopped(self) -> bool:
        return self._state == _STOPPED

    def _emit(self, s: str) -> None:
        if s:
            self.emitted = True
            self._out(s)

    def feed(self, text: str) -> None:
        if self._state == _STOPPED:
            return
        t = self._tail + text if self._tail else text
        self._tail = ""
        i, n = 0, len(t)
        while i < n and self._state != _STOPPED:
            r = (self._head, self._between, self._in_value, self._after_close)[self._state](t, i, n)
            if isinstance(r, Stop):  # wait for more text from there
                self._tail = t[r.at :]
                return
            i = r

    def end_closed_value(self) -> None:
        """The item was cut right after a value's closer: that value is complete, so it leaves now."""
        if self._state == _CLOSING:
            self._end_value()

    def settle(self, whole: str | None) -> str:
        """What follows the emitted text when the end does not simply continue it: the open value closed,
        then every member of ``whole`` (the whole-call arguments) stated again, which JSON readers take
        over the earlier ones (the last of a repeated key wins). Without ``whole``: just closed."""
        if not self.emitted:
            return whole or "{}"
        out = '"' if self._value is not None else ""  # a typed value still open was never sent, nor its key
        members = whole[1:] if whole and whole.startswith("{") else "}"
        return out + (", " if self._members and members != "}" else "") + members

    # ------------------------------------------------------------------ states

    def _head(self, t: str, i: int, n: int) -> int | Stop:
        m = self._c.head.match(t, i)
        if m is None or m.end() - i > _HEAD_LIMIT:  # the limit is positional: every chunking stops alike
            if m is not None or n - i > _HEAD_LIMIT:
                self._state = _STOPPED
                return n
            return Stop(i)
        name = m.group(1).strip()
        if self._c.bare_name and m.end() == n:
            return Stop(i)  # a GLM name may go on
        follows = self._follows(t, m.end(), n)  # a call starts only where a parameter or the item's end follows
        if follows is None:
            return Stop(i)
        if not follows or not name or not self._on_name(name):
            self._state = _STOPPED
            return n
        schema = self._schema_for(name)
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        self._props = props if isinstance(props, Mapping) else {}
        self._emit("{")
        self._state = _BETWEEN
        return m.end()

    def _follows(self, t: str, k: int, n: int) -> bool | None:
        """After the head: does a parameter's head or the item's closer follow (after whitespace)? None: not known
        yet. Anything else (``<function=f>{}``) is an item the whole reader refuses, so no call may start."""
        while k < n and t[k].isspace():
            k += 1
        rest = t[k : k + 16].lower()
        tags = [tag for tag in (self._c.param_start, self._c.item_close) if tag]
        if any(rest.startswith(tag) for tag in tags):
            return True
        return None if k + len(rest) == n and any(tag.startswith(rest) for tag in tags) else False

    def _between(self, t: str, i: int, n: int) -> int | Stop:
        while i < n and t[i].isspace():
            i += 1
        if i == n:
            return n
        m = self._c.param.match(t, i)
        if m is None or m.end() - i >= _HEAD_LIMIT:  # (positional, as in _may_come)
            if m is None and self._may_come(t[i:].lower()):
                return Stop(i)
            self._state = _STOPPED
            return n
        key = m.group(1).strip()
        if _BAD_KEY.search(key) or not key:
            self._state = _STOPPED  # a head missing its ">": only the whole item can say what it is
            return n
        if key in self._keys:
            self._state = _STOPPED  # a repeated key: the whole-call result keeps the last value in the first place
            return n
        self._keys.add(key)
        self._key = key
        member = (", " if self._members else "") + json.dumps(key, ensure_ascii=False) + ": "
        types = declared_types(self._props.get(key))
        if (not types or "string" in types) and "null" not in types:
            self._value = _LayoutValue(self._layout)
            self._members += 1
            self._emit(member + '"')
        else:
            self._typed, self._typed_key = [], member
        self._state = _VALUE
        return m.end()

    def _in_value(self, t: str, i: int, n: int) -> int | Stop:
        k = t.find("<", i)
        if k < 0:
            self._value_text(t[i:n])
            return n
        self._value_text(t[i:k])
        rest = t[k : k + max(len(self._c.close), len(self._c.param_start), len(self._c.item_close))].lower()
        if self._c.item_close and rest.startswith(self._c.item_close):
            if n - k <= len(self._c.item_close):
                return Stop(k)  # the item may end here (then so does the value)
            self._value_text(t[k : k + len(self._c.item_close)])  # text follows in the same item: the value's own
            return k + len(self._c.item_close)
        if rest.startswith(self._c.close):
            self._closing = t[k : k + len(self._c.close)]
            self._state = _CLOSING
            return k + len(self._c.close)
        if rest.startswith(self._c.param_start):
            self._state = _STOPPED  # a parameter head inside a value: only the whole item can say whose it is
            return n
        if n - k < len(rest) + 1 and any(lit.startswith(rest) for lit in (self._c.close, self._c.param_start,
                                                                           self._c.item_close) if lit):
            return Stop(k)
        self._value_text("<")
        return k + 1

    def _after_close(self, t: str, i: int, n: int) -> int | Stop:
        j = i
        while j < n and t[j].isspace():
            j += 1
        self._closing += t[i:j]
        if j == n:
            return n
        if self._c.param.match(t, j) is not None:
            self._end_value()
            return j
        rest = t[j:].lower()
        if self._may_come(rest):
            return Stop(j)  # the next head, or the item's end, still to be seen
        if self._c.param_tag and rest.startswith(self._c.param_tag) and len(rest) > len(self._c.param_tag):
            self._state = _STOPPED  # a malformed parameter head after a value: only the whole item can say
            return n
        closing, self._closing = self._closing, ""
        self._state = _VALUE
        self._value_text(closing)  # that closer was the value's own text
        return j

    def _may_come(self, rest: str) -> bool:
        """Could ``rest`` still become a parameter head, or is it the item's closer (settled by the end)?"""
        c = self._c
        if c.param_start.startswith(rest) or (rest.startswith(c.param_start) and len(rest) < _HEAD_LIMIT):
            return True
        return bool(c.item_close) and c.item_close.startswith(rest)

    def _value_text(self, s: str) -> None:
        if not s:
            return
        if self._value is not None:
            self._emit(self._value.add(s))
        elif self._typed is not None:
            self._typed.append(s)

    def _end_value(self) -> None:
        self._closing = ""
        if self._value is not None:
            self._emit(self._value.end() + '"')
            self._value = None
        elif self._typed is not None:
            raw, self._typed = "".join(self._typed), None
            self._members += 1
            self._emit(self._typed_key + json.dumps(coerce_xml_value(raw, self._props.get(self._key), self._layout), ensure_ascii=False))
        self._state = _BETWEEN
