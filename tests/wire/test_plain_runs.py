"""Plain text events that arrive in one read leave as one chunk with their texts joined (``plain_runs``); any
event that says more than text (a role, a finish, logprobs, native calls, another choice or envelope) is read
on its own as before, and however the reads fall, a client accumulates the same text and the same calls."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from hypothesis import given, settings, strategies as st

from helpers import TOOLS
from streamparse.wire.plain_runs import MAX_LEARNS
from streamparse.wire.sse import ChatStreamRewriter, OpenAIWire, SSEDecoder

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
CALL_ID = re.compile(r"call_[0-9a-zA-Z]+")


def chunk(text: str | None = None, *, index: int = 0, finish: Any = None, **delta: Any) -> dict[str, Any]:
    if text is not None:
        delta["content"] = text
    return {"id": "chatcmpl-7", "object": "chat.completion.chunk", "created": 1700000000, "model": "m",
            "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]}


def sse(value: Any) -> bytes:
    return b"data: " + orjson.dumps(value) + b"\n\n"


def client_chunks(stream: bytes) -> list[dict[str, Any]]:
    decoder = SSEDecoder()
    return [json.loads(e.data) for e in decoder.feed(stream) + decoder.close() if e.data and e.data != "[DONE]"]


def accumulated(stream: bytes) -> dict[int, tuple[str, list[tuple[str, str]], Any]]:
    """Per choice: its text, its calls (name, arguments) and its finish, as a client adds them up."""
    text: dict[int, str] = {}
    calls: dict[int, dict[int, list[str]]] = {}
    finish: dict[int, Any] = {}
    for c in client_chunks(stream):
        for choice in c["choices"]:
            i, delta = choice["index"], choice["delta"]
            text[i] = text.get(i, "") + (delta.get("content") or "")
            for tc in delta.get("tool_calls") or []:
                call = calls.setdefault(i, {}).setdefault(tc["index"], ["", ""])
                call[0] += tc["function"].get("name") or ""
                call[1] += tc["function"].get("arguments") or ""
            finish[i] = choice["finish_reason"] or finish.get(i)
    return {i: (text[i], [(n, a) for n, a in calls.get(i, {}).values()], finish.get(i)) for i in text}


def test_plain_events_of_one_read_leave_as_one_chunk_with_the_joined_text() -> None:
    events = [chunk(p) for p in ["Hel", "lo, ", "wor", "ld"]]
    out = ChatStreamRewriter(TOOLS).feed_bytes(b"".join(sse(e) for e in events))
    assert out == sse(chunk("Hello, world"))  # the first event's envelope and fields, the texts joined


def test_events_read_one_at_a_time_are_never_held_for_a_join() -> None:
    rw = ChatStreamRewriter(TOOLS)
    for part in ["Hel", "lo"]:
        assert rw.feed_bytes(sse(chunk(part))) == sse(chunk(part))


def test_an_event_that_says_more_than_text_ends_the_run_and_is_read_on_its_own() -> None:
    breakers = [
        chunk("x", role="assistant"),
        chunk("x", finish="stop"),
        chunk("x", reasoning_content="hm"),
        chunk("x", index=1),
        {**chunk("x"), "id": "chatcmpl-other"},
        {**chunk("x"), "created": 1700000001},
        {**chunk("x"), "x_sent": 1.5},  # a field the others lack
        {**chunk("x"), "choices": [{**chunk("x")["choices"][0], "logprobs": {"content": []}}]},
        {**chunk("x"), "choices": [chunk("x")["choices"][0], chunk("y", index=1)["choices"][0]]},
        chunk("x", tool_calls=[{"index": 0, "id": "n", "type": "function",
                                "function": {"name": "f", "arguments": "{}"}}]),
        chunk(""),
    ]
    for breaker in breakers:
        read = b"".join(sse(e) for e in [chunk("a"), chunk("b"), breaker, chunk("c"), chunk("d")])
        alone = ChatStreamRewriter(TOOLS).feed_bytes(sse(breaker))
        assert ChatStreamRewriter(TOOLS).feed_bytes(read) == sse(chunk("ab")) + alone + sse(chunk("cd")), breaker


def test_a_run_of_events_between_comments_and_the_end() -> None:
    read = b": ping\n\n" + sse(chunk("a")) + sse(chunk("b")) + b": ping\n\n" + sse(chunk("c")) + b"data: [DONE]\n\n"
    out = ChatStreamRewriter(TOOLS).feed_bytes(read)
    assert out == b": ping\n\n" + sse(chunk("ab")) + b": ping\n\n" + sse(chunk("c")) + b"data: [DONE]\n\n"


def test_null_delta_fields_ride_along_when_every_event_has_them() -> None:
    events = [chunk(p, reasoning_content=None, tool_calls=None) for p in ["a", "b"]]
    out = ChatStreamRewriter(TOOLS).feed_bytes(b"".join(sse(e) for e in events))
    assert out == sse(chunk("ab", reasoning_content=None, tool_calls=None))


def test_escapes_in_the_text_are_read_as_json_reads_them() -> None:
    parts = ['say "hi"\n', "caf\u00e9 \\ tab\t", "\U0001F600 / end"]
    for ascii_only in (True, False):
        read = b"".join(b"data: " + json.dumps(chunk(p), ensure_ascii=ascii_only).encode() + b"\n\n" for p in parts)
        assert client_chunks(ChatStreamRewriter(TOOLS).feed_bytes(read)) == [chunk("".join(parts))]


def test_a_surrogate_pair_split_between_joined_events_is_joined() -> None:
    first = sse(chunk("go ")) + b'data: {"choices":[{"index":0,"delta":{"content":"a\\ud83d"},"finish_reason":null}]}\n\n'
    second = b'data: {"choices":[{"index":0,"delta":{"content":"\\ude00b"},"finish_reason":null}]}\n\n'
    out = ChatStreamRewriter(TOOLS).feed_bytes(first + second + second)
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in client_chunks(out))
    assert text == "go a\U0001F600b\ufffdb"  # the pair joined; a low half alone is U+FFFD


def test_a_key_written_twice_is_read_as_json_reads_it_never_as_its_first_value() -> None:
    data = b'data: {"choices":[{"index":0,"delta":{"content":"<tool_call>{","content":"plain"},"finish_reason":null}]}\n\n'
    out = ChatStreamRewriter(TOOLS).feed_bytes(data * 3)
    assert b"tool_call" not in out
    assert [c["choices"][0]["delta"] for c in client_chunks(out)] == [{"content": "plainplainplain"}]


def test_events_that_all_differ_are_read_one_by_one_and_the_frame_given_up() -> None:
    events = [{**chunk(f"w{n} "), "x_sent": 1.0 + n} for n in range(3 * MAX_LEARNS)]
    rw = ChatStreamRewriter(TOOLS)
    out = rw.feed_bytes(b"".join(sse(e) for e in events))
    assert client_chunks(out) == events
    assert rw._runs.given_up and rw._runs._frame is None


def test_a_marker_split_across_joined_events_never_leaks() -> None:
    parts = ["Let me check. <tool", "_call>", HERMES[len("<tool_call>"):-4], "all>", " Done."]
    out = ChatStreamRewriter(TOOLS).feed_bytes(b"".join(sse(chunk(p)) for p in parts))
    ((text, calls, _),) = accumulated(out).values()
    assert text == "Let me check.  Done." and "<" not in text
    assert calls == [("get_weather", '{"city": "Paris"}')]


# Every way a stream can be cut into events and its events into reads: the client adds up the same.

TEXTS = st.sampled_from([
    "Plain prose, nothing to parse here at all.",
    "Let me look.\n" + HERMES + "\nIt is sunny.",
    "  " + HERMES + "  ",
    "a < b and <tool but not a call</tool_call> then " + HERMES,
    "<think>hm</think>Answer " + HERMES + " after",
    HERMES + HERMES,
    'Quotes "here",\nnew lines\tand caf\u00e9 \U0001F600 \\ slash',
])


@st.composite
def reads(draw: st.DrawFn) -> list[bytes]:
    text = draw(TEXTS)
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=20)))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    spaced, ascii_only = draw(st.booleans()), draw(st.booleans())

    def sse(value: Any) -> bytes:
        return b"data: " + json.dumps(value, separators=(", ", ": ") if spaced else (",", ":"),
                                      ensure_ascii=ascii_only).encode() + b"\n\n"

    events = [sse(chunk(role="assistant", content=""))]
    for part in parts:
        events.append(sse(chunk(part, **draw(st.sampled_from([{}, {}, {}, {"role": "assistant"}])))))
    events += [sse(chunk(finish=draw(st.sampled_from(["stop", "length"])))), b"data: [DONE]\n\n"]
    bounds = sorted(draw(st.sets(st.integers(1, len(events) - 1), max_size=len(events))))
    return [b"".join(events[a:b]) for a, b in zip([0, *bounds], [*bounds, len(events)])]


@settings(max_examples=200, deadline=None)
@given(reads())
def test_a_client_adds_up_the_same_whichever_events_share_a_read(pieces: list[bytes]) -> None:
    joined, alone = ChatStreamRewriter(TOOLS), ChatStreamRewriter(TOOLS)
    got = b"".join(joined.feed_bytes(p) for p in pieces) + joined.end_bytes()
    decoder = SSEDecoder()
    expected = b"".join(alone.feed_bytes(sse(json.loads(e.data)) if e.data != "[DONE]" else b"data: [DONE]\n\n")
                        for e in decoder.feed(b"".join(pieces)))
    expected += alone.end_bytes()
    assert CALL_ID.sub("", str(accumulated(got))) == CALL_ID.sub("", str(accumulated(expected)))
    assert len(client_chunks(got)) <= len(client_chunks(expected))
    assert got.endswith(b"data: [DONE]\n\n")


def test_text_after_its_choices_finish_passes_as_text_and_the_stream_goes_on() -> None:
    rw = ChatStreamRewriter(TOOLS)
    out = rw.feed_bytes(sse(chunk("a", finish="stop")) + sse(chunk("late <tool_call>")) + sse(chunk(" b")))
    out += rw.feed_bytes(b"data: [DONE]\n\n")
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in client_chunks(out)) == "alate <tool_call> b"
    assert out.endswith(b"data: [DONE]\n\n")


class Rebuilt(OpenAIWire):
    """The OpenAI wire, not known as such to the rewriter: every plain chunk is handed over as a dict."""


@settings(max_examples=150, deadline=None)
@given(reads())
def test_a_chunk_written_from_its_frame_is_byte_for_byte_what_the_wire_writes(pieces: list[bytes]) -> None:
    written, rebuilt = ChatStreamRewriter(TOOLS), ChatStreamRewriter(TOOLS, wire=Rebuilt())
    got = [written.feed_bytes(p) for p in pieces] + [written.end_bytes()]
    expected = [rebuilt.feed_bytes(p) for p in pieces] + [rebuilt.end_bytes()]
    assert [CALL_ID.sub("", o.decode()) for o in got] == [CALL_ID.sub("", o.decode()) for o in expected]


def test_one_plain_event_per_read_is_read_by_its_frame_and_leaves_as_the_rewrite_writes_it() -> None:
    rw, reference = ChatStreamRewriter(TOOLS), ChatStreamRewriter(TOOLS, wire=Rebuilt())
    for part in ["Hello", " there", ', "quoted"\n', " caf\u00e9"]:
        event = b"data: " + json.dumps(chunk(part)).encode() + b"\n\n"  # spaced and ASCII: not compact
        assert rw.feed_bytes(event) == reference.feed_bytes(event) == sse(chunk(part))
    assert rw._runs._frame is not None and rw._runs._learns == 0  # the later events fitted the frame


def test_usage_reported_per_event_is_never_joined() -> None:
    """A chunk that reports usage counts per event (clients add it up): such events are not joined into one."""
    usage = {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}
    events = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "usage": usage,
               "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]} for text in "abc"]
    rewriter = ChatStreamRewriter(parse_without_tools=True)
    body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
    out = rewriter.feed_bytes(body) + rewriter.end_bytes()
    chunks = [json.loads(e.data) for e in SSEDecoder().feed(out) if e.data not in (None, "[DONE]")]
    assert sum(c["usage"]["total_tokens"] for c in chunks if c.get("usage")) == 18
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == "abc"


def test_null_choice_fields_an_engine_writes_do_not_stop_joining() -> None:
    """SGLang writes ``"matched_stop": null`` in every choice: still plain, still joined."""
    events = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None, "matched_stop": None}]}
              for text in ["ab", "cd", "ef"]]
    rewriter = ChatStreamRewriter(parse_without_tools=True)
    out = rewriter.feed_bytes(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))
    chunks = [json.loads(e.data) for e in SSEDecoder().feed(out) if e.data not in (None, "[DONE]")]
    assert [c["choices"][0]["delta"]["content"] for c in chunks] == ["abcdef"]  # one chunk, as the upstream framed it


def test_one_odd_event_in_a_run_keeps_the_frame() -> None:
    """One stamped chunk in 8 (as a load test's upstream writes them) is read on its own; the frame stays, so the
    alike chunks around it are still joined and nothing is learned again for it."""
    texts = [f"t{n} " for n in range(16)]
    events = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
               "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
               **({"x_sent": 1000.0 + n} if n % 8 == 0 else {})} for n, text in enumerate(texts)]
    rewriter = ChatStreamRewriter(parse_without_tools=True)
    out = rewriter.feed_bytes(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))
    chunks = [json.loads(e.data) for e in SSEDecoder().feed(out) if e.data not in (None, "[DONE]")]
    assert "".join(c["choices"][0]["delta"]["content"] for c in chunks) == "".join(texts)
    assert [c.get("x_sent") for c in chunks if "x_sent" in c] == [1000.0, 1008.0]  # each stamp kept, once
    assert len(chunks) == 5  # t0 (first frame), t1, t2-t7 joined (frame relearned once), t8 alone, t9-t15 joined
