"""The tag body scanner: raw text up to an end tag, items between item tags. Pure, no decoding.

Invariant: as for every body scanner (see ``bodies``): each character is examined once (a held partial
tag is at most one tag long), nothing recurses on nesting depth, complete items go to ``block.items``,
and ``block.done`` is set at the block's end. Its fast paths take a delta inside an item whole when it
holds no tag, and a delta between items that is whitespace; a tag's prefix at a delta's end is kept as
``tail`` (and handed to the parser, which holds it for its slow path) and read again in front of the next
delta. Either leaves the scanner exactly as ``scan`` would.

Raw-text values (``ValueTags``: Qwen3-Coder, Seed-OSS, MiniMax-M2, GLM): markup quoted inside an open value is
the value's. There only the value's closer, the item's closer and the block's end are read, and each stays
tentative until what follows it (after whitespace) is known: a value's closer is real when the next parameter,
the item's closer or the block's end follows; an item's closer when the next item, the block's end or the end of
the stream follows, or (its values closed) more than ``MAX_GAP`` whitespace, which ends the block there without
its end (whitespace after a complete call waits no longer than a held tail); a block's end met inside a value only when the stream ends after it, and so a block's end after
an item's closer read inside a value that never closed (``unclosed``: the missing-closer repair waits for the end
of the stream, as a later value closer would make both the value's text). Anything else makes it
the value's text. So the item is never closed, nor a call emitted, while a later character could still prove the
reading wrong; what waits is one closer and at most ``MAX_GAP`` whitespace. A stream that ends inside a value
that quoted an item's closer or the block's end falls back to the last of them (``fallback`` says so).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Optional

from .block import Block
from .gaps import MAX_GAP, NON_WS, Hold, partial_tail, unset_hold, whitespace_then_cut
from .events import Event, FastPath
from .literals import Literals, literal_pattern, literals, tag_or_tail
from .tag_strings import SIMPLE_QUOTES, QuotedStrings
from .tag_values import RawValueScan
from .value_tables import _AFTER_END, _AFTER_ITEM, _AFTER_VALUE, _IN, _OUT, Pair, Search, _lowercase, _value_table

if TYPE_CHECKING:
    from ..dialects.spec import ValueTags

__all__ = ["TagBody", "ValueTagBody"]

class TagBody(RawValueScan, QuotedStrings):
    """Raw text up to an end tag. Items run from an item opener to its closer; nested copies of the
    item tags (and of a wrapper pair) inside a value are counted, not obeyed."""

    __slots__ = ("b", "limit", "tags", "item", "nest", "ends", "has_end", "depth", "nested", "between", "pending", "single", "search",
                 "longest", "tag_or_tail", "closers", "shortest", "hold", "tail", "values", "vstate", "out_search",
                 "in_search", "hard", "hard_tail", "cycles", "lagged", "follows", "state_tags", "ws_after", "closer", "cand", "quoted", "unclosed", "fallback", "strings", "in_str", "quote_search", "read",
                 "long_quote", "fast_ok")

    def __init__(self, block: Block, end_tags: tuple[str, ...], item: tuple[str, str] | None,
                 nest: tuple[str, str] | None, single: bool, limit: int, values: ValueTags | None = None,
                 strings: tuple[str, ...] = ()):
        self.b = block
        self.limit = limit
        (self.values, self.item, self.nest, self.ends, self.tags, self.search, self.tag_or_tail, self.closers,
         self.has_end, self.longest, self.shortest, value_table, self.long_quote, self.quote_search) = _body_table(
            end_tags, item, nest, values, strings)
        if value_table is not None:
            self.out_search, self.in_search, self.hard, self.hard_tail, self.cycles, self.follows, self.state_tags = value_table
        self.lagged: list[str] = []  # what the fast paths took and have not read yet (nor written, unless streamed)
        # The fast paths look for a tag where they find a "<": a dialect whose tags begin otherwise (MiniMax-M3's
        # namespace marker) is read by the slow path alone.
        self.fast_ok = _all_begin_with_angle(self.tags)
        self.vstate = _OUT
        self.ws_after = 0  # whitespace read after a tentative closer
        self.closer = ""  # _AFTER_END: the block's end as written, held with the whitespace after it in ``pending``
        self.cand: tuple[int, str, bool] | None = None  # the last closer read as value text: (item offset, as written, block end?)
        self.quoted = False  # the open item holds a closer read as value text
        self.unclosed = False  # _AFTER_ITEM: the item's closer was read inside a value (one never closed)
        self.fallback = ""  # why the end of the stream settled the block as it did ("": it did not decide)
        # The delimiters of strings in an item's arguments: a tag inside an open string is text. One character
        # (JSON's ", Python's ' and "): the same one closes it, backslash escapes; longer (Gemma 4's <|"|>): the
        # same one closes it, no escapes, and it is held like a tag when a delta's end cuts it (``long_quote``: the
        # one such delimiter; ``quote_search``: a one-character quote or a backslash).
        self.strings = strings
        self.in_str = ""  # the delimiter of the string open in an item ("": none)
        self.hold: Hold = unset_hold
        self.read: FastPath = self.fast  # the fast path of the moment (``_reader``), set by ``fast_path``
        self.tail = ""  # what the parser holds in front of the next delta (a tag's prefix), as the fast paths read it
        self.depth = 0
        self.nested = 0
        self.between = False
        self.pending = ""
        self.single = single  # the block is exactly one item (opened by the item opener itself)
        if self.item is None:
            block.open_item()
            self.depth = 1

    def fast_path(self, hold: Hold, held: str = "") -> FastPath | None:
        """The fast path for the next delta; ``held``: what the parser holds in front of it (``hold`` sets that,
        with the fast path for the delta after)."""
        self.hold = hold
        self.tail = held
        if self.vstate == _AFTER_END or not self.fast_ok:
            return None  # a block's end met in a value, or tags not begun by "<": only the slow path reads on
        self.read = self._reader()
        return self.after_tail if held else self.read

    def _reader(self) -> FastPath:
        """The fast path of the moment: between items, after an item's tentative closer, inside an item (after a
        value's tentative closer too)."""
        if self.between:
            return self.gap
        if self.values is None:
            if not self.strings or not self.depth:  # (outside an item a quote is text, as in ``scan``)
                return self.fast
            if self.long_quote:
                return self.fast_long
            return self.fast_lagging if self.strings in SIMPLE_QUOTES and self.b.watch is None else self.fast_strings
        if self.vstate == _AFTER_ITEM:
            return self.gap_after_item
        return self.fast_values if self.b.watch is None else self.fast_values_streamed

    def after_tail(self, delta: str) -> list[Event] | None:
        """The held tail, then ``delta``, read by the fast path of the moment; once no tail is left, the parser
        holds nothing and the next delta goes to that fast path straight (no join)."""
        tail = self.tail
        text, self.tail = tail + delta, ""
        taken = self.read(text)
        if taken is None:
            self.tail = tail  # nothing changed: the parser still holds it, and reads it on its slow path
        elif not self.tail:
            self.hold("", self.read)  # (a closer read after a value moved ``read`` on to what may follow the item)
        return taken

    def fast(self, text: str) -> list[Event] | None:
        """Inside an item, ``text`` (a delta, or the held tail then the delta) holding no tag is taken whole (no
        events), but for a tag's prefix at its end, which is held (``tail`` and ``hold``): a ``<parameter=``,
        ``</parameter>`` or ``a < b`` in a value costs one search. No tag can have begun before ``text``
        (a possible one is held), so the search looks at it alone. None: the slow path reads it (nothing
        changed: the parser still holds the tail). Items whose strings are tracked: ``fast_lagging`` and
        ``fast_strings`` first."""
        b = self.b
        size = b.size + len(text)
        if size >= self.limit:
            return None
        if "<" in text:
            m = self.tag_or_tail(text)  # (raw-text values read theirs in fast_values)
            if m is not None:
                return self._up_to_tag(text, m)
        b.size = size
        b.sink(text)
        return []

    def _up_to_tag(self, text: str, m: re.Match[str]) -> list[Event] | None:
        """``tag_or_tail`` found ``m`` in ``text``: a tag (None: the slow path reads it), or a tag's prefix ending
        the text, which is held once what precedes it is taken."""
        return self._take(text, m.start()) if self._cut_tag(text, m) else None

    def _cut_tag(self, text: str, m: re.Match[str]) -> bool:
        """Is ``m`` (from ``tag_or_tail``) a tag's prefix that ends ``text``, not a whole tag?"""
        k = m.start()
        return m.end() == len(text) and (len(text) - k < self.shortest or text[k:].lower() not in self.tags)

    def _take(self, text: str, k: int) -> list[Event]:
        """The fast paths' step: ``text[:k]`` written to the item, the rest (if any) held for the next delta."""
        if k:
            self.b.size += k
            self.b.sink(text[:k])
        if k < len(text):
            self.tail = text[k:]
            self.hold(self.tail, self.after_tail)
        return []

    def reclaim(self) -> str:
        """Before the slow path reads on (``lagged`` is not empty): the state caught up with what the fast paths
        took, and a text's end they could not yet read (a tag's prefix; a backslash ending it inside a string)
        taken back from the item and returned, for the parser to read again in front of what it holds. So the slow
        path meets every tag and escape whole."""
        text, self.lagged = "".join(self.lagged), []
        n = len(text)
        if self.values is not None:
            k = self._before_cut_tag(text)
            self._catch_up(text[:k])
        else:
            k = self._strings_only(text, tags=False)  # (no tag in it: all read, but a backslash ending it in a string)
        b = self.b
        if b.watch is None:  # the fast paths lagged it unwritten: written now, but for what is given back
            b.sink(text[:k] if k < n else text)
            b.size -= n - k
        elif k < n:  # (streamed, it was written as taken: a whole tag that begins a longer one, taken back)
            b.unwrite(n - k)
        return text[k:]

    def gap(self, text: str) -> list[Event] | None:
        """Between items, ``text`` (a delta, or the held tail then the delta) that is whitespace, then maybe a tag's
        prefix at its end, is read as ``scan`` reads it: the whitespace joins ``pending`` and the prefix is
        held (``tail`` and ``hold``); no events. So ``\n</t``, ``ool_`` on the way to ``</tool_call>`` cost
        a search each. None: the slow path reads it (a whole tag, anything else, a limit reached)."""
        return None if self._gap(text, len(self.pending), self.closers) < 0 else []

    def gap_after_item(self, text: str) -> list[Event] | None:
        """After an item's tentative closer, ``text`` that is whitespace, then maybe the prefix of what may follow
        it (the next item, the block's end) at its end, read as ``_follow`` reads it: the whitespace joins
        ``pending``, the prefix is held. So ``\n</t``, ``ool_`` after a Qwen3 ``</function>`` cost a search each.
        None: the slow path reads it (what follows is whole, or is something else; a limit reached)."""
        k = self._gap(text, self.ws_after, self.follows[_AFTER_ITEM])
        if k < 0:
            return None
        self.ws_after += k
        return []

    def _gap(self, text: str, used: int, closers: Literals) -> int:
        """Both gaps' reading: the whitespace joins ``pending``, a cut closer is held; how much whitespace was read,
        or -1 (nothing changed)."""
        pending = self.pending
        if self.b.size + len(pending) + len(text) >= self.limit:
            return -1
        k = whitespace_then_cut(text, used, closers)
        if k < 0:
            return -1
        if k < len(text):
            self.tail = text[k:]
            self.hold(self.tail, self.after_tail)
        self.pending = pending + text[:k]
        return k

    def unread(self) -> str:
        """What the scanner holds that is not written to the block: the whitespace it waits on (``pending``), after
        a block's end met in a value (held until the end of the stream says what it was) too."""
        return self.closer + self.pending if self.vstate == _AFTER_END else self.pending

    def may_finish(self, delta: str) -> bool:
        """Could ``delta`` complete an item (and so start a decode)? Every item ends at a ``>``."""
        return ">" in delta

    @property
    def tentative(self) -> bool:
        """A closer was read whose meaning the next characters decide: only ``fast_values`` (after a value's closer)
        may take them."""
        return self.vstate >= _AFTER_VALUE

    def scan(self, text: str, pos: int, end: int, final: bool) -> int:
        b = self.b
        i = pos
        while i < end and not b.done:
            if self.between:
                m = NON_WS.search(text, i, end)
                k = m.start() if m else end
                self.pending += text[i:k]
                i = pos = k
                if len(self.pending) > MAX_GAP:
                    return self._end_without(k)
                if m is None:
                    if final:
                        return self._end_without(k)
                    return k
                r = self.closers.at(text, k, end, final)
                if r == -1:
                    return k
                if not isinstance(r, str) or r.lower() not in (self.item[0] if self.item else "", *self.ends):
                    return self._end_without(k)
                self.between = False
                b.write(self.pending)
                self.pending = ""
            if self.in_str:
                k = self._skip_string(text, i, end, final)
                if k < 0:
                    b.write(text[pos : -1 - k])
                    return -1 - k
                i = k
                continue
            m = self.search(text, i, end)
            if m is None:
                hold = end if final else partial_tail(text, i, end, self.tags, self.longest)
                b.write(text[pos:hold])
                return hold
            tag = m.group().lower()
            i = m.end()
            if tag in self.strings:
                self.in_str = tag if self.depth > 0 else ""  # (a quote outside an item is just text)
            elif self.item and tag == self.item[0]:
                if self.depth == 0:
                    b.write(text[pos : m.start()])
                    pos = m.start()
                    b.open_item()
                self.depth += 1
            elif self.item and tag == self.item[1] and self.depth > 0:
                self.depth -= 1
                if self.depth == 0:
                    b.write(text[pos:i])
                    pos = i
                    self.b.close_item()
                    if self.single:
                        b.end()
                        return i
                    self.between = True
            elif self.nest and tag == self.nest[0] and self.depth > 0:
                self.nested += 1
            elif self.nest and tag == self.nest[1] and self.nested > 0:
                self.nested -= 1
            elif tag in self.ends:
                b.write(text[pos : m.start()])
                self.b.close_item()  # an item left open is ended by the block's end (lenient)
                b.end(m.group())
                return i
        b.write(text[pos:i])
        return i

    def _between(self, text: str, i: int, end: int, final: bool) -> int:
        """Between items (as in ``scan``): whitespace joins ``pending``; the next item or the block's end is read
        on; anything else ends the block before it. Returns where to go on, or ``-1 - k``: wait (or ended) at k."""
        m = NON_WS.search(text, i, end)
        k = m.start() if m else end
        self.pending += text[i:k]
        if len(self.pending) > MAX_GAP:
            return -1 - self._end_without(k)
        if m is None:
            return -1 - (self._end_without(k) if final else k)
        r = self.closers.at(text, k, end, final)
        if r == -1:
            return -1 - k
        if not isinstance(r, str) or r.lower() not in (self.item[0] if self.item else "", *self.ends):
            return -1 - self._end_without(k)
        self.between = False
        self.b.write(self.pending)
        self.pending = ""
        return k

    def _end_without(self, k: int) -> int:
        self.b.end("", self.pending)
        self.pending = ""
        return k

    def finish(self) -> None:
        b = self.b
        if not b.done and self.vstate >= _AFTER_VALUE:
            self._at_end_of_stream()
        if not b.done and self.cand is not None and b.in_item and self.vstate == _IN:
            at, closer, block_end = self.cand  # the stream ended in a value: cut at the last closer it quoted
            rest = b.cut_item(at) + self.pending
            self.pending = ""
            b.close_item()
            b.end(closer if block_end else "", rest[len(closer) :] if block_end else rest)
            self.fallback = ("the stream ended inside a value: it was cut at the last closer quoted in it, "
                             "and what followed is text")
        if not b.done:
            b.end("", self.pending)




