"""Gathering a feed's events: adjacent text (or reasoning) merges into one event; lines are tracked.

Invariant: text leaves in the order it was given, each character once; ``line_blank``
is true exactly when all prose since the last newline (or the stream's start) is spaces and tabs.
"""

from __future__ import annotations

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
    """A parser's output: the events of the feed under way (``begin`` … ``end``), and whether its line is blank."""

    __slots__ = ("line_blank", "events", "_acc", "_acc_cls")

    def __init__(self) -> None:
        self.line_blank = True  # only whitespace since the last newline (or stream start)
        self.events: list[Event] = []
        self._acc: list[str] = []
        self._acc_cls: type = TextDelta

    def begin(self) -> None:
        """A feed starts: its events are gathered anew."""
        self.events = []

    def end(self) -> list[Event]:
        """The feed's events, the text gathered last included."""
        if self._acc:
            self.events.append(self._acc_cls("".join(self._acc)))
            self._acc = []
        return self.events

    def track_line(self, s: str) -> None:
        self.line_blank = blank_after(self.line_blank, s)

    def prose(self, s: str) -> None:
        if s:
            self._delta(TextDelta, s)
            self.line_blank = blank_after(self.line_blank, s)

    def reasoning(self, s: str) -> None:
        if s:
            self._delta(ReasoningDelta, s)

    def event(self, ev: Event) -> None:
        self.end()
        self.events.append(ev)

    def _delta(self, cls: type, s: str) -> None:
        """Adjacent deltas of one kind leave a feed() as one event."""
        if self._acc and self._acc_cls is not cls:
            self.events.append(self._acc_cls("".join(self._acc)))
            self._acc = []
        self._acc_cls = cls
        self._acc.append(s)
