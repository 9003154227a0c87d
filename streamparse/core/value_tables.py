"""The tables a raw-text value scan reads (``tag_values``): its states, its searches, what may follow each
tentative closer.

Invariant: built once per (item, ends, values) and shared by every call block of that shape; pure data and
compiled patterns, nothing a scan changes.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Callable, NamedTuple, Optional

from .literals import Literals, literal_pattern, literals

if TYPE_CHECKING:
    from ..dialects.spec import ValueTags

__all__ = ["Pair", "Search", "ValueTable"]

# Where an item with raw-text values stands: outside a value, in one, or just after a closer read in a value
# (the value's, the item's, the block's end) whose meaning what follows decides.
_OUT, _IN, _AFTER_VALUE, _AFTER_ITEM, _AFTER_END = range(5)

Pair = Optional[tuple[str, str]]
Search = Callable[..., Optional["re.Match[str]"]]  # a compiled pattern's search or match


@functools.lru_cache(maxsize=256)
def _lowercase(values: ValueTags) -> ValueTags:
    return type(values)(tuple(t.lower() for t in values.open), values.close.lower(), tuple(t.lower() for t in values.next))


class ValueTable(NamedTuple):
    """What a raw-text value scan reads, per item shape."""

    out_search: Search  # outside a value: a value's opener, the item's tags, the block's end
    in_search: Search  # inside one: its closer, the item's closer, the block's end
    follows: dict[int, Literals]  # what may follow each tentative closer
    state_tags: dict[int, tuple[str, ...]]  # each state's tags (``_OUT``, ``_IN``)


@functools.lru_cache(maxsize=256)
def _value_table(item: Pair, ends: tuple[str, ...], values: ValueTags) -> ValueTable:
    """Raw-text values: the search outside a value, the one inside, what may follow each tentative closer, and each
    state's tags."""
    closers = (*((item[1],) if item else ()), *ends)
    outside = (*values.open, *(item or ()), *ends)
    inside = (values.close, *closers)
    follows = {_AFTER_VALUE: literals((*values.next, *closers)), _AFTER_ITEM: literals((*((item[0],) if item else ()), *ends))}
    return ValueTable(literal_pattern(outside).search, literal_pattern(inside).search, follows, {_OUT: outside, _IN: inside})
