"""The tag body scanner: raw text up to an end tag, items between item tags. Pure, no decoding.

Invariant: as for every body scanner (see ``bodies``): each character is examined once (a held partial
tag is at most one tag long), nothing recurses on nesting depth, complete items go to ``block.items``,
and ``block.done`` is set at the block's end. Its ``gate`` names the characters a tag (or a string's delimiter) may
begin with in its state, for the parser's one gate.

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
from typing import TYPE_CHECKING, NamedTuple

from .block import Block
from .gaps import MAX_GAP, NON_WS, Stop, partial_tail
from .literals import Literals, first_characters, literal_pattern, literals
from .value_tables import _AFTER_END, _AFTER_VALUE, _IN, _OUT, Pair, Search, ValueTable, _lowercase, _value_table

if TYPE_CHECKING:
    from ..dialects.spec import ValueTags

__all__ = ["BodyTable", "TagBody"]

class TagBody:
    """Raw text up to an end tag. Items run from an item opener to its closer; nested copies of the
    item tags (and of a wrapper pair) inside a value are counted, not obeyed."""

    __slots__ = ("b", "tags", "item", "nest", "ends", "has_end", "depth", "nested", "between", "pending", "single",
                 "search", "longest", "closers", "values", "vstate", "out_search", "in_search", "follows",
                 "state_tags", "ws_after", "closer", "cand", "quoted", "unclosed", "fallback", "strings", "in_str",
                 "gates", "goes_on")

    def __init__(self, block: Block, end_tags: tuple[str, ...], item: tuple[str, str] | None,
                 nest: tuple[str, str] | None, single: bool, values: ValueTags | None = None,
                 strings: tuple[str, ...] = ()):
        self.b = block
        table = _body_table(end_tags, item, nest, values, strings)
        self.values, self.item, self.nest, self.ends, self.tags = table.values, table.item, table.nest, table.ends, table.tags
        self.search, self.closers, self.has_end, self.longest = table.search, table.closers, bool(table.ends), table.longest
        self.gates, self.goes_on = table.gates, table.goes_on
        if table.value_table is not None:
            self.out_search, self.in_search, self.follows, self.state_tags = table.value_table
        self.vstate = _OUT
        self.ws_after = 0  # whitespace read after a tentative closer
        self.closer = ""  # _AFTER_END: the block's end as written, held with the whitespace after it in ``pending``
        self.cand: tuple[int, str, bool] | None = None  # the last closer read as value text: (item offset, as written, block end?)
        self.quoted = False  # the open item holds a closer read as value text
        self.unclosed = False  # _AFTER_ITEM: the item's closer was read inside a value (one never closed)
        self.fallback = ""  # why the end of the stream settled the block as it did ("": it did not decide)
        # The delimiters of strings in an item's arguments: a tag inside an open string is text. One character
        # (JSON's ", Python's ' and "): the same one closes it, backslash escapes; longer (Gemma 4's <|"|>): the
        # same one closes it, no escapes, and it is held like a tag when a delta's end cuts it.
        self.strings = strings
        self.in_str = ""  # the delimiter of the string open in an item ("": none)
        self.depth = 0
        self.nested = 0
        self.between = False
        self.pending = ""
        self.single = single  # the block is exactly one item (opened by the item opener itself)
        if self.item is None:
            block.open_item()
            self.depth = 1

    def gate(self) -> Search | None:
        """The parser's gate: a search for the characters a token live in this state may begin with (a tag's, or in
        a string its delimiter's or a backslash), so a delta holding none is text of the item or value, written as
        it is. None where every character counts: between items, after a tentative closer."""
        if self.between or self.vstate >= _AFTER_VALUE:
            return None
        if self.values is not None:
            return self.gates[self.vstate]
        return self.gates[self.in_str]

    def unread(self) -> str:
        """What the scanner holds that is not written to the block: the whitespace it waits on (``pending``), after
        a block's end met in a value (held until the end of the stream says what it was) too."""
        return self.closer + self.pending if self.vstate == _AFTER_END else self.pending

    def may_finish(self, delta: str) -> bool:
        """Could ``delta`` complete an item (and so start a decode)? Every item ends at a ``>``."""
        return ">" in delta

    def scan(self, text: str, pos: int, end: int, final: bool) -> int:
        b = self.b
        i = pos
        while i < end and not b.done:
            if self.between:
                r = self._between(text, i, end, final)
                if type(r) is Stop:
                    return r.at
                i = pos = r  # type: ignore[assignment]  # (an int here)
            if self.in_str:
                k = self._skip_string(text, i, end, final)
                if type(k) is Stop:
                    b.write(text[pos : k.at])
                    return k.at
                i = k  # type: ignore[assignment]  # (an int here)
                continue
            m = self.search(text, i, end)
            if m is None:
                hold = end if final else partial_tail(text, i, end, self.tags, self.longest)
                b.write(text[pos:hold])
                return hold
            tag = m.group().lower()
            i = m.end()
            if tag in self.strings:
                if self.depth > 0:  # (a quote outside an item is just text)
                    if len(tag) > 1:
                        self.in_str = tag  # (``_skip_string`` reads it on)
                        continue
                    # a one-character quote: read on to its closer here (``_skip_string``'s reading, inline)
                    j = _STRING_BODY[tag](text, i, end).end()  # type: ignore[union-attr]  # (always matches)
                    if j < end and text[j] == tag:
                        i = j + 1
                        continue
                    self.in_str = tag  # the string goes on past the text
                    if j < end and not final:  # a backslash ending the text: its escaped character is still to come
                        b.write(text[pos:j])
                        return j
                    i = end
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
                    b.close_item()
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
                b.close_item()  # an item left open is ended by the block's end (lenient)
                b.end(m.group())
                return i
        if pos < i:
            b.write(text[pos:i])
        return i

    def _between(self, text: str, i: int, end: int, final: bool) -> int | Stop:
        """Between items: whitespace joins ``pending``; the next item or the block's end is read on; anything else
        ends the block before it. Returns where to go on, or a ``Stop``: wait (or ended) there."""
        m = NON_WS.search(text, i, end)
        k = m.start() if m else end
        self.pending += text[i:k]
        if len(self.pending) > MAX_GAP:
            return Stop(self._end_without(k))
        if m is None:
            return Stop(self._end_without(k) if final else k)
        r = self.closers.at(text, k, end, final)
        if r == -1:
            return Stop(k)
        if not isinstance(r, str) or r.lower() not in self.goes_on:
            return Stop(self._end_without(k))
        self.between = False
        self.b.write(self.pending)
        self.pending = ""
        return k

    def _skip_string(self, text: str, i: int, end: int, final: bool) -> int | Stop:
        """Inside a string: past its closing delimiter (the string ends), to ``end`` (it goes on), or a ``Stop``:
        hold from there (a backslash ending the text, whose escaped character is still to come; a cut delimiter)."""
        quote = self.in_str
        if len(quote) > 1:  # (it closes as it opens: the tags' search folds ASCII case, so this one does too)
            m = literal_pattern((quote,)).search(text, i, end)
            if m is not None:
                self.in_str = ""
                return m.end()
            hold = end if final else partial_tail(text, i, end, (quote,), len(quote))
            return end if hold == end else Stop(hold)
        j = _STRING_BODY[quote](text, i, end).end()  # type: ignore[union-attr]  # (a `*` pattern always matches)
        if j == end:
            return end
        if text[j] == quote:
            self.in_str = ""
            return j + 1
        return end if final else Stop(j)  # a backslash ending the text

    def _end_without(self, k: int) -> int:
        self.b.end("", self.pending)
        self.pending = ""
        return k

    def finish(self) -> None:
        """End of stream inside the block: it ends here, what waited between items is its trailing text."""
        if not self.b.done:
            self.b.end("", self.pending)


