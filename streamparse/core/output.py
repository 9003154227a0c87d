"""Gathering a feed's events: adjacent text (or reasoning) merges into one event; lines are tracked.

Invariant: text leaves in the order it was given, each character once; ``_line_blank``
is true exactly when everything since the last newline (or the stream's start) is spaces and tabs.
"""

from __future__ import annotations

from typing import Callable

from .events import Event, ReasoningDelta, TextDelta

__all__ = ["Output", "blank_after"]


def blank_after(blank: bool, s: str) -> bool:
    """Is the line blank after ``s``, given whether it was before? Blank means spaces and tabs only, as the
    scanner's line-start check reads it: "\r", VT, FF and U+2028 are not line breaks here, so a stream and
    the whole text agree on where a line starts."""
    nl = s.rfind("\n")
    if nl >= 0:
        return not s[nl + 1 :].strip(" \t")
    return blank and not s.strip(" \t")


class Output:
    """The part of the parser that builds its output list."""

    def __init__(self) -> None:
        self._line_blank = True  # only whitespace since the last newline (or stream start)
        self._acc: list[str] = []
        self._acc_cls: type = TextDelta
        self._out: list[Event] = []
        self._text: Callable[[str], None] = self._prose  # where text goes (a block inside reasoning: the reasoning)

    def _track_line(self, s: str) -> None:
        self._line_blank = blank_after(self._line_blank, s)

    def _prose(self, s: str) -> None:
        if s:
            self._delta(TextDelta, s)
            self._track_line(s)

    def _delta(self, cls: type, s: str) -> None:
        """Adjacent deltas of one kind leave a feed() as one event."""
        if self._acc and self._acc_cls is not cls:
            self._out.append(self._acc_cls("".join(self._acc)))
            self._acc = []
        self._acc_cls = cls
        self._acc.append(s)

    def _event(self, ev: Event) -> None:
        self._flush()
        self._out.append(ev)

    def _flush(self) -> None:
        if self._acc:
            self._out.append(self._acc_cls("".join(self._acc)))
            self._acc = []

    def _reasoning(self, s: str) -> None:
        if s:
            self._delta(ReasoningDelta, s)
