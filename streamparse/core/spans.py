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
from typing import Callable, Protocol

from ..dialects.spec import Span
from .events import Event
from .gaps import partial_tail
from .items import ItemCalls
from .output import Output
from .literals import first_characters
from .scanner import PARTIAL, Candidate, MarkerTable, literal_pattern
from .states import SPAN_ENDS, Move, State

__all__ = ["SpanReader"]

TEXT, SPAN, HEAD, BODY, AFTER = State


@functools.lru_cache(maxsize=64)
def _lower(closers: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c.lower() for c in closers)


class Owner(Protocol):
    """What the span reader asks of its parser: its table and options, the state a block returns to, where text
    goes (``_text``, which it points at the reasoning while a block inside reasoning is open), its output, the
    one state change, how a block begins, and its body's reader."""

    _table: MarkerTable
    _calls_in_reasoning: bool
    _resume: State  # the state a block returns to: TEXT, or SPAN while the block sits inside reasoning
    _mode: State
    _output: Output
    _text: Callable[[str], None]
    _items: ItemCalls | None

    def _begin(self, text: str, j: int, fence: int, found: tuple[str, list[Candidate], str | None]) -> int: ...
    def _go(self, move: Move) -> None: ...
    def _scan_body(self, text: str, pos: int, final: bool) -> int: ...


class SpanReader:
    """The SPAN state's reader and its state (``span``: the span open, or the one the prompt opened), for its
    parser; also the BODY reader of a block inside reasoning, which ends where the reasoning does."""

    __slots__ = ("span", "_owner")

    def __init__(self, owner: Owner, span: Span) -> None:
        self.span = span
        self._owner = owner

    def reads_calls(self) -> bool:
        """Are call openers looked for inside the span (see the module's note)?"""
        span, owner = self.span, self._owner
        return span.kind == "reasoning" and (owner._calls_in_reasoning or not span.opener and owner._table.reads_calls)

    def gate(self) -> Callable[[str], object] | None:
        """The gate in a span (none where calls are read in it): a search for any character one of its closers
        begins with, so a delta holding none is the span's text (``pass_delta``)."""
        if self._owner._resume != TEXT or self.reads_calls():
            return None
        return first_characters(self.span.closers)  # (no closer: a search that never matches)

    def pass_delta(self, delta: str) -> list[Event]:
        """A delta the gate let through in a span: its text, as ``scan`` gives it."""
        owner = self._owner
        output = owner._output
        output.begin()
        (owner._text if self.span.kind == "content" else output.reasoning)(delta)
        return output.end()

    def scan(self, text: str, pos: int, final: bool) -> int:
        """SPAN's reader: the span's text up to its closer (a possible closer cut by the delta's end is held)."""
        span, owner = self.span, self._owner
        emit = owner._text if span.kind == "content" else owner._output.reasoning
        m = literal_pattern(span.closers).search(text, pos) if span.closers else None
        if m is not None:
            stop = m.start()
        else:  # a possible closer cut by the delta's end is held
            closers = _lower(span.closers)
            stop = len(text) if final or not closers else partial_tail(text, pos, len(text), closers,
                                                                        max(map(len, closers)))
        if self.reads_calls():
            opened = self._call_in_span(text, pos, stop, final or m is not None)
            if opened is not None:
                return opened
        emit(text[pos:stop])
        if m is None:
            return stop
        self._end_span()
        if not span.opener and m.group().lower() in owner._table.response_openers:
            return stop  # the prompt's reasoning ends where a response channel opens: that opener is read next
        return m.end()

    def _end_span(self) -> None:
        """The span is over: back to the answer, which starts like a message (line-start forms count)."""
        owner = self._owner
        owner._go(SPAN_ENDS)
        owner._text = owner._output.prose
        owner._output.line_blank = True

    def _call_in_span(self, text: str, pos: int, stop: int, final: bool) -> int | None:
        """A call opener in ``text[pos:stop]``: the reasoning before it leaves and its block begins (or, for a
        possible opener cut by the delta's end, the text from it is held). None: no opener here."""
        owner = self._owner
        seg = text[:stop] if stop < len(text) else text
        i = pos
        search = owner._table.trigger.search
        reasoning = owner._output.reasoning
        while True:
            m = search(seg, i)
            if m is None:
                return None
            j = m.start()
            found = owner._table.match(seg, j, final, False) if seg[j] not in "\n`" else None
            if found == PARTIAL:
                reasoning(text[pos:j])
                return j
            if isinstance(found, tuple):  # line-start forms are prose inside reasoning, even pinned
                cands = [c for c in found[1] if c.opener is not None and not c.opener.line_start]
                found = (found[0], cands, found[2]) if cands else None
            if found is None:
                i = j + 1
                continue
            reasoning(text[pos:j])
            owner._text = reasoning  # a block that is not a call goes back to the reasoning
            return owner._begin(text, j, 0, found)

    def scan_body(self, text: str, pos: int, final: bool) -> int:
        """A block inside reasoning ends where the reasoning does: its body is read up to the span's closer,
        as if the stream ended there; a possible closer cut by the delta's end is held, not read."""
        owner = self._owner
        closers = self.span.closers
        m = literal_pattern(closers).search(text, pos) if closers else None
        if m is None:
            stop = len(text) if final or not closers else partial_tail(text, pos, len(text), _lower(closers),
                                                                         max(map(len, closers)))
            return owner._scan_body(text[:stop], pos, final)
        new = owner._scan_body(text[: m.start()], pos, True)
        if owner._mode == BODY:
            assert owner._items is not None  # (a block is open: its calls' reader was made when it opened)
            owner._items.finish_block()
            return m.start()
        return new
