"""The tables a raw-text value scan reads (``tag_values``): its states, its searches, what may follow each
tentative closer, and ``_cycles``, the one-pass reading of whole values that ``_catch_up`` starts with.

Invariant: built once per (item, ends, values) and shared by every call block of that shape; pure data and
compiled patterns, nothing a scan changes.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Callable, Optional

from .gaps import MAX_GAP
from .literals import ASCII_NOCASE, Literals, literal_pattern, literals, tag_or_tail

if TYPE_CHECKING:
    from ..dialects.spec import ValueTags

__all__ = ["Pair", "Search"]

# Where an item with raw-text values stands: outside a value, in one, or just after a closer read in a value
# (the value's, the item's, the block's end) whose meaning what follows decides.
_OUT, _IN, _AFTER_VALUE, _AFTER_ITEM, _AFTER_END = range(5)

Pair = Optional[tuple[str, str]]
Search = Callable[..., Optional["re.Match[str]"]]  # a compiled pattern's search or match


@functools.lru_cache(maxsize=256)
def _lowercase(values: ValueTags) -> ValueTags:
    return type(values)(tuple(t.lower() for t in values.open), values.close.lower(), tuple(t.lower() for t in values.next))


@functools.lru_cache(maxsize=256)
def _value_table(item: Pair, ends: tuple[str, ...], values: ValueTags) -> tuple[
        Search, Search, frozenset[str], Search, Search, dict[int, Literals], dict[int, tuple[str, ...]]]:
    """Raw-text values: the search outside a value, the one inside, the tags ``fast_values`` leaves to the slow
    path (the item's and the block's end) and the search for one or its prefix ending the text, ``_cycles``, what
    may follow each tentative closer, and each state's tags."""
    closers = (*((item[1],) if item else ()), *ends)
    outside = (*values.open, *(item or ()), *ends)
    inside = (values.close, *closers)
    hard = (*(item or ()), *ends)
    follows = {_AFTER_VALUE: literals((*values.next, *closers)), _AFTER_ITEM: literals((*((item[0],) if item else ()), *ends))}
    return (literal_pattern(outside).search, literal_pattern(inside).search, frozenset(hard),
            tag_or_tail(tuple(sorted(hard, key=len, reverse=True))).search, _cycles(values).match, follows,
            {_OUT: outside, _IN: inside})


def _cycles(values: ValueTags) -> re.Pattern[str]:
    """From outside a value, in ASCII text with no item tag or block end: as many whole values as ``_catch_up``'s
    steps would read one by one, each opened, closed by its first closer, and followed (after at most ``MAX_GAP``
    whitespace, as ``NON_WS`` reads it) by the next value's tag, in one match; then maybe one more value whose
    closer and whitespace end the text (group 1: that whitespace). Atomic groups: a closer not followed so (the
    value's text after all) ends the match there, and the steps read it."""
    def alternatives(tags: tuple[str, ...]) -> str:
        return literal_pattern(tags).pattern

    def upto(tags: tuple[str, ...]) -> str:  # ``.*?(?:tags)`` as one possessive pass: sre tries the tags only at
        # their first characters (the lazy form tried them at every character: 40 us for a 2 KB value)
        firsts = re.escape("".join(sorted({c for t in tags for c in (t[0].lower(), t[0].upper())})))
        return f"[^{firsts}]*+(?:(?!{alternatives(tags)})[{firsts}][^{firsts}]*+)*+(?:{alternatives(tags)})"

    value = f"(?>{upto(values.open)})(?>{upto((values.close,))})"
    ws = rf"[\t-\r\x1c-\x20]{{0,{MAX_GAP}}}"  # (``\s`` as str patterns read it, in ASCII)
    return re.compile(rf"(?:{value}{ws}(?=(?:{alternatives(values.next)})))*(?:{value}({ws})\Z)?", re.S | ASCII_NOCASE)
