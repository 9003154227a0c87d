"""Decoders of derived declarations: one item's text -> ``[(name, arguments)]``, by markup read from a template.

Invariant: as every decoder (``streamparse.dialects.decoders``): pure, sees one complete item, raises only
``ArgumentError`` for text that is not a call, returns the values as written (raw text for tagged values: the
schema types them), and reads JSON through ``arguments.schema`` (``json.loads`` first, then the repairs).
Markup is matched with the whitespace around its pieces free (a model may lay a call out otherwise than its
template), and a part that changes from call to call (an id, an index) as a hole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..arguments.schema import ArgumentError, arguments_from_text, call_from_object, loads_calls
from ..dialects.spec import Calls
from .markup import Pattern

__all__ = ["NativeCalls", "MarkedCalls", "TaggedParams", "markup_regex"]

Decoded = tuple[Calls, bool]
_HOLE = r"[^\n]*?"


def markup_regex(pattern: Pattern) -> str:
    """A regex for markup as a template writes it, whitespace at the ends of its pieces and between its words free."""
    out = []
    for piece in pattern.pieces:
        words = piece.split()
        out.append(r"\s*" + r"\s*".join(re.escape(w) for w in words) + r"\s*" if words else r"\s*")
    return _HOLE.join(out)


@dataclass(frozen=True)
class NativeCalls:
    """JSON call objects (one, several, or a list of them): the name in ``name_field`` and the arguments in
    ``args_field``, or (``name_is_key``) an object of one key, the name, holding the arguments."""

    name_field: str
    args_field: str
    name_is_key: bool = False

    def __call__(self, text: str, head_name: str | None) -> Decoded:
        value, repaired = loads_calls(text)
        items = value if isinstance(value, list) else [value]
        if not items:
            raise ArgumentError("no calls in block")
        calls: Calls = []
        for item in items:
            if not isinstance(item, dict):
                raise ArgumentError("a call must be a JSON object")
            if self.name_is_key:
                if len(item) != 1:
                    raise ArgumentError("a call is an object with exactly one key, the tool's name")
                (called, arguments), = item.items()
            else:
                called, arguments = item.get(self.name_field), item.get(self.args_field, {})
            calls.append(call_from_object({"name": called, "arguments": arguments}))
        return calls, repaired


@dataclass(frozen=True)
class TaggedParams:
    """Arguments written one by one: ``key_open`` KEY ``key_close`` VALUE ``value_close``, where ``key_close`` may
    hold a hole (a type attribute) and ``value_close`` may hold the key (``</KEY>``: its pieces joined by it)."""

    key_open: str
    key_close: Pattern
    value_close: tuple[str, ...]

    def closer(self, key: str) -> str:
        return key.join(self.value_close).strip()

    def read(self, region: str) -> tuple[dict[str, Any], bool]:
        """The arguments in ``region`` (the text between a call's head and its end)."""
        head = re.compile(re.escape(self.key_open.strip()) + r"(?P<key>[^\n]*?)" + markup_regex(self.key_close),
                          re.S | re.I)
        follow = re.compile(r"\s*(?:" + re.escape(self.key_open.strip()) + r"|\Z)", re.I)
        params: dict[str, Any] = {}
        repaired = False
        pos, n = 0, len(region)
        while True:
            while pos < n and region[pos].isspace():
                pos += 1
            if pos >= n:
                return params, repaired
            m = head.match(region, pos)
            if m is None:
                raise ArgumentError("text between parameters")
            key, start = m.group("key").strip(), m.end()
            closer = self.closer(key)
            low, at = region.lower(), start
            while True:
                at = low.find(closer.lower(), at) if closer else -1
                if at < 0 or follow.match(region, at + len(closer)):
                    break
                at += 1
            if at < 0:  # a value with no closer runs to the end
                params[key] = region[start:]
                return params, True
            params[key] = region[start:at]
            pos = at + len(closer)


@dataclass(frozen=True)
class MarkedCalls:
    """One call whose name is in the markup: ``call_open`` NAME ``name_close`` ARGUMENTS ``call_close``, the
    arguments a JSON object (``params`` None) or tagged keys and values. ``call_open`` / ``call_close`` are what
    the item holds of the call's own markup ("" where the block's opener or end took it)."""

    call_open: Pattern
    name_close: Pattern
    call_close: Pattern
    params: TaggedParams | None = None

    @property
    def _pattern(self) -> re.Pattern[str]:
        found = _PATTERNS.get(self)
        if found is None:
            if self.params is None:
                args = r"(?P<args>[\[{].*?)"
            else:
                args = r"(?P<args>.*?)"
            if any(piece.strip() for piece in self.name_close.pieces):
                ahead = ""
            elif self.params is None:
                ahead = r"(?=\s*[\[{])"
            else:  # the name ends where the first key, the call's end or the item's end begins
                ends = [re.escape(self.params.key_open.strip()), r"\Z"]
                if any(piece.strip() for piece in self.call_close.pieces):
                    ends.append(markup_regex(self.call_close))
                ahead = r"(?=\s*(?:" + "|".join(ends) + "))"
            if len(_PATTERNS) >= 256:  # (one per derived declaration in use: a few)
                _PATTERNS.clear()
            found = _PATTERNS[self] = re.compile(
                r"\A" + markup_regex(self.call_open) + r"(?P<name>[^\s<>\[\]{}\"']+?)" + ahead
                + markup_regex(self.name_close) + args + markup_regex(self.call_close) + r"\Z", re.S | re.I)
        return found

    def __call__(self, text: str, head_name: str | None) -> Decoded:
        m = self._pattern.match(text)
        if m is None:
            raise ArgumentError("the item is not a call as the template writes one")
        called = m.group("name").strip()
        if not called:
            raise ArgumentError("empty function name")
        if self.params is None:
            arguments, repaired = arguments_from_text(called, m.group("args"))
            return [(called, arguments)], repaired
        params, repaired = self.params.read(m.group("args"))
        return [(called, params)], repaired


_PATTERNS: dict[MarkedCalls, re.Pattern[str]] = {}
