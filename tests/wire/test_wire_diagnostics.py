"""Diagnostics reach the client beside valid payloads: SSE comments in streams, a header value for a whole answer,
opt-out per rewriter, and a public hook for the parser's events."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

import streamparse as sp
from streamparse.proxy.fronts import AnthropicFront
from streamparse.wire.completion import rewrite_completion
from streamparse.wire.diagnostics import COMMENT_PREFIX, header_value
from streamparse.wire.sse import ChatStreamRewriter, SSEDecoder, SSEEvent

CIRCLE: dict[str, Any] = {"type": "function", "function": {"name": "draw_circle", "parameters": {
    "type": "object", "properties": {"radius": {"type": "integer"},
                                     "unit": {"type": "string", "enum": ["m", "cm"]}}}}}
MIXED = "[draw_circle(radius=5, unit='m'), area(width=5, length=7)]"


def _upstream(text: str, size: int = 7) -> bytes:
    """``text`` as an upstream OpenAI SSE stream in pieces of ``size`` characters."""
    frames = []
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    for n, piece in enumerate(pieces):
        chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                 "choices": [{"index": 0, "delta": {"content": piece},
                              "finish_reason": "stop" if n == len(pieces) - 1 else None}]}
        frames.append(f"data: {json.dumps(chunk)}\n\n")
    return ("".join(frames) + "data: [DONE]\n\n").encode()


def _rewrite(raw: bytes, **options: Any) -> list[SSEEvent]:
    rewriter = ChatStreamRewriter([CIRCLE], **options)
    out = b"".join(rewriter.feed_bytes(raw[i : i + 50]) for i in range(0, len(raw), 50)) + rewriter.end_bytes()
    decoder = SSEDecoder()
    return decoder.feed(out) + decoder.close()


def _told(events: list[SSEEvent]) -> list[dict[str, Any]]:
    return [json.loads(e.comment[len(COMMENT_PREFIX):]) for e in events
            if e.comment is not None and e.comment.startswith(COMMENT_PREFIX)]


def test_openai_stream_tells_the_refused_element_in_a_comment_and_chunks_stay_plain() -> None:
    events = _rewrite(_upstream(MIXED))
    told = _told(events)
    assert [(d["code"], d["details"]["names"], d["choice"]) for d in told] == [("unknown_tool", ["area"], 0)]
    chunks = [json.loads(e.data) for e in events if e.data is not None and e.data != "[DONE]"]
    for chunk in chunks:  # nothing of ours inside the payload: the usual chunk keys only
        assert set(chunk) <= {"id", "object", "created", "model", "choices"}
        for choice in chunk["choices"]:
            assert set(choice) == {"index", "delta", "finish_reason"}
    calls = [tc for c in chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls", [])]
    assert [tc["function"]["name"] for tc in calls] == ["draw_circle"]


def _ids() -> Any:
    return map(str, itertools.count()).__next__


def test_report_diagnostics_false_keeps_the_stream_free_of_them() -> None:
    with_them = _rewrite(_upstream(MIXED), id_factory=_ids())
    without = _rewrite(_upstream(MIXED), report_diagnostics=False, id_factory=_ids())
    assert _told(without) == [] and _told(with_them)
    assert [e for e in without if e.data is not None] == [e for e in with_them if e.data is not None]


def test_the_comment_comes_before_the_chunk_of_the_call_it_is_about() -> None:
    text = '<tool_call>{"name": "draw_circle", "arguments": {"radius": 2, "unit": "km"}}</tool_call>'
    events = _rewrite(_upstream(text, 500))
    kinds = ["told" if e.comment and e.comment.startswith(COMMENT_PREFIX)
             else "call" if e.data and "tool_calls" in e.data else "" for e in events]
    assert [k for k in kinds if k] == ["told", "call"]
    (told,) = _told(events)
    assert told["code"] == "enum_mismatch" and told["details"]["parameter"] == "unit"


def test_a_comment_is_one_line_and_its_details_are_capped() -> None:
    big = "x" * 5000
    text = f'<tool_call>{{"name": "draw_circle", "arguments": {{"radius": 1 /* {big}\nline two */}}}}</tool_call>'
    rewriter = ChatStreamRewriter([CIRCLE])
    raw = rewriter.feed_bytes(_upstream(text, 40)) + rewriter.end_bytes()
    lines = [line for line in raw.decode().split("\n") if line.startswith(": " + COMMENT_PREFIX)]
    assert len(lines) == 1 and len(lines[0]) < 2000
    told = json.loads(lines[0][2 + len(COMMENT_PREFIX):])
    assert told["code"] == "repaired" and told["details"]["removed"].endswith("…")


def test_anthropic_stream_carries_the_same_comment_and_valid_events() -> None:
    rewriter = ChatStreamRewriter([CIRCLE], wire=AnthropicFront("m").wire())
    raw = rewriter.feed_bytes(_upstream(MIXED)) + rewriter.end_bytes()
    decoder = SSEDecoder()
    events = decoder.feed(raw) + decoder.close()
    assert [d["code"] for d in _told(events)] == ["unknown_tool"]
    types = [e.event for e in events if e.data is not None]
    assert types[0] == "message_start" and types[-1] == "message_stop"
    for e in events:
        if e.data is not None:
            assert json.loads(e.data)["type"] == e.event


def _completion(content: str) -> dict[str, Any]:
    return {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}]}


def test_whole_answer_diagnostics_ride_beside_the_json_for_a_header() -> None:
    plain = rewrite_completion(_completion(MIXED), [CIRCLE])
    assert json.loads(json.dumps(plain)).keys() == _completion(MIXED).keys()  # the JSON gains nothing
    assert [d["code"] for d in plain.diagnostics] == ["unknown_tool"]
    header = plain.diagnostics_header
    assert header is not None and header.isascii() and "\n" not in header
    assert json.loads(header) == plain.diagnostics
    plain = rewrite_completion(_completion(MIXED), [CIRCLE], id_factory=_ids())
    off = rewrite_completion(_completion(MIXED), [CIRCLE], report_diagnostics=False, id_factory=_ids())
    assert off.diagnostics == [] and off.diagnostics_header is None and dict(off) == dict(plain)


def test_header_value_is_capped_and_says_what_it_left_out() -> None:
    diags = [{"code": "coerced", "message": "é" * 100, "n": n} for n in range(200)]
    value = header_value(diags, limit=1000)
    assert value is not None and len(value) <= 1000 and value.isascii()
    parsed = json.loads(value)
    assert parsed[-1]["code"] == "omitted" and parsed[-1]["count"] + len(parsed) - 1 == 200
    assert header_value([]) is None


@pytest.mark.parametrize("streamed", [True, False])
def test_on_events_sees_every_diagnostic_code(streamed: bool) -> None:
    seen: list[sp.Event] = []
    text = ("<tool_call>{\"name\": \"draw_circle\", \"arguments\": {\"radius\": \"3\", \"unit\": \"CM\"}}</tool_call>"
            "<tool_call>{\"name\": \"draw_circle\", \"arguments\": {\"radius\": 4, \"unit\": \"mm\"}}</tool_call>")
    if streamed:
        _rewrite(_upstream(text), on_events=seen.extend)
    else:
        rewrite_completion(_completion(text), [CIRCLE], on_events=seen.extend)
    codes = sorted(e.code for e in seen if isinstance(e, sp.Diagnostic))
    assert codes == ["coerced", "coerced", "enum_mismatch"]
    assert len([e for e in seen if isinstance(e, sp.ToolCall)]) == 2
