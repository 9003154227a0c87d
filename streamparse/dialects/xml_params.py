"""XML-parameter items (Qwen3-Coder, Seed-OSS, MiniMax-M2, Claude-style invokes) decoded linearly, without a grammar.

Invariant: reads a value exactly as the grammars and the tag body scanner read it (a value ends at the first closer
that the next parameter or the function's end follows); a repair is said (``repaired``), never silent.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ..arguments.schema import ArgumentError
from .spec import Calls

__all__ = ["XmlParams", "Decoded"]

Decoded = tuple[Calls, bool]  # (calls, repaired)


class XmlParams:
    """``<function=NAME><parameter=K>V</parameter>…</function>`` and its relatives, decoded linearly.

    Rule for values that hold markup of their own (the grammar's, and the body scanner's): a value ends at the
    first ``</parameter>`` followed by whitespace and then the next parameter or the function's end; any other
    tag in it is its text. A value holding more parameter heads than closers, one of them on a line of its own,
    lost its own closer (vLLM's test: ``<parameter=city>\nDallas\n<parameter=state>\nTX\n</parameter>``): it
    ends before that head, and the call is read as a repair. A value with no closer at all runs to the end.
    Values are returned raw; layout and types are the schema's business (arguments.py).
    """

    def __init__(self, head: str, param: str, param_close: str, close: str,
                 fast: Callable[[str], Decoded | None] | None = None, stray: str | None = None):
        self.fast = fast  # exact on the plain shape, None when unsure (fast_tags)
        self.head = re.compile(head, re.I)
        self.tokens = re.compile(f"(?P<open>{param})|(?P<close>{param_close})", re.I | re.S)
        self.follow = re.compile(rf"\s*(?:{param}|\Z)", re.I)
        self.close = re.compile(rf"{close}\s*\Z", re.I)
        self.stray = re.compile(stray, re.I) if stray else None  # a parameter head this dialect cannot read

    def __call__(self, text: str, head_name: str | None) -> Decoded:
        if self.fast is not None:
            decoded = self.fast(text)
            if decoded is not None:
                return decoded
        m = self.head.match(text)
        if m is None:
            raise ArgumentError("no function head")
        name = m.group(1).strip()
        if not name:
            raise ArgumentError("empty function name")
        body = text[m.end() :]
        c = self.close.search(body)
        if c is not None:
            body = body[: c.start()]
        params, repaired = self._params(body)
        return [(name, params)], repaired

    def _params(self, body: str) -> tuple[dict[str, Any], bool]:
        tokens = [(t.start(), t.end(), t.group("open") is not None, t.group(2) or "") for t in self.tokens.finditer(body)]
        params: dict[str, Any] = {}
        repaired = False
        i = last = 0  # last: the end of what has been read as parameters
        while i < len(tokens):
            start, head_end, is_open, key = tokens[i]
            if not is_open:
                i += 1  # a stray </parameter> outside any value
                last = head_end
                continue
            if body[last:start].strip():
                raise ArgumentError("text between parameters")
            j = i + 1  # the value's closer: the first one the next parameter or the end follows
            while j < len(tokens) and (tokens[j][2] or not self.follow.match(body, tokens[j][1])):
                if not tokens[j][2] and self.stray is not None and self.stray.match(body, tokens[j][1]):
                    raise ArgumentError("a malformed parameter head after a value")
                j += 1
            cut = _unclosed_head(body, tokens, i + 1, j, params)
            if cut is not None:
                params[key.strip()] = body[head_end : tokens[cut][0]]
                i, last, repaired = cut, tokens[cut][0], True
            elif j < len(tokens):
                params[key.strip()] = body[head_end : tokens[j][0]]
                i, last = j + 1, tokens[j][1]
            else:
                params[key.strip()] = body[head_end:]
                last = len(body)
                break
        if body[last:].strip():
            raise ArgumentError("text after the last parameter")
        return params, repaired


def _unclosed_head(body: str, tokens: list[tuple[int, int, bool, str]], first: int, stop: int,
                   given: dict[str, Any]) -> int | None:
    """Among ``tokens[first:stop]`` (inside one value), where the value lost its own closer: it holds more
    parameter heads than closers, and the first of its heads that starts a line, as the template lays heads out,
    names a parameter not given yet. None: the value's tags are its text (a head quoted mid-line stays text)."""
    inside = tokens[first:stop]
    if sum(1 if t[2] else -1 for t in inside) <= 0:
        return None
    for k in range(first, stop):
        start, _, is_open, key = tokens[k]
        line = body[body.rfind("\n", 0, start) + 1 : start]
        if is_open and "\n" in body[:start] and not line.strip(" \t") and key.strip() not in given:
            return k
    return None
