"""Reading a JSON string as it streams (``stream_json``): escapes completed across chunks, control
characters and stray quotes escaped, the text held or sent as the string's role says.

Invariant: what leaves for one string is valid JSON string content, whatever the chunking: an escape cut by a
chunk's end waits for its rest, and an escape JSON does not know keeps its backslash as text.
"""

from __future__ import annotations

from typing import Callable

from .json_lexis import HEX, IN_STRING, SIMPLE_ESCAPES, escaped

__all__ = ["StringEcho"]


class StringEcho:
    """The string part of ``JsonEcho`` (the echo sets the attributes and ends the string)."""

    _out: Callable[[str], None]
    _quote: str  # inside a string: its quote
    _esc: str  # an escape cut by the chunk's end
    _held: list[str] | None  # a string held until complete
    _live: bool

    def _end_string(self) -> None:
        raise NotImplementedError

    def _string(self, text: str, i: int, n: int) -> int:
        if self._esc:  # an escape: "\\" and one character, or "\\u" and up to four hex digits
            while i < n:
                if len(self._esc) == 1:
                    self._esc += text[i]
                    i += 1
                    if self._esc[1] != "u":
                        break
                elif len(self._esc) < 6 and text[i] in HEX:
                    self._esc += text[i]
                    i += 1
                else:
                    break
            if i == n and len(self._esc) < 6 and (len(self._esc) == 1 or self._esc[1] == "u"):
                return n  # the escape may go on in the next chunk
            esc, self._esc = self._esc, ""
            self._put_escape(esc)
            return i
        pattern = IN_STRING[self._quote]
        while i < n:
            m = pattern.search(text, i)
            j = m.start() if m else n
            if j > i:
                self._str(text[i:j])
            if m is None:
                return n
            ch = text[j]
            if ch == self._quote:
                self._end_string()
                return j + 1
            if ch == "\\":
                self._esc = "\\"
                return self._string(text, j + 1, n) if j + 1 < n else n
            self._str(escaped(ch))  # a control character, or '"' inside a single-quoted string
            i = j + 1
        return n

    def _put_escape(self, esc: str) -> None:
        """A complete escape (``\\x``, or ``\\u`` and what followed it, up to four hex digits)."""
        c = esc[1]
        if c == "u" and len(esc) == 6 and all(h in HEX for h in esc[2:]):
            self._str(esc)
        elif c == "u":
            self._str("\\\\u" + escaped(esc[2:]))
        elif c in SIMPLE_ESCAPES:
            self._str(esc)
        elif c == "'":
            self._str("'")
        else:  # an escape JSON does not know: its backslash stays text
            self._str("\\\\" + escaped(c))

    def _str(self, s: str) -> None:
        if self._held is not None:
            self._held.append(s)
        elif self._live:
            self._out(s)
