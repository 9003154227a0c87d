"""The fast path for well-formed items of the XML-parameter family (Qwen3-Coder / Seed-OSS, MiniMax-M2, ...).

Invariant: a fast path returns either exactly what the dialect's decoder would
return for the item (the grammar's reading, which is also the linear decoder's
reading for the XML-parameter family) or ``None``, which means "not sure: ask the
full decoder". It never raises and never guesses. It reads only the plain shape
(one head, parameters separated by whitespace, each value ended by the first
closer, the closing tag and whitespace to the end) and declines everything else:
tags inside values, missing closers, other letter cases, empty keys, odd
characters in names. Agreement is property-tested in ``tests/dialects/test_fast_decode.py``.

Why each item is exact (Qwen3-Coder, its grammar in ``xml_family``): the grammar
ends a value at the first ``</parameter>`` followed by whitespace and then
``<parameter=…>`` or ``</function>`` and the end; when the *first* ``</parameter>``
after a head is followed that way, the first valid closer is that one, so the
value is the text up to it (empty included: the closer outranks a value). The
linear decoder (``XmlParams``) reads the same item the same way when the only
tag-like strings in it, in any letter case, are the structural ones, which is
checked last. MiniMax is the same with ``<invoke name="…">`` heads. (The key/value family's is ``KvCall.fast``.)
"""

from __future__ import annotations

import re
from typing import Optional

from .spec import Calls

__all__ = ["FastXmlItem"]

Fast = Optional[tuple[Calls, bool]]  # (calls, repaired), or None: not sure, ask the full decoder
_WS = re.compile(r"\s*")  # the grammars' \s: str.isspace() exactly; one C call however long the run


class FastXmlItem:
    """One ``HEAD (ws PARAM VALUE CLOSER)* ws END ws`` item read with ``str.find``; ``None`` when unsure.

    ``head`` and ``param`` are compiled patterns matched at a position, group 1 the
    name or key (exactly the grammar's head terminals, so case-sensitive). ``tags``
    finds every string the lenient decoder could take for a tag, in any case: the
    item is accepted only when it finds the structural ones and no others.
    """

    def __init__(self, head: str, param: str, param_close: str, close: str, tags: str):
        self.head = re.compile(head)
        self.param = re.compile(param)
        self.param_close = param_close
        self.close = close
        self.tags = re.compile(tags, re.I)
        # The commonest item, with no "<" but the structural ones, read by one match: the same patterns with "<"
        # left out of their classes and values of no "<". When it matches, every "<" is a structural tag (so the
        # tag check passes) and the first closer after each head is the one it took: the loop's reading.
        head_plain, param_plain = (pattern.replace("[^", "[^<") for pattern in (head, param))
        self.plain = re.compile(rf"\s*{head_plain}((?:\s*{param_plain}[^<]*{re.escape(param_close)})*)\s*"
                                rf"{re.escape(close)}\s*\Z")
        self.pairs = re.compile(rf"{param_plain}([^<]*){re.escape(param_close)}")

    def __call__(self, text: str) -> Fast:
        plain = self.plain.match(text)
        if plain is not None:
            name = plain.group(1).strip()
            if not name:
                return None  # the decoder's error to report
            return [(name, {k.strip(): v for k, v in self.pairs.findall(plain.group(2))})], False
        skip = _WS.match
        m = self.head.match(text, skip(text).end())  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
        if m is None:
            return None
        name = m.group(1).strip()
        if not name:
            return None  # the decoder's error to report
        params: dict[str, str] = {}
        pos = m.end()
        count = 0
        param_match, param_close, close = self.param.match, self.param_close, self.close
        step = len(param_close)
        while True:
            pos = skip(text, pos).end()  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
            m = param_match(text, pos)
            if m is not None:
                start = m.end()
                end = text.find(param_close, start)
                if end < 0:
                    return None  # no closer: the lenient decoder's business
                # Valid only if what follows is another head or the end: checked by the next turn.
                params[m.group(1).strip()] = text[start:end]
                pos = end + step
                count += 1
            elif text.startswith(close, pos):
                if skip(text, pos + len(close)).end() != len(text):  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
                    return None
                break
            else:
                return None
        tags = 2 + 2 * count
        if text.count("<") != tags and len(self.tags.findall(text)) != tags:
            return None  # a tag-like string inside a name, key or value
        return [(name, params)], False
