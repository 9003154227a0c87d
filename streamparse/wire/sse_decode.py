"""Reading server-sent events, sans-I/O: bytes (or text) in, complete events out, whatever the pieces' cuts.

Invariant: a line is read once it is complete (``\n``, ``\r\n`` or a lone ``\r``, also when cut between two
pieces), a character cut between pieces waits for its rest and invalid UTF-8 reads as U+FFFD; memory is bounded
by ``max_line`` (past it, ``EventTooLarge``); a last line without its newline still counts at ``close``.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEDecoder", "EventTooLarge"]


class EventTooLarge(ValueError):
    """An SSE line passed the decoder's ``max_line`` (the stream cannot be read safely any further)."""


@dataclass(slots=True)
class SSEEvent:
    data: str | None = None  # None for a comment-only event
    event: str | None = None
    id: str | None = None
    comment: str | None = None


class SSEDecoder:
    """Bytes in, complete events out. Incomplete lines are kept for the next feed, up to
    ``max_line`` characters: past that, ``EventTooLarge`` (memory stays bounded)."""

    def __init__(self, max_line: int | None = None) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._after_cr = False  # the last piece ended in \r
        self._max_line = max_line
        self._partial: list[str] = []  # the current line so far (kept as pieces: lines can be huge)
        self._partial_len = 0
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None

    def feed(self, data: bytes | str) -> list[SSEEvent]:
        if not isinstance(data, bytes):
            text = data
        elif self._utf8.buffer:  # a character cut between two pieces
            text = self._utf8.decode(data)
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:  # cut at the end, or invalid: the incremental decoder says it
                text = self._utf8.decode(data)
        if self._after_cr and text.startswith("\n"):  # the \n of a \r\n cut between two pieces
            text = text[1:]
        self._after_cr = text.endswith("\r")
        if "\r" in text:  # SSE lines may end in \r\n, \n or a lone \r
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if not self._partial and not self._data and text.endswith("\n\n") and self._event is None and self._id is None:
            return self._events(text)
        k = text.rfind("\n")
        if k < 0:
            if text:
                self._partial.append(text)
                self._partial_len += len(text)
                self._check(self._partial_len)
            return []
        complete = "".join(self._partial) + text[:k]
        self._partial = [text[k + 1 :]] if k + 1 < len(text) else []
        self._partial_len = len(text) - k - 1
        out: list[SSEEvent] = []
        for line in complete.split("\n"):
            self._check(len(line))
            self._line(line.rstrip("\r"), out)
        self._check(self._partial_len)
        return out

    def lone_data(self, raw: bytes) -> str | None:
        """The data of ``raw`` when it is one whole event of one ``data: `` line and nothing is pending (a paced
        upstream's usual read), read as ``feed`` would read it; None for anything else (``feed`` it then)."""
        end = len(raw) - 2
        if (not raw.startswith(b"data: ") or raw.find(b"\n", 6) != end or raw[end + 1:] != b"\n" or b"\r" in raw
                or self._partial or self._data or self._after_cr or self._utf8.buffer
                or self._event is not None or self._id is not None
                or (self._max_line is not None and end > self._max_line)):
            return None
        try:
            return raw[6:end].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _events(self, text: str) -> list[SSEEvent]:
        """Whole events, nothing pending before them (the usual piece): an event of one ``data: `` line is
        taken at once, any other goes through ``_line`` as in ``feed``."""
        out: list[SSEEvent] = []
        for block in text[:-2].split("\n\n"):
            if block.startswith("data: ") and "\n" not in block:
                self._check(len(block))
                out.append(SSEEvent(block[6:]))
                continue
            for line in block.split("\n"):
                self._check(len(line))
                self._line(line, out)
            self._dispatch(out)
        return out

    @property
    def in_field_line(self) -> bool:
        """Part of a field line (not a comment) has arrived: the upstream is sending data."""
        return bool(self._partial) and not self._partial[0].startswith(":")

    def _check(self, length: int) -> None:
        if self._max_line is not None and length > self._max_line:
            self._partial, self._partial_len, self._data = [], 0, []
            raise EventTooLarge(f"an upstream SSE line is longer than the limit of {self._max_line} characters")

    def close(self) -> list[SSEEvent]:
        """End of the byte stream: a last line without its newline still counts."""
        out: list[SSEEvent] = []
        rest = "".join(self._partial) + self._utf8.decode(b"", final=True)
        self._partial, self._partial_len = [], 0
        if rest:
            self._line(rest.rstrip("\r"), out)
        self._dispatch(out)
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line.startswith(":"):
            out.append(SSEEvent(comment=line[1:].lstrip()))
            return
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            self._id = value

    def _dispatch(self, out: list[SSEEvent]) -> None:
        if self._data:
            out.append(SSEEvent(data="\n".join(self._data), event=self._event, id=self._id))
        self._data, self._event, self._id = [], None, None
