"""Reading an opener's head after its marker, part by part: whether the block is this dialect's (``match_head``).

Invariant: a head is read from its start, at most ``heads.MAX_WS`` whitespace and ``heads.MAX_NAME`` name characters
per part, so any chunking reads the same head; the answer is a ``HeadMatch``, ``PARTIAL`` (the text ends inside a
head that may still match, never once ``final``) or None. A name gated by the tools is checked against the parser's
table (any case), and a call's name, when the head holds one, is given as declared.
"""

from __future__ import annotations

import re

from ..dialects.spec import LIT, NAME, OPT, PEEK, WS, Opener, Part
from .heads import MAX_NAME as _MAX_NAME, MAX_WS as _MAX_WS, PARTIAL, HeadMatch, Partial
from .literals import PARTIAL_CLOSER, literals
from .scanner import MarkerTable

__all__ = ["match_head"]

_NAME_CHARS = re.compile(r"[\w.\-]*")


def match_head(opener: Opener, text: str, pos: int, final: bool, table: MarkerTable) -> HeadMatch | Partial | None:
    """Check ``opener.head`` then ``opener.look`` from ``text[pos]``: a HeadMatch, PARTIAL, or None (fails)."""
    found_name: list[str] = []
    k = _match_parts(opener.head, text, pos, final, table, found_name) if opener.head else pos
    if not isinstance(k, int):
        return k
    head_name = found_name[0] if found_name else None  # a name in the look only gates; the body names the call
    if opener.look:
        k2 = _match_parts(opener.look, text, k, final, table, [])
        if not isinstance(k2, int):
            return k2
    return HeadMatch(k, head_name)


def _match_parts(parts: tuple[Part, ...], text: str, k: int, final: bool, table: MarkerTable,
                 found_name: list[str]) -> int | Partial | None:
    n = len(text)
    more: Partial | None = None if final else PARTIAL
    for part in parts:
        kind = part.kind
        if kind == WS:
            j = k
            while j < n and j - k <= _MAX_WS and text[j].isspace():
                j += 1
            if j - k > _MAX_WS:
                return None
            if j == n:
                return more
            k = j
        elif kind == LIT or kind == OPT:
            hit = literals(part.texts).at(text, k, n, False)
            if type(hit) is str:
                k += len(hit)
            elif hit == PARTIAL_CLOSER:
                if more is None and kind == OPT:
                    continue
                return more
            elif kind == LIT:
                return None
        elif kind == NAME:
            j = _NAME_CHARS.match(text, k).end()  # type: ignore[union-attr]  # re's stub: a `*` pattern always matches
            word = text[k:j]
            if j - k > _MAX_NAME:
                return None
            if j == n:
                if final or (part.gated and not table.ungated and word.lower() not in table.tool_prefixes
                             and not _may_call(word, part, table)):
                    if final and word and _name_ok(word, part, table):
                        found_name.append(_canonical(word, table))
                        return j
                    return None
                return PARTIAL
            if not word:
                return None
            if not _name_ok(word, part, table):
                called = _called(word, part, table, text, j, final)
                if called is not True:
                    return called
            found_name.append(_canonical(word, table))
            k = j
        elif kind == PEEK:
            if k >= n:
                return more
            if text[k] not in part.texts[0]:
                return None
    return k


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_IDENTIFIER_PREFIX = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\.?")


def _may_call(word: str, part: Part, table: MarkerTable) -> bool:
    """Could ``word``, cut by the text's end, still become an undeclared name a ``called`` gate lets through?"""
    return bool(part.called and table.tool_names and _IDENTIFIER_PREFIX.fullmatch(word))


def _called(word: str, part: Part, table: MarkerTable, text: str, j: int, final: bool) -> bool | Partial | None:
    """An undeclared ``word`` ending at ``text[j]``: passes (True) when tools are declared, it is an identifier
    (dotted allowed) and ``part.called`` follows it at once; PARTIAL when the text ends inside that literal."""
    if not (part.called and table.tool_names and _IDENTIFIER.fullmatch(word)):
        return None
    after = text[j : j + len(part.called)]
    if after == part.called:
        return True
    if not final and j + len(after) == len(text) and part.called.startswith(after):
        return PARTIAL
    return None


def _name_ok(word: str, part: Part, table: MarkerTable) -> bool:
    return not part.gated or table.ungated or word.lower() in table.tool_names


def _canonical(word: str, table: MarkerTable) -> str:
    return table.tool_names.get(word.lower(), word)
