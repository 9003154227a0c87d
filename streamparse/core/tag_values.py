"""Raw-text values in a tag body (Qwen3-Coder, Seed-OSS, MiniMax-M2, GLM...): ``ValueTagBody``, the tag body whose
scan keeps markup quoted inside an open value as the value's (``tag_body``'s note gives the rule).

Invariant: ``TagBody``'s: each character is examined once, and what waits after a tentative closer is that closer and
at most ``MAX_GAP`` whitespace.
"""

from __future__ import annotations

from .gaps import MAX_GAP, NON_WS, Stop, partial_tail
from .literals import PARTIAL_CLOSER
from .tag_body import TagBody
from .value_tables import _AFTER_END, _AFTER_ITEM, _AFTER_VALUE, _IN, _OUT

__all__ = ["ValueTagBody"]



class ValueTagBody(TagBody):
    """A tag body whose items hold raw-text values (``values`` set): its own ``scan`` keeps markup quoted inside an
    open value as the value's; the rest is ``TagBody``'s."""

    __slots__ = ()

    def scan(self, text: str, pos: int, end: int, final: bool) -> int:
        """``TagBody.scan`` for raw-text values (see the module's note). ``pos``..``i``: read, not yet written."""
        b = self.b
        write = b.write
        item, values = self.item, self.values
        assert values is not None  # (set on this path)
        i = pos
        while i < end and not b.done:
            if self.between:
                k = self._between(text, i, end, final)
                if type(k) is Stop:
                    return k.at
                i = pos = k  # type: ignore[assignment]  # (an int here)
            st = self.vstate
            if st >= _AFTER_VALUE:
                if pos < i:
                    write(text[pos:i])
                k = self._follow(text, i, end, final)
                if type(k) is Stop:
                    return k.at
                i = pos = k  # type: ignore[assignment]  # (an int here)
                continue
            m = (self.out_search if st == _OUT else self.in_search)(text, i, end)
            if m is None:
                hold = end if final else partial_tail(text, i, end, self.state_tags[st], self.longest)
                write(text[pos:hold])
                return hold
            tag = m.group().lower()
            i = m.end()
            if st == _IN:
                if tag == values.close:
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
            elif tag in values.open:
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
        if pos < i:
            write(text[pos:i])
        return i

    def _close_item(self) -> bool:
        """The item's closer (written) ends it; True when that ends the block (a block of one item)."""
        self.b.close_item()
        self.depth, self.vstate, self.cand, self.quoted = 0, _OUT, None, False
        if self.single:
            self.b.end()
            return True
        self.between = True
        return False

    def _follow(self, text: str, i: int, end: int, final: bool) -> int | Stop:
        """After a tentative closer: read the whitespace, then decide by what follows. Returns where to go on,
        or a ``Stop``: wait there (the rest is held) or stop there."""
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
            return Stop(k)
        if st == _AFTER_END:  # only the end of the stream confirms a block's end met in a value
            self._revert()
            return k
        r = self.follows[st].at(text, k, end, final)
        if r == PARTIAL_CLOSER:
            return Stop(k)
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
                    return Stop(k + len(tag))
                self.vstate, self.ws_after, self.unclosed = _AFTER_ITEM, 0, False
                return k + len(tag)
            else:  # the block's end
                b.close_item()
                b.end(r)  # type: ignore[arg-type]  # (a str here)
                return Stop(k + len(tag))
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
                return Stop(k)
            if tag in self.ends:  # the block's end, read here as ``_between`` and the scan would read it next
                self.between = False
                b.write(self.pending)
                self.pending = ""
                b.end(r)  # type: ignore[arg-type]  # (a str here)
                return Stop(k + len(tag))
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

    def finish(self) -> None:
        """End of stream inside the block: a tentative closer was real; a value never closed is cut at the last
        closer quoted in it; else as ``TagBody``'s."""
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
        super().finish()
