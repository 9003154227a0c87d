"""OpenAI ``chat.completion.chunk`` dicts read once, for every front that writes another API's stream.

Invariant: a ``ChunkReader`` hands its ``StreamWriter`` everything choice 0 of the chunks says, in
order: reasoning (``reasoning_content`` or ``reasoning``), text (a ``refusal`` too), and tool call pieces, both in the whole form
streamparse emits and in fragments (first piece with id and name, then ``arguments`` pieces, possibly for a
call other than the newest); the finish reason, the stop string vLLM reports, and the usage (which comes in a
later chunk) are kept for ``close()``. An error object in the stream ends it through ``fail``; ``keepalive``
is the writer's own keep-alive (which begins a stream not yet begun).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol, Sequence

from ..core.events import Event, ReasoningDelta, TextDelta, ToolCall, ToolCallDelta, ToolCallStart
from ..core.parser import StreamParser
from .completion import completion_to_chunks
from .shapes import JSONObject, Tools, _is_object, _json_object
from .sse import dumps

__all__ = ["StreamWriter", "ChunkReader", "first_choice", "arguments_text", "error_message", "replay_completion",
           "write_text", "write_events"]


class StreamWriter(Protocol):
    """A front's sans-I/O writer: each method returns that API's events to send (maybe none)."""

    @property
    def finished(self) -> bool: ...

    def start(self) -> list[dict[str, Any]]: ...

    def text(self, s: str) -> list[dict[str, Any]]: ...

    def thinking(self, s: str) -> list[dict[str, Any]]: ...

    def tool_start(self, call_id: str, name: str) -> list[dict[str, Any]]:
        """Open a call; the writer's ``last_call`` is then its key for ``call_arguments``."""
        ...

    @property
    def last_call(self) -> int: ...

    def call_arguments(self, key: int, fragment: str) -> list[dict[str, Any]]: ...

    def finish(self, finish_reason: str | None, *, matched_stop: str | None = None,
               usage: Mapping[str, Any] | None = None) -> list[dict[str, Any]]: ...

    def keepalive(self) -> list[dict[str, Any]]:
        """The API's keep-alive events (the stream's start, if it has not begun); none once it has ended."""
        ...


def first_choice(choices: Any) -> Mapping[str, Any] | None:
    """The choice with index 0 (the only one these APIs have room for)."""
    for position, choice in enumerate(choices if isinstance(choices, list) else ()):
        if _is_object(choice) and choice.get("index", position) == 0:
            return choice
    return None


def arguments_text(value: Any) -> str:
    """``function.arguments``: normally a string; an object (some servers send one) as its JSON."""
    return value if isinstance(value, str) else dumps(value) if _is_object(value) else ""


def error_message(error: Any) -> str:
    """An upstream error object's message (its JSON when it has none)."""
    message = error.get("message") if _is_object(error) else error
    return message if isinstance(message, str) and message else dumps(error)


