"""A call streamed while it is written: when it may start, its fragments, how it ends.

Invariant: a call starts only once its name is known, allowed by the tools and under the
call limit; from then on it always ends as a call, and the concatenation of its
fragments is exactly the final ``ToolCall.arguments``, valid JSON. Its events wait in
order until the parser takes them: at the end of each feed (fragments gathered during
one feed leave as one ``ToolCallDelta``), or when the item closes.

When streaming starts, per body kind: a JSON call object once its ``"name"`` has been
read and its arguments object has opened (in either order: what was read leaves with
the start; a call object with no arguments object, or one whose arguments are written
some other way or under a key that is not read, is decoded whole when it closes, as in
whole-call mode); a JSON arguments object whose name the head gave, at its ``{``; an XML-style
item at its name tag. Other items (Python calls, Kimi/DeepSeek/harmony JSON after a
name, arguments written as a string) start when they close, as one fragment.

A started call cut before its end (by the end of the stream, or by ``max_block_chars``),
or one whose item turns out not to decode whole, still ends as a call, but only with
what the model wrote: its arguments are closed where they stopped (a string value as far as
it was written; a number or word cut off is left out: it may be the start of another), a
member whose value was never written is left out (never given an invented ``null``), and an ``incomplete``
diagnostic says so (whole-call mode would have kept such a block as text). A value nested
deeper than ``stream_json.MAX_DEPTH`` is left out with a ``too_deep`` diagnostic. The rest
of a block cut by the limit is text, as in whole-call mode.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .calls import CallFactory, value_note
from ..dialects.spec import JSON, Dialect
from .events import Diagnostic, Event, ToolCall, ToolCallDelta, ToolCallStart
from .stream_json import MAX_DEPTH, JsonEcho
from .stream_tags import TagStream

__all__ = ["LiveCall"]


class LiveCall:
    """One item of a block, watched as its text is written (``feed``), settled when it closes (``close``)."""

    def __init__(self, dialect: Dialect, head_name: str | None, factory: CallFactory,
                 begin: Callable[[], None]):
        self.dialect = dialect
        self.head_name = head_name
        self._factory = factory
        self._begin = begin  # the block commits to a call: what it held before is released
        self._events: list[Event] = []  # waiting to be taken, in order
        self._frags: list[str] = []  # fragments of this feed (before the start: everything so far)
        self._sent: list[str] = []  # every fragment, for the final arguments
        self.index = -1
        self.id = ""
        self.name = ""
        self.started = False
        self._refused = False
        self._written_name: str | None = None  # a JSON call object's name, read before its arguments opened
        self.block: object = None  # the block whose item this is (set by the parser: a stale one is dropped)
        self._tags: TagStream | None = None
        self._json: JsonEcho | None = None
        if dialect.body == JSON:
            if head_name is not None:
                self._json = JsonEcho(self._frags.append, schema=factory.schema(head_name), on_open=self._start_if_opened)
            else:
                self._json = JsonEcho(self._frags.append, route="call", on_name=self._name_read,
                                      on_open=self._start_if_opened)
            self.feed = self._json.feed  # type: ignore[method-assign]  # the streamer's feed, bound once: no hop per piece
        elif dialect.stream is not None:
            self._tags = TagStream(dialect.stream, self._frags.append, self._named, factory.schema, dialect.value_layout)
            self.feed = self._tags.feed  # type: ignore[method-assign]  # (as above)

    def feed(self, text: str) -> None:
        """Item text as it is written (replaced by the streamer's own ``feed`` when there is one)."""

    @property
    def waiting(self) -> bool:
        """Not started, and the item's next text may start it (its name has not been refused)."""
        return not self.started and not self._refused

    @property
    def keeps_item(self) -> bool:
        """Is the item's text needed when it closes? (XML-style items are checked against the whole decode.)"""
        return self._json is None

    def _named(self, name: str) -> bool:
        """The item's name is known: start now if the tools and the call limit allow it."""
        if self.started or self._refused:
            return self.started
        reserved = self._factory.reserve(name)
        if reserved is None:
            self._refused = True
            return False
        self.index, self.id = reserved
        self.name, self.started = name, True
        if self._json is not None and self._json.schema is None and not self._json.started:
            self._json.schema = self._factory.schema(name)
        self._begin()
        self._events.append(ToolCallStart(self.index, self.id, name, self.dialect.name))
        return True

    def _name_read(self, name: str) -> bool:
        """A JSON call object's name: it types the arguments; the call starts once they have opened."""
        if self._written_name is None:
            self._written_name = name
            if self._json is not None and self._json.schema is None and not self._json.started:
                self._json.schema = self._factory.schema(name)
            self._start_if_opened()
        return True

    def _start_if_opened(self) -> None:
        """A JSON call starts once its arguments object has opened and its name is known: told by the echo
        as it reads (so, while its block is being scanned), whichever of the two comes last."""
        if self.started or self._json is None or not self._json.started or not self._json.streamable:
            return
        name = self.head_name if self.head_name is not None else self._written_name
        if name is not None:
            self._named(name)

    def take(self) -> list[Event]:
        """The events waiting: the start, and this feed's fragments as one delta."""
        out, self._events = self._events, []
        text = "".join(self._frags) if self.started else ""
        if text:
            self._frags.clear()
            self._sent.append(text)
            out.append(ToolCallDelta(self.index, text))
        return out

    def close(self, item: str, exact: bool) -> list[Event] | None:
        """The item closed (or was cut by the block's end, or the stream's): its last events.
        None: it never started, and the caller decodes it as a whole item."""
        self._start_if_opened()
        if not self.started:
            return None
        notes: list[Event] = []
        if exact:  # cut: by the end of the stream, or by the block's size limit (then a block_too_large follows)
            notes.append(Diagnostic("incomplete", f"{self.name}: call cut off before its end; its arguments were "
                                    "closed where it stopped", self.dialect.name, {"name": self.name}))
        if self._json is not None:  # started, so its arguments are an object being echoed
            self._json.finish(cut=exact)
            arguments = "".join(self._sent) + "".join(self._frags)
            if self._json.removed:
                notes.append(Diagnostic("repaired", f"{self.name}: comments removed from its arguments: "
                                        f"{self._json.removed}", self.dialect.name,
                                        {"name": self.name, "removed": self._json.removed}))
            notes += [value_note(self.dialect, self.name, fix) for fix in self._json.fixes]
            for key in self._json.expressions:
                notes.append(Diagnostic("rejected", f"{self.name}: the value of {key!r} was an expression: left out "
                                        "of the streamed arguments, not evaluated", self.dialect.name,
                                        {"name": self.name, "parameter": key}))
            if self._json.too_deep:
                notes.append(Diagnostic("too_deep", f"{self.name}: a value nested more than {MAX_DEPTH} deep was "
                                        "left out of the streamed arguments", self.dialect.name, {"name": self.name}))
        else:
            assert self._tags is not None  # only XML-style items start before they close without an echo
            if exact and not self._tags.stopped:  # cut: the stream knows what is complete; a whole decode
                self._tags.end_closed_value()  # would read the cut value as written (0.5 cut after "0." as 0.0)
                whole, why = None, ""
            else:
                whole, why = self._factory.arguments_of(self.dialect, item, self.head_name, self.name)
            sent = "".join(self._sent) + "".join(self._frags)
            arguments = whole or ""
            if whole is None or not whole.startswith(sent):
                if whole is None and not exact:
                    notes.append(Diagnostic("incomplete", f"{self.name}: the item does not decode whole ({why}); "
                                            "its streamed arguments were closed where they stopped", self.dialect.name,
                                            {"name": self.name, "raw_item": item}))
                arguments = sent + self._tags.settle(whole)
            self._frags.append(arguments[len(sent) :])
        try:
            notes += self._factory.notes(self.dialect, self.name, json.loads(arguments))
        except RecursionError:  # not expected: the echo leaves out what is nested deeper than MAX_DEPTH
            notes.append(Diagnostic("too_deep", f"{self.name}: streamed arguments nested too deeply to check",
                                    self.dialect.name))
        except ValueError as exc:  # not expected: the streamers write valid JSON by construction
            notes.append(Diagnostic("rejected", f"{self.name}: streamed arguments are not valid JSON ({exc})",
                                    self.dialect.name))
        return self.take() + notes + [ToolCall(self.index, self.id, self.name, arguments, self.dialect.name)]


def whole_call_events(call: ToolCall) -> list[Any]:
    """A call decoded whole, in streaming form: its start, one fragment, the call."""
    return [ToolCallStart(call.index, call.id, call.name, call.dialect), ToolCallDelta(call.index, call.arguments), call]
