"""The Anthropic front (``/v1/messages``) behind joined plain events: whichever upstream events share a read, the
client gets the same blocks (text, tool_use with its input) in the same order, the same stop reason, and one
message start and stop; only the number of text deltas may shrink."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from hypothesis import given, settings, strategies as st

from helpers import TOOLS
from streamparse.proxy.fronts import AnthropicFront
from streamparse.wire.sse import ChatStreamRewriter, SSEDecoder

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
TOOL_ID = re.compile(r"toolu_[0-9a-zA-Z]+|call_[0-9a-zA-Z]+|msg_[0-9a-zA-Z_-]+")


def sse(text: str | None = None, finish: Any = None) -> bytes:
    delta = {} if text is None else {"content": text}
    return b"data: " + orjson.dumps({"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1, "model": "m",
                                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + b"\n\n"


def blocks(stream: bytes) -> tuple[list[tuple[str, str]], list[str], int]:
    """What an Anthropic client builds: each block's type and text (or tool name + input), the stop reasons,
    and how many events there were."""
    decoder = SSEDecoder()
    events = [json.loads(e.data) for e in decoder.feed(stream) + decoder.close() if e.data]
    built: list[list[str]] = []
    stops = []
    for ev in events:
        if ev["type"] == "content_block_start":
            block = ev["content_block"]
            built.append([block["type"], block.get("name", "") + block.get("text", "")])
        elif ev["type"] == "content_block_delta":
            delta = ev["delta"]
            built[ev["index"]][1] += delta.get("text", "") + delta.get("partial_json", "")
        elif ev["type"] == "message_delta":
            stops.append(ev["delta"]["stop_reason"])
    assert [ev["type"] for ev in events].count("message_start") == 1
    assert events[-1]["type"] == "message_stop"
    return [(kind, TOOL_ID.sub("", text)) for kind, text in built], stops, len(events)


def rewriter() -> ChatStreamRewriter:
    return ChatStreamRewriter(TOOLS, wire=AnthropicFront("claude-x").wire())


def test_plain_events_of_one_read_are_one_text_delta() -> None:
    events = [sse(p) for p in ["Hel", "lo, ", "world"]] + [sse(finish="stop"), b"data: [DONE]\n\n"]
    one_read = rewriter()
    joined = one_read.feed_bytes(b"".join(events)) + one_read.end_bytes()
    alone = rewriter()
    apart = b"".join(alone.feed_bytes(e) for e in events) + alone.end_bytes()
    assert blocks(joined)[:2] == blocks(apart)[:2] == ([("text", "Hello, world")], ["end_turn"])
    assert blocks(joined)[2] == blocks(apart)[2] - 2  # two text deltas fewer


@st.composite
def reads(draw: st.DrawFn) -> list[bytes]:
    text = draw(st.sampled_from(["Let me look.\n" + HERMES + "\nIt is sunny.", "Plain words only, and more.",
                                 "a < b <tool then " + HERMES + HERMES + " after"]))
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=16)))
    events = [sse(text[a:b]) for a, b in zip([0, *cuts], [*cuts, len(text)])]
    events += [sse(finish="stop"), b"data: [DONE]\n\n"]
    bounds = sorted(draw(st.sets(st.integers(1, len(events) - 1), max_size=len(events))))
    return [b"".join(events[a:b]) for a, b in zip([0, *bounds], [*bounds, len(events)])]


@settings(max_examples=150, deadline=None)
@given(reads())
def test_the_same_blocks_whichever_events_share_a_read(pieces: list[bytes]) -> None:
    joined, alone = rewriter(), rewriter()
    got = b"".join(joined.feed_bytes(p) for p in pieces) + joined.end_bytes()
    decoder = SSEDecoder()
    expected = b"".join(alone.feed_bytes(b"data: " + e.data.encode() + b"\n\n")
                        for e in decoder.feed(b"".join(pieces)) if e.data)
    expected += alone.end_bytes()
    got_blocks, got_stops, got_count = blocks(got)
    want_blocks, want_stops, want_count = blocks(expected)
    assert got_blocks == want_blocks and got_stops == want_stops
    assert got_count <= want_count
