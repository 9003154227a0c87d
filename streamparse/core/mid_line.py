"""A bare pythonic call written after text on its line: left as text (the list is read at a line start only),
and reported once (``mid_line``), right after its ``(``.

Invariant: the report changes no text: what the state machine emits is emitted as before, never held longer.
Only ``[NAME(`` with NAME a declared tool is reported (``MarkerTable.mid_line_call``); a look cut by a delta's
end is kept (``look``: the ``[`` and the name's start, already emitted, at most the longest tool name) and read
on in front of the next text, so any chunking reports it once, at the same place in the text.
"""

from __future__ import annotations

from typing import Protocol

from .events import Diagnostic, Event
from .heads import MAX_NAME
from .output import Output
from .scanner import PARTIAL, MarkerTable

__all__ = ["MidLine"]


class Owner(Protocol):
    """What the reader asks of its parser: its table, its output (is the line blank so far?), where text and events
    go."""

    _table: MarkerTable
    _output: Output

    def _text(self, s: str) -> None: ...
    def _event(self, ev: Event) -> None: ...


class MidLine:
    """Reports mid-line pythonic calls for its parser, and keeps the look a delta's end cut (``look``)."""

    __slots__ = ("look", "_owner")

    def __init__(self, owner: Owner) -> None:
        self.look = ""  # a look past a mid-line "[" cut by the text's end ("" when none)
        self._owner = owner

    def at(self, text: str, j: int, final: bool) -> int | None:
        """At ``text[j] == "["`` mid-line, no marker there. A reported call: its text up to the ``(`` leaves, then
        the report; returns where scanning resumes. A look cut by the text's end: the rest leaves, the look is
        kept; returns the text's end. None: nothing to report (scanning goes on after the ``[``)."""
        owner = self._owner
        if text[j] != "[" or not owner._table.mid_line or owner._output.line_blank:
            return None
        found = owner._table.mid_line_call(text, j, final)
        if found is None:
            return None
        if found == PARTIAL:
            owner._text(text[j:])
            self.look = text[j:]
            return len(text)
        end, name = found
        owner._text(text[j:end])
        self._report(name)
        return end

    def look_on(self, text: str, final: bool) -> int:
        """A look cut by the last text's end, read on in front of ``text``: where ``text``'s scan starts."""
        look, self.look = self.look, ""
        probe = look + text[: MAX_NAME + 1]  # as far as the look reads
        found = self._owner._table.mid_line_call(probe, 0, final)
        if found is None:
            return 0
        if found == PARTIAL:
            self.look = probe  # all of text is the name's start: the scan from 0 emits it
            return 0
        end = found[0] - len(look)
        self._owner._text(text[:end])
        self._report(found[1])
        return end

    def _report(self, name: str) -> None:
        self._owner._event(Diagnostic("mid_line", f"{name}: a pythonic call after text on the same line is read as "
                                      "text (a bare call list starts a line)", self._owner._table.mid_line,
                                      {"name": name}))
