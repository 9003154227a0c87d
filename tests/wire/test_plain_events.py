"""Upstream events that go on as they came: a chunk the rewrite would give back unchanged (a text delta the
parser releases whole, ``ChunkRewriter.feed_plain``) leaves as the upstream's own chunk, never rebuilt, so an
upstream that encodes as compactly as the proxy (vLLM, SGLang, OpenAI) gets its events back byte for byte;
every event a call, a held marker, held whitespace or a finish touches is rewritten as before. Whatever path
an event takes, the client reads the same JSON as from the rebuild-everything path."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from hypothesis import given, settings, strategies as st

from helpers import TOOLS
from streamparse.wire.chunks import ChunkRewriter
from streamparse.wire.plain_runs import with_text
from streamparse.wire.sse import ChatStreamRewriter, SSEDecoder

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
CALL_ID = re.compile(rb'"call_[0-9a-zA-Z]+"')  # random: made equal wherever two streams are compared


class Rebuilding(ChunkRewriter):
    """The reference: every chunk goes through ``feed`` (rebuilt from the parser's events)."""

    def feed_plain(self, chunk: Any) -> list[dict[str, Any]] | None:
        return self.feed(chunk)

    def feed_text(self, base: dict[str, Any], index: int, content: str) -> list[dict[str, Any]] | None:
        return self.feed(with_text(base, content))  # (an event read by its frame: ``plain_runs``)


def reference_rewriter() -> ChatStreamRewriter:
    rw = ChatStreamRewriter(TOOLS)
    rw._rewriter = Rebuilding(TOOLS)
    return rw


def envelope(delta: dict[str, Any], finish: Any = None, **choice: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1700000000, "model": "m",
            "choices": [{"index": 0, "delta": delta, **choice, "finish_reason": finish}]}


def sse(data: str | bytes) -> bytes:
    return b"data: " + (data.encode() if isinstance(data, str) else data) + b"\n\n"


def meaning(stream: bytes) -> list[Any]:
    """What a client decodes from a stream: each event's JSON."""
    decoder = SSEDecoder()
    events = decoder.feed(CALL_ID.sub(b'"call"', stream)) + decoder.close()
    return [e.comment if e.data is None else e.data if e.data == "[DONE]" else json.loads(e.data) for e in events]


def test_a_plain_text_event_from_a_compact_upstream_leaves_byte_for_byte() -> None:
    # As vLLM writes it: compact, UTF-8 as is, its own key order (x_sent after choices, logprobs before finish).
    data = ('{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":'
            '[{"index":0,"delta":{"content":"café \\"ok\\" ✓"},"logprobs":null,"finish_reason":null}],"x_sent":1.5}')
    assert orjson.dumps(json.loads(data)).decode() == data
    assert ChatStreamRewriter(TOOLS).feed_bytes(sse(data)) == sse(data)
    rebuilt = reference_rewriter().feed_bytes(sse(data))
    assert rebuilt != sse(data) and meaning(rebuilt) == meaning(sse(data))  # rebuilt: same meaning, other order


def test_a_plain_text_event_written_otherwise_is_the_upstreams_chunk_in_the_proxys_encoding() -> None:
    data = ('{"model": "m", "choices": [{"index": 0, "delta": {"content": "caf\\u00e9"}, "finish_reason": null}], '
            '"x_sent": 1.5}')
    out = ChatStreamRewriter(TOOLS).feed_bytes(sse(data))
    assert out == sse(orjson.dumps(json.loads(data)))


def test_a_key_written_twice_reaches_the_client_once_as_the_parser_read_it() -> None:
    # JSON keeps the last of two equal keys; a client that kept the first would read markup the parser never
    # saw, so a chunk is never passed as its bytes: what leaves is the chunk as parsed.
    data = '{"choices":[{"index":0,"delta":{"content":"<tool_call>{","content":"plain"},"finish_reason":null}]}'
    out = ChatStreamRewriter(TOOLS).feed_bytes(sse(data))
    assert b"tool_call" not in out
    assert meaning(out)[0]["choices"][0]["delta"] == {"content": "plain"}


def test_events_around_a_call_are_rewritten_and_the_plain_ones_kept() -> None:
    pieces = ["Let me check. ", "Sure <tool", HERMES[len("<tool"):-len("all>")], "all> Done", " now."]
    events = [sse(orjson.dumps(envelope({"content": p}))) for p in pieces]
    rw = ChatStreamRewriter(TOOLS)
    out = [rw.feed_bytes(e) for e in events]
    assert out[0] == events[0]  # plain text, released whole
    assert out[1] != events[1] and meaning(out[1])[0]["choices"][0]["delta"] == {"content": "Sure "}  # marker held
    (call,) = meaning(out[2])  # the call (its closing tag still to come), not its markup
    assert call["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert out[3] != events[3] and meaning(out[3])[0]["choices"][0]["delta"] == {"content": " Done"}
    assert out[4] == events[4]  # plain again


def test_whitespace_held_at_the_start_is_joined_to_the_next_text_not_passed_as_it_came() -> None:
    first, second = sse(orjson.dumps(envelope({"content": "  "}))), sse(orjson.dumps(envelope({"content": "Hi"})))
    rw = ChatStreamRewriter(TOOLS)
    assert rw.feed_bytes(first) == b""  # held: it may turn out to be layout before a call
    out = rw.feed_bytes(second)
    assert out != second and meaning(out)[0]["choices"][0]["delta"] == {"content": "  Hi"}


def test_a_finish_a_role_or_native_calls_are_not_taken_for_plain_text() -> None:
    no_finish = envelope({"content": "Hi"})
    del no_finish["choices"][0]["finish_reason"]  # the rewrite adds the field
    chunks = [
        envelope({"content": "Hi"}, finish="stop"),  # the finish: the parser closes, the reason may change
        no_finish,
        envelope({"content": "Hi", "tool_calls": [{"index": 0, "id": "n", "type": "function",
                                                    "function": {"name": "f", "arguments": "{}"}}]}),
        {**envelope({"content": "Hi"}), "choices": [envelope({"content": "a"})["choices"][0],
                                                   {**envelope({"content": "b"})["choices"][0], "index": 1}]},
    ]
    for chunk in chunks:
        assert ChunkRewriter(TOOLS).feed_plain(chunk) == ChunkRewriter(TOOLS).feed(chunk)
    with_role = envelope({"role": "assistant", "content": "Hi"})  # other delta fields ride along unchanged
    assert ChunkRewriter(TOOLS).feed_plain(with_role) is None


def test_a_repaired_event_is_rewritten_not_passed_as_it_came() -> None:
    # A surrogate pair split across two events: the second is repaired (joined), so it is re-encoded.
    high = sse('{"choices": [{"index": 0, "delta": {"content": "a\\ud83d"}, "finish_reason": null}]}')
    low = sse('{"choices": [{"index": 0, "delta": {"content": "\\ude00b"}, "finish_reason": null}]}')
    rw = ChatStreamRewriter(TOOLS)
    joined = rw.feed_bytes(high) + rw.feed_bytes(low)
    assert b"\\ude00" not in joined and b"\\ud83d" not in joined
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in meaning(joined)) == "a\U0001F600b"


# Every way a text with calls can be cut into deltas, with the fields upstreams add: the stream is what the
# re-encoding path gives, and an event written as it came is byte for byte the upstream's.

TEXTS = st.sampled_from([
    "Plain prose, nothing to parse here.",
    "Let me look.\n" + HERMES + "\nIt is sunny.",
    "  " + HERMES + "  ",
    "a < b and <tool but not a call</tool_call> then " + HERMES,
    "<think>hm</think>Answer " + HERMES + " after",
])


@st.composite
def upstream_events(draw: st.DrawFn) -> list[bytes]:
    text = draw(TEXTS)
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=12)))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)]) if text[a:b]]
    chunks = [envelope({"role": "assistant", "content": ""})]
    for part in parts:
        extra: dict[str, Any] = draw(st.sampled_from([{}, {"logprobs": None}, {"logprobs": {"content": []}}]))
        delta: dict[str, Any] = {"content": part}
        if draw(st.booleans()):
            delta["reasoning_content"] = ""
        chunks.append(envelope(delta, **extra))
    chunks.append(envelope({}, finish=draw(st.sampled_from(["stop", "length"]))))
    spaced = draw(st.booleans())
    return [sse(json.dumps(c, separators=(", ", ": ") if spaced else (",", ":"), ensure_ascii=draw(st.booleans())))
            for c in chunks] + [b"data: [DONE]\n\n"]


