"""Server-sent events, sans-I/O: rewrite a chat-completion SSE stream event by event (the events read by
``sse_decode``, whose names this module also exports). Used by the proxy (``proxy.rewrite``, reading the upstream with httpx) and by the ASGI
middleware (``proxy.middleware``), so both handle the same upstream quirks: comment lines (``: ping``), ``\\r\\n``
or lone ``\\r`` line ends, multi-line ``data:``, a missing final blank line, ``[DONE]``.

Invariant: a rewritten stream ends exactly once, with ``[DONE]`` or an error event, after
everything the parser held has been sent; the decoder's memory is bounded by ``max_line``;
surrogate escapes never end it (``surrogates``: split pairs joined, lone halves U+FFFD), nor does
an event that is not a chunk it can read (passed on as it came, with a comment); invalid UTF-8
is read as U+FFFD. A chunk the rewrite would give back unchanged (a plain text delta the parser released
whole: ``ChunkRewriter.feed_plain``) goes on as the upstream's own chunk, encoded once, never rebuilt; any
chunk a call, a held marker, held whitespace or a finish touches is rewritten. Plain text events of one read
that fit the stream's frame go on as one chunk with their texts joined (``plain_runs``); a read of one such
event (a paced upstream's) is taken in one step (``feed_lone``) and, its text released whole, leaves as it came.
"""

from __future__ import annotations

import json

import orjson
from typing import Any, Mapping, Protocol

from ..core.parser import SLOW_BLOCK_CHARS
from .diagnostics import comment_text
from .openai import ChunkRewriter
from .plain_runs import Decoded, Frame, PlainRuns
from .sse_decode import EventTooLarge, SSEDecoder, SSEEvent
from .surrogates import SurrogateJoiner

__all__ = ["SSEEvent", "SSEDecoder", "EventTooLarge", "ChatStreamRewriter", "Output", "Wire", "OpenAIWire",
           "openai_items", "encode_event", "encode_items", "error_body", "error_item", "dumps"]


def encode_event(data: str | None = None, *, comment: str | None = None, event: str | None = None) -> bytes:
    """One SSE frame."""
    lines = []
    if comment is not None:
        lines.append(f": {comment}")
    if event is not None:
        lines.append(f"event: {event}")
    if data is not None:
        lines.extend(f"data: {line}" for line in data.split("\n"))
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def encode_items(items: list[tuple[str, str]]) -> bytes:
    """``ChatStreamRewriter`` items -> SSE bytes (comments stay comments, everything else is data)."""
    return b"".join(encode_event(comment=text) if kind == "comment" else encode_event(text) for kind, text in items)


def dumps(value: Any) -> str:
    """Compact JSON text (orjson; Python's json for what orjson refuses, such as NaN or huge integers;
    ASCII with escapes for text UTF-8 cannot carry, such as a lone surrogate)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def error_body(message: str, *, type_: str = "upstream_error", code: Any = None) -> dict[str, Any]:
    """OpenAI-style error object."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def error_item(message: str, *, type_: str = "upstream_error", code: Any = None) -> tuple[str, str]:
    """An ``("error", json)`` item: an OpenAI-style error as an SSE data event."""
    return ("error", dumps(error_body(message, type_=type_, code=code)))


# One decoded upstream event, ready to be applied: ("chunk", parsed JSON), ("plain", (Frame, text): plain events
# read by their frame), ("event", SSEEvent: a comment or [DONE]), ("raw", data too deep to decode), ("fail", message).
# What a rewritten stream says, before it is put on the wire: ("chunk", chunk dict), ("comment", text), ("done",
# None), ("error", an OpenAI-style error body), ("written", an OpenAIWire event's bytes, only to that wire) or
# ("raw", an upstream event's data, too deep to read, to pass on as it came where the wire can).
Output = tuple[str, Any]


class Wire(Protocol):
    """How a rewritten chat stream is written for the client (OpenAI chunks, Anthropic events...)."""

    def encode(self, outputs: list[Output]) -> bytes: ...


def openai_items(outputs: list[Output]) -> list[tuple[str, str]]:
    """Outputs as OpenAI SSE items: ``("data", json)``, ``("comment", text)``, ``("done", "[DONE]")``,
    ``("error", json)``."""
    items = []
    for kind, value in outputs:
        if kind == "chunk":
            items.append(("data", dumps(value)))
        elif kind == "comment":
            items.append(("comment", value))
        elif kind == "done":
            items.append(("done", "[DONE]"))
        elif kind == "raw":
            items.append(("data", value))
        else:
            items.append(("error", dumps(value)))
    return items


class OpenAIWire:
    """The OpenAI chat-completion stream: ``data: <chunk>`` events and ``data: [DONE]``."""

    def encode(self, outputs: list[Output]) -> bytes:
        out = []
        for output in outputs:
            if output[0] == "written":  # a whole event, already written as below (``plain_runs.Frame.written``)
                out.append(output[1])
                continue
            if output[0] == "comment":  # (as encode_event writes it)
                out.append(b": " + output[1].encode() + b"\n\n")
                continue
            if output[0] == "chunk":  # the usual output: straight from orjson (JSON text holds no raw newline)
                try:
                    out.append(b"data: " + orjson.dumps(output[1]) + b"\n\n")
                    continue
                except TypeError:
                    pass  # what orjson refuses (huge integers, lone surrogates): said by ``dumps``
            out.append(encode_items(openai_items([output])))
        return out[0] if len(out) == 1 else b"".join(out)


