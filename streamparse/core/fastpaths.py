"""The parser's fast paths past its prose gate: prose at a line start, with a line break or after a held
possible marker, a head still undecided, a span's text (``spans``), and a block body's own fast path (with the
tag's prefix it may hold).

Invariant: a fast path either takes the whole delta, changing the parser's state exactly as its state
machine would and returning the same events, or changes nothing and returns None (the state machine then
reads the delta). tests/core/test_fast_paths.py checks it feed by feed, on any chunking.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable

from .events import Event, FastPath, TextDelta
from .live import LiveCall
from .output import Output, blank_after
from .scanner import PARTIAL, Candidate, Found, HeadMatch, MarkerTable
from .spans import BODY, HEAD, SPAN, TEXT

if TYPE_CHECKING:
    from .block import Block

__all__ = ["FastPaths"]


class FastPaths(Output):
    """The part of the parser that takes deltas without its state machine (the parser sets the attributes)."""

    _held: str
    _look: str
    _gate: Callable[[str], object]
    _prose_gate: Callable[[str], re.Match[str] | None]
    _table: MarkerTable
    _block: Block | None
    _lives: list[LiveCall]
    _resume: int
    _body_fast: FastPath | None
    _cands: list[Candidate]
    _mode: int
    _fast_live: Callable[[], FastPath | None]
    _span_fast_path: Callable[[], FastPath | None]

    if TYPE_CHECKING:
        def _run(self, text: str, final: bool, at: int = 0, found: Found = None,
                 head: tuple[Candidate, HeadMatch] | None = None) -> list[Event]: ...

    def _prose_more(self, delta: str) -> list[Event] | None:
        """In prose, past the gate: the held text and the delta hold no marker (or line-start marker) start,
        or only one cut by the delta's end, which is held as the state machine would hold it. A whole marker:
        the state machine reads on from it (``_run`` told where, so it does not look for it again). None: the
        state machine must read them."""
        text = self._held + delta
        table = self._table
        if not text or self._look or (self._line_blank and table.word_start(text)):
            return None  # (a look past a mid-line "[" cut by the last delta: the state machine reads on, mid_line.py)
        i = 0
        while True:
            m = table.prose_check.search(text, i)
            if m is None:
                self._held = ""
                self._track_line(text)
                self._gate = type if self._line_blank else self._prose_gate
                return [TextDelta(text)]
            j = m.start()
            if text[j] in "\n`":  # a line break, or a fence: the state machine's own readings (no table marker)
                return None
            blank = blank_after(self._line_blank, text[:j])
            if m.lastindex:  # a "[" before a name's first character, where no marker begins (scanner._MID_LINE_START)
                if not blank and table.mid_line_call(text, j, False) is not None:
                    return None  # "[NAME(" mid-line, or its start: the state machine reports it (mid_line.py)
                i = j + 1
                continue
            found = table.match(text, j, False, blank)
            if found is not None:
                break
            if text[j] == "[" and table.mid_line and not blank and table.mid_line_call(text, j, False) is not None:
                return None  # a "[" ending the text mid-line: a name may follow (mid_line.py)
            i = j + 1  # no marker here (``<div>`` where a tool's name could stand): prose, as the state machine reads it
        if found != PARTIAL:  # a marker: the state machine reads on from it
            return self._run(text, False, j, found)
        # (PARTIAL: all of text[j:] may still be a marker, however far the search looked into it)
        self._held, self._gate = text[j:], type  # held: the gate must not take the next delta
        if not j:
            return []
        self._track_line(text[:j])
        return [TextDelta(text[:j])]

    def _reclaim(self) -> None:
        """Before the state machine reads on: what a body's fast paths took but could not yet read (``reclaim``) is
        held again, in front of what the parser holds."""
        b = self._block
        if b is not None and b.scanner is not None and b.scanner.lagged:
            self._held = b.scanner.reclaim() + self._held

    def _next_fast_path(self) -> FastPath | None:
        """The fast path for the next delta, past the prose gate: HEAD's (not in a span, no look pending), a span's
        (``spans``), or a block body's."""
        mode = self._mode
        if mode != BODY:
            if mode == HEAD:
                return self._head_fast if not self._look and self._resume == TEXT else None
            return self._span_fast_path() if mode == SPAN else None
        b = self._block  # in a block's body, the body's (if it may take one)
        if b is None or b.scanner is None or self._resume == SPAN:
            return None
        live = self._lives[-1] if self._lives else None
        if live is not None and live.waiting:
            return None  # the next text may start a streamed call: its start leaves in that feed, from here
        if live is not None and live.started:
            return None if self._held or b.scanner.tentative else self._fast_live()
        return b.scanner.fast_path(self._hold_tail, self._held)  # it reads what is held in front of the delta

    def _head_fast(self, delta: str) -> list[Event] | None:
        """In HEAD (which dialect owns the block?): a delta after which no candidate's compiled head matches and some
        still read PARTIAL is held with the head so far, and those candidates wait, as ``_scan_head`` would have it
        (a GLM name, a cut ``<function=`` after Hermes and GLM gave up: one match per candidate, not a state
        machine run); a head found, with no candidate waiting before it, is where the state machine starts (its
        body opened from that match, not matched again). None: the state machine reads it."""
        text = self._held + delta
        if not text.isascii():
            return None  # (the state machine reads it with match_head)
        table = self._table
        waiting = []
        for cand in self._cands:
            head = cand.head
            if head is None:
                return None
            r = head(text, 0, table)
            if r is PARTIAL:
                waiting.append(cand)
            elif r is not None:  # a head: the state machine opens the body from it (if no candidate waits before)
                return None if waiting else self._run(text, False, 0, None, (cand, r))  # type: ignore[arg-type]  # (r is
                # a HeadMatch here: identity with PARTIAL, above, does not narrow its type)
        if not waiting:
            return None
        self._cands, self._held = waiting, text
        return []

    def _hold_tail(self, tail: str, then: FastPath) -> None:
        """A body's fast path ended on a possible tag (``tail``; "" once it was read): the parser holds it for
        its slow path, and the next delta goes to ``then`` (which reads the tail in front of it)."""
        self._held, self._body_fast = tail, then
