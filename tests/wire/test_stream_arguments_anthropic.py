"""Argument streaming in the Anthropic adapter, without a server: ``MessageStream.events`` opens a tool_use
block at ``ToolCallStart``, sends each ``ToolCallDelta`` as an ``input_json_delta`` and closes the block at
the ``ToolCall``; ``ChunkTranslator`` reads the OpenAI adapter's streamed pieces the same way."""

from __future__ import annotations

import itertools
import json
from typing import Any, Callable

import pytest
from anthropic.types import Message

from helpers import TOOLS
from anthropic_samples import accumulate, pieces  # accumulate checks the stream grammar, each event by the SDK's types
from streamparse import StreamParser, ToolCall
from streamparse.wire import anthropic as spa
from streamparse.wire import openai as sp_openai
from streamparse.wire.anthropic import ChunkTranslator, MessageStream
from streamparse.dialects.render import render

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n"
         "</parameter>\n</function>\n</tool_call>")
LONG = ("Some lines of a file that is being written.\n" * 40).strip()
WRITE_HERMES = render("hermes", "write_file", {"path": "a.txt", "content": LONG})
WRITE_QWEN3 = render("qwen3_coder", "write_file", {"path": "a.txt", "content": LONG})
TEXT = "Checking both.\n" + HERMES + "\nand\n" + WRITE_QWEN3 + "\nDone."
BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen"}


def ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def shape(events: list[dict[str, Any]]) -> list[str]:
    """Block events in short form: start:tool_use, delta:input_json_delta, stop..."""
    out = []
    for e in events:
        if e["type"] == "content_block_start":
            out.append("start:" + e["content_block"]["type"])
        elif e["type"] == "content_block_delta":
            out.append("delta:" + e["delta"]["type"])
        elif e["type"] == "content_block_stop":
            out.append("stop")
    return out


def squeeze(kinds: list[str]) -> list[str]:
    return [k for k, _ in itertools.groupby(kinds)]


def without_ids(message: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(message))
    out["id"] = "msg"
    for block in out["content"]:
        if block["type"] == "tool_use":
            assert block["id"].startswith("toolu_")
            block["id"] = "toolu"
    return out


