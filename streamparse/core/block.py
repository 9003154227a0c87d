"""A block being read: its markup, its buffers, its items and how it ended. Data only.

Invariant: every character of a block is written to exactly one buffer, once; what is
kept for releasing the block whole is dropped as soon as a call has left it.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any, Callable, Protocol


if TYPE_CHECKING:
    from ..dialects.spec import Dialect, Opener

__all__ = ["Block", "BodyScanner"]


class BodyScanner(Protocol):
    """What the parser asks of a block's body scanner (``bodies.BracketBody`` or ``bodies.TagBody``).

    Declared here so that a block names its scanner's shape without importing the scanners,
    which import :class:`Block`.
    """

    pending: str  # text after a value not yet known to be the block's
    has_end: bool  # the body has an end marker of its own
    tags: tuple[str, ...]  # the tags it reads inside an item (a tag body's, lowercase; none for bracket bodies)
    fallback: str  # why the end of the stream settled the body by a fallback ("": it did not)

    def scan(self, text: str, pos: int, end: int, final: bool) -> int: ...
    def may_finish(self, delta: str) -> bool: ...
    def unread(self) -> str: ...  # what it holds, not written to the block (released with it as text)
    # The parser's gate in this state: a search for the characters a live token may begin with (a delta holding
    # none is written as it is), or None: every character counts here.
    def gate(self) -> Callable[[str], re.Match[str] | None] | None: ...
    def finish(self) -> None: ...


class Block:
    """A block being read: its markup, its buffers, its items and how it ended.

    One buffer is written at a time: the current item, or the current run of text
    outside items. Finished runs and items are kept in order (``segments``) while
    the block may still be released whole, i.e. until its first call leaves.
    """

    __slots__ = ("dialect", "opener", "name", "head", "cur", "sink", "in_item", "segments", "outside", "size",
                 "items", "item_runs", "done", "closer", "trailing", "calls", "failed", "fence", "scanner", "watch")

    def __init__(self, fence: str, head: str) -> None:
        self.dialect: Dialect = None  # type: ignore[assignment]  # set when a head decides it
        self.opener: Opener = None  # type: ignore[assignment]  # (as above)
        self.name: str | None = None
        self.fence = fence
        self.head = head  # fence + opener (+ head text): the block's markup before its body
        self.cur = io.StringIO()  # the item being read, or the current run outside items
        self.sink: Callable[[str], Any] = self.cur.write
        self.in_item = False
        self.segments: list[str] | None = []  # the body so far, in order, while it may be released whole
        self.outside: list[str] = []  # runs of body text outside items
        self.size = len(head)
        self.items: list[str] = []  # complete items, waiting to be decoded
        self.item_runs: list[int] = []  # per item in ``items``: how many runs outside items were written before it
        self.done = False
        self.closer = ""  # the end marker as written ("" = ended without one)
        self.trailing = ""  # whitespace after the body that turned out not to be the block's
        self.calls = 0  # calls emitted from this block
        self.failed: list[tuple[Any, str]] = []  # (diagnostic, item text) that did not decode, before the first call
        self.scanner: BodyScanner | None = None
        self.watch: Callable[[], Callable[[str], None] | None] | None = None  # item opened -> who reads its text as written

    def write(self, s: str) -> None:
        self.size += len(s)
        self.sink(s)

    def _turn(self) -> str:
        """Finish the current buffer and start a fresh one."""
        cur = self.cur
        text = cur.getvalue()
        if text:  # (an empty buffer is fresh already)
            if self.segments is not None:
                self.segments.append(text)
            cur = self.cur = io.StringIO()
        self.sink = cur.write
        return text

    def open_item(self) -> None:
        text = self._turn()
        if text:
            self.outside.append(text)
        self.in_item = True
        reader = self.watch() if self.watch is not None else None
        if reader is not None:
            write = self.cur.write

            def tee(s: str) -> None:
                write(s)
                reader(s)

            self.sink = tee

    def close_item(self) -> None:
        if self.in_item:
            self.item_runs.append(len(self.outside))
            self.items.append(self._turn())
            self.in_item = False

    def cut_item(self, at: int) -> str:
        """Keep the open item's first ``at`` characters; the rest is returned (no longer the item's)."""
        text = self.cur.getvalue()
        self.cur = io.StringIO()
        self.cur.write(text[:at])
        self.sink = self.cur.write
        self.size -= len(text) - at
        return text[at:]

    def current_item(self) -> str:
        return self.cur.getvalue() if self.in_item else ""

    def drop_body(self) -> None:
        """A call has left the block: it can no longer be released whole, so its copy is not kept."""
        self.segments = None

    def raw(self) -> str:
        return self.head + "".join(self.segments or ()) + self.cur.getvalue()

    def unemitted(self) -> str:
        """What of the block has not become a call: all of it while none has, else the text outside items
        and an item still open."""
        if not self.calls:
            return self.raw()
        return "".join(self.outside) + self.cur.getvalue()

    def end(self, closer: str = "", trailing: str = "") -> None:
        self.done, self.closer, self.trailing = True, closer, trailing