class ValueTagBody(TagBody):
    """A tag body whose items hold raw-text values (``values`` set): ``RawValueScan`` reads them (the class says
    which scan, so no step of a call block asks)."""

    __slots__ = ()
    scan = RawValueScan._scan_values


_ValueTable = tuple[Search, Search, frozenset[str], Search, Search, dict[int, Literals], dict[int, tuple[str, ...]]]
_BodyTable = tuple[Optional["ValueTags"], Pair, Pair, tuple[str, ...], tuple[str, ...], Search, Search, Literals, bool,
                   int, int, Optional[_ValueTable], str, Search]


@functools.lru_cache(maxsize=256)
def _all_begin_with_angle(tags: tuple[str, ...]) -> bool:
    """Do the fast paths read this body (every tag begins with "<")? Once per set of tags, not per block."""
    return all(t.startswith("<") for t in tags)


@functools.lru_cache(maxsize=256)
def _body_table(end_tags: tuple[str, ...], item: Pair, nest: Pair, values: ValueTags | None,
                strings: tuple[str, ...]) -> _BodyTable:
    """Everything a tag body derives from its dialect and end, built once per (dialect, end): a block's scanner
    is made for every call block, so its construction is a lookup and assignments."""
    values = _lowercase(values) if values is not None else None
    item, nest, ends, tags, search, tail = _tag_table(item, nest, end_tags, values, tuple(q for q in strings if len(q) > 1))
    if any(len(q) == 1 for q in strings):
        search = literal_pattern((*tags, *(q for q in strings if len(q) == 1))).search
    table = _value_table(item, ends, values) if values is not None else None
    long_quote = strings[0] if len(strings) == 1 and len(strings[0]) > 1 else ""
    if long_quote and any(not t.startswith("<") for t in tags):  # (fast_long and _long_strings rely on it)
        raise ValueError(f"a tag body with the string delimiter {long_quote!r} needs tags that begin with '<'")
    quote_search = re.compile(f"[{re.escape(''.join(q for q in strings if len(q) == 1))}\\\\]").search
    return (values, item, nest, ends, tags, search, tail, literals(tags), bool(ends), len(tags[0]), len(tags[-1]), table,
            long_quote, quote_search)


@functools.lru_cache(maxsize=256)
def _tag_table(item: Pair, nest: Pair, end_tags: tuple[str, ...], values: ValueTags | None = None,
               quotes: tuple[str, ...] = ()) -> tuple[Pair, Pair, tuple[str, ...], tuple[str, ...], Search, Search]:
    """A body's tags, lowercase, and their searches, built once per dialect and end: item, nest, ends, every
    tag (longest first; string delimiters that are tags, ``quotes``, too), a search for any tag, and one for a
    tag or a tag's prefix ending the text."""
    item = (item[0].lower(), item[1].lower()) if item else None
    nest = (nest[0].lower(), nest[1].lower()) if nest else None
    ends = tuple(t.lower() for t in end_tags)
    value_tags = (*values.open, values.close, *values.next) if values else ()
    tags = tuple(sorted({*(item or ()), *(nest or ()), *ends, *value_tags, *quotes}, key=len, reverse=True))
    return item, nest, ends, tags, literal_pattern(tags).search, tag_or_tail(tags).search

