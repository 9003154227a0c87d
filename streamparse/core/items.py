"""From a block's items to call events: whole items decoded when they close, or streamed as written.

Invariant: a block's items are settled in the order they were written; a block commits to
being a call block at its first call (or first started call), and what it held before
(items that did not decode) is released then, before that call's first event. Text of a
call block that is not a call (an item that does not decode, prose between items) comes
back once, in the order it was written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .events import Diagnostic, TextDelta, ToolCall
from .live import LiveCall, whole_call_events
from .output import Output
from .states import Move, State

BODY = State.BODY

if TYPE_CHECKING:
    from .block import Block
    from .calls import CallFactory

__all__ = ["ItemCalls"]

_SEPARATORS = " \t\r\n,;[]{}"  # a call block's own punctuation between items


class ItemCalls(Output):
    """The part of the parser that turns items into events (the parser sets the attributes below)."""

    _factory: CallFactory
    _block: Block | None
    _streaming: bool
    _lives: list[LiveCall]
    _max_block: int
    _mode: State
    _go: Callable[[Move], None]  # the parser's one state change (states.py)
    _end_block: Callable[[Block], int]

    def _finish_block(self) -> None:
        """The block's text has ended (end of stream, or of the reasoning it sits in): settle it."""
        b = self._block
        assert b is not None and b.scanner is not None
        b.scanner.finish()
        if b.scanner.fallback:
            self._event(Diagnostic("repaired", b.scanner.fallback, b.dialect.name))
        exact = b.in_item and (b.dialect.eos_ends or bool(self._lives) and self._lives[-1].started)
        if exact:
            b.close_item()
        self._drain(b, exact)
        self._end_block(b)

    def _drop_unfinished(self) -> None:
        """A stream cut off inside a block: what is not a call yet is dropped, reported with its text. A call
        already streaming (``stream_arguments``: its start and fragments are out) ends as the end of the stream
        ends it, so the client's arguments are valid JSON; ``finish_reason: "length"`` says they were cut."""
        b = self._block
        assert b is not None
        if self._mode == BODY and self._lives and self._lives[-1].started:
            self._finish_block()
            return
        dropped = b.unemitted() + (b.scanner.unread() if b.scanner is not None else "") if self._mode == BODY else b.head
        name = b.dialect.name if self._mode == BODY else ""
        self._event(Diagnostic("truncated", "the stream was cut off inside a call: its unfinished text is dropped",
                               name, {"text": dropped}))
        self._lives.clear()
        self._block = None
        self._go(Move.DROPPED)


    def _drain(self, b: Block, exact: bool = False) -> None:
        """Settle the items that closed during a scan."""
        runs = b.item_runs  # where each item stands among the runs outside items
        total = len(b.outside)  # runs released as text during this drain leave b.outside from its front
        for k, item in enumerate(b.items):
            at = runs[k] if k < len(runs) else total
            self._on_item(b, item, exact, max(at - (total - len(b.outside)), 0))
        b.items.clear()
        runs.clear()

    def _watch_item(self) -> Callable[[str], None] | None:
        """An item opened (streaming mode): a live call reads its text as it is written."""
        b = self._block
        assert b is not None
        if self._lives and self._lives[0].block is not b:
            self._lives.clear()  # left by a block released as text (by its size limit) before its items settled
        if b.items:  # items that closed earlier in this scan settle first: their calls come before this one's
            self._drain(b)
        live = LiveCall(b.dialect, b.name, self._factory, self._commit)
        live.block = b
        self._lives.append(live)
        return live.feed

    def _commit(self) -> None:
        """A streamed call starts: the block is a call block from now on."""
        assert self._block is not None
        self._commit_block(self._block)
        self._block.calls += 1

    def _commit_block(self, b: Block) -> None:
        """The block's first call: items held as possibly-not-calls leave as text, and the body copy goes."""
        if not b.calls:
            for diag, text in b.failed:
                self._event(diag)
                self._text(text)
            b.drop_body()

    def _on_item(self, b: Block, item: str, exact: bool = False, runs_before: int = 0) -> None:
        """An item closed: its calls leave now, or it waits (before the block's first call) or is text.
        ``exact``: ended only by the end of the stream, so it must not need repair. ``runs_before``: how many
        of the block's runs of text outside items were written before it (released before it, if it is text)."""
        done = self._lives.pop(0).close(item, exact) if self._lives else None
        if done is not None:
            for ev in done:
                self._event(ev)
            return
        events, n_calls, failure = self._factory.from_item(b.dialect, item, b.name, exact)
        if failure is not None:
            if b.calls:
                self._event(failure)
                self._text(self._take_outside(b, runs_before))
                self._text(item)
            else:  # with the text outside items written before it: all of it leaves in order if a call follows
                b.failed.append((failure, self._take_outside(b, runs_before) + item))
            return
        self._commit_block(b)
        for ev in events:
            if isinstance(ev, TextDelta):  # an element of a Python list that is not a call, in place
                self._text(ev.text)
                continue
            for out in whole_call_events(ev) if self._streaming and isinstance(ev, ToolCall) else (ev,):
                self._event(out)
        b.calls += n_calls

    @staticmethod
    def _take_outside(b: Block, runs: int) -> str:
        """The block's first ``runs`` runs of text outside items, no longer the block's to release.
        A run of mere separators and brackets is the block's markup (as at the block's end): it goes."""
        taken = "".join(run for run in b.outside[:runs] if run.strip(_SEPARATORS))
        del b.outside[:runs]
        return taken