class Recording(ChunkRewriter):
    """``feed_plain`` (and ``feed_text``, for an event read by its frame) as they are, with a note of each
    chunk let go unchanged."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.plain: list[bool] = []
        self.inside = False  # in feed_plain (which asks feed_text)

    def feed_plain(self, chunk: Any) -> list[dict[str, Any]] | None:
        self.inside = True
        try:
            got = super().feed_plain(chunk)
        finally:
            self.inside = False
        self.plain.append(got is None)
        return got

    def feed_text(self, base: dict[str, Any], index: int, content: str) -> list[dict[str, Any]] | None:
        got = super().feed_text(base, index, content)
        if not self.inside:
            self.plain.append(got is None)
        return got


@settings(max_examples=150, deadline=None)
@given(upstream_events())
def test_a_stream_means_the_same_whichever_events_pass_as_they_came(events: list[bytes]) -> None:
    fast, slow = ChatStreamRewriter(TOOLS), reference_rewriter()
    recording = fast._rewriter = Recording(TOOLS)
    fast_out = [fast.feed_bytes(e) for e in events] + [fast.end_bytes()]
    slow_out = [slow.feed_bytes(e) for e in events] + [slow.end_bytes()]
    assert meaning(b"".join(fast_out)) == meaning(b"".join(slow_out))
    chunk_events = [(e, out) for e, out in zip(events, fast_out) if e != b"data: [DONE]\n\n"]
    assert len(recording.plain) == len(chunk_events)
    for (event, out), plain in zip(chunk_events, recording.plain):
        as_parsed = sse(orjson.dumps(json.loads(event[len(b"data: "):])))
        if plain:  # the upstream's own chunk, encoded once: byte for byte when it came compact and as UTF-8
            assert out == as_parsed
            assert out == event or event != as_parsed


@settings(max_examples=150, deadline=None)
@given(upstream_events())
def test_feed_plain_says_unchanged_only_when_feed_gives_back_the_same_chunk(events: list[bytes]) -> None:
    plain, reference = ChunkRewriter(TOOLS), ChunkRewriter(TOOLS)
    for event in events[:-1]:
        chunk = json.loads(event[len(b"data: "):])
        got, expected = plain.feed_plain(chunk), reference.feed(chunk)
        if got is None:
            assert expected == [chunk]
        else:
            assert CALL_ID.sub(b"", json.dumps(got).encode()) == CALL_ID.sub(b"", json.dumps(expected).encode())
    assert json.dumps(plain.close()) == json.dumps(reference.close())


# The decoder's shortcut for pieces of whole events reads them as its line-by-line path does.

LINES = st.sampled_from(["data: {\"a\": 1}", "data:{\"b\": 2}", "data: x", "data: y", ": ping", "event: e", "id: 7",
                         "", "data: [DONE]", "retry: 5", "data:  two spaces", "data: café ✓ 😀", "data: \udcff"])


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, max_size=14), st.sampled_from(["\n", "\r\n", "\r"]), st.lists(st.integers(0, 400), max_size=6))
def test_the_decoder_reads_whole_event_pieces_as_it_reads_them_byte_by_byte(lines: list[str], end: str,
                                                                                 cuts: list[int]) -> None:
    raw = (end.join(lines) + end + end).encode("utf-8", "surrogateescape")  # (\udcff: an invalid byte)
    by_byte = SSEDecoder()
    reference = [e for i in range(len(raw)) for e in by_byte.feed(raw[i:i + 1])] + by_byte.close()
    pieces = SSEDecoder()
    bounds = sorted({min(c, len(raw)) for c in cuts} | {0, len(raw)})
    got = [e for a, b in zip(bounds, bounds[1:]) for e in pieces.feed(raw[a:b])] + pieces.close()
    assert got == reference


def test_a_step_that_may_be_slow_is_still_said_once_the_stream_is_long_enough_to_hold_one() -> None:
    # Below SLOW_BLOCK_CHARS read in all, no block can be that large: the answer is no without asking the
    # parsers. Past it, every step the parsers call slow is called slow (the transport offloads it).
    big = '<tool_call>{"name": "get_weather", "arguments": {"city": "' + "x" * 260_000 + '"}}</tool_call> after'
    pieces = ["Before. "] + [big[i:i + 20_000] for i in range(0, len(big), 20_000)]
    rw = ChatStreamRewriter(TOOLS)
    said = []
    for piece in pieces:
        decoded = rw.read(sse(orjson.dumps(envelope({"content": piece}))))
        exact = any(rw._rewriter.may_be_slow(value) for kind, value in decoded if kind == "chunk")
        said.append(rw.may_be_slow(decoded))
        assert said[-1] or not exact
        rw.write(decoded)
    assert said[0] is False and said[-1] is True  # the closing piece decodes a 260 KB block
    rw.end_bytes()
    assert rw.calls == 1


def test_the_openai_wire_writes_every_output_as_the_item_encoding_does() -> None:
    from streamparse.wire.sse import OpenAIWire, encode_items, openai_items

    outputs: list[tuple[str, Any]] = [
        ("chunk", envelope({"content": "café ✓ \n line"})), ("comment", "note"), ("chunk", {"n": 2 ** 70}),
        ("chunk", {"s": "lone \ud800 half"}), ("raw", '{"deep": [[[]]]}'), ("error", {"error": {"message": "x"}}),
        ("done", None),
    ]
    wire = OpenAIWire()
    assert wire.encode(outputs) == encode_items(openai_items(outputs))
    for output in outputs:
        assert wire.encode([output]) == encode_items(openai_items([output]))
    assert wire.encode([]) == b""
