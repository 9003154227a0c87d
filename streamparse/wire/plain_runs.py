"""Plain text events read by the frame their upstream writes them in; a read's run of them as one chunk (sans-I/O).

A *plain* chunk is a ``chat.completion.chunk`` whose one choice says only text: ``delta`` holds ``content``
(a non-empty string) and nothing else that is not null, no ``logprobs``, no finish, no other choice field that is
not null, and the chunk reports no ``usage``.
An upstream writes its plain events alike but for the text: the same bytes before the content's string literal
and after it. ``PlainRuns`` learns that frame from one plain event (proved by decoding the event with another
literal spliced in: it must read as the same chunk with only ``content`` changed), then reads each event that
fits the frame (its middle a single valid JSON string literal) as ``("plain", (frame, text))`` without decoding
the rest. Consecutive fitting events of one read become ONE such item, their texts joined: one parse, one
encoding (``ChunkRewriter.feed_text``; on the OpenAI wire, ``Frame.written``: the frame's own encoding around
the text's literal).

Invariants: what a fitting event is read as equals what decoding it whole gives (the frame outside the literal
is byte for byte the learned event's, and a literal in a JSON value position is that value whatever it holds);
only events already at hand are joined (nothing waits for a later read); text keeps its order and every
character; any event that does not fit (other fields, another envelope or choice, an escape of a surrogate
half, a comment, ``[DONE]``) ends the run and is decoded on its own, in order; frames are tried at most
``MAX_LEARNS`` times in a row without an event fitting one, then never again in the stream (``given_up``), so a
stream whose events all differ (a per-event stamp) costs nothing more after its first few; a frame is replaced
only after ``RELEARN_AFTER`` plain events in a row miss it, so one odd event among alike ones costs no learning.
"""

from __future__ import annotations

import re
from typing import Any, Callable

import orjson

from ..core.json_lexis import PLAIN

__all__ = ["PlainRuns", "Frame", "plain_text", "with_text", "MAX_LEARNS"]

MAX_LEARNS = 4  # frames tried in a row without an event fitting one: then no more
RELEARN_AFTER = 2  # plain events in a row that miss the frame before another is learned
_CHOICE_KEYS = frozenset(("index", "delta", "finish_reason", "logprobs"))
# One JSON string literal, whole (RFC 8259: no raw control character, only the defined escapes).
_LITERAL = re.compile('"' + PLAIN['"'].pattern + '"')  # (its inside as the core reads a string's: json_lexis)
_KEY = re.compile(r'"content"\s*:\s*')
_SENTINEL = "\x00streamparse frame\x00"
_SENTINEL_LITERAL = orjson.dumps(_SENTINEL).decode()


def plain_text(chunk: Any) -> str | None:
    """The text of a plain chunk (see the module), else None."""
    if type(chunk) is not dict or chunk.get("usage") is not None:  # a usage report counts per event: never joined
        return None
    choices = chunk.get("choices")
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if (type(choice) is not dict or choice.get("finish_reason", 0) is not None or choice.get("logprobs") is not None
            or type(choice.get("index")) is not int
            or any(v is not None for k, v in choice.items() if k not in _CHOICE_KEYS)):  # SGLang: matched_stop null
        return None
    delta = choice.get("delta")
    if type(delta) is not dict:
        return None
    text = delta.get("content")
    if type(text) is not str or not text:
        return None
    if len(delta) > 1 and any(v is not None for k, v in delta.items() if k != "content"):
        return None
    return text


def with_text(chunk: dict[str, Any], text: str) -> dict[str, Any]:
    """Plain ``chunk`` saying ``text`` instead (a new dict down to the delta; other values shared)."""
    choice = chunk["choices"][0]
    return {**chunk, "choices": [{**choice, "delta": {**choice["delta"], "content": text}}]}


# One decoded upstream event, as ``sse`` reads it: ("chunk", value), ("plain", (Frame, text)), ("event", SSEEvent),
# ("raw", data) or ("fail", message).
Decoded = tuple[str, Any]


class Frame:
    """A learned frame: the bytes around the content literal of a stream's plain events (``prefix``, ``suffix``),
    the chunk it was learned from (``base``, its choice ``index``), and the same frame as the OpenAI wire writes
    it (``head`` + the text's JSON literal + ``tail`` is ``orjson.dumps`` of ``base`` saying that text)."""

    __slots__ = ("prefix", "suffix", "base", "index", "head", "tail", "_opening", "_closing")

    def __init__(self, prefix: str, suffix: str, base: dict[str, Any]):
        self.prefix, self.suffix, self.base = prefix, suffix, base
        self.index: int = base["choices"][0]["index"]
        encoded = orjson.dumps(with_text(base, _SENTINEL))
        literal = _SENTINEL_LITERAL.encode()
        self.head, _, self.tail = encoded.partition(literal)
        if literal in self.tail:  # another field holds the sentinel: no written frame (chunk() is used instead)
            self.head = self.tail = b""
        self._opening, self._closing = b"data: " + self.head, self.tail + b"\n\n"  # the event around the literal

    def chunk(self, text: str) -> dict[str, Any]:
        """The frame's chunk saying ``text``."""
        return with_text(self.base, text)

    def written(self, text: str) -> bytes | None:
        """``data: <chunk>`` as ``OpenAIWire`` writes the frame's chunk saying ``text`` (None: ask ``chunk``)."""
        if not self.head:
            return None
        try:
            return self._opening + orjson.dumps(text) + self._closing
        except TypeError:  # what orjson refuses (a lone surrogate): written by the wire from the chunk
            return None


