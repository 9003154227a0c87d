"""From a block's items to call events: whole items decoded when they close, or streamed as written.

Invariant: a block's items are settled in the order they were written; a block commits to
being a call block at its first call (or first started call), and what it held before
(items that did not decode) is released then, before that call's first event. Text of a
call block that is not a call (an item that does not decode, prose between items) comes
back once, in the order it was written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Protocol

from .events import Diagnostic, Event, TextDelta, ToolCall
from .live import LiveCall, whole_call_events
from .states import DROPPED, Move, State

BODY = State.BODY

if TYPE_CHECKING:
    from .block import Block
    from .calls import CallFactory


class Owner(Protocol):
    """What the items' reader asks of its parser: the open block and its state, where text and events go, the
    move to make, and how a block ends."""

    _block: Block | None
    _mode: State

    def _text(self, s: str) -> None: ...
    def _event(self, ev: Event) -> None: ...
    def _go(self, move: Move) -> None: ...
    def _end_block(self, b: Block, resume: int = 0) -> int: ...

__all__ = ["ItemCalls", "SEPARATORS"]

SEPARATORS = " \t\r\n,;[]{}"  # a call block's own punctuation between items (and around them)


class ItemCalls:
    """Turns a block's items into events for its parser; owns the calls being streamed (``lives``)."""

    __slots__ = ("lives", "factory", "streaming", "_owner")

    def __init__(self, owner: Owner, factory: CallFactory, streaming: bool) -> None:
        self.lives: list[LiveCall] = []  # items being streamed, oldest first (the last may still be open)
        self.factory = factory
        self.streaming = streaming  # ToolCallStart / ToolCallDelta as arguments are written (live.py)
        self._owner = owner

    def take(self) -> list[Event]:
        """The newest streamed call's events waiting to leave (its start, its fragments), in order."""
        return self.lives[-1].take() if self.lives else []

    def finish_block(self) -> None:
        """The block's text has ended (end of stream, or of the reasoning it sits in): settle it."""
        b = self._owner._block
        assert b is not None and b.scanner is not None
        b.scanner.finish()
        if b.scanner.fallback:
            self._owner._event(Diagnostic("repaired", b.scanner.fallback, b.dialect.name))
        exact = b.in_item and (b.dialect.eos_ends or bool(self.lives) and self.lives[-1].started)
        if exact:
            b.close_item()
        self.drain(b, exact)
        self._owner._end_block(b)

    def drop_unfinished(self) -> None:
        """A stream cut off inside a block: what is not a call yet is dropped, reported with its text. A call
        already streaming (``stream_arguments``: its start and fragments are out) ends as the end of the stream
        ends it, so the client's arguments are valid JSON; ``finish_reason: "length"`` says they were cut."""
        b = self._owner._block
        assert b is not None
        if self._owner._mode == BODY and self.lives and self.lives[-1].started:
            self.finish_block()
            return
        in_body = self._owner._mode == BODY
        dropped = b.unemitted() + (b.scanner.unread() if b.scanner is not None else "") if in_body else b.head
        name = b.dialect.name if in_body else ""
        self._owner._event(Diagnostic("truncated", "the stream was cut off inside a call: its unfinished text is dropped",
                               name, {"text": dropped}))
        self.lives.clear()
        self._owner._block = None
        self._owner._go(DROPPED)


    def drain(self, b: Block, exact: bool = False) -> None:
        """Settle the items that closed during a scan."""
        runs = b.item_runs  # where each item stands among the runs outside items
        outside = b.outside
        total = len(outside)  # runs released as text during this drain leave b.outside from its front
        items = b.items
        if len(items) == 1 and not total:  # (one item, no text before it: most drains)
            self.on_item(b, items[0], exact, 0)
        else:
            for k, item in enumerate(items):
                at = runs[k] if k < len(runs) else total
                self.on_item(b, item, exact, max(at - (total - len(outside)), 0))
        items.clear()
        runs.clear()

    def watch_item(self) -> Callable[[str], None] | None:
        """An item opened (streaming mode): a live call reads its text as it is written."""
        b = self._owner._block
        assert b is not None
        if self.lives and self.lives[0].block is not b:
            self.lives.clear()  # left by a block released as text (by its size limit) before its items settled
        if b.items:  # items that closed earlier in this scan settle first: their calls come before this one's
            self.drain(b)
        live = LiveCall(b.dialect, b.name, self.factory, self.commit)
        live.block = b
        self.lives.append(live)
        return live.feed

    def commit(self) -> None:
        """A streamed call starts: the block is a call block from now on."""
        assert self._owner._block is not None
        self.commit_block(self._owner._block)
        self._owner._block.calls += 1

    def commit_block(self, b: Block) -> None:
        """The block's first call: items held as possibly-not-calls leave as text, and the body copy goes."""
        if not b.calls:
            for diag, text in b.failed:
                self._owner._event(diag)
                self._owner._text(text)
            b.drop_body()

    def on_item(self, b: Block, item: str, exact: bool = False, runs_before: int = 0) -> None:
        """An item closed: its calls leave now, or it waits (before the block's first call) or is text.
        ``exact``: ended only by the end of the stream, so it must not need repair. ``runs_before``: how many
        of the block's runs of text outside items were written before it (released before it, if it is text)."""
        if self.lives:
            done = self.lives.pop(0).close(item, exact)
            if done is not None:
                for ev in done:
                    self._owner._event(ev)
                return
        events, n_calls, failure = self.factory.from_item(b.dialect, item, b.name, exact)
        if failure is not None:
            if b.calls:
                self._owner._event(failure)
                self._owner._text(self.take_outside(b, runs_before))
                self._owner._text(item)
            else:  # with the text outside items written before it: all of it leaves in order if a call follows
                b.failed.append((failure, self.take_outside(b, runs_before) + item))
            return
        if not b.calls:
            self.commit_block(b)
        owner = self._owner
        for ev in events:
            if isinstance(ev, TextDelta):  # an element of a Python list that is not a call, in place
                owner._text(ev.text)
            elif self.streaming and isinstance(ev, ToolCall):
                for out in whole_call_events(ev):
                    owner._event(out)
            else:
                owner._event(ev)
        b.calls += n_calls

    @staticmethod
    def take_outside(b: Block, runs: int) -> str:
        """The block's first ``runs`` runs of text outside items, no longer the block's to release.
        A run of mere separators and brackets is the block's markup (as at the block's end): it goes."""
        taken = "".join(run for run in b.outside[:runs] if run.strip(SEPARATORS))
        del b.outside[:runs]
        return taken
