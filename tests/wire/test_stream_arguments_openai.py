"""Argument streaming in the OpenAI adapter (``stream_arguments=True``): ChunkRewriter and rewrite_completion,
without a server. A call goes out as its start (index, id, type, name, ``"arguments": ""``), then arguments
pieces alone (index and ``function.arguments``); the pieces join to the non-streaming answer's arguments."""

from __future__ import annotations

import itertools
import json
from typing import Any, Callable

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from helpers import TOOLS, aiter_of
from streamparse import StreamParser, ToolCall
from streamparse.core.events import ToolCallDelta
from streamparse.wire import openai as sp_openai
from streamparse.dialects.render import render

HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
QWEN3 = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n<parameter=days>\n2\n"
         "</parameter>\n</function>\n</tool_call>")
LONG = ("All work and no play makes Jack a dull boy. " * 40).strip()  # ~1.8 KB
WRITE_HERMES = render("hermes", "write_file", {"path": "notes.txt", "content": LONG})
WRITE_QWEN3 = render("qwen3_coder", "write_file", {"path": "notes.txt", "content": LONG})
TEXT = "Checking both.\n" + HERMES + "\nand\n" + QWEN3 + "\nDone."
BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen"}


def ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def make_chunks(text: str, size: int = 3, *, finish: str = "stop", first: dict[str, Any] | None = None
                ) -> list[dict[str, Any]]:
    chunks = [{**BASE, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "", **(first or {})},
                                    "finish_reason": None}]}]
    for i in range(0, len(text), size):
        chunks.append({**BASE, "choices": [{"index": 0, "delta": {"content": text[i : i + size]},
                                            "finish_reason": None}]})
    chunks.append({**BASE, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    return chunks


def completion_for(text: str, finish: str = "stop") -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "qwen",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}]}


def rewrite(text: str, size: int = 3, **options: Any) -> list[dict[str, Any]]:
    options.setdefault("id_factory", ids())
    return list(sp_openai.rewrite_stream_sync(make_chunks(text, size), TOOLS, **options))


def call_pieces(chunks: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """(chunk position, tool_calls entry) for every entry, in order."""
    return [(n, tc) for n, chunk in enumerate(chunks) for choice in chunk["choices"]
            for tc in choice["delta"].get("tool_calls") or []]


def final(chunks: list[dict[str, Any]]) -> Any:
    """The completion the openai SDK's own stream accumulator builds from the chunks (its snapshot: the
    final completion refuses a ``length`` finish)."""
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    return state.current_completion_snapshot


def check_shape(chunks: list[dict[str, Any]]) -> dict[int, str]:
    """Each call: one start entry alone in its chunk, then arguments-only entries. Returns arguments by index."""
    seen: dict[int, str] = {}
    for _, tc in call_pieces(chunks):
        if tc["index"] not in seen:
            assert set(tc) == {"index", "id", "type", "function"} and tc["type"] == "function"
            assert tc["function"]["arguments"] == "" and tc["function"]["name"] and tc["id"].startswith("call_")
            seen[tc["index"]] = ""
        else:
            assert set(tc) == {"index", "function"} and set(tc["function"]) == {"arguments"}
            assert tc["function"]["arguments"]
            seen[tc["index"]] += tc["function"]["arguments"]
    for chunk in chunks:
        for choice in chunk["choices"]:
            assert len(choice["delta"].get("tool_calls") or []) <= 1, "each streamed piece is a chunk of its own"
    return seen


def test_first_piece_names_the_call_then_arguments_only() -> None:
    chunks = rewrite(TEXT, stream_arguments=True)
    args = check_shape(chunks)
    assert [json.loads(a) for a in args.values()] == [{"city": "Paris"}, {"city": "Oslo", "days": 2}]
    assert len(call_pieces(chunks)) > 6  # arguments in several pieces, not one per call
    done = final(chunks)
    message = done.choices[0].message
    assert message.content == "Checking both.\n\nand\n\nDone."
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []] == [
        ("call_0", "get_weather", args[0]), ("call_1", "get_weather", args[1])]
    assert done.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("text", [WRITE_HERMES, WRITE_QWEN3], ids=["hermes", "qwen3_coder"])