def test_a_streamed_call_is_start_deltas_stop() -> None:
    events = list(spa.stream_events_sync(pieces(TEXT, 5), TOOLS, stream_arguments=True))
    assert squeeze(shape(events)) == ["start:text", "delta:text_delta", "stop",
                                      "start:tool_use", "delta:input_json_delta", "stop",
                                      "start:text", "delta:text_delta", "stop",
                                      "start:tool_use", "delta:input_json_delta", "stop",
                                      "start:text", "delta:text_delta", "stop"]
    starts = [e for e in events if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use"]
    assert [(s["content_block"]["name"], s["content_block"]["input"]) for s in starts] == [("get_weather", {}),
                                                                                         ("write_file", {})]
    deltas = [e for e in events if e["type"] == "content_block_delta" and e["delta"]["type"] == "input_json_delta"]
    assert len([d for d in deltas if d["index"] == starts[1]["index"]]) > 50  # the long content, piece by piece
    for start in starts:
        joined = "".join(d["delta"]["partial_json"] for d in deltas if d["index"] == start["index"])
        assert json.loads(joined) in ({"city": "Paris"}, {"path": "a.txt", "content": LONG})
    message = accumulate(events)
    assert [b.get("input") for b in message["content"] if b["type"] == "tool_use"] == [
        {"city": "Paris"}, {"path": "a.txt", "content": LONG}]
    assert message["stop_reason"] == "tool_use"


@pytest.mark.parametrize("size", [1, 4, 9, 100000])
def test_streamed_message_equals_the_whole_one(size: int) -> None:
    streamed = accumulate(spa.stream_events_sync(pieces(TEXT, size), TOOLS, stream_arguments=True))
    whole = spa.message_from_text(TEXT, TOOLS, stream_arguments=True)
    plain = spa.message_from_text(TEXT, TOOLS)
    assert without_ids(streamed) == without_ids(Message.model_validate(whole).model_dump(mode="json", exclude_none=True))
    assert without_ids(whole) == without_ids(plain)


def test_the_writer_state_matches_what_it_sent() -> None:
    stream = MessageStream(model="m")
    parser = StreamParser(TOOLS, stream_arguments=True, id_factory=ids())
    events = stream.start()
    for piece in pieces(TEXT, 6):
        events += stream.events(parser.feed(piece))
    events += stream.events(parser.close()) + stream.finish()
    assert accumulate(events) == Message.model_validate(stream.message).model_dump(mode="json", exclude_none=True)


def test_the_final_call_only_closes_its_block() -> None:
    parser = StreamParser(TOOLS, stream_arguments=True, id_factory=ids())
    stream = MessageStream(model="m")
    head = stream.events(parser.feed('<tool_call>{"name": "get_weather", "arguments": {"city": "Pa'))
    assert shape(head) == ["start:tool_use", "delta:input_json_delta"]
    assert head[2]["content_block"] == {"type": "tool_use", "id": "toolu_0", "name": "get_weather", "input": {}}
    tail = stream.events(parser.feed('ris"}}</tool_call>'))
    assert shape(tail) == ["delta:input_json_delta", "stop"]
    assert stream.message["content"][0]["input"] == {"city": "Paris"}
    assert stream.events(parser.close()) == []


def test_a_whole_call_dialect_is_start_one_delta_stop() -> None:
    events = list(spa.stream_events_sync(['[get_weather(city="Paris")]'], TOOLS, stream_arguments=True))
    assert shape(events) == ["start:tool_use", "delta:input_json_delta", "stop"]
    assert [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"] == ['{"city": "Paris"}']


def test_without_the_option_a_call_is_start_one_delta_stop() -> None:
    events = list(spa.stream_events_sync(pieces(TEXT, 5), TOOLS))
    assert squeeze(shape(events)) == ["start:text", "delta:text_delta", "stop",
                                      "start:tool_use", "delta:input_json_delta", "stop",
                                      "start:text", "delta:text_delta", "stop",
                                      "start:tool_use", "delta:input_json_delta", "stop",
                                      "start:text", "delta:text_delta", "stop"]
    assert shape(events).count("delta:input_json_delta") == 2


def test_a_tool_call_without_start_is_unchanged() -> None:
    stream = MessageStream(model="m")
    out = stream.events([ToolCall(0, "call_x", "get_weather", '{"city": "Paris"}')])
    assert shape(out) == ["start:tool_use", "delta:input_json_delta", "stop"]


def test_nothing_after_the_end() -> None:
    parser = StreamParser(TOOLS, stream_arguments=True)
    stream = MessageStream(model="m")
    events = stream.events(parser.feed('<tool_call>{"name": "get_weather", "arguments": {"ci'))
    events += stream.finish()
    assert stream.events(parser.feed('ty": "Paris"}}</tool_call>') + parser.close()) == []
    assert events[-1] == {"type": "message_stop"}


# ---------------------------------------------------------------- ChunkTranslator (the proxy's path)

def openai_chunks(text: str, size: int, **options: Any) -> list[dict[str, Any]]:
    chunks = [{**BASE, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    chunks += [{**BASE, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces(text, size)]
    chunks.append({**BASE, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return list(sp_openai.rewrite_stream_sync(chunks, TOOLS, **options))


@pytest.mark.parametrize("size", [3, 11])
def test_translated_streamed_chunks_give_the_same_message(size: int) -> None:
    streamed = list(spa.events_from_chunks_sync(openai_chunks(TEXT, size, stream_arguments=True), model="m"))
    assert squeeze(shape(streamed)) == ["start:text", "delta:text_delta", "stop",
                                        "start:tool_use", "delta:input_json_delta", "stop",
                                        "start:text", "delta:text_delta", "stop",
                                        "start:tool_use", "delta:input_json_delta", "stop",
                                        "start:text", "delta:text_delta", "stop"]
    assert shape(streamed).count("delta:input_json_delta") > 50
    completion = sp_openai.rewrite_completion(
        {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "qwen",
         "choices": [{"index": 0, "message": {"role": "assistant", "content": TEXT}, "finish_reason": "stop"}]},
        TOOLS, stream_arguments=True)
    whole = spa.message_from_completion(completion, model="m")
    got = without_ids(accumulate(streamed))
    # the rewritten completion keeps the order the model wrote its text and calls in, as the stream does
    assert got == without_ids(Message.model_validate(whole).model_dump(mode="json", exclude_none=True))
    assert [b["type"] for b in got["content"]] == ["text", "tool_use", "text", "tool_use", "text"]
    assert got["stop_reason"] == whole["stop_reason"] == "tool_use"


def test_translator_opens_the_block_on_the_start_piece() -> None:
    translator = ChunkTranslator(model="m")
    chunks = openai_chunks('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>', 4,
                           stream_arguments=True, id_factory=ids())
    events = [e for c in chunks for e in translator.feed(c)] + translator.close()
    starts = [e for e in events if e["type"] == "content_block_start"]
    assert [s["content_block"] for s in starts] == [{"type": "tool_use", "id": "toolu_0", "name": "get_weather",
                                                     "input": {}}]
    assert shape(events).count("delta:input_json_delta") > 2
    assert accumulate(events)["content"][0]["input"] == {"city": "Paris"}
