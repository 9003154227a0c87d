"""Strings in a tag body's arguments (JSON's and Python's quotes, Gemma 4's ``<|"|>``, FunctionGemma's ``<escape>``):
a tag inside an open string is the string's text. The part of ``TagBody`` that follows them (a mixin; the state
lives in ``TagBody``'s slots).

Invariant: ``TagBody``'s: each character is examined once; a string's end, or a backslash or a delimiter cut by
the text's end, is found in one search.
"""

from __future__ import annotations

import re
from .gaps import Stop, partial_tail

__all__ = ["QuotedStrings"]


class QuotedStrings:
    """The string half of ``TagBody``'s reading; the attributes are ``TagBody``'s (see there)."""

    in_str: str

    def _skip_string(self, text: str, i: int, end: int, final: bool) -> int | Stop:
        """Inside a string: past its closing delimiter (the string ends), to ``end`` (it goes on), or a ``Stop``:
        hold from there (a backslash ending the text, whose escaped character is still to come; a cut delimiter)."""
        quote = self.in_str
        if len(quote) > 1:
            k = text.find(quote, i, end)
            if k >= 0:
                self.in_str = ""
                return k + len(quote)
            hold = end if final else partial_tail(text, i, end, (quote,), len(quote))
            return end if hold == end else Stop(hold)
        j = _STRING_BODY[quote](text, i, end).end()  # type: ignore[union-attr]  # (a `*` pattern always matches)
        if j == end:
            return end
        if text[j] == quote:
            self.in_str = ""
            return j + 1
        return end if final else Stop(j)  # a backslash ending the text


# A string's inside: runs of plain characters, one escape between runs (sre reads a run in one step; the plain
# ``(?:[^q\\]|\\.)*`` took about 20 ns a character)
_STRING_BODY = {q: re.compile(f"[^{q}\\\\]*+(?:\\\\.[^{q}\\\\]*+)*+", re.S).match for q in ("'", '"')}