class BodyTable(NamedTuple):
    """Everything a tag body derives from its dialect and end (see ``_body_table``)."""

    values: ValueTags | None
    item: Pair
    nest: Pair
    ends: tuple[str, ...]
    tags: tuple[str, ...]  # every tag, lowercase, longest first
    search: Search  # any tag, or a one-character string delimiter
    closers: Literals  # the tags, read at a position
    longest: int
    value_table: ValueTable | None  # raw-text values' searches and what may follow a tentative closer
    gates: dict[int | str, Search]  # by state (raw values: ``vstate``; else the string open, "" for none)
    goes_on: tuple[str, ...]  # what goes on a block after an item: the next item's opener ("" if none), its ends


@functools.lru_cache(maxsize=256)
def _body_table(end_tags: tuple[str, ...], item: Pair, nest: Pair, values: ValueTags | None,
                strings: tuple[str, ...]) -> BodyTable:
    """Everything a tag body derives from its dialect and end, built once per (dialect, end): a block's scanner
    is made for every call block, so its construction is a lookup and assignments. Tags are lowercase, every tag
    longest first (string delimiters longer than a character are tags too); the search finds any tag or a
    one-character string delimiter."""
    values = _lowercase(values) if values is not None else None
    item = (item[0].lower(), item[1].lower()) if item else None
    nest = (nest[0].lower(), nest[1].lower()) if nest else None
    ends = tuple(t.lower() for t in end_tags)
    value_tags = (*values.open, values.close, *values.next) if values else ()
    long_quotes = tuple(q for q in strings if len(q) > 1)  # (string delimiters that are tags)
    tags = tuple(sorted({*(item or ()), *(nest or ()), *ends, *value_tags, *long_quotes}, key=len, reverse=True))
    quotes = tuple(q for q in strings if len(q) == 1)
    table = _value_table(item, ends, values) if values is not None else None
    gates: dict[int | str, Search] = {"": first_characters((*tags, *quotes))}
    if table is not None:
        gates[_OUT], gates[_IN] = (first_characters(table.state_tags[st]) for st in (_OUT, _IN))
    for q in strings:  # inside a string: its delimiter, and a backslash escaping one
        gates[q] = first_characters((q, "\\") if len(q) == 1 else (q,))
    return BodyTable(values, item, nest, ends, tags, literal_pattern((*tags, *quotes)).search, literals(tags),
                     len(tags[0]), table, gates, (item[0] if item else "", *ends))


# A string's inside: runs of plain characters, one escape between runs (sre reads a run in one step; the plain
# ``(?:[^q\\]|\\.)*`` took about 20 ns a character)
_STRING_BODY = {q: re.compile(f"[^{q}\\\\]*+(?:\\\\.[^{q}\\\\]*+)*+", re.S).match for q in ("'", '"')}
