"""An opener's head and look compiled into regexes, so that a head is decided in one C-level step.

Invariant: ``CompiledHead(...)(text, pos, table)`` answers exactly what ``scanner.match_head`` answers for the same
opener and marker table while the stream goes on (``final`` false), on ASCII text (the caller checks
``str.isascii``; other text, and the stream's end, go to ``match_head``). ``compile_head`` declines (None) what it cannot mirror exactly: a name with a ``called``
literal, more than one name, literals one of which begins another. Why the answers agree: ``match_head`` reads
its parts left to right and never goes back; every part here is atomic (possessive or a single possible
literal), so the regex cannot go back either, and each part's "the text ends inside me" (PARTIAL) reading is
exclusive of its full reading. Property-tested against ``match_head`` in tests/core/test_heads.py.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Callable, Final, Literal, Mapping, Optional, Protocol, Union

from ..dialects.spec import LIT, NAME, OPT, PEEK, WS, Opener, Part

__all__ = ["PARTIAL", "Partial", "HeadMatch", "CompiledHead", "compile_head", "MAX_WS", "MAX_NAME"]

PARTIAL: Final = "partial"  # "could still become a marker or head: wait for more text"
Partial = Literal["partial"]
MAX_NAME = 128
MAX_WS = 32  # whitespace allowed inside a head; past it the head fails (positional, so chunking-invariant)
_SPACE = "".join(re.escape(c) for c in map(chr, range(128)) if c.isspace())  # str.isspace() on ASCII
_NAMECH = r"\w.\-"  # the scanner's name characters (ASCII text: \w is ASCII)


class ToolNames(Protocol):
    """What a compiled head checks a name against (the parser's marker table)."""

    tool_names: Mapping[str, str]  # lowercase -> as declared

    @property
    def tool_prefixes(self) -> frozenset[str]: ...  # every prefix of every name (lowercase)


@dataclass
class HeadMatch:
    end: int  # where the head (consumed parts) ends: the body starts here
    name: str | None


HeadResult = Union[HeadMatch, Partial, None]


def _alt(texts: list[str]) -> str:
    return "|".join(re.escape(t) for t in sorted(texts, key=len, reverse=True))


def _proper_prefixes(texts: tuple[str, ...]) -> str:
    """Proper prefixes of ``texts`` (the empty one too), then the end of the text."""
    pre = sorted({t[:k] for t in texts for k in range(1, len(t))})
    return f"(?i:{_alt(pre)})?\\Z" if pre else r"\Z"


def _part(part: Part) -> tuple[str, str]:
    """``part`` read in full (atomic), and read up to the end of the text (its PARTIAL reading)."""
    kind = part.kind
    if kind == WS:
        return f"(?>[{_SPACE}]{{0,{MAX_WS}}})(?=[^{_SPACE}])", f"[{_SPACE}]{{0,{MAX_WS}}}\\Z"
    if kind == LIT:
        return f"(?i:{_alt(list(part.texts))})", _proper_prefixes(part.texts)
    if kind == OPT:  # skipped only where the text does not end inside it
        return f"(?>(?i:{_alt(list(part.texts))})|(?!{_proper_prefixes(part.texts)}))", _proper_prefixes(part.texts)
    if kind == NAME:
        return f"(?P<n>(?>[{_NAMECH}]{{1,{MAX_NAME}}}))(?=[^{_NAMECH}])", f"(?P<p>[{_NAMECH}]{{0,{MAX_NAME}}})\\Z"
    assert kind == PEEK
    return f"(?=[{re.escape(part.texts[0])}])", r"\Z"


class CompiledHead:
    """One opener's head and look: a full reading, and a PARTIAL reading (the text ends inside a part). The
    patterns do not depend on the tools: a name is checked against the caller's table after a match."""

    __slots__ = ("full", "pre", "gated", "named", "has_name")

    def __init__(self, opener: Opener, ungated: bool):
        parts = (*opener.head, *opener.look)
        names = [p for p in parts if p.kind == NAME]
        self.has_name = bool(names)
        self.gated = bool(names) and names[0].gated and not ungated
        self.named = any(p.kind == NAME for p in opener.head)  # a name in the look only gates
        self.full, self.pre = _patterns(opener)

    def __call__(self, text: str, pos: int, table: ToolNames) -> HeadResult:
        m = self.full(text, pos)
        if m is not None:
            if not self.has_name:
                return HeadMatch(m.end("h"), None)
            word = m.group("n")
            if word is not None and self.gated and word.lower() not in table.tool_names:
                return None
            if word is None or not self.named:
                return HeadMatch(m.end("h"), None)
            return HeadMatch(m.end("h"), table.tool_names.get(word.lower(), word))
        m = self.pre(text, pos)
        if m is None:
            return None
        if self.gated:
            word = m.group("n")
            if word is not None and word.lower() not in table.tool_names:
                return None  # a whole name, not a tool's
            cut = m.group("p")
            if cut is not None and cut.lower() not in table.tool_prefixes:
                return None  # a name cut by the text's end that no tool's name begins
        return PARTIAL


@functools.lru_cache(maxsize=None)  # one entry per opener of the dialect table: a few dozen, for the process
def _patterns(opener: Opener) -> tuple[Callable[[str, int], Optional["re.Match[str]"]],
                                       Callable[[str, int], Optional["re.Match[str]"]]]:
    """The full and PARTIAL readings of ``opener``'s head and look: they do not depend on the tools (names are
    checked after a match), so each opener's are compiled once per process."""
    parts = (*opener.head, *opener.look)
    head = "".join(_part(p)[0] for p in opener.head)
    look = "".join(_part(p)[0] for p in opener.look)
    pre = "(?!)"  # after the last part nothing can be cut by the text's end
    for p in reversed(parts):
        whole, cut = _part(p)
        pre = f"(?:{whole}{pre}|{cut})"
    return re.compile(f"{head}(?P<h>){look}", re.A).match, re.compile(pre, re.A).match


def compile_head(opener: Opener, ungated: bool) -> CompiledHead | None:
    """The compiled reading of ``opener``'s head and look, or None when it would not surely agree."""
    parts = (*opener.head, *opener.look)
    if sum(p.kind == NAME for p in parts) > 1 or any(p.kind == NAME and p.called for p in parts):
        return None
    for p in parts:
        if p.kind in (LIT, OPT) and (not all(p.texts) or any(t != u and u.startswith(t) for t in p.texts for u in p.texts)):
            return None
        if p.kind == PEEK and not p.texts[0]:
            return None
    return CompiledHead(opener, ungated)
