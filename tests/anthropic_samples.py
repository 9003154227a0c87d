"""Anthropic wire samples and checks shared by the Anthropic tests: the stream grammar (validated by
the anthropic SDK's own types), the SDK's accumulator, and OpenAI chunk/completion builders.

Invariant: helpers and data only, no tests.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message, RawMessageStreamEvent
from pydantic import TypeAdapter

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n"
         "</parameter>\n</function>\n</tool_call>")
TEXT = "Checking both.\n" + HERMES + "\nand\n" + QWEN3 + "\nDone."
PARIS, OSLO = {"city": "Paris"}, {"city": "Oslo", "days": 2}
EVENT: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
BASE = {"id": "chatcmpl-n1", "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen"}


# ---------------------------------------------------------------- helpers

def check_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assert Anthropic's stream grammar (and each event's shape, by the SDK's types); return the events."""
    assert json.loads(json.dumps(events)) == events, "plain JSON"
    types = [e["type"] for e in events]
    assert types[:2] == ["message_start", "ping"] and types[-2:] == ["message_delta", "message_stop"]
    open_index, next_index = None, 0
    for event in events[2:-2]:
        if event["type"] == "content_block_start":
            assert open_index is None and event["index"] == next_index
            open_index, next_index = next_index, next_index + 1
        elif event["type"] == "content_block_delta":
            assert event["index"] == open_index
        else:
            assert event["type"] == "content_block_stop" and event["index"] == open_index
            open_index = None
    assert open_index is None
    for event in events[:1] + events[2:]:
        EVENT.validate_python(event)
    return events


def accumulate(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The Message the anthropic SDK builds from the events, as comparable JSON."""
    snapshot: Any = None
    buffers: dict[int, bytes] = {}
    for event in check_order(list(events)):
        if event["type"] != "ping":
            snapshot = accumulate_event(event=EVENT.validate_python(event), current_snapshot=snapshot, json_bufs=buffers)
    return plain(snapshot)


def plain(message: Any) -> dict[str, Any]:
    """A Message (dict, validated by the SDK's ``Message``, or SDK object) as comparable JSON."""
    if isinstance(message, dict):
        message = Message.model_validate(message)
    return message.model_dump(mode="json", exclude_none=True)


def anonymous(message: dict[str, Any]) -> dict[str, Any]:
    """Ids are random: check their form (``msg_``, unique ``toolu_``), then blank them."""
    out = json.loads(json.dumps(message))
    ids = [block["id"] for block in out["content"] if block["type"] == "tool_use"]
    assert out["id"].startswith("msg_") and all(i.startswith("toolu_") for i in ids) and len(set(ids)) == len(ids)
    out["id"] = "msg"
    for block in out["content"]:
        if block["type"] == "tool_use":
            block["id"] = "toolu"
    return out


def gist(message: dict[str, Any]) -> tuple[str, str, list[tuple[str, Any]], str]:
    """(thinking, text, calls, stop_reason): what does not depend on how blocks were split."""
    blocks = message["content"]
    return ("".join(b.get("thinking", "") for b in blocks), "".join(b.get("text", "") for b in blocks),
            [(b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"], message["stop_reason"])


def shape(events: list[dict[str, Any]]) -> list[str]:
    """Event types, blocks by kind, runs of deltas as one."""
    out: list[str] = []
    for e in events:
        if e["type"] == "content_block_start":
            item = "start:" + e["content_block"]["type"]
        elif e["type"] == "content_block_delta":
            item = e["delta"]["type"]
        elif e["type"] == "message_delta":
            item = "message_delta:" + e["delta"]["stop_reason"]
        else:
            item = e["type"]
        if not (out and item == out[-1] and item.endswith("_delta")):
            out.append(item)
    return out


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def text_chunks(deltas: list[str], finish: str = "stop", usage: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    chunks = [{**BASE, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    chunks += [{**BASE, "choices": [{"index": 0, "delta": {"content": d}, "finish_reason": None}]} for d in deltas]
    chunks.append({**BASE, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if usage:
        chunks.append({**BASE, "choices": [], "usage": usage})
    return chunks


def completion(content: str | None, tool_calls: list[dict[str, Any]] | None = None, finish: str = "stop",
               **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "chatcmpl-n1", "object": "chat.completion", "created": 1700000000, "model": "qwen",
            "choices": [{"index": 0, "message": message, "finish_reason": finish, **extra}]}


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {**BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, **extra}]}


def call_piece(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    piece: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id:
        piece.update(id=call_id, type="function")
        piece["function"]["name"] = name
    return {"tool_calls": [piece]}


USAGE = {"prompt_tokens": 11, "completion_tokens": 9, "total_tokens": 20}
NATIVE = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "Let me look."}),
    chunk(call_piece(0, "", "call_a1", "get_weather")),
    chunk(call_piece(0, '{"ci')),
    chunk(call_piece(0, 'ty": "Paris"}')),
    chunk(call_piece(1, "{}", "call_b2", "get_time")),
    chunk({}, "tool_calls"),
    {**BASE, "choices": [], "usage": USAGE},
]
NATIVE_COMPLETION = {**completion("Let me look.", [
    {"id": "call_a1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
    {"id": "call_b2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
], "tool_calls"), "usage": USAGE}
