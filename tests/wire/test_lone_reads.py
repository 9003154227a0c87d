"""A paced upstream's usual read, one plain text event, taken in one step: ``SSEDecoder.lone_data`` reads it as
``feed`` would (or declines), and ``ChatStreamRewriter.feed_lone`` gives what ``read`` + ``write`` give, or None
with nothing read; a fitting event whose text the parser releases whole leaves as the upstream wrote it."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from hypothesis import given, settings, strategies as st

from helpers import TOOLS
from streamparse.wire.sse import ChatStreamRewriter, Output, SSEDecoder, SSEEvent, encode_items, openai_items

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
CALL_ID = re.compile(rb"call_[0-9a-f]+")


def chunk(text: str | None = None, *, finish: Any = None, **extra: Any) -> dict[str, Any]:
    delta = {} if text is None else {"content": text}
    return {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def sse(value: Any, *, spaced: bool = False) -> bytes:
    body = json.dumps(value, ensure_ascii=True) if spaced else orjson.dumps(value).decode()
    return b"data: " + body.encode() + b"\n\n"


# --- SSEDecoder.lone_data

PIECES = st.lists(st.sampled_from([
    b'data: {"a": 1}\n\n', b"data: x\n\n", b"data: \n\n", b"data:x\n\n", b": ping\n\n", b"data: a\r\n\r\n",
    b"data: a\n", b"\n", b"data: a\ndata: b\n\n", b"event: e\ndata: a\n\n", b"data: \xc3", b"\xa9\n\n",
    b"data: caf\xc3\xa9\n\n", b"data: bad \xff\n\n", b"data: a\n\ndata: b\n\n", b"data: a\r", b"\ndata: b\n\n",
    b"id: 7\n", b"data: [DONE]\n\n", b"data: a", b"\n\n",
]), max_size=8)


@settings(max_examples=300)
@given(PIECES)
def test_a_lone_event_is_read_as_feed_reads_it_and_nothing_pending_is_skipped(pieces: list[bytes]) -> None:
    lone, fed = SSEDecoder(), SSEDecoder()
    for piece in pieces:
        data = lone.lone_data(piece)
        events = fed.feed(piece)
        if data is not None:
            assert events == [SSEEvent(data)]
        else:
            lone.feed(piece)
    assert lone.close() == fed.close()


def test_a_lone_event_is_declined_while_a_line_an_event_or_a_character_is_pending() -> None:
    for pending in (b"data: a", b"data: a\n", b"event: e\n", b"id: 1\n", b"data: \xc3", b"data: a\r"):
        decoder = SSEDecoder()
        decoder.feed(pending)
        assert decoder.lone_data(b"data: b\n\n") is None
    assert SSEDecoder(max_line=8).lone_data(b"data: 0123456789\n\n") is None  # past the limit: feed says so
    assert SSEDecoder().lone_data(b"data: b\n\n") == "b"


# --- ChatStreamRewriter.feed_lone

def phased(rewriter: ChatStreamRewriter, raw: bytes) -> bytes:
    return rewriter.write(rewriter.read(raw))


def lone_first(rewriter: ChatStreamRewriter, raw: bytes) -> bytes:
    out = rewriter.feed_lone(raw)
    return phased(rewriter, raw) if out is None else out


def meaning(stream: bytes) -> list[Any]:
    """What a client decodes from a stream (call ids aside)."""
    decoder = SSEDecoder()
    return [json.loads(CALL_ID.sub(b"call_x", e.data.encode())) if e.data != "[DONE]" else e.data
            for e in decoder.feed(stream) + decoder.close() if e.data is not None]


READS = st.lists(st.one_of(
    st.text(st.sampled_from("ab <>/\n\"\\é😀"), min_size=1, max_size=6).map(lambda t: sse(chunk(t))),
    st.text(st.sampled_from("ab <"), min_size=1, max_size=4).map(lambda t: sse(chunk(t), spaced=True)),
    st.sampled_from([HERMES[:9], HERMES[9:40], HERMES[40:]]).map(lambda t: sse(chunk(t))),
    st.just(sse(chunk("s", x_sent=1.5))),  # a stamped event: it fits no frame
    st.just(b": ping\n\n"), st.just(sse(chunk("a")) + sse(chunk("b"))),
), max_size=24)


@settings(max_examples=200, deadline=None)
@given(READS)
def test_one_step_reads_say_what_the_two_phases_say(reads: list[bytes]) -> None:
    stream = reads + [sse(chunk(finish="stop")), b"data: [DONE]\n\n"]
    fast, slow = ChatStreamRewriter(TOOLS), ChatStreamRewriter(TOOLS)
    fast_out = b"".join(lone_first(fast, raw) for raw in stream) + fast.end_bytes()
    slow_out = b"".join(phased(slow, raw) for raw in stream) + slow.end_bytes()
    assert meaning(fast_out) == meaning(slow_out)
    assert fast.calls == slow.calls and fast.finished and slow.finished


def test_a_fitting_event_released_whole_leaves_as_the_upstream_wrote_it() -> None:
    rewriter = ChatStreamRewriter(TOOLS)
    first = sse(chunk("Hello"), spaced=True)
    assert rewriter.feed_lone(first) is None  # no frame yet: read in two phases (and a frame learned from it)
    phased(rewriter, first)
    second = sse(chunk(" wor\u00e9ld"), spaced=True)  # the upstream's spacing and escapes, not ours
    assert rewriter.feed_lone(second) == second


def test_a_fitting_event_the_parser_holds_or_rewrites_is_not_passed_as_it_came() -> None:
    rewriter = ChatStreamRewriter(TOOLS)
    phased(rewriter, sse(chunk("Hi ")))
    assert rewriter.feed_lone(sse(chunk("<tool_call>"))) == b""  # held: it may open a call
    out = rewriter.feed_lone(sse(chunk(HERMES[len("<tool_call>"):])))
    assert out is not None and b"tool_calls" in out and b"<tool_call>" not in out


def test_anything_but_one_fitting_event_is_left_to_the_two_phases_untouched() -> None:
    rewriter = ChatStreamRewriter(TOOLS)
    phased(rewriter, sse(chunk("Hi")))
    for raw in (b": ping\n\n", sse(chunk("a")) + sse(chunk("b")), sse(chunk("s", x_sent=2.0)),
                sse(chunk(finish="stop")), b"data: [DONE]\n\n"):
        assert rewriter.feed_lone(raw) is None
    assert not rewriter.finished  # nothing was read: [DONE] is still to come through read()


class Recorded:
    """A wire of another kind: it says what it was given."""

    def encode(self, outputs: list[Output]) -> bytes:
        return encode_items(openai_items(outputs))


@settings(max_examples=100, deadline=None)
@given(READS)
def test_on_another_wire_one_step_writes_the_same_bytes(reads: list[bytes]) -> None:
    fast, slow = ChatStreamRewriter(TOOLS, wire=Recorded()), ChatStreamRewriter(TOOLS, wire=Recorded())
    fast_out = b"".join(lone_first(fast, raw) for raw in reads) + fast.end_bytes()
    slow_out = b"".join(phased(slow, raw) for raw in reads) + slow.end_bytes()
    assert CALL_ID.sub(b"", fast_out) == CALL_ID.sub(b"", slow_out)
