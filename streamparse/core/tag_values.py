"""Raw-text values in a tag body (Qwen3-Coder, Seed-OSS, MiniMax-M2, GLM...): the part of ``TagBody``'s scan that
keeps markup quoted inside an open value as the value's (``tag_body``'s note gives the rule).

Invariant: ``TagBody``'s, whose part this is (a mixin; the state lives in ``TagBody``'s slots): each character is
examined once, and what waits after a tentative closer is that closer and at most ``MAX_GAP`` whitespace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from .block import Block
from .gaps import MAX_GAP, NON_WS, partial_tail, whitespace_then_cut
from .literals import PARTIAL_CLOSER, Literals
from .value_tables import _AFTER_END, _AFTER_ITEM, _AFTER_VALUE, _IN, _OUT, Pair, Search

if TYPE_CHECKING:
    from ..dialects.spec import ValueTags

__all__ = ["RawValueScan"]



class RawValueScan:
    """The raw-value half of ``TagBody``'s scan; the attributes are ``TagBody``'s (see there)."""

    b: Block
    item: Pair
    ends: tuple[str, ...]
    values: ValueTags | None
    between: bool
    single: bool
    depth: int
    vstate: int
    ws_after: int
    closer: str
    pending: str
    longest: int
    cand: tuple[int, str, bool] | None
    quoted: bool
    unclosed: bool
    fallback: str
    out_search: Search
    in_search: Search
    hard: frozenset[str]
    hard_tail: Search
    cycles: Search
    tags: tuple[str, ...]
    tag_or_tail: Search
    lagged: list[str]
    state_tags: dict[int, tuple[str, ...]]
    follows: dict[int, Literals]
    limit: int
    tail: str
    hold: Callable[[str, Callable[[str], Optional[list[Any]]]], None]
    read: Callable[[str], Optional[list[Any]]]
    after_tail: Callable[[str], Optional[list[Any]]]

    def _between(self, text: str, i: int, end: int, final: bool) -> int:
        raise NotImplementedError  # TagBody's

    def _scan_values(self, text: str, pos: int, end: int, final: bool) -> int:
        """``scan`` for raw-text values (see the module's note). ``pos``..``i``: read, not yet written."""
        b = self.b
        item = self.item
        i = pos
        while i < end and not b.done:
            if self.between:
                k = self._between(text, i, end, final)
                if k < 0:
                    return -1 - k
                i = pos = k
            st = self.vstate
            if st >= _AFTER_VALUE:
                b.write(text[pos:i])
                k = self._follow(text, i, end, final)
                if k < 0:
                    return -1 - k
                i = pos = k
                continue
            m = (self.out_search if st == _OUT else self.in_search)(text, i, end)
            if m is None:
                hold = end if final else partial_tail(text, i, end, self.state_tags[st], self.longest)
                b.write(text[pos:hold])
                return hold
            tag = m.group().lower()
            i = m.end()
            if st == _IN:
                if tag == self.values.close:  # type: ignore[union-attr]  # (values is set on this path)
                    self.vstate, self.ws_after = _AFTER_VALUE, 0
                elif item and tag == item[1]:
                    if not self.ends:  # a bare item: anything may follow it, so it ends here
                        b.write(text[pos:i])
                        self._close_item()
                        return i
                    self.vstate, self.ws_after, self.unclosed = _AFTER_ITEM, 0, True
                else:  # the block's end: only the end of the stream after it makes it one
                    b.write(text[pos : m.start()])
                    pos = i
                    self.vstate, self.ws_after, self.closer, self.pending = _AFTER_END, 0, m.group(), ""
            elif tag in self.values.open:  # type: ignore[union-attr]  # (values is set on this path)
                self.vstate = _IN
            elif item and tag == item[0]:
                if self.depth == 0:
                    b.write(text[pos : m.start()])
                    pos = m.start()
                    b.open_item()
                    self.depth = 1
            elif item and tag == item[1] and self.depth > 0:
                b.write(text[pos:i])
                pos = i
                if self._close_item():
                    return i
            elif tag in self.ends:
                b.write(text[pos : m.start()])
                b.close_item()  # an item left open is ended by the block's end (lenient)
                b.end(m.group())
                return i
        b.write(text[pos:i])
        return i

    def fast_values(self, text: str) -> list[Any] | None:
        """Inside an item with raw-text values, ``text`` (a delta, or the held tail then the delta) taken whole when
        it holds no item tag and no block end, but for a prefix of one ending it, which is held: no events, and no
        state read. A value's tags (``<parameter=``, ``</parameter>``, a closer quoted in a value) are text to it.
        What it takes waits in ``lagged``, not yet written to the item: ``reclaim`` reads the values' state from it
        (``_catch_up``) and writes it, in one piece, before the slow path next reads (an item's closer, the block's
        end, the end of the stream), each character once; a value's tag cut by the text's end is taken, and given
        back whole by ``reclaim``. None (nothing changed): the slow path reads it (an item's tag, the block's end, a
        limit reached)."""
        b = self.b
        size = b.size + len(text)
        if size >= self.limit:
            return None
        if "<" not in text:  # (most deltas: taken whole)
            b.size = size
            self.lagged.append(text)
            return []
        m = self.hard_tail(text)
        if not text.isascii():
            # (the slow path reads a tag after a value's closer as ``str.lower`` does, the search folds ASCII case
            # only: so it searches the text lowered, with a tag written in other letters, such as a Kelvin sign)
            low = text.lower()
            if len(low) != len(text):
                return None
            m = self.hard_tail(low)
        if m is None:  # (a value's tags, ``a < b``: taken whole)
            b.size = size
            self.lagged.append(text)
            return []
        n = len(text)
        if m.end() < n or text[m.start():].lower() in self.hard:
            return self._item_closer(text, m.start(), m.end())
        hold = m.start()
        if hold:
            b.size += hold
            self.lagged.append(text[:hold])
        self.tail = text[hold:]
        self.hold(self.tail, self.after_tail)
        return []

    def fast_values_streamed(self, text: str) -> list[Any] | None:
        """``fast_values`` when the item's text is streamed as written (``b.watch``: the block's sink is a ``tee``):
        what it takes is written at once, so never given back, and any tag's prefix ending the text is held."""
        b = self.b
        n = len(text)
        if b.size + n >= self.limit:
            return None
        low = text if text.isascii() else text.lower()
        if len(low) != n:
            return None
        hold, i = n, 0
        while (m := self.tag_or_tail(low, i) if "<" in text else None) is not None:
            tag = m.group().lower()
            if m.end() == n and tag not in self.tags:
                hold = m.start()
                break
            if tag in self.hard:
                return None
            i = m.end()
        if hold:
            b.size += hold
            piece = text[:hold] if hold < n else text
            b.sink(piece)
            self.lagged.append(piece)
        if hold < n:
            self.tail = text[hold:]
            self.hold(self.tail, self.after_tail)
        return []

    def _item_closer(self, text: str, start: int, stop: int) -> list[Any] | None:
        """``fast_values``' text holds a whole tag it leaves to the slow path at ``start``: when that is the item's
        closer met inside a value or after a value's closer (so tentative), followed by whitespace and maybe a cut
        tag that may follow it, it is read here as ``_scan_values`` and ``_follow`` read it: the item's text up to
        the closer written, the whitespace waiting in ``pending``, the cut tag held, and ``gap_after_item`` reads on.
        So a Qwen3 ``</function>`` costs the catch-up it needs and no state machine run. None: nothing changed."""
        item = self.item
        if item is None or self.single or not self.ends or text[start:stop].lower() != item[1]:
            return None
        rest = text[stop:]
        k = whitespace_then_cut(rest, 0, self.follows[_AFTER_ITEM])
        if k < 0:
            return None
        before = "".join(self.lagged) + text[:start] if self.lagged else text[:start]
        if self._before_cut_tag(before) < len(before):
            return None  # (a tag's prefix before the closer: the slow path reads them in order)
        state = self.vstate, self.ws_after, self.quoted
        self._catch_up(before)
        if self.vstate == _OUT or (self.vstate == _IN and not text[start:stop].isascii()):
            # outside a value the closer ends the item at once (the slow path decodes it); inside one, a closer
            # written in other letters (a Kelvin sign) is no tag to the slow path's search (it folds ASCII only)
            self.vstate, self.ws_after, self.quoted = state
            return None
        b = self.b
        self.lagged = []
        b.size += stop
        b.sink(before + text[start:stop])  # (what ``fast_values`` lagged, written with the closer)
        self.unclosed = self.vstate == _IN
        self.vstate, self.ws_after = _AFTER_ITEM, k
        self.read = self.gap_after_item  # type: ignore[attr-defined]  # (TagBody's)
        self.pending += rest[:k]
        if k < len(rest):
            self.tail = rest[k:]
            self.hold(self.tail, self.after_tail)
        else:
            self.hold("", self.read)
        return []

    def _before_cut_tag(self, text: str) -> int:
        """Where a tag's prefix ending ``text`` begins (the earliest), else its end: what ``_catch_up`` may read."""
        n = len(text)
        return n if text.rfind("<", max(n - self.longest, 0)) < 0 else partial_tail(text, 0, n, self.tags, self.longest)

    def _catch_up(self, text: str) -> None:
        """The values' state after ``text`` (what ``fast_values`` took), read as ``_scan_values`` reads it (it holds
        no item tag and no block end, and ends with no tag's prefix, so only values open and close in it)."""
        st, ws, i, n = self.vstate, self.ws_after, 0, len(text)
        values = self.values
        assert values is not None
        # (the cycles' match folds ASCII case only, ``follows`` reads by ``str.lower``: they agree unless a character
        # lowers to ASCII, the Kelvin sign and the dotted capital I)
        cycles = self.cycles if text.isascii() or ("\u212a" not in text and "\u0130" not in text) else None
        while i < n:
            if st == _OUT and cycles is not None:
                m = cycles(text, i)
                assert m is not None  # (a `*` pattern always matches)
                i = m.end()
                if m.group(1) is not None:  # the text ends after a value's closer and whitespace
                    st, ws = _AFTER_VALUE, len(m.group(1))
                if i == n:
                    break
            if st == _AFTER_VALUE:  # as ``_follow`` reads it: the next parameter, else the closer was the value's
                m = NON_WS.search(text, i)
                k = m.start() if m is not None else n
                ws += k - i
                if m is None and ws <= MAX_GAP:
                    break
                r = self.follows[_AFTER_VALUE].at(text, k, n, False) if ws <= MAX_GAP else None
                st = _OUT if isinstance(r, str) and r.lower() in values.next else _IN
                if st == _IN:
                    self.quoted = True
                i = k
                continue
            m = (self.out_search if st == _OUT else self.in_search)(text, i)
            if m is None:
                break
            tag, i = m.group().lower(), m.end()
            if st == _OUT and tag in values.open:
                st = _IN
            elif st == _IN and tag == values.close:
                st, ws = _AFTER_VALUE, 0
        self.vstate, self.ws_after = st, ws

    def _close_item(self) -> bool:
        """The item's closer (written) ends it; True when that ends the block (a block of one item)."""
        self.b.close_item()
        self.depth, self.vstate, self.cand, self.quoted = 0, _OUT, None, False
        if self.single:
            self.b.end()
            return True
        self.between = True
        return False

    def _follow(self, text: str, i: int, end: int, final: bool) -> int:
        """After a tentative closer: read the whitespace, then decide by what follows. Returns where to go on,
        or ``-1 - k``: wait at k (the rest is held) or stop there."""
        b, st, values = self.b, self.vstate, self.values
        assert values is not None
        m = NON_WS.search(text, i, end)
        k = m.start() if m else end
        if st == _AFTER_ITEM and not self.unclosed and self.ws_after + k - i > MAX_GAP:
            cut = i + MAX_GAP + 1 - self.ws_after  # (positional: where the budget ends, whatever the chunking)
            self.pending += text[i:cut]
            return self._settled_by_gap(cut)
        self.ws_after += k - i
        if st == _AFTER_VALUE:
            b.write(text[i:k])  # the item's text whatever follows
        else:
            self.pending += text[i:k]
        if self.ws_after > MAX_GAP:
            self._revert()
            return k
        if m is None:
            if final:
                self._at_end_of_stream()
            return -1 - k
        if st == _AFTER_END:  # only the end of the stream confirms a block's end met in a value
            self._revert()
            return k
        r = self.follows[st].at(text, k, end, final)
        if r == PARTIAL_CLOSER:
            return -1 - k
        tag = r.lower() if isinstance(r, str) else None
        if tag is None:
            self._revert()
        elif st == _AFTER_VALUE:
            if tag in values.next:
                self.vstate = _OUT
            elif self.item and tag == self.item[1]:
                b.write(r)  # type: ignore[arg-type]  # (a str here)
                if self.single:
                    self._close_item()
                    return -1 - (k + len(tag))
                self.vstate, self.ws_after, self.unclosed = _AFTER_ITEM, 0, False
                return k + len(tag)
            else:  # the block's end
                b.close_item()
                b.end(r)  # type: ignore[arg-type]  # (a str here)
                return -1 - (k + len(tag))
        elif self.unclosed and tag in self.ends:
            # an item's closer read inside a value, then the block's end: with the value never closed, a later
            # ``</parameter>`` would make both the value's text (the parse in which the tags balance), so the end is
            # held as one met in a value: the end of the stream confirms it (the missing-closer repair), anything
            # else makes it, the item's closer and the whitespace between them the value's
            b.write(self.pending)
            self.pending = ""
            self.vstate, self.ws_after, self.closer = _AFTER_END, 0, r  # type: ignore[assignment]  # (a str here)
            return k + len(tag)
        else:  # _AFTER_ITEM, followed by the next item or the block's end: it was the item's closer
            if self._close_item():
                return -1 - k
            if tag in self.ends:  # the block's end, read here as ``_between`` and the scan would read it next
                self.between = False
                b.write(self.pending)
                self.pending = ""
                b.end(r)  # type: ignore[arg-type]  # (a str here)
                return -1 - (k + len(tag))
        return k

    def _revert(self) -> None:
        """What followed the tentative closer cannot follow a real one: it was the value's text."""
        b, st = self.b, self.vstate
        self.vstate = _IN
        self.quoted = True
        if st == _AFTER_VALUE:
            return
        if st == _AFTER_ITEM:
            self.cand = (b.cur.tell(), "", False)
        else:
            self.cand = (b.cur.tell(), self.closer, True)
            self.pending = self.closer + self.pending
        b.write(self.pending)
        self.pending = ""

    def _settled_by_gap(self, k: int) -> int:
        """More than ``MAX_GAP`` whitespace after an item's closer (its values closed): the call is complete, as
        the end of the stream would make it, and the block ends there without its closer; the whitespace is
        text after it (so whitespace after a complete call waits no longer than any held tail)."""
        self._at_end_of_stream()
        if not self.b.done:
            self.b.end("", self.pending)
            self.pending = ""
        return k

    def _at_end_of_stream(self) -> None:
        """The stream ended after a tentative closer and whitespace: that closer was real."""
        b, st = self.b, self.vstate
        if st == _AFTER_ITEM:
            quoted = self.quoted
            self._close_item()
            if quoted:
                self.fallback = "the stream ended right after an item's closer that followed quoted markup: read as its end"
        elif st == _AFTER_END:
            b.close_item()
            b.end(self.closer, self.pending)
            self.pending = ""
            self.vstate = _OUT
            self.fallback = "the stream ended right after a block's end written inside a value: read as its end"
