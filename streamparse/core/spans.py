"""The SPAN state: reasoning and channel spans, and (opt-in) calls written inside reasoning.

Invariant: a span's text leaves once, in order, as the span's kind (reasoning or content);
a call opened inside reasoning leaves as a call only if its block decodes, and every other
character of that block goes back to the reasoning, never to the content. Only marker-opened
forms are looked for inside reasoning: line-start forms (bare JSON, ``[f(x)]``, ``functools``)
read too much like thinking aloud. Calls are read in reasoning the *prompt* opened (``start_in_reasoning``)
even when ``calls_in_reasoning`` is off, when tools are offered or a dialect is pinned: a model that skips
``</think>`` and writes its call means it (llama.cpp reads it so).
"""

from __future__ import annotations

import functools
from typing import Callable

from ..dialects.spec import Span
from .events import Event
from .gaps import partial_tail
from .items import ItemCalls
from .output import Output
from .literals import first_characters
from .scanner import PARTIAL, Candidate, MarkerTable, literal_pattern
from .states import Move, State

__all__ = ["SpanReader"]

TEXT, SPAN, HEAD, BODY, AFTER = State


@functools.lru_cache(maxsize=64)
def _lower(closers: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c.lower() for c in closers)


class SpanReader(Output):
    """The part of the parser that reads spans (the parser sets the attributes below)."""

    _span: Span
    _held: str
    _mode: State
    _table: MarkerTable
    _calls_in_reasoning: bool
    _resume: State  # the state a block returns to: TEXT, or SPAN while the block sits inside reasoning
    _begin: Callable[[str, int, int, tuple[str, list[Candidate], str | None]], int]
    _go: Callable[[Move], None]  # the parser's one state change (states.py)
    _scan_body: Callable[[str, int, bool], int]
    _items: ItemCalls

    def _reads_calls(self, span: Span) -> bool:
        """Are call openers looked for inside ``span`` (see the module's note)?"""
        return span.kind == "reasoning" and (self._calls_in_reasoning or not span.opener and self._table.reads_calls)

    def _span_gate(self) -> Callable[[str], object] | None:
        """The gate in a span (none where calls are read in it): a search for any character one of its closers
        begins with, so a delta holding none is the span's text (``_pass_span``)."""
        span = self._span
        if self._resume != TEXT or self._reads_calls(span):
            return None
        return first_characters(span.closers)  # (no closer: a search that never matches)

    def _pass_span(self, delta: str) -> list[Event]:
        """A delta the gate let through in a span: its text, as ``_scan_span`` gives it."""
        self._out = []
        (self._text if self._span.kind == "content" else self._reasoning)(delta)
        self._flush()
        return self._out

    def _scan_span(self, text: str, pos: int, final: bool) -> int:
        span = self._span
        emit = self._text if span.kind == "content" else self._reasoning
        m = literal_pattern(span.closers).search(text, pos) if span.closers else None
        if m is not None:
            stop = m.start()
        else:  # a possible closer cut by the delta's end is held
            closers = _lower(span.closers)
            stop = len(text) if final or not closers else partial_tail(text, pos, len(text), closers,
                                                                        max(map(len, closers)))
        if self._reads_calls(span):
            opened = self._call_in_span(text, pos, stop, final or m is not None)
            if opened is not None:
                return opened
        emit(text[pos:stop])
        if m is None:
            return stop
        self._end_span()
        if not span.opener and m.group().lower() in self._table.response_openers:
            return stop  # the prompt's reasoning ends where a response channel opens: that opener is read next
        return m.end()

    def _end_span(self) -> None:
        """The span is over: back to the answer, which starts like a message (line-start forms count)."""
        self._go(Move.SPAN_ENDS)
        self._text = self._prose
        self._line_blank = True

    def _call_in_span(self, text: str, pos: int, stop: int, final: bool) -> int | None:
        """A call opener in ``text[pos:stop]``: the reasoning before it leaves and its block begins (or, for a
        possible opener cut by the delta's end, the text from it is held). None: no opener here."""
        seg = text[:stop] if stop < len(text) else text
        i = pos
        search = self._table.trigger.search
        while True:
            m = search(seg, i)
            if m is None:
                return None
            j = m.start()
            found = self._table.match(seg, j, final, False) if seg[j] not in "\n`" else None
            if found == PARTIAL:
                self._reasoning(text[pos:j])
                return j
            if isinstance(found, tuple):  # line-start forms are prose inside reasoning, even pinned
                cands = [c for c in found[1] if c.opener is not None and not c.opener.line_start]
                found = (found[0], cands, found[2]) if cands else None
            if found is None:
                i = j + 1
                continue
            self._reasoning(text[pos:j])
            self._text = self._reasoning  # a block that is not a call goes back to the reasoning
            return self._begin(text, j, 0, found)

    def _scan_body_in_span(self, text: str, pos: int, final: bool) -> int:
        """A block inside reasoning ends where the reasoning does: its body is read up to the span's closer,
        as if the stream ended there; a possible closer cut by the delta's end is held, not read."""
        closers = self._span.closers
        m = literal_pattern(closers).search(text, pos) if closers else None
        if m is None:
            stop = len(text) if final or not closers else partial_tail(text, pos, len(text), _lower(closers),
                                                                         max(map(len, closers)))
            return self._scan_body(text[:stop], pos, final)
        new = self._scan_body(text[: m.start()], pos, True)
        if self._mode == BODY:
            self._items.finish_block()
            return m.start()
        return new
