"""Anthropic Messages wire format: event order, the anthropic SDK's own accumulator, streaming == non-streaming."""

from __future__ import annotations

import json
from typing import Any, get_args

import anthropic
import pytest
from anthropic.types.shared.error_type import ErrorType
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion, ChatCompletionChunk

try:  # anthropic 2.x runs on httpx2, earlier versions on httpx
    import httpx2 as http
except ImportError:  # pragma: no cover
    import httpx as http  # type: ignore[no-redef]

from anthropic_samples import (HERMES, NATIVE, NATIVE_COMPLETION, OSLO, PARIS, QWEN3, TEXT, accumulate, anonymous,
                               call_piece, check_order, chunk, completion, gist, pieces, plain, shape, text_chunks)
from helpers import TOOLS, aiter_of
from streamparse import Diagnostic, StreamParser
from streamparse.wire import anthropic as spa
from streamparse.wire import openai as sp_openai
from streamparse.wire.anthropic import ChunkTranslator, MessageStream
from streamparse.wire.sse import SSEDecoder

# ---------------------------------------------------------------- exact event order

def test_text_only() -> None:
    events = check_order(list(spa.stream_events_sync(["Hel", "lo ", "world"], TOOLS)))
    assert shape(events) == ["message_start", "ping", "start:text", "text_delta", "content_block_stop",
                             "message_delta:end_turn", "message_stop"]
    start = events[0]["message"]
    assert start["id"].startswith("msg_") and start == {
        "id": start["id"], "type": "message", "role": "assistant", "model": "streamparse", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
    assert events[2] == {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    assert events[-2] == {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                          "usage": {"output_tokens": 0}}
    assert accumulate(events)["content"] == [{"type": "text", "text": "Hello world"}]


def test_text_call_text() -> None:
    events = list(spa.stream_events_sync(pieces(TEXT, 4), TOOLS))
    block = ["content_block_stop"]
    assert shape(events) == ["message_start", "ping", "start:text", "text_delta", *block,
                             "start:tool_use", "input_json_delta", *block, "start:text", "text_delta", *block,
                             "start:tool_use", "input_json_delta", *block, "start:text", "text_delta", *block,
                             "message_delta:tool_use", "message_stop"]
    message = accumulate(events)
    assert [b.get("text") for b in message["content"]] == ["Checking both.\n", None, "\nand\n", None, "\nDone."]
    assert gist(message)[2] == [("get_weather", PARIS), ("get_weather", OSLO)]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert starts[1] == {"type": "tool_use", "id": starts[1]["id"], "name": "get_weather", "input": {}}


def test_reasoning_text_two_calls() -> None:
    text = "<think>Let me see.</think>Sure. " + HERMES + QWEN3
    events = list(spa.stream_events_sync(pieces(text, 5), TOOLS))
    assert shape(events)[2:] == ["start:thinking", "thinking_delta", "content_block_stop", "start:text", "text_delta",
                                 "content_block_stop", "start:tool_use", "input_json_delta", "content_block_stop",
                                 "start:tool_use", "input_json_delta", "content_block_stop", "message_delta:tool_use",
                                 "message_stop"]
    assert events[2]["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    message = accumulate(events)
    assert gist(message) == ("Let me see.", "Sure. ", [("get_weather", PARIS), ("get_weather", OSLO)], "tool_use")
    assert anonymous(message) == anonymous(plain(spa.message_from_text(text, TOOLS)))


def test_native_fragmented_tool_calls() -> None:
    events = list(spa.events_from_chunks_sync(NATIVE))
    start: dict[str, Any] = {"id": "msg_n1", "type": "message", "role": "assistant", "model": "qwen", "content": [],
                             "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 0, "output_tokens": 0}}
    assert events == [
        {"type": "message_start", "message": start},
        {"type": "ping"},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me look."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_a1", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"ci'}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": 'ty": "Paris"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2,
         "content_block": {"type": "tool_use", "id": "toolu_b2", "name": "get_time", "input": {}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"input_tokens": 11, "output_tokens": 9}},
        {"type": "message_stop"},
    ]
    message = accumulate(events)
    assert message == plain(spa.message_from_completion(NATIVE_COMPLETION))
    assert message["usage"] == {"input_tokens": 11, "output_tokens": 9}


def test_late_fragment_for_an_interleaved_call_goes_to_its_block() -> None:
    chunks = [chunk(call_piece(0, '{"city": ', "call_a", "get_weather")), chunk(call_piece(1, "{}", "call_b", "get_time")),
              chunk(call_piece(0, '"Rome"}')), chunk({}, "tool_calls")]
    translator = ChunkTranslator()
    events = [e for c in chunks for e in translator.feed(c)] + translator.close()
    assert events[-4] == {"type": "content_block_delta", "index": 0,  # while block 1 is open
                          "delta": {"type": "input_json_delta", "partial_json": '"Rome"}'}}
    assert translator.stream.message["content"][0]["input"] == {"city": "Rome"}


# ---------------------------------------------------------------- streaming == non-streaming

@pytest.mark.parametrize("size", [1, 3, 17, 1000])
def test_text_stream_accumulates_to_message_from_text(size: int) -> None:
    streamed = accumulate(spa.stream_events_sync(pieces(TEXT, size), TOOLS))
    assert anonymous(streamed) == anonymous(plain(spa.message_from_text(TEXT, TOOLS)))


@pytest.mark.parametrize("size", [1, 5, 1000])
def test_rewritten_chunks_accumulate_to_the_rewritten_completion(size: int) -> None:
    """Proxy path: upstream chunks -> ChunkRewriter -> ChunkTranslator, against rewrite_completion ->
    message_from_completion. Both keep text and calls in the order the model wrote them."""
    usage = {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}
    chunks = sp_openai.rewrite_stream_sync(text_chunks(pieces(TEXT, size), usage=usage), TOOLS)
    streamed = accumulate(spa.events_from_chunks_sync(chunks))
    full = sp_openai.rewrite_completion(completion(TEXT), TOOLS)
    full["usage"] = usage
    message = plain(spa.message_from_completion(full))
    assert anonymous(streamed) == anonymous(message)
    assert [b.get("text") for b in message["content"]] == ["Checking both.\n", None, "\nand\n", None, "\nDone."]
    assert gist(message) == ("", "Checking both.\n\nand\n\nDone.", [("get_weather", PARIS), ("get_weather", OSLO)],
                             "tool_use")
    assert streamed["usage"] == message["usage"] == {"input_tokens": 3, "output_tokens": 4}
    assert streamed["id"] == message["id"] == "msg_n1" and streamed["model"] == "qwen"
    # The same completion as chunks (a non-streaming upstream behind a streaming request): exactly equal.
    assert accumulate(spa.events_from_chunks_sync(sp_openai.completion_to_chunks(full))) == message


SNIPPETS = ["Hello ", "world.\n", " ", "\n", "x < y ", HERMES, QWEN3]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SNIPPETS), max_size=6), st.lists(st.integers(0, 400), max_size=12))
def test_any_chunking_gives_the_same_message(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    deltas = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    expected = anonymous(plain(spa.message_from_text(text, TOOLS)))
    assert anonymous(accumulate(spa.stream_events_sync(deltas, TOOLS))) == expected
    proxied = accumulate(spa.events_from_chunks_sync(sp_openai.rewrite_stream_sync(text_chunks(deltas), TOOLS)))
    full = plain(spa.message_from_completion(sp_openai.rewrite_completion(completion(text), TOOLS)))
    assert anonymous(proxied) == anonymous(full)
    assert gist(proxied) == gist(expected)
    assert all(block["text"].strip() for block in proxied["content"] if block["type"] == "text"), "no blank blocks"


# ---------------------------------------------------------------- mappings

@pytest.mark.parametrize("finish, matched, had_tool_use, expected", [
    ("tool_calls", None, False, "tool_use"),
    ("function_call", None, False, "tool_use"),
    ("stop", None, True, "tool_use"),
    (None, None, True, "tool_use"),
    ("length", None, False, "max_tokens"),
    ("length", None, True, "max_tokens"),
    ("stop", "END", False, "stop_sequence"),
    ("stop", "END", True, "tool_use"),
    ("content_filter", None, False, "refusal"),
    ("stop", None, False, "end_turn"),
    (None, None, False, "end_turn"),
    ("something_new", None, False, "end_turn"),
])
def test_stop_reason(finish: str | None, matched: str | None, had_tool_use: bool, expected: str) -> None:
    assert spa.stop_reason(finish, matched_stop=matched, had_tool_use=had_tool_use) == expected


def test_stop_sequence_from_vllm_stop_reason() -> None:
    chunks = text_chunks(["Count: 1 2 3"])
    chunks[-1]["choices"][0]["stop_reason"] = "END"
    events = list(spa.events_from_chunks_sync(chunks, stop_sequences=["END"]))
    assert events[-2]["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": "END"}
    assert accumulate(events)["stop_sequence"] == "END"
    assert list(spa.events_from_chunks_sync(chunks))[-2]["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    chunks[-1]["choices"][0]["stop_reason"] = 151645  # a stop token id, not a string
    assert list(spa.events_from_chunks_sync(chunks, stop_sequences=["END"]))[-2]["delta"]["stop_reason"] == "end_turn"
    full = completion("Count: 1 2 3", stop_reason="END")
    assert spa.message_from_completion(full, stop_sequences=["END"])["stop_sequence"] == "END"
    assert spa.message_from_completion(full)["stop_reason"] == "end_turn"


def test_usage_mapping() -> None:
    cached = {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 30}}
    assert spa.usage_from(cached) == {"input_tokens": 70, "cache_read_input_tokens": 30, "output_tokens": 20}
    assert spa.usage_from({"input_tokens": 5, "output_tokens": 6}) == {"input_tokens": 5, "output_tokens": 6}
    assert spa.usage_from({"prompt_tokens": True, "completion_tokens": -1, "total_tokens": 3}) == {}
    assert spa.usage_from(None) == {} and spa.usage_from("12") == {}
    events = list(spa.events_from_chunks_sync(text_chunks(["Hi"], usage={**cached, "total_tokens": 120})))
    assert events[-2]["usage"] == {"input_tokens": 70, "cache_read_input_tokens": 30, "output_tokens": 20}
    assert accumulate(events)["usage"] == {"input_tokens": 70, "cache_read_input_tokens": 30, "output_tokens": 20}
    stream = MessageStream(model="m", input_tokens=42)
    assert stream.start()[0]["message"]["usage"] == {"input_tokens": 42, "output_tokens": 0}
    assert stream.finish(usage={"completion_tokens": 3})[-2]["usage"] == {"output_tokens": 3}
    assert stream.message["usage"] == {"input_tokens": 42, "output_tokens": 3}


def test_ids() -> None:
    assert spa.tool_use_id("call_abc") == "toolu_abc"
    assert spa.tool_use_id("toolu_01XYZ") == "toolu_01XYZ"
    assert spa.tool_use_id("chatcmpl-tool-9f") == "toolu_chatcmpl-tool-9f"
    assert spa.tool_use_id("fc.1/2 x") == "toolu_fc_1_2_x"
    fresh = {spa.tool_use_id(""), spa.tool_use_id("call_"), spa.tool_use_id("toolu_")}
    assert len(fresh) == 3 and all(i.startswith("toolu_") and len(i) > 6 for i in fresh)
    assert spa.message_id("chatcmpl-abc") == "msg_abc" and spa.message_id("msg_q") == "msg_q"
    assert spa.message_id(None).startswith("msg_") and spa.message_id(None) != spa.message_id(None)


def test_tool_use_ids_are_unique_even_when_the_upstream_repeats_them() -> None:
    stream = MessageStream(model="m")
    for _ in range(3):
        stream.tool_call("call_same", "get_time", "{}")
    stream.tool_call("", "get_time", "")
    stream.finish()
    ids = [b["id"] for b in stream.message["content"]]
    assert ids[0] == "toolu_same" and len(set(ids)) == 4 and all(i.startswith("toolu_") for i in ids)
    assert all(b["input"] == {} for b in stream.message["content"]) and stream.message["stop_reason"] == "tool_use"


def test_completion_fallbacks() -> None:
    calls = [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{oops"}},
             {"id": "call_2", "type": "function", "function": {"name": "g", "arguments": "[1, 2]"}},
             {"id": "call_3", "type": "function", "function": {"name": "h", "arguments": {"a": 1}}},
             {"id": "call_4", "type": "function", "function": {"name": "k", "arguments": ""}}]
    message = spa.message_from_completion(completion("   ", calls, "tool_calls"), model="claude-proxy")
    assert [(b["id"], b["input"]) for b in message["content"]] == [
        ("toolu_1", {}), ("toolu_2", {}), ("toolu_3", {"a": 1}), ("toolu_4", {})]
    assert message["model"] == "claude-proxy" and plain(message)["stop_reason"] == "tool_use"
    empty = spa.message_from_completion({"choices": [{"message": {"content": None}, "finish_reason": "length"}]})
    assert empty["content"] == [] and empty["model"] == "unknown" and empty["stop_reason"] == "max_tokens"
    thought = completion("Yes.")
    thought["choices"][0]["message"]["reasoning_content"] = "Hmm."
    thought = spa.message_from_completion(thought)
    assert [b["type"] for b in thought["content"]] == ["thinking", "text"]
    assert thought["usage"] == {"input_tokens": 0, "output_tokens": 0}


def test_sdk_objects_are_read_as_their_json() -> None:
    objects = [ChatCompletionChunk.model_validate(c) for c in NATIVE]
    assert list(spa.events_from_chunks_sync(objects)) == list(spa.events_from_chunks_sync(NATIVE))
    assert spa.message_from_completion(ChatCompletion.model_validate(NATIVE_COMPLETION)) == \
        spa.message_from_completion(NATIVE_COMPLETION)


# ---------------------------------------------------------------- MessageStream rules

def test_message_stream_rules() -> None:
    stream = MessageStream(model="m", message_id="msg_fixed")
    assert stream.text("") == [] and not stream.started  # empty deltas emit nothing, not even the start
    first = stream.thinking("hm")
    assert [e["type"] for e in first] == ["message_start", "ping", "content_block_start", "content_block_delta"]
    assert first[2]["index"] == 0 and stream.start() == []
    assert stream.text("\n ") == []  # whitespace waits for the block's first other character...
    assert stream.text("ok")[-1]["delta"] == {"type": "text_delta", "text": "\n ok"}
    assert stream.text("\n")[0]["delta"]["text"] == "\n"  # ...but inside an open block it goes straight out
    stream.text("\n")
    with pytest.raises(ValueError):
        stream.tool_arguments("{}")
    stream.tool_start("call_x", "get_time")
    assert stream.tool_arguments("") == []
    stream.tool_arguments("{")
    stream.text("   ")  # blank text between a call and the end: dropped
    end = stream.finish("stop")
    assert [e["type"] for e in end] == ["content_block_stop", "message_delta", "message_stop"] and end[0]["index"] == 2
    assert stream.finish() == [] and stream.text("late") == [] and stream.error("api_error", "x") == []
    assert stream.message["content"] == [{"type": "thinking", "thinking": "hm", "signature": ""},
                                         {"type": "text", "text": "\n ok\n\n"},
                                         {"type": "tool_use", "id": "toolu_x", "name": "get_time", "input": {}}]
    lone = MessageStream(model="m").finish()
    assert [e["type"] for e in lone] == ["message_start", "ping", "message_delta", "message_stop"]
    accumulate(lone)


def test_parser_events_and_diagnostics() -> None:
    parser = StreamParser(TOOLS)
    parser_events = parser.feed(TEXT) + [Diagnostic("repaired", "a note")] + parser.close()
    stream = MessageStream(model="m")
    events = stream.events(parser_events) + stream.finish()
    assert anonymous(accumulate(events)) == anonymous(plain(stream.message))


# ---------------------------------------------------------------- errors and SSE

def test_mid_stream_failure() -> None:
    translator = ChunkTranslator(model="m")
    events = [e for c in text_chunks(pieces("Hello there", 4))[:2] for e in translator.feed(c)]
    failure = translator.fail("upstream went away")
    assert failure == [{"type": "error", "error": {"type": "api_error", "message": "upstream went away"}}]
    assert translator.finished and translator.close() == [] and translator.feed(chunk({"content": "x"})) == []
    assert [e["type"] for e in events] == ["message_start", "ping", "content_block_start", "content_block_delta"]


def test_error_object_in_the_chunk_stream() -> None:
    translator = ChunkTranslator()
    assert translator.feed({"error": {"message": "model crashed", "type": "server_error"}}) == [
        {"type": "error", "error": {"type": "api_error", "message": "model crashed"}}]
    assert translator.close() == []


def test_encode_sse() -> None:
    assert spa.encode_sse({"type": "ping"}) == b'event: ping\ndata: {"type":"ping"}\n\n'
    event = MessageStream(model="m").text("h\u00e9\nllo")[-1]
    frame = spa.encode_sse(event)
    assert frame.startswith(b"event: content_block_delta\ndata: {") and frame.count(b"\n") == 3
    (decoded,) = SSEDecoder().feed(frame)
    assert decoded.event == "content_block_delta" and json.loads(decoded.data or "") == event


def test_error_bodies() -> None:
    assert spa.error_body(529, "busy") == {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    assert [spa.error_body(s, "m")["error"]["type"] for s in (400, 401, 403, 404, 413, 418, 429, 500, 502, 503, 504)] == [
        "invalid_request_error", "authentication_error", "permission_error", "not_found_error", "request_too_large",
        "invalid_request_error", "rate_limit_error", "api_error", "api_error", "overloaded_error", "timeout_error"]
    assert spa.error_body(500, "m", "timeout_error")["error"]["type"] == "timeout_error"
    # Every type is one the SDK knows, but request_too_large (sent by Anthropic's edge, documented, not typed).
    assert set(spa.ERROR_TYPES.values()) - {"request_too_large"} <= set(get_args(ErrorType))


# ---------------------------------------------------------------- the real anthropic client, over HTTP

def client(respond: Any) -> anthropic.Anthropic:
    transport = http.MockTransport(respond)
    return anthropic.Anthropic(api_key="test", base_url="http://proxy.test", max_retries=0,
                               http_client=http.Client(transport=transport))


REQUEST: dict[str, Any] = {"model": "qwen", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}


def test_anthropic_client_reads_the_stream_and_the_message() -> None:
    events = list(spa.stream_events_sync(pieces("<think>Hmm.</think>" + TEXT, 7), TOOLS))
    body = b"".join(spa.encode_sse(e) for e in events)
    sse = client(lambda request: http.Response(200, headers={"content-type": "text/event-stream"}, content=body))
    with sse.messages.stream(**REQUEST) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Checking both.\n\nand\n\nDone." and plain(final) == accumulate(events)
    assert [b.type for b in final.content] == ["thinking", "text", "tool_use", "text", "tool_use", "text"]
    message = spa.message_from_completion(NATIVE_COMPLETION)
    whole = client(lambda request: http.Response(200, json=message)).messages.create(**REQUEST)
    assert plain(whole) == plain(message) and whole.content[1].type == "tool_use"
    assert whole.content[1].input == PARIS


def test_anthropic_client_raises_on_an_error_event() -> None:
    stream = MessageStream(model="m")
    body = b"".join(spa.encode_sse(e) for e in stream.text("Hi") + stream.error("overloaded_error", "busy"))
    sse = client(lambda request: http.Response(200, headers={"content-type": "text/event-stream"}, content=body))
    with pytest.raises(anthropic.APIStatusError, match="busy"):
        with sse.messages.stream(**REQUEST) as s:
            s.get_final_message()


# ---------------------------------------------------------------- async, on both anyio backends

@pytest.mark.anyio
async def test_stream_events_async_equals_sync(anyio_backend: str) -> None:
    deltas = pieces("<think>Hmm.</think>" + TEXT, 6)
    events = [e async for e in spa.stream_events(aiter_of(deltas), TOOLS, model="x")]
    assert anonymous(accumulate(events)) == anonymous(accumulate(spa.stream_events_sync(deltas, TOOLS, model="x")))


@pytest.mark.anyio
async def test_events_from_chunks_async_equals_sync(anyio_backend: str) -> None:
    events = [e async for e in spa.events_from_chunks(aiter_of(NATIVE), model="claude-x")]
    assert events == list(spa.events_from_chunks_sync(NATIVE, model="claude-x"))
    assert events[0]["message"]["model"] == "claude-x"
