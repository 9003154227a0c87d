"""The Responses wire format: event order, the openai SDK's own accumulator, streaming == non-streaming,
and the chunk reader (native calls in fragments, late fragments, errors, cut answers)."""

from __future__ import annotations

import json
from typing import Any, Iterable

from hypothesis import given, settings
from hypothesis import strategies as st
from openai._models import construct_type
from openai.lib.streaming.responses._responses import ResponseStreamState
from openai.types.responses import Response, ResponseStreamEvent
from openai import omit

from anthropic_samples import HERMES, OSLO, PARIS, QWEN3, TEXT, pieces
from budget import examples
from helpers import TOOLS
from samples import MIXED_TEXT, cuts_for
from streamparse import StreamParser
from streamparse.wire.responses import (ChunkTranslator, Offered, ResponseStream, custom_input, response_from_completion,
                                       response_from_text)

BASE = {"id": "chatcmpl-r1", "object": "chat.completion.chunk", "created": 1700000000, "model": "qwen"}
_ENDS = ("response.completed", "response.incomplete", "response.failed")


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {**BASE, "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}], **extra}


def check_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stream grammar of the module's invariant; returns the events."""
    assert json.loads(json.dumps(events)) == events, "plain JSON"
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    types = [e["type"] for e in events]
    assert types[:2] == ["response.created", "response.in_progress"] and types[-1] in _ENDS
    assert sum(t in _ENDS for t in types) == 1
    open_items: dict[int, str] = {}  # output index -> type; text items one at a time, calls may overlap
    next_index = 0
    for event in events[2:-1]:
        if event["type"] == "response.output_item.added":
            kind = event["item"]["type"]
            assert event["output_index"] == next_index
            assert not open_items if kind in ("message", "reasoning") else \
                all(k not in ("message", "reasoning") for k in open_items.values())
            open_items[next_index] = kind
            next_index += 1
        elif event["type"] == "response.output_item.done":
            assert open_items.pop(event["output_index"]) == event["item"]["type"]
        elif event["type"] != "response.in_progress":
            assert event["output_index"] in open_items, event
    final = events[-1]["response"]
    assert all(e["response"]["id"] == final["id"] for e in events if "response" in e)
    if final["status"] != "failed":
        assert not open_items
        done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
        assert final["output"] == done
    Response.model_validate(final)  # the openai package's own type, validated
    return events


def accumulate(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The response the openai SDK's ``responses.stream()`` builds from the events, as plain JSON."""
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    final: Any = None
    for event in check_order(list(events)):
        for out in state.handle_event(construct_type(type_=ResponseStreamEvent, value=event)):  # type: ignore[arg-type]
            if out.type in _ENDS:
                final = out.response
    return final.model_dump(mode="json", exclude_unset=True)  # type: ignore[no-any-return]


def gist(response: dict[str, Any]) -> list[tuple[str, Any]]:
    """The output items without their ids: (type, text or (name, arguments))."""
    out: list[tuple[str, Any]] = []
    for item in response["output"]:
        if item["type"] == "message":
            out.append(("message", "".join(p["text"] for p in item["content"])))
        elif item["type"] == "reasoning":
            out.append(("reasoning", "".join(p["text"] for p in item["content"])))
        elif item["type"] == "function_call":
            out.append(("function_call", (item["name"], json.loads(item["arguments"]))))
        else:
            out.append((item["type"], (item["name"], item["input"])))
    return out


def streamed(deltas: Iterable[str], tools: Any = TOOLS, **options: Any) -> list[dict[str, Any]]:
    stream, parser = ResponseStream(model="m"), StreamParser(tools, **options)
    events = stream.start()
    for delta in deltas:
        events += stream.events(parser.feed(delta))
    return events + stream.events(parser.close()) + stream.finish()


# ---------------------------------------------------------------- exact event order

def test_text_call_text_in_order() -> None:
    events = streamed(pieces(TEXT, 4))
    check_order(events)
    kinds = [e["type"].removeprefix("response.") for e in events]
    message = ["output_item.added", "content_part.added", "output_text.delta"]
    assert kinds[:5] == ["created", "in_progress", *message]
    call = ["output_item.added", "function_call_arguments.delta", "function_call_arguments.done", "output_item.done"]
    i = kinds.index("function_call_arguments.delta") - 1
    assert kinds[i:i + 4] == call and kinds[-1] == "completed"
    response = accumulate(events)
    assert gist(response) == [("message", "Checking both.\n"), ("function_call", ("get_weather", PARIS)),
                              ("message", "\nand\n"), ("function_call", ("get_weather", OSLO)),
                              ("message", "\nDone.")]
    assert response["status"] == "completed" and response["object"] == "response"
    added = next(e for e in events if e["type"] == "response.output_item.added" and e["output_index"] == 1)["item"]
    assert added == {"id": added["id"], "type": "function_call", "status": "in_progress",
                     "call_id": added["call_id"], "name": "get_weather", "arguments": ""}
    assert added["id"].startswith("fc_") and added["call_id"].startswith("call_")


def test_reasoning_item_and_whitespace_only_text_is_not_an_item() -> None:
    events = streamed(["<think>Let me see.</think>\n\n", HERMES, "\n"])
    response = accumulate(events)
    assert gist(response) == [("reasoning", "Let me see."), ("function_call", ("get_weather", PARIS))]
    types = [e["type"] for e in events]
    assert "response.reasoning_text.delta" in types and "response.reasoning_text.done" in types
    assert response["output"][0]["id"].startswith("rs_") and response["output"][0]["summary"] == []


def test_whole_equals_streamed_at_every_chunking() -> None:
    whole = gist(response_from_text(TEXT, TOOLS))
    for size in (1, 2, 3, 7, 50, len(TEXT)):
        assert gist(accumulate(streamed(pieces(TEXT, size)))) == whole


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_any_text_any_chunking_accumulates_to_the_whole_parse(data: st.DataObject) -> None:
    text = data.draw(MIXED_TEXT)
    cuts = sorted(data.draw(cuts_for(text)))
    deltas = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    response = accumulate(streamed(deltas))
    assert gist(response) == gist(response_from_text(text, TOOLS))
    said = [t for kind, t in gist(response) if kind == "message"]
    assert said == text_runs(text)  # every piece of text, in place, once; only blank runs between items dropped


def text_runs(text: str) -> list[str]:
    """The whole parse's text, as runs between the other events, blank runs left out."""
    parser = StreamParser(TOOLS)
    runs, run = [], ""
    for event in parser.feed(text) + parser.close():
        if event.type == "text":
            run += event.text
        elif event.type in ("reasoning", "tool_call"):
            runs.append(run)
            run = ""
    return [r for r in runs + [run] if r and not r.isspace()]


def test_streamed_arguments_open_the_item_at_once() -> None:
    events = streamed(pieces("Go " + HERMES, 3), stream_arguments=True)
    kinds = [e["type"] for e in events]
    assert kinds.count("response.function_call_arguments.delta") > 1
    assert gist(accumulate(events)) == [("message", "Go "), ("function_call", ("get_weather", PARIS))]


# ---------------------------------------------------------------- chunks and completions

def test_native_fragments_of_two_calls_interleaved() -> None:
    translator = ChunkTranslator(model="m")
    events = []
    first = {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    second = {"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": '{"tz"'}}
    events += translator.feed(chunk({"tool_calls": [first]}))
    events += translator.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}))
    events += translator.feed(chunk({"tool_calls": [second]}))
    events += translator.feed(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}))
    events += translator.feed(chunk({"tool_calls": [{"index": 1, "function": {"arguments": ': "UTC"}'}}]}))
    events += translator.feed(chunk(finish="tool_calls"))
    events += translator.feed({**BASE, "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}})
    events += translator.close()
    response = accumulate(events)
    assert gist(response) == [("function_call", ("get_weather", PARIS)), ("function_call", ("get_time", {"tz": "UTC"}))]
    assert [i["call_id"] for i in response["output"]] == ["call_a", "call_b"]
    done = [e["item"]["arguments"] for e in events if e["type"] == "response.output_item.done"]
    assert done == ['{"city": "Paris"}', '{"tz": "UTC"}']  # a client runs a call when it is done: never cut
    assert response["usage"] == {"input_tokens": 9, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0}, "output_tokens": 4,
                                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 13}


def test_completion_equals_its_stream() -> None:
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "qwen", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Sure.", "reasoning_content": "think",
            "tool_calls": [{"id": "call_x", "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}}]}
    response = response_from_completion(completion, model="client-name")
    assert gist(response) == [("reasoning", "think"), ("message", "Sure."), ("function_call", ("get_weather", PARIS))]
    assert response["model"] == "client-name" and response["usage"] is None
    Response.model_validate(response)


def test_length_is_incomplete_and_the_open_item_says_so() -> None:
    translator = ChunkTranslator(model="m")
    events = translator.feed(chunk({"content": "Half an ans"})) + translator.feed(chunk(finish="length"))
    events += translator.close()
    response = accumulate(events)
    assert events[-1]["type"] == "response.incomplete"
    assert response["status"] == "incomplete" and response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["output"][0]["status"] == "incomplete"


def test_an_upstream_error_fails_the_response() -> None:
    translator = ChunkTranslator(model="m")
    events = translator.feed(chunk({"content": "Hi"}))
    events += translator.feed({"error": {"message": "model crashed", "type": "server_error"}})
    assert translator.close() == [] and translator.feed(chunk({"content": "more"})) == []
    check_order(events)
    final = events[-1]
    assert final["type"] == "response.failed"
    assert final["response"]["status"] == "failed"
    assert final["response"]["error"] == {"code": "server_error", "message": "model crashed"}


def test_custom_tool_calls_leave_as_custom_tool_call_items() -> None:
    stream = ResponseStream(model="m", offered={"apply_patch": Offered("apply_patch", "custom")})
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    events = stream.start() + stream.tool_call("call_1", "apply_patch", json.dumps({"input": patch})) + stream.finish()
    types = [e["type"] for e in events]
    assert "response.custom_tool_call_input.done" in types and "response.function_call_arguments.delta" not in types
    response = accumulate(events)
    item = response["output"][0]
    assert item["type"] == "custom_tool_call" and item["input"] == patch and item["id"].startswith("ctc_")


def test_custom_input_never_invents() -> None:
    assert custom_input('{"input": "x"}') == "x"
    assert custom_input('{"patch": "y"}') == "y"  # one string value: the model named the argument otherwise
    assert custom_input('{"a": "1", "b": "2"}') == '{"a": "1", "b": "2"}'  # the text as written
    assert custom_input("not json") == "not json"
    assert custom_input('"a string"') == "a string"


def test_the_writer_stops_after_the_end() -> None:
    stream = ResponseStream(model="m")
    events = stream.text("Hi") + stream.finish()
    assert stream.text("more") == [] and stream.finish() == [] and stream.error("late") == []
    assert stream.tool_call("c", "get_weather", "{}") == []
    assert accumulate(events)["output"][0]["content"][0]["text"] == "Hi"


def test_a_namespaced_call_goes_back_with_its_namespace() -> None:
    offered = {"multi_agent_v1__spawn_agent": Offered("spawn_agent", namespace="multi_agent_v1")}
    stream = ResponseStream(model="m", offered=offered)
    events = stream.tool_call("call_1", "multi_agent_v1__spawn_agent", '{"task": "x"}') + stream.finish()
    item = accumulate(events)["output"][0]
    assert (item["type"], item["name"], item["namespace"]) == ("function_call", "spawn_agent", "multi_agent_v1")


def test_a_tool_search_call_goes_back_as_its_own_item() -> None:
    stream = ResponseStream(model="m", offered={"tool_search": Offered("tool_search", "tool_search")})
    events = stream.tool_call("call_1", "tool_search", '{"query": "spawn agent"}') + stream.finish()
    assert "response.function_call_arguments.delta" not in [e["type"] for e in events]
    item = accumulate(events)["output"][0]
    assert item == {"id": item["id"], "type": "tool_search_call", "status": "completed", "call_id": "call_1",
                    "execution": "client", "arguments": {"query": "spawn agent"}}


def test_review_findings_call_ids_refusals_failures_and_fresh_lists() -> None:
    # two calls the upstream gave one id: the second gets a fresh one (the SDK keys a call item on it)
    stream = ResponseStream(model="m")
    events = stream.tool_call("call_1", "get_weather", "{}") + stream.tool_call("call_1", "get_time", "{}")
    ids = [i["call_id"] for i in accumulate(events + stream.finish())["output"]]
    assert ids[0] == "call_1" and ids[1] != "call_1" and ids[1].startswith("call_")
    # a refusal is text, never lost
    translator = ChunkTranslator(model="m")
    events = translator.feed(chunk({"content": None, "refusal": "I can't help with that."})) + translator.close()
    assert gist(accumulate(events)) == [("message", "I can't help with that.")]
    # a failure keeps what was sent of the open item
    translator = ChunkTranslator(model="m")
    events = translator.feed(chunk({"content": "Hello there"})) + translator.fail("upstream died")
    item = check_order(events)[-1]["response"]["output"][0]
    assert item["content"][0]["text"] == "Hello there" and item["status"] == "incomplete"
    # each item has its own lists (a caller may append to one)
    first = response_from_text("Hello")
    first["output"][0]["content"][0]["annotations"].append(1)
    assert response_from_text("x")["output"][0]["content"][0]["annotations"] == []
    # an index the upstream wrote as a list is read as the piece's position
    translator = ChunkTranslator(model="m")
    piece = {"index": [], "id": "c", "function": {"name": "get_weather", "arguments": "{}"}}
    assert gist(accumulate(translator.feed(chunk({"tool_calls": [piece]})) + translator.close())) == [
        ("function_call", ("get_weather", {}))]


def test_a_custom_tool_call_has_a_status() -> None:
    stream = ResponseStream(model="m", offered={"apply_patch": Offered("apply_patch", "custom")})
    events = stream.tool_start("c", "apply_patch")
    assert events[-1]["item"]["status"] == "in_progress"
    events += stream.call_arguments(stream.last_call, '{"input": "x"}') + stream.finish()
    assert accumulate(events)["output"][0]["status"] == "completed"