def test_a_long_argument_arrives_in_many_pieces(text: str) -> None:
    chunks = rewrite("Writing it. " + text + " Written.", size=5, stream_arguments=True)
    args = check_shape(chunks)
    assert json.loads(args[0]) == {"path": "notes.txt", "content": LONG}
    assert len(call_pieces(chunks)) > 100
    # no piece waits for the end: half of the content is out well before the upstream's last chunk
    sent = ""
    for position, tc in call_pieces(chunks):
        sent += tc["function"]["arguments"]
        if LONG[: len(LONG) // 2] in sent:
            break
    assert position < len(chunks) * 3 // 4


def test_order_of_text_and_calls_is_kept() -> None:
    chunks = rewrite("A " + HERMES + " B " + WRITE_QWEN3 + " C", size=4, stream_arguments=True)
    kinds: list[str] = []
    for chunk in chunks:
        delta = chunk["choices"][0]["delta"]
        for kind in (["text"] if delta.get("content") else []) + [f"call{tc['index']}" for tc in
                                                                 delta.get("tool_calls") or []]:
            if not kinds or kinds[-1] != kind:
                kinds.append(kind)
    assert kinds == ["text", "call0", "text", "call1", "text"]


@pytest.mark.parametrize("text", [
    TEXT,
    WRITE_HERMES,
    WRITE_QWEN3,
    '<tool_call>{"name":"get_weather","arguments":{ "city" :"Paris" ,"days":3 }}</tool_call>',  # odd spacing
    "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Paris',}}</tool_call>",  # repaired
    '[get_weather(city="Paris", days=2)]',  # pythonic: whole calls, start + one piece
    '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}"}</tool_call>',  # a string
], ids=["two", "hermes_long", "qwen3_long", "spacing", "repaired", "pythonic", "string_arguments"])
@pytest.mark.parametrize("size", [1, 3, 7, 1000])
def test_streamed_arguments_equal_the_non_streaming_ones(text: str, size: int) -> None:
    streamed = final(rewrite(text, size, stream_arguments=True)).choices[0].message
    whole = ChatCompletion.model_validate(sp_openai.rewrite_completion(completion_for(text), TOOLS,
                                                                       stream_arguments=True, id_factory=ids()))
    plain = ChatCompletion.model_validate(sp_openai.rewrite_completion(completion_for(text), TOOLS))
    got = [(c.id, c.function.name, c.function.arguments) for c in streamed.tool_calls or []]
    assert got and got == [(c.id, c.function.name, c.function.arguments)  # type: ignore[union-attr]
                           for c in whole.choices[0].message.tool_calls or []]
    assert [(n, json.loads(a)) for _, n, a in got] == [
        (c.function.name, json.loads(c.function.arguments))  # type: ignore[union-attr]
        for c in plain.choices[0].message.tool_calls or []]
    assert streamed.content == whole.choices[0].message.content == plain.choices[0].message.content


def test_a_whole_call_dialect_is_a_start_and_one_piece() -> None:
    chunks = rewrite('[get_weather(city="Paris")]', stream_arguments=True)
    pieces = [tc for _, tc in call_pieces(chunks)]
    assert pieces == [
        {"index": 0, "id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
        {"index": 0, "function": {"arguments": '{"city": "Paris"}'}}]


def test_native_calls_keep_the_wire_numbering() -> None:
    native = [{"index": 0, "id": "call_native", "type": "function",
               "function": {"name": "get_time", "arguments": "{}"}}]
    chunks = list(sp_openai.rewrite_stream_sync(make_chunks("x " + HERMES, first={"tool_calls": native}), TOOLS,
                                                stream_arguments=True, id_factory=ids()))
    entries = [tc for _, tc in call_pieces(chunks)]
    assert entries[0] == native[0]
    assert {tc["index"] for tc in entries[1:]} == {1}
    assert entries[1]["id"] == "call_0" and entries[1]["function"] == {"name": "get_weather", "arguments": ""}
    calls = final(chunks).choices[0].message.tool_calls or []
    assert [(c.id, json.loads(c.function.arguments)) for c in calls] == [("call_native", {}),
                                                                          ("call_0", {"city": "Paris"})]


def test_two_choices_number_their_own_calls() -> None:
    a, b = make_chunks("A " + HERMES, 4), make_chunks("B " + QWEN3, 5)
    for chunk in b:
        chunk["choices"][0]["index"] = 1
    merged = [c for pair in itertools.zip_longest(a, b) for c in pair if c is not None]
    chunks = list(sp_openai.rewrite_stream_sync(merged, TOOLS, stream_arguments=True))
    done = final(chunks)
    by_choice = {c.index: c for c in done.choices}
    assert [json.loads(c.function.arguments) for c in by_choice[0].message.tool_calls or []] == [{"city": "Paris"}]
    assert [json.loads(c.function.arguments) for c in by_choice[1].message.tool_calls or []] == [{"city": "Oslo", "days": 2}]
    assert by_choice[0].finish_reason == by_choice[1].finish_reason == "tool_calls"
    for choice in (0, 1):
        assert check_shape([{**c, "choices": [ch for ch in c["choices"] if ch["index"] == choice]} for c in chunks])


def test_a_started_call_cut_by_length_ends_as_a_call() -> None:
    """Once a call has started it always ends as a call (its arguments closed); ``length`` stays ``length``."""
    cut = "Sure " + WRITE_HERMES[:120]
    chunks = list(sp_openai.rewrite_stream_sync(make_chunks(cut, finish="length"), TOOLS, stream_arguments=True))
    choice = final(chunks).choices[0]
    assert choice.finish_reason == "length" and choice.message.content == "Sure "
    (call,) = choice.message.tool_calls or []
    assert call.function.name == "write_file" and json.loads(call.function.arguments)["path"] == "notes.txt"


def test_without_the_option_nothing_changes() -> None:
    default = rewrite(TEXT)
    assert rewrite(TEXT, stream_arguments=False) == default
    entries = [tc for _, tc in call_pieces(default)]
    assert [tc["function"] for tc in entries] == [
        {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        {"name": "get_weather", "arguments": '{"city": "Oslo", "days": 2}'}]
    assert all(set(tc) == {"index", "id", "type", "function"} for tc in entries)


def test_the_stream_ends_without_a_finish_chunk() -> None:
    chunks = make_chunks("go " + WRITE_HERMES[:-20], 6)[:-1]  # no finish chunk, the call unclosed
    out = list(sp_openai.rewrite_stream_sync(chunks, TOOLS, stream_arguments=True))
    args = check_shape(out)
    assert json.loads(args[0])["path"] == "notes.txt"


def test_parser_events_and_wire_pieces_match() -> None:
    """Every fragment the parser gives leaves as one wire piece, in order, nothing added."""
    parser = StreamParser(TOOLS, stream_arguments=True, id_factory=ids())
    chunks = make_chunks(TEXT, 4)
    fragments = []
    for chunk in chunks:
        for event in parser.feed(chunk["choices"][0]["delta"].get("content") or ""):
            if isinstance(event, ToolCallDelta):
                fragments.append(event.arguments_fragment)
    fragments += [e.arguments_fragment for e in parser.close() if isinstance(e, ToolCallDelta)]
    wire = [tc["function"]["arguments"] for _, tc in call_pieces(rewrite(TEXT, 4, stream_arguments=True))
            if "id" not in tc]
    assert wire == fragments


@pytest.mark.anyio
async def test_async_rewrite_equals_sync(anyio_backend: str) -> None:
    chunks = make_chunks(TEXT + WRITE_QWEN3, 4)
    sync = list(sp_openai.rewrite_stream_sync(chunks, TOOLS, stream_arguments=True, id_factory=ids()))
    got = [c async for c in sp_openai.rewrite_stream(aiter_of(chunks), TOOLS, stream_arguments=True, id_factory=ids())]
    assert got == sync


def test_tool_call_event_is_final_arguments() -> None:
    """The core's promise the adapter relies on: fragments join to the ToolCall's arguments."""
    parser = StreamParser(TOOLS, stream_arguments=True)
    events = [e for i in range(0, len(TEXT), 5) for e in parser.feed(TEXT[i : i + 5])] + parser.close()
    for call in (e for e in events if isinstance(e, ToolCall)):
        assert "".join(e.arguments_fragment for e in events
                       if isinstance(e, ToolCallDelta) and e.index == call.index) == call.arguments
