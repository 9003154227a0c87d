"""A bare pythonic call written after text on its line: left as text (the list is read at a line start only),
and reported once (``mid_line``), right after its ``(``.

Invariant: the report changes no text: what the state machine emits is emitted as before, never held longer.
Only ``[NAME(`` with NAME a declared tool is reported (``MarkerTable.mid_line_call``); a look cut by a delta's
end is kept (``_look``: the ``[`` and the name's start, already emitted, at most the longest tool name) and read
on in front of the next text, so any chunking reports it once, at the same place in the text.
"""

from __future__ import annotations

from .events import Diagnostic
from .heads import MAX_NAME
from .output import Output
from .scanner import PARTIAL, MarkerTable

__all__ = ["MidLine"]


class MidLine(Output):
    """The part of the parser that reports mid-line pythonic calls (the parser sets the attributes below)."""

    _table: MarkerTable
    _look: str  # a look past a mid-line "[" cut by the text's end ("" when none)

    def _mid_line(self, text: str, j: int, final: bool) -> int | None:
        """At ``text[j] == "["`` mid-line, no marker there. A reported call: its text up to the ``(`` leaves, then
        the report; returns where scanning resumes. A look cut by the text's end: the rest leaves, the look is
        kept; returns the text's end. None: nothing to report (scanning goes on after the ``[``)."""
        if text[j] != "[" or not self._table.mid_line or self._line_blank:
            return None
        found = self._table.mid_line_call(text, j, final)
        if found is None:
            return None
        if found == PARTIAL:
            self._text(text[j:])
            self._look = text[j:]
            return len(text)
        end, name = found
        self._text(text[j:end])
        self._report(name)
        return end

    def _look_on(self, text: str, final: bool) -> int:
        """A look cut by the last text's end, read on in front of ``text``: where ``text``'s scan starts."""
        look, self._look = self._look, ""
        probe = look + text[: MAX_NAME + 1]  # as far as the look reads
        found = self._table.mid_line_call(probe, 0, final)
        if found is None:
            return 0
        if found == PARTIAL:
            self._look = probe  # all of text is the name's start: the scan from 0 emits it
            return 0
        end = found[0] - len(look)
        self._text(text[:end])
        self._report(found[1])
        return end

    def _report(self, name: str) -> None:
        self._event(Diagnostic("mid_line", f"{name}: a pythonic call after text on the same line is read as text "
                               "(a bare call list starts a line)", self._table.mid_line, {"name": name}))
