"""Parser events, OpenAI chunks and completions -> Anthropic stream events and Messages.

Invariant: a ``MessageStream``'s events form one well-ordered Anthropic stream (``message_start``,
``ping``, then per block ``content_block_start`` / ``content_block_delta``* / ``content_block_stop``, one
block open at a time, indexes from 0, then ``message_delta`` and ``message_stop``; or, instead of the end,
one ``error`` event), and accumulating them as the anthropic SDK does gives ``MessageStream.message``,
which is what the non-streaming functions return for the same input.
"""

from __future__ import annotations

from typing import Any, AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence

from ...core.events import Event
from ...core.parser import StreamParser
from ..chunk_reader import ChunkReader, replay_completion, write_events, write_text
from ..shapes import JSONObject, Tools, _json_object
from .vocab import _BLOCK_STARTS, _DELTAS, _fresh, _input, _str, message_id, stop_reason, tool_use_id, usage_from

__all__ = ["MessageStream", "ChunkTranslator", "message_from_completion", "message_from_text", "stream_events",
           "stream_events_sync", "events_from_chunks", "events_from_chunks_sync"]

class MessageStream:
    """Sans-I/O writer of one Anthropic message's stream events (dicts with a ``type``).

    Each method returns the events to send (maybe none). ``start()`` is implied by any other method;
    after ``finish()`` or ``error()`` every method returns ``[]``. ``message`` is the Message the events
    accumulate to so far (a tool_use block's ``input`` is filled in when the block closes).
    """

    def __init__(self, *, model: str, message_id: str | None = None, input_tokens: int = 0):
        self._message: dict[str, Any] = {
            "id": message_id or _fresh("msg_"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 0},
        }
        self.started = self.finished = self.had_tool_use = False
        self._open: int | None = None  # index of the open block
        self._json: dict[int, list[str]] = {}  # tool_use block index -> its arguments so far
        self._ids: set[str] = set()
        self._live: dict[int, int] = {}  # parser index of a started call -> its tool_use block index
        self._blank_kind, self._blank = "", ""  # whitespace waiting to begin a block of that kind
        self._text: list[str] = []  # the open text or thinking block's pieces, not yet joined into ``message``

    @property
    def message(self) -> dict[str, Any]:
        """The Message the events so far accumulate to (the open block's text joined on reading: linear time)."""
        self._join_text()
        return self._message

    @property
    def block_count(self) -> int:
        """Content blocks opened so far (the open one included)."""
        return len(self._message["content"])

    @property
    def last_call(self) -> int:
        """The index of the newest block (after ``tool_start``, its tool_use block: ``call_arguments``' key)."""
        return len(self._message["content"]) - 1

    def _join_text(self) -> None:
        if self._text and self._open is not None:
            block = self._message["content"][self._open]
            kind = block["type"]
            block[kind] = block[kind] + "".join(self._text)
        self._text.clear()

    def start(self) -> list[dict[str, Any]]:
        """``message_start`` then ``ping`` (once)."""
        if self.started:
            return []
        self.started = True
        message = {**self._message, "content": [], "usage": dict(self._message["usage"])}
        return [{"type": "message_start", "message": message}, {"type": "ping"}]

    def _close_block(self) -> list[dict[str, Any]]:
        index = self._open
        if index is None:
            return []
        self._join_text()
        self._open = None
        if index in self._json:
            self._message["content"][index]["input"] = _input("".join(self._json[index]))
        return [{"type": "content_block_stop", "index": index}]

    def _open_block(self, block: dict[str, Any]) -> list[dict[str, Any]]:
        out = self.start() + self._close_block()
        self._blank = ""  # whitespace held for a block that did not come
        self._open = len(self._message["content"])
        self._message["content"].append(dict(block))
        out.append({"type": "content_block_start", "index": self._open, "content_block": block})
        return out

    def _delta(self, kind: str, s: str) -> list[dict[str, Any]]:
        """Text or thinking: appended to the open block of that kind, else to a new one. Whitespace that
        would begin a block waits for the block's first other character: a block is never blank."""
        if not s or self.finished:
            return []
        if self._open is not None and self._message["content"][self._open]["type"] == kind:
            out = self.start()
        else:
            s = (self._blank if self._blank_kind == kind else "") + s
            self._blank_kind, self._blank = kind, s
            if s.isspace():
                return self.start()
            out = self._open_block(dict(_BLOCK_STARTS[kind]))
        self._text.append(s)
        out.append({"type": "content_block_delta", "index": self._open, "delta": {"type": _DELTAS[kind], kind: s}})
        return out

    def text(self, s: str) -> list[dict[str, Any]]:
        """Text, as a ``text_delta`` (opening a text block if the open one is not text)."""
        return self._delta("text", s)

    def thinking(self, s: str) -> list[dict[str, Any]]:
        """Reasoning, as a ``thinking_delta`` in a thinking block (with an empty signature)."""
        return self._delta("thinking", s)

    def tool_start(self, call_id: str, name: str) -> list[dict[str, Any]]:
        """Open a tool_use block (``id`` from ``tool_use_id``, made unique within the message)."""
        if self.finished:
            return []
        block_id = tool_use_id(call_id)
        while block_id in self._ids:
            block_id = _fresh("toolu_")
        self._ids.add(block_id)
        self.had_tool_use = True
        out = self._open_block({"type": "tool_use", "id": block_id, "name": name, "input": {}})
        self._json[len(self._message["content"]) - 1] = []
        return out

    def tool_arguments(self, fragment: str) -> list[dict[str, Any]]:
        """A piece of the open tool_use block's input JSON, as an ``input_json_delta``."""
        if self.finished:
            return []
        if self._open not in self._json:
            raise ValueError("tool_arguments() needs an open tool_use block: call tool_start() first")
        return self.call_arguments(self._open, fragment)

    def call_arguments(self, index: int, fragment: str) -> list[dict[str, Any]]:
        """A piece of tool_use block ``index``'s input JSON (a block already closed included: calls interleave)."""
        if not fragment or self.finished:
            return []
        self._json[index].append(fragment)
        if index != self._open:  # a late fragment for a block already closed: keep message up to date
            self._message["content"][index]["input"] = _input("".join(self._json[index]))
        return [{"type": "content_block_delta", "index": index,
                 "delta": {"type": "input_json_delta", "partial_json": fragment}}]

    def tool_call(self, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
        """A whole call: its block's start, one ``input_json_delta`` and its stop."""
        out = self.tool_start(call_id, name)
        if out:
            out += self.tool_arguments(arguments) + self._close_block()
        return out

    def end_call(self, index: int) -> list[dict[str, Any]]:
        """A call complete: its block closed, if it is the open one."""
        return self._close_block() if index == self._open and not self.finished else []

    def events(self, parser_events: Iterable[Event]) -> list[dict[str, Any]]:
        """Parser events -> stream events (``write_events``): a whole ``ToolCall`` is a block's start, one
        ``input_json_delta`` and its stop; with ``stream_arguments`` a call's pieces are ``input_json_delta`` s."""
        return write_events(self, self._live, parser_events)

    def finish(self, finish_reason: str | None = None, *, matched_stop: str | None = None,
               usage: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Close the open block; ``message_delta`` (stop reason, stop sequence, usage) and ``message_stop``."""
        if self.finished:
            return []
        out = self.start() + self._close_block()
        self.finished = True
        reason = stop_reason(finish_reason, matched_stop=matched_stop, had_tool_use=self.had_tool_use)
        sequence = matched_stop if reason == "stop_sequence" else None
        counts = usage_from(usage)
        self._message["usage"].update(counts)
        self._message.update(stop_reason=reason, stop_sequence=sequence)
        delta_usage = {**counts, "output_tokens": self._message["usage"]["output_tokens"]}
        out.append({"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": sequence},
                    "usage": delta_usage})
        out.append({"type": "message_stop"})
        return out

    def keepalive(self) -> list[dict[str, Any]]:
        """A ``ping`` (the stream's start, if it has not begun); nothing once it has ended."""
        if self.finished:
            return []
        return self.start() or [{"type": "ping"}]

    def error(self, type_: str, message: str) -> list[dict[str, Any]]:
        """An ``error`` event, ending the stream (a failure after the response began)."""
        if self.finished:
            return []
        self.finished = True
        return [{"type": "error", "error": {"type": type_, "message": message}}]


class ChunkTranslator(ChunkReader):
    """OpenAI ``chat.completion.chunk`` dicts (or SDK objects) -> Anthropic stream events, one chunk at a time
    (what it reads: choice 0, calls whole or in fragments, the finish reason, the stop string, and the usage
    kept for ``close()``). A tool_use block stays open until the next block or the end,
    since a chunk does not say that a call is complete.
    """

    def __init__(self, *, model: str | None = None, message_id: str | None = None, stop_sequences: Sequence[str] = ()):
        self._model = model
        self._message_id = message_id
        self._stream: MessageStream | None = None
        super().__init__(None, stop_sequences)

    @property
    def stream(self) -> MessageStream:
        """The writer (made on first use, named after the first chunk's model and id)."""
        return self.writer_for({})

    @property
    def finished(self) -> bool:
        return self._stream is not None and self._stream.finished

    def writer_for(self, data: Mapping[str, Any]) -> MessageStream:
        if self._stream is None:
            self._stream = MessageStream(model=self._model or _str(data.get("model"), "unknown"),
                                         message_id=self._message_id or message_id(data.get("id")))
        return self._stream

    def fail(self, message: str, type_: str = "api_error") -> list[dict[str, Any]]:
        """The upstream broke: an ``error`` event ends the stream (the open block is left as it is)."""
        return self.stream.error(type_, message)


def message_from_completion(completion: JSONObject, *, model: str | None = None,
                            stop_sequences: Sequence[str] = ()) -> dict[str, Any]:
    """A (rewritten) OpenAI ``chat.completion`` -> an Anthropic Message dict: ``content`` blocks, ``stop_reason``,
    ``stop_sequence``, ``usage``; the id is ``msg_`` + the completion's. Only choice index 0 is used.

    It is what the stream of the same answer accumulates to, by construction: the completion is replayed as
    chunks (``completion_to_chunks``) through a ``ChunkTranslator``. So the blocks of a completion
    ``rewrite_completion`` made come in the order the model wrote them (``[text, tool_use, text, tool_use]``);
    a plain ``chat.completion``, which cannot say where its text stood between its calls, gives
    ``[thinking?, text?, tool_use…]``. Arguments that are not a JSON object give ``input: {}``."""
    data = _json_object(completion, "a chat.completion")
    translator = ChunkTranslator(model=model or _str(data.get("model"), "unknown"), message_id=message_id(data.get("id")),
                                 stop_sequences=stop_sequences)
    replay_completion(translator, data)
    return translator.stream.message


def message_from_text(text: str, tools: Tools = None, *, model: str = "streamparse",
                      **parser_options: Any) -> dict[str, Any]:
    """A whole answer's text, parsed -> an Anthropic Message dict (blocks in the order the text has them)."""
    stream = MessageStream(model=model)
    write_text(stream, text, tools, **parser_options)
    return stream.message


def stream_events_sync(deltas: Iterable[str], tools: Tools = None, *, model: str = "streamparse",
                       **parser_options: Any) -> Iterator[dict[str, Any]]:
    """Text deltas -> parser -> Anthropic stream events (``tool_use`` when a call was made, else ``end_turn``)."""
    stream, parser = MessageStream(model=model), StreamParser(tools, **parser_options)
    yield from stream.start()
    for delta in deltas:
        yield from stream.events(parser.feed(delta))
    yield from stream.events(parser.close())
    yield from stream.finish()


async def stream_events(deltas: AsyncIterable[str], tools: Tools = None, *, model: str = "streamparse",
                        **parser_options: Any) -> AsyncIterator[dict[str, Any]]:
    """The same for an async iterable of text deltas (any anyio backend: asyncio or trio)."""
    stream, parser = MessageStream(model=model), StreamParser(tools, **parser_options)
    for event in stream.start():
        yield event
    async for delta in deltas:
        for event in stream.events(parser.feed(delta)):
            yield event
    for event in stream.events(parser.close()) + stream.finish():
        yield event


def events_from_chunks_sync(chunks: Iterable[JSONObject], *, model: str | None = None, message_id: str | None = None,
                            stop_sequences: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """OpenAI chunks (a sync iterable) -> Anthropic stream events, ending with ``message_stop``."""
    translator = ChunkTranslator(model=model, message_id=message_id, stop_sequences=stop_sequences)
    for chunk in chunks:
        yield from translator.feed(chunk)
    yield from translator.close()


async def events_from_chunks(
    chunks: AsyncIterable[JSONObject], *, model: str | None = None, message_id: str | None = None,
    stop_sequences: Sequence[str] = ()
) -> AsyncIterator[dict[str, Any]]:
    """The same for an async iterable of chunks."""
    translator = ChunkTranslator(model=model, message_id=message_id, stop_sequences=stop_sequences)
    async for chunk in chunks:
        for event in translator.feed(chunk):
            yield event
    for event in translator.close():
        yield event
