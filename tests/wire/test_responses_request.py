"""Responses requests as chat requests: every item in order, tools and tool choice, the refused fields,
and no exception but ``BadRequest`` on any body."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from streamparse.wire.responses import Offered, to_chat_request
from streamparse.wire.validation import BadRequest

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather", "strict": True,
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
PATCH = {"type": "custom", "name": "apply_patch", "description": "Edit files.",
         "format": {"type": "grammar", "syntax": "lark", "definition": "start: begin_patch hunk+ end_patch"}}


def chat(**body: Any) -> dict[str, Any]:
    return to_chat_request({"model": "m", **body}).chat


def refused(**body: Any) -> BadRequest:
    with pytest.raises(BadRequest) as info:
        to_chat_request({"model": "m", **body})
    return info.value


def test_a_string_input_and_instructions() -> None:
    assert chat(input="Hi", instructions="Be terse.") == {
        "model": "m", "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}]}


def test_a_tool_loop_in_items_becomes_chat_history_in_order() -> None:
    items = [
        {"role": "developer", "content": "Use tools."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather in "},
                                                         {"type": "input_text", "text": "Paris?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": None},
        {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
         "content": [{"type": "output_text", "text": "Checking.", "annotations": []}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
         "arguments": '{"city": "Paris"}'},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
        {"type": "custom_tool_call_output", "call_id": "call_2",
         "output": [{"type": "input_text", "text": "Done"}, {"type": "input_image", "image_url": "data:x"}]},
        {"role": "user", "content": "Thanks"},
    ]
    before = copy.deepcopy(items)
    messages = chat(input=items, tools=[WEATHER, PATCH])["messages"]
    assert items == before  # the input is never modified
    assert messages == [
        {"role": "system", "content": "Use tools."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "apply_patch", "arguments": json.dumps({"input": "*** Begin Patch"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Done[image omitted]"},
        {"role": "user", "content": "Thanks"},
    ]


def test_an_image_stays_an_image() -> None:
    content = [{"type": "input_text", "text": "What is this?"},
               {"type": "input_image", "image_url": "https://x/y.png", "detail": "low"}]
    assert chat(input=[{"role": "user", "content": content}])["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}}]}]


def test_tools_custom_and_hosted() -> None:
    read = to_chat_request({"model": "m", "input": "x", "tools": [WEATHER, PATCH, {"type": "web_search"}]})
    weather, patch = read.chat["tools"]
    assert weather == {"type": "function", "function": {"name": "get_weather", "description": "Weather",
                                                        "strict": True, "parameters": WEATHER["parameters"]}}
    assert patch["function"]["parameters"]["required"] == ["input"]
    assert "start: begin_patch hunk+ end_patch" in patch["function"]["description"]
    assert read.offered == {"get_weather": Offered("get_weather"), "apply_patch": Offered("apply_patch", "custom")}
    assert len(read.notes) == 1 and "tools[2]: a web_search tool" in read.notes[0]
    assert read.echo["tools"] == [WEATHER, PATCH, {"type": "web_search"}]  # the response repeats what was asked


@pytest.mark.parametrize("choice, expected", [
    ("auto", "auto"), ("none", "none"), ("required", "required"),
    ({"type": "function", "name": "get_weather"}, {"type": "function", "function": {"name": "get_weather"}}),
    ({"type": "custom", "name": "apply_patch"}, {"type": "function", "function": {"name": "apply_patch"}}),
])
def test_tool_choice(choice: Any, expected: Any) -> None:
    assert chat(input="x", tools=[WEATHER, PATCH], tool_choice=choice)["tool_choice"] == expected


def test_allowed_tools_narrow_the_tools() -> None:
    body = chat(input="x", tools=[WEATHER, PATCH], tool_choice={
        "type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_weather"}]})
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"] and body["tool_choice"] == "required"


def test_forcing_a_hosted_tool_is_refused() -> None:
    exc = refused(input="x", tools=[{"type": "web_search_preview"}], tool_choice={"type": "web_search_preview"})
    assert exc.param == "tool_choice" and "web_search_preview" in str(exc)
    assert refused(input="x", tools=[{"type": "web_search"}], tool_choice="required").param == "tool_choice"


def test_settings_and_formats() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    body = chat(input="x", max_output_tokens=64, temperature=0.2, top_p=0.9, parallel_tool_calls=False,
                safety_identifier="u1", reasoning={"effort": "low", "summary": "auto"}, stream=True,
                text={"format": {"type": "json_schema", "name": "out", "schema": schema, "strict": True}},
                store=False, include=["reasoning.encrypted_content"], metadata={"k": "v"}, prompt_cache_key="c")
    assert body == {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 64,
                    "temperature": 0.2, "top_p": 0.9, "parallel_tool_calls": False, "user": "u1",
                    "response_format": {"type": "json_schema",
                                        "json_schema": {"name": "out", "schema": schema, "strict": True}},
                    "reasoning_effort": "low", "stream": True, "stream_options": {"include_usage": True}}


def test_previous_conversation_comes_first_without_old_instructions() -> None:
    previous = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}]
    read = to_chat_request({"model": "m", "input": "And now?", "instructions": "New rules."}, previous)
    assert read.chat["messages"] == [{"role": "system", "content": "New rules."}, *previous,
                                     {"role": "user", "content": "And now?"}]
    assert read.history == [*previous, {"role": "user", "content": "And now?"}]


@pytest.mark.parametrize("body, param", [
    ({"input": "x", "background": True}, "background"),
    ({"input": "x", "conversation": "conv_1"}, "conversation"),
    ({"input": "x", "prompt": {"id": "pmpt_1"}}, "prompt"),
    ({"input": "x", "top_logprobs": 3}, "top_logprobs"),
    ({}, "input"),
    ({"input": 3}, "input"),
    ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]"),
    ({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]}, "input[0].content[0]"),
    ({"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]},
     "input[0].content[0].image_url"),
    ({"input": [{"role": "robot", "content": "x"}]}, "input[0].role"),
    ({"input": [{"type": "function_call", "name": "f", "arguments": "{}"}]}, "input[0].call_id"),
    ({"input": [{"type": "warp_drive"}]}, "input[0].type"),
    ({"input": "x", "max_output_tokens": 0}, "max_output_tokens"),
    ({"input": "x", "temperature": "hot"}, "temperature"),
    ({"input": "x", "tools": [{"type": "function"}]}, "tools[0].name"),
    ({"input": "x", "tool_choice": "required"}, "tool_choice"),
    ({"input": "x", "text": {"format": {"type": "xml"}}}, "text.format"),
    ({"input": "x", "reasoning": {"effort": "maximal"}}, "reasoning.effort"),
    ({"input": "x", "store": "yes"}, "store"),
])
def test_refusals_name_the_field(body: dict[str, Any], param: str) -> None:
    assert refused(**body).param == param


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=12)
KEYS = st.sampled_from(["input", "tools", "tool_choice", "text", "reasoning", "instructions", "max_output_tokens",
                        "store", "temperature", "parallel_tool_calls", "background", "previous_response_id"])
ITEM = st.fixed_dictionaries({"type": st.sampled_from(["message", "function_call", "function_call_output",
                                                       "custom_tool_call", "reasoning", "web_search_call",
                                                       "item_reference"]) | JSON},
                             optional={"role": st.sampled_from(["user", "assistant", "system", "x"]) | JSON,
                                       "id": JSON, "namespace": JSON,
                                       "content": JSON, "call_id": JSON, "name": JSON, "arguments": JSON,
                                       "output": JSON, "input": JSON})


@settings(max_examples=examples(400), deadline=None)
@given(st.dictionaries(KEYS, JSON | st.lists(ITEM, max_size=4), max_size=5))
def test_any_body_is_translated_or_refused(body: dict[str, Any]) -> None:
    stored = {"msg_1": {"type": "message", "role": "assistant", "content": "hi"}}
    try:
        read = to_chat_request({"model": "m", **body}, items=lambda i: stored.get(i))
    except BadRequest as exc:
        assert str(exc)
    else:
        json.dumps(read.chat)
        assert all(m["role"] in ("system", "user", "assistant", "tool") for m in read.chat["messages"])


def test_a_namespace_is_offered_flat_and_its_history_keeps_the_name() -> None:
    agents = {"type": "namespace", "name": "multi_agent_v1", "description": "Sub-agents.", "tools": [
        {"type": "function", "name": "spawn_agent", "parameters": {"type": "object"}},
        {"type": "custom", "name": "note"}]}
    read = to_chat_request({"model": "m", "tools": [agents], "input": [
        {"type": "function_call", "call_id": "c1", "name": "spawn_agent", "namespace": "multi_agent_v1",
         "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1", "output": "ok"}],
        "tool_choice": {"type": "function", "name": "spawn_agent", "namespace": "multi_agent_v1"}})
    assert [t["function"]["name"] for t in read.chat["tools"]] == ["multi_agent_v1__spawn_agent", "multi_agent_v1__note"]
    assert read.offered == {"multi_agent_v1__spawn_agent": Offered("spawn_agent", "function", "multi_agent_v1"),
                            "multi_agent_v1__note": Offered("note", "custom", "multi_agent_v1")}
    assert read.chat["messages"][0]["tool_calls"][0]["function"]["name"] == "multi_agent_v1__spawn_agent"
    assert read.chat["tool_choice"] == {"type": "function", "function": {"name": "multi_agent_v1__spawn_agent"}}
    assert refused(input="x", tools=[{"type": "namespace", "name": "n", "tools": [{"type": "web_search"}]}]).param \
        == "tools[0].tools[0]"


def test_an_item_reference_reads_the_item_it_names() -> None:
    stored = {"msg_9": {"type": "message", "role": "assistant", "id": "msg_9", "status": "completed",
                        "content": [{"type": "output_text", "text": "Let me check.", "annotations": []}]}}
    read = to_chat_request({"model": "m", "input": [
        {"role": "user", "content": "Weather?"}, {"type": "item_reference", "id": "msg_9"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"}]}, items=stored.get)
    assert read.chat["messages"][1] == {"role": "assistant", "content": "Let me check.", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}
    with pytest.raises(BadRequest) as info:
        to_chat_request({"model": "m", "input": [{"type": "item_reference", "id": "msg_0"}]}, items=stored.get)
    assert info.value.param == "input[0]" and "msg_0" in str(info.value)


def test_a_client_run_tool_search_and_the_tools_it_found() -> None:
    search = {"type": "tool_search", "execution": "client", "description": "Find tools.",
              "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}
    found = {"type": "namespace", "name": "multi_agent_v1", "tools": [
        {"type": "function", "name": "spawn_agent", "parameters": {"type": "object"}}]}
    read = to_chat_request({"model": "m", "tools": [search, {"type": "tool_search"}], "input": [
        {"role": "user", "content": "spawn a helper"},
        {"type": "tool_search_call", "call_id": "c1", "execution": "client", "arguments": {"query": "agent"}},
        {"type": "tool_search_output", "call_id": "c1", "execution": "client", "tools": [found]}]})
    assert [t["function"]["name"] for t in read.chat["tools"]] == ["tool_search", "multi_agent_v1__spawn_agent"]
    assert read.offered["tool_search"] == Offered("tool_search", "tool_search")
    assert read.offered["multi_agent_v1__spawn_agent"] == Offered("spawn_agent", "function", "multi_agent_v1")
    assert read.chat["messages"][1]["tool_calls"][0]["function"] == {"name": "tool_search",
                                                                     "arguments": '{"query": "agent"}'}
    assert read.chat["messages"][2] == {"role": "tool", "tool_call_id": "c1",
                                        "content": "Tools found, now available: multi_agent_v1"}
    assert len(read.notes) == 1 and "tools[1]: a tool_search tool" in read.notes[0]  # the server-run one
    assert refused(input=[{"type": "tool_search_output", "call_id": "c", "execution": "client", "tools": 3}]).param \
        == "input[0].tools"


def test_two_tools_offered_under_one_name_are_refused() -> None:
    flat = {"type": "function", "name": "ns__f"}
    spaced = {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "f"}]}
    assert refused(input="x", tools=[flat, spaced]).param == "tools[1].tools[0].name"
    assert refused(input="x", tools=[WEATHER, WEATHER]).param == "tools[1].name"
