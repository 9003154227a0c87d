"""A call streamed while it is written: when it may start, its fragments, how it ends.

Invariant: a call starts only once its name is known, allowed by the tools and under the
call limit; from then on it always ends as a call, and the concatenation of its
fragments is exactly the final ``ToolCall.arguments``, valid JSON. Fragments gathered
during one ``feed`` leave at the end of that feed, as one ``ToolCallDelta``.

When streaming starts, per body kind: a JSON call object once its ``"name"`` has been
read (its arguments object may already be under way: what was read leaves with the
start); a JSON arguments object whose name the head gave, at its ``{``; an XML-style
item at its name tag. Other items (Python calls, Kimi/DeepSeek/harmony JSON after a
name, arguments written as a string) start when they close, as one fragment.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from .calls import CallFactory
from .dialects.spec import JSON, Dialect
from .events import Diagnostic, Event, ToolCall, ToolCallDelta, ToolCallStart
from .stream_json import JsonEcho
from .stream_tags import TagStream

__all__ = ["LiveCall"]


class LiveCall:
    """One item of a block, watched as its text is written (``feed``), settled when it closes (``close``)."""

    def __init__(self, dialect: Dialect, head_name: str | None, factory: CallFactory,
                 begin: Callable[[], None], emit: Callable[[Event], None]):
        self.dialect = dialect
        self.head_name = head_name
        self._factory = factory
        self._begin = begin  # the block commits to a call: what it held before is released
        self._emit = emit
        self._frags: list[str] = []  # fragments of this feed (before the start: everything so far)
        self._sent: list[str] = []  # every fragment, for the final arguments
        self.index = -1
        self.id = ""
        self.name = ""
        self.started = False
        self._refused = False
        self._tags: TagStream | None = None
        self._json: JsonEcho | None = None
        if dialect.body == JSON:
            if head_name is not None:
                self._json = JsonEcho(self._frags.append, schema=factory.schema(head_name))
            else:
                self._json = JsonEcho(self._frags.append, route="call", on_name=self._named)
            self.feed = self._json.feed  # type: ignore[method-assign]
        elif dialect.stream is not None:
            self._tags = TagStream(dialect.stream, self._frags.append, self._named, factory.schema)
            self.feed = self._tags.feed  # type: ignore[method-assign]

    def feed(self, text: str) -> None:
        """Item text as it is written (replaced by the streamer's own ``feed`` when there is one)."""

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
        self._emit(ToolCallStart(self.index, self.id, name, self.dialect.name))
        return True

    def take(self) -> list[Event]:
        """The fragments gathered since the last take, as at most one event."""
        if not self._frags:
            return []
        if not self.started:
            if self._json is not None and self.head_name is not None and self._json.started:
                self._named(self.head_name)
            if not self.started:
                return []
        text = "".join(self._frags)
        self._frags.clear()
        self._sent.append(text)
        return [ToolCallDelta(self.index, text)]

    def flush(self) -> None:
        for ev in self.take():
            self._emit(ev)

    def close(self, item: str, exact: bool) -> bool:
        """The item closed (or was cut by the block's end, or the stream's). False: it never started, and the
        caller decodes it as a whole item."""
        if not self.started and self._json is not None and self.head_name is not None and self._json.started:
            self._named(self.head_name)
        if not self.started:
            return False
        notes: list[Diagnostic] = []
        if self._json is not None and self._json.streamable:
            self._json.finish()
            self.flush()
            arguments = "".join(self._sent)
            if exact and not self._json.done:
                notes.append(Diagnostic("incomplete", f"{self.name}: call cut off by the end of the stream; "
                                        "its arguments were closed", self.dialect.name))
        else:
            self.flush()
            sent = "".join(self._sent)
            whole, why = self._factory.arguments_of(self.dialect, item, self.head_name, self.name)
            if whole is None or not whole.startswith(sent):
                ending = self._tags.closing() if self._tags is not None else ("{}" if not sent else "}")
                whole = sent + ending
                notes.append(Diagnostic("repaired", f"{self.name}: streamed arguments closed as sent "
                                        f"({why or 'the whole item reads differently'})", self.dialect.name,
                                        {"name": self.name, "raw_item": item}))
            rest = whole[len(sent) :]
            if rest:
                self._frags.append(rest)
                self.flush()
            arguments = whole
        for note in notes + self._factory.notes(self.dialect, self.name, json.loads(arguments)):
            self._emit(note)
        self._emit(ToolCall(self.index, self.id, self.name, arguments, self.dialect.name))
        return True


def whole_call_events(call: ToolCall) -> list[Any]:
    """A call decoded whole, in streaming form: its start, one fragment, the call."""
    return [ToolCallStart(call.index, call.id, call.name, call.dialect), ToolCallDelta(call.index, call.arguments), call]