class PlainRuns:
    """The learned frame of a stream's plain events, and the reading of runs of them (see the module)."""

    def __init__(self) -> None:
        self._frame: Frame | None = None
        self._learns = 0  # frames tried since an event last fitted one
        self._misses = 0  # plain events in a row that did not fit the frame (one odd event keeps it: a stamp)
        self.given_up = False  # MAX_LEARNS frames tried and none fitted: every event is decoded on its own

    @property
    def frame(self) -> Frame | None:
        """The learned frame (None: none yet, or given up)."""
        return self._frame

    def text(self, data: str) -> str | None:
        """The text of ``data`` if it fits the frame (one is learned), else None."""
        frame = self._frame
        if frame is None or not data.startswith(frame.prefix) or not data.endswith(frame.suffix):
            return None
        start, end = len(frame.prefix), len(data) - len(frame.suffix)
        if end - start < 3 or data[start] != '"' or data[end - 1] != '"':
            return None
        inner = data[start + 1:end - 1]
        if '"' not in inner and "\\" not in inner and inner.isprintable():
            return inner  # the usual literal: nothing escaped, no control character
        try:  # one JSON string literal, nothing after it (orjson refuses an escaped surrogate half too)
            text = orjson.loads(data[start:end])
        except orjson.JSONDecodeError:
            return None
        return text if type(text) is str else None

    def fits(self, data: str) -> str | None:
        """``text(data)``, counted as an event that fitted the frame (the counts of ``learn`` start again)."""
        text = self.text(data)
        if text is not None:
            self._learns = self._misses = 0
        return text

    def learn(self, data: str, chunk: Any, text: str) -> bool:
        """Learn the frame of ``data``, which decoded to the plain ``chunk`` saying ``text``: True when it did
        (the frame's chunk is ``chunk``), False when no frame could be proved from it (or the trying stops)."""
        self._learns += 1
        if self._learns >= MAX_LEARNS:
            self._frame = None  # the stream's events differ (or no frame could be proved)
            self.given_up = True
            return False
        literal = orjson.dumps(text).decode()
        for match in _KEY.finditer(data):
            start = match.end()
            if not data.startswith(literal, start) and not data.startswith('"', start):
                continue
            found = _LITERAL.match(data, start)
            if found is None:
                continue
            prefix, suffix = data[:start], data[found.end():]
            try:  # (a literal holding an escaped surrogate half is refused: no frame from it)
                proved = (orjson.loads(prefix + _SENTINEL_LITERAL + suffix) == with_text(chunk, _SENTINEL)
                          and orjson.loads(data[start:found.end()]) == text)
            except orjson.JSONDecodeError:
                continue
            if proved:
                self._frame = Frame(prefix, suffix, chunk)
                return True
        return False

    def decode(self, events: list[Any], decode: Callable[[Any], Decoded], ready: Callable[[], bool]) -> list[Decoded]:
        """SSE events -> decoded items (``decode`` for one event), each run of consecutive plain events that fit
        the frame read as one ``("plain", (frame, text))``. While ``ready()`` is false (asked again after each
        event decoded on its own) the frame is not used: every event is decoded on its own."""
        if self.given_up:
            return [decode(event) for event in events]
        out: list[Decoded] = []
        texts: list[str] = []
        use = ready()
        for event in events:
            data = event.data
            text = self.fits(data) if use and data is not None else None
            if text is not None:
                texts.append(text)
                continue
            if texts:
                out.append(("plain", (self._frame, "".join(texts))))
                texts = []
            item = decode(event)
            use = ready()
            text = plain_text(item[1]) if item[0] == "chunk" else None
            if text is not None and self._frame is not None:
                self._misses += 1
                if self._misses < RELEARN_AFTER:  # an odd plain event (one stamped chunk in N): the frame stays
                    out.append(item)
                    continue
            if text is not None and use and data is not None and self._learns < MAX_LEARNS \
                    and self.learn(data, item[1], text):
                texts.append(text)  # the start of a run
                self._misses = 0
                continue
            out.append(item)
        if texts:
            out.append(("plain", (self._frame, "".join(texts))))
        return out