class ChatStreamRewriter:
    """Upstream chat-completion SSE -> rewritten SSE: event by event (``feed``) or byte by byte (``feed_bytes``).

    ``feed(event)`` returns a list of outputs: ``("chunk", dict)``, ``("comment", text)``,
    ``("done", None)`` or ``("error", error body)``; ``wire`` (default: OpenAI SSE) turns
    them into bytes. A broken upstream (invalid JSON, a line past ``max_event_chars``)
    flushes what the parser held, reports an error and ends the stream: ``finished``
    becomes True. ``unmet`` (a message) is said as an SSE comment before the end when
    the stream made no tool call (a request whose ``tool_choice`` demanded one). Each parser
    diagnostic is said as an SSE comment (``: streamparse diagnostic {json}``, see ``diagnostics``)
    before the chunks of the same upstream event (a run of plain events joined from one read counts as one),
    unless ``report_diagnostics=False``; ``on_events``
    sees the parser's events (both options go to the ``ChunkRewriter``).

    ``feed_bytes`` is ``write(read(raw))``: a transport may look between the two
    (``may_be_slow``) and run ``write`` in a worker thread when it could decode a
    large block.
    """

    def __init__(self, tools: Any = None, *, request: Mapping[str, Any] | None = None,
                 max_event_chars: int | None = None, wire: Wire | None = None, unmet: str | None = None,
                 **options: Any):
        self._rewriter = ChunkRewriter(tools, request=request, **options)
        self._decoder = SSEDecoder(max_event_chars)
        self.wire = wire or OpenAIWire()
        self._unmet = unmet
        self._surrogates = SurrogateJoiner()  # pairs split between events joined, lone halves replaced
        self._runs = PlainRuns()  # plain events read by their frame, a read's run of them as one chunk
        self._written = type(self.wire) is OpenAIWire  # a plain chunk may leave as its frame writes it
        self.finished = False
        self.upstream_done = False  # the upstream's own end ([DONE]) was read: its body holds nothing more
        self.saw_data = False  # the last read() met data (not only comments)
        self._chars = 0  # upstream characters (or bytes) read so far: no parser holds a longer block

    @property
    def calls(self) -> int:
        """Tool calls the client has been sent so far (parsed and native)."""
        return self._rewriter.calls

    # Byte level, for transports: upstream SSE bytes in, rewritten SSE bytes out.

    def read(self, raw: bytes) -> list[Decoded]:
        """Phase one (cheap): SSE framing and JSON of one piece of the upstream body."""
        self._chars += len(raw)
        data = self._decoder.lone_data(raw)  # a paced upstream's read: one event, one data line
        if data is not None:
            self.saw_data = True
            text = self._runs.fits(data) if not self._surrogates.held else None
            if text is not None:
                return [("plain", (self._runs.frame, text))]
            events = [SSEEvent(data)]
        else:
            try:
                events = self._decoder.feed(raw)
            except EventTooLarge as exc:
                self.saw_data = True
                return [("fail", str(exc))]
            self.saw_data = self._decoder.in_field_line or any(event.data is not None for event in events)
        return self._runs.decode(events, self._decode, self._ready)

    def feed_lone(self, raw: bytes) -> bytes | None:
        """``feed_bytes(raw)`` in one step for a paced upstream's usual read: one plain text event that fits the
        stream's frame, its parser step not slow (``may_be_slow``). None for any other piece, with nothing fed to
        the parser (only the frame's fit counters may have moved, as ``read`` moves them): ``read`` and ``write``
        it then. An event whose text the parser releases whole leaves as it came (the
        frame proves it says what the wire would write; only the OpenAI wire, unmasked)."""
        if self.finished or self._surrogates.held:
            return None
        data = self._decoder.lone_data(raw)
        frame = self._runs.frame
        if data is None or frame is None:
            return None
        text = self._runs.fits(data)
        if text is None or (self._chars + len(raw) >= SLOW_BLOCK_CHARS
                            and self._rewriter.may_be_slow_text(frame.index, text)):
            return None
        self._chars += len(raw)
        self.saw_data = True
        chunks = self._rewriter.feed_text(frame.base, frame.index, text)
        if chunks is None and self._written:
            return raw  # released whole: the event as it came is what the frame writes
        return self._sent(self._plain(frame, text, chunks))

    def _ready(self) -> bool:
        """May plain events be read by their frame now? Not while a surrogate half is held."""
        return not self._surrogates.held

    def may_be_slow(self, decoded: list[Decoded] | None = None) -> bool:
        """Could ``write(decoded)`` (None: ending the stream) decode a large block?
        (See ``StreamParser.may_be_slow``.) Not while the whole stream so far is shorter than such a block."""
        if self._chars < SLOW_BLOCK_CHARS:
            return False
        if decoded is None:
            return self._rewriter.may_be_slow()
        rewriter = self._rewriter
        return any(rewriter.may_be_slow_text(value[0].index, value[1]) if kind == "plain"
                   else rewriter.may_be_slow(value if kind == "chunk" else None)
                   for kind, value in decoded if kind != "event" or value.data is not None)

    def write(self, decoded: list[Decoded]) -> bytes:
        """Phase two: the parser's work, and the SSE bytes to send."""
        if len(decoded) == 1:  # (the usual read: one item)
            return self._sent(self._apply(decoded[0]))
        return self.wire.encode([out for d in decoded for out in self._apply(d)])

    def _sent(self, outputs: list[Output]) -> bytes:
        """One read's outputs on the wire: held text says nothing, a frame-written event goes as it is."""
        if not outputs:
            return b""
        return outputs[0][1] if len(outputs) == 1 and outputs[0][0] == "written" else self.wire.encode(outputs)

    def feed_bytes(self, raw: bytes) -> bytes:
        """What this piece of the upstream body becomes (events that arrive together leave together)."""
        return self.write(self.read(raw))

    def end_bytes(self) -> bytes:
        """The upstream body ended: its last event, what the parser held, the end of the stream."""
        outputs = [out for event in self._decoder.close() for out in self.feed(event)]
        return self.wire.encode(outputs + self.close())

    def fail_bytes(self, message: str) -> bytes:
        return self.wire.encode(self.fail(message))

    # Event level.

    def feed(self, event: SSEEvent) -> list[Output]:
        self._chars += len(event.data or "")
        return self._apply(self._decode(event))

    def close(self) -> list[Output]:
        """The upstream stream ended without ``[DONE]``: flush and finish."""
        return self._end() if not self.finished else []

    def fail(self, message: str) -> list[Output]:
        """The upstream broke (disconnect, read error): flush, report, finish."""
        return self._fail(message) if not self.finished else []

    def _decode(self, event: SSEEvent) -> Decoded:
        data = event.data
        if data is None or ("[DONE]" in data and data.strip() == "[DONE]"):
            return ("event", event)
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:  # orjson refuses any lone surrogate: only a half held from the last event is to be seen to
            return ("chunk", self._surrogates.fix(value) if self._surrogates.held else value)
        try:  # what orjson refuses but Python reads (NaN, integers past 64 bits, surrogate halves)
            return ("chunk", self._surrogates.fix(json.loads(data)))
        except RecursionError:  # valid, but too deep to read: passed on as it came
            return ("raw", data)
        except ValueError:
            return ("fail", f"upstream sent invalid JSON in its stream: {data[:200]!r}")

    def _apply(self, decoded: Decoded) -> list[Output]:
        kind, value = decoded
        if self.finished:
            return []
        if kind == "fail":
            return self._fail(value)
        if kind == "raw":
            return [("raw", value)]
        if kind == "plain":  # plain events read by their frame (``plain_runs``): the frame's chunk, that text
            frame, text = value
            return self._plain(frame, text, self._rewriter.feed_text(frame.base, frame.index, text))
        if kind == "event":
            if value.data is None:
                return [("comment", value.comment or "")]
            self.upstream_done = True
            return self._end()
        if isinstance(value, dict) and "error" in value and "choices" not in value:
            return self._flush() + [("error", value)] + self._end()
        try:
            chunks = self._rewriter.feed_plain(value)
        except ValueError as exc:  # not a chunk we can read: passed on as it came, and the stream goes on
            return [("comment", f"streamparse: upstream sent a malformed chunk ({exc}); passed on as it came"),
                    ("raw", dumps(value))]
        if chunks is None:  # a plain text delta: the upstream's own chunk is what the rewrite would make
            return [("chunk", value)]
        return self._told() + [("chunk", c) for c in chunks]

    def _plain(self, frame: Frame, text: str, chunks: list[dict[str, Any]] | None) -> list[Output]:
        """The outputs of plain text read by its frame, given what ``feed_text`` made of it: the parser's
        ``chunks``, or (None: released whole) the event as the frame writes it where the wire takes it, else the
        frame's chunk."""
        if chunks is not None:
            return self._told() + [("chunk", c) for c in chunks]
        written = frame.written(text) if self._written else None
        return [("written", written) if written is not None else ("chunk", frame.chunk(text))]

    def _told(self) -> list[Output]:
        """The diagnostics the parser made, as SSE comments."""
        return [("comment", comment_text(d)) for d in self._rewriter.take_diagnostics()]

    def _flush(self) -> list[Output]:
        chunks = self._rewriter.close()
        return self._told() + [("chunk", c) for c in chunks]

    def _end(self) -> list[Output]:
        outputs = [out for chunk in self._surrogates.leftovers() for out in self._apply(("chunk", chunk))]
        outputs += self._flush()
        if self._unmet and not self.calls:
            outputs.append(("comment", self._unmet))
        self.finished = True
        return outputs + [("done", None)]

    def _fail(self, message: str) -> list[Output]:
        outputs = self._flush() + [("error", error_body(message))]
        self.finished = True
        return outputs