class ChunkReader:
    """Chunks -> a writer's events, one chunk at a time (see the module's invariant). A subclass may make its
    writer from the first chunk (``writer_for``), and says how a failure is written (``fail``)."""

    def __init__(self, writer: StreamWriter | None, stop_sequences: Sequence[str] = ()):
        self._writer = writer
        self._stops = tuple(stop_sequences)
        self._finish: str | None = None
        self._matched: str | None = None
        self._usage: Mapping[str, Any] | None = None
        self._calls: dict[Any, int] = {}  # OpenAI tool_calls index -> the writer's key for that call

    def writer_for(self, data: Mapping[str, Any]) -> StreamWriter:
        """The writer, given the chunk at hand (the one passed at construction, here)."""
        assert self._writer is not None
        return self._writer

    def feed(self, chunk: JSONObject) -> list[dict[str, Any]]:
        data = _json_object(chunk, "a chat.completion.chunk")
        if "error" in data and not data.get("choices"):
            return self.fail(error_message(data["error"]))  # an error object in the stream
        writer = self.writer_for(data)
        if writer.finished:
            return []
        out = writer.start()
        if _is_object(data.get("usage")):
            self._usage = data["usage"]
        choice = first_choice(data.get("choices"))
        if choice is None:
            return out
        delta: Any = choice.get("delta")
        if _is_object(delta):
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")  # servers may send both
            if isinstance(reasoning, str):
                out += writer.thinking(reasoning)
            if isinstance(delta.get("content"), str):
                out += writer.text(delta["content"])
            if isinstance(delta.get("refusal"), str):  # OpenAI's refusal: said as text, never lost
                out += writer.text(delta["refusal"])
            if isinstance(delta.get("tool_calls"), list):
                out += self._tool_calls(writer, delta["tool_calls"])
        if choice.get("finish_reason") is not None:
            self._finish = choice["finish_reason"]
            matched = choice.get("stop_reason")  # vLLM reports the stop string that ended the answer here
            self._matched = matched if isinstance(matched, str) and matched in self._stops else None
        return out

    def _tool_calls(self, writer: StreamWriter, pieces: list[Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for position, piece in enumerate(pieces):
            if not _is_object(piece):
                continue
            key = piece.get("index", position)
            if not isinstance(key, (int, str)):
                key = position
            function = piece["function"] if _is_object(piece.get("function")) else {}
            if key not in self._calls:
                out += writer.tool_start(_str(piece.get("id")), _str(function.get("name")))
                self._calls[key] = writer.last_call
            # A fragment for a call already closed (calls interleaved) still goes to that call.
            out += writer.call_arguments(self._calls[key], arguments_text(function.get("arguments")))
        return out

    def close(self) -> list[dict[str, Any]]:
        """The upstream ended: the writer's end (once)."""
        return self.writer_for({}).finish(self._finish, matched_stop=self._matched, usage=self._usage)

    def keepalive(self) -> list[dict[str, Any]]:
        """The writer's keep-alive events (a stream that has not begun begins)."""
        return self.writer_for({}).keepalive()

    def fail(self, message: str) -> list[dict[str, Any]]:
        """The upstream broke: an error event ends the stream (as the subclass's API writes one)."""
        raise NotImplementedError


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def replay_completion(reader: ChunkReader, completion: JSONObject) -> None:
    """A whole ``chat.completion`` through ``reader``, as the chunks its stream would have carried, to the end:
    what a front answers for a whole answer is, by construction, what its stream accumulates to."""
    for chunk in completion_to_chunks(_json_object(completion, "a chat.completion")):
        reader.feed(chunk)
    reader.close()


class TextWriter(Protocol):
    """A writer fed parser events (``MessageStream``, ``ResponseStream``)."""

    def events(self, parser_events: list[Event]) -> list[dict[str, Any]]: ...

    def finish(self) -> list[dict[str, Any]]: ...


def write_text(writer: TextWriter, text: str, tools: Tools = None, **parser_options: Any) -> None:
    """A whole answer's text, parsed, through ``writer`` to its end."""
    parser = StreamParser(tools, **parser_options)
    writer.events(parser.read_whole(text))
    writer.finish()


class EventSink(Protocol):
    """A front's writer, as parser events drive it."""

    @property
    def last_call(self) -> int: ...

    def text(self, s: str) -> list[dict[str, Any]]: ...

    def thinking(self, s: str) -> list[dict[str, Any]]: ...

    def tool_start(self, call_id: str, name: str) -> list[dict[str, Any]]: ...

    def call_arguments(self, key: int, fragment: str) -> list[dict[str, Any]]: ...

    def tool_call(self, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]: ...

    def end_call(self, key: int) -> list[dict[str, Any]]: ...


def write_events(writer: EventSink, live: dict[int, int], parser_events: Iterable[Event]) -> list[dict[str, Any]]:
    """Parser events -> ``writer``'s events (diagnostics are not part of a wire format). A whole ``ToolCall`` is
    one call, opened, written and ended; with the parser's ``stream_arguments``, ``ToolCallStart`` opens the
    call, each ``ToolCallDelta`` is a piece of its arguments and the ``ToolCall`` that completes it ends it.
    ``live``: the writer's own map from a started call's parser index to its key."""
    out: list[dict[str, Any]] = []
    for ev in parser_events:
        if isinstance(ev, TextDelta):
            out += writer.text(ev.text)
        elif isinstance(ev, ReasoningDelta):
            out += writer.thinking(ev.text)
        elif isinstance(ev, ToolCallStart):
            started = writer.tool_start(ev.id, ev.name)
            if started:
                live[ev.index] = writer.last_call
            out += started
        elif isinstance(ev, ToolCallDelta) and ev.index in live:
            out += writer.call_arguments(live[ev.index], ev.arguments_fragment)
        elif isinstance(ev, ToolCall):
            key = live.pop(ev.index, None)
            out += writer.tool_call(ev.id, ev.name, ev.arguments) if key is None else writer.end_call(key)
    return out
