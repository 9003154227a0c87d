"""Anthropic Messages requests -> OpenAI chat requests (``streamparse.wire.anthropic.request``), without servers."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamparse.wire.anthropic import estimate_input_tokens, to_chat_request
from streamparse.wire.validation import BadRequest

TOOL = {"name": "get_weather", "description": "Weather", "cache_control": {"type": "ephemeral"},
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}


def chat(**body: Any) -> dict[str, Any]:
    return to_chat_request({"model": "m", "max_tokens": 16, **body})


def test_a_tool_round_keeps_its_order_and_ids() -> None:
    body = {"messages": [
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "two cities", "signature": "s"},
            {"type": "text", "text": "Checking both."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "Oslo"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": [{"type": "text", "text": "no such city"}],
             "is_error": True},
            {"type": "text", "text": "Thanks, and Rome?"}]},
    ], "tools": [TOOL]}
    original = copy.deepcopy(body)
    out = chat(**body)
    assert body == original  # the input is not modified
    assert out["messages"] == [
        {"role": "user", "content": "Weather in Paris and Oslo?"},
        {"role": "assistant", "content": "Checking both.", "tool_calls": [
            {"id": "toolu_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "toolu_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "Error: no such city"},
        {"role": "user", "content": "Thanks, and Rome?"},
    ]
    assert out["tools"] == [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather", "parameters": TOOL["input_schema"]}}]


def test_a_call_only_answer_has_no_content() -> None:
    out = chat(messages=[{"role": "user", "content": "x"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {}}]}])
    assert out["messages"][1] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "toolu_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}


@pytest.mark.parametrize("choice, expected", [
    ({"type": "auto"}, {"tool_choice": "auto"}),
    ({"type": "any"}, {"tool_choice": "required"}),
    ({"type": "none"}, {"tool_choice": "none"}),
    ({"type": "tool", "name": "get_weather"}, {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}),
    ({"type": "any", "disable_parallel_tool_use": True}, {"tool_choice": "required", "parallel_tool_calls": False}),
])
def test_tool_choice(choice: dict[str, Any], expected: dict[str, Any]) -> None:
    out = chat(messages=[{"role": "user", "content": "x"}], tools=[TOOL], tool_choice=choice)
    assert {k: out[k] for k in expected} == expected
    assert "parallel_tool_calls" in out or "parallel_tool_calls" not in expected


def test_server_tools_are_left_out_and_system_blocks_joined() -> None:
    out = chat(system=[{"type": "text", "text": "One."}, {"type": "text", "text": "Two.", "cache_control": {}}],
               messages=[{"role": "user", "content": "x"}],
               tools=[{"type": "web_search_20250305", "name": "web_search"}, TOOL])
    assert out["messages"][0] == {"role": "system", "content": "One.\nTwo."}
    assert [t["function"]["name"] for t in out["tools"]] == ["get_weather"]


def test_documents_images_and_tool_result_images() -> None:
    out = chat(messages=[{"role": "user", "content": [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "the file"}},
        {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}},
        {"type": "tool_result", "tool_use_id": "t", "content": [
            {"type": "text", "text": "see"}, {"type": "image", "source": {"type": "base64", "data": "xx"}}]}]}])
    assert out["messages"] == [
        {"role": "tool", "tool_call_id": "t", "content": "see\n[image omitted]"},
        {"role": "user", "content": [{"type": "text", "text": "the file"},
                                     {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}]}]


def test_streaming_asks_for_usage_and_thinking_maps_to_the_template_switch() -> None:
    out = chat(messages=[{"role": "user", "content": "x"}], stream=True, thinking={"type": "disabled"}, top_k=5)
    assert out["stream"] is True and out["stream_options"] == {"include_usage": True}
    assert out["chat_template_kwargs"] == {"enable_thinking": False} and out["top_k"] == 5


@pytest.mark.parametrize("body, param", [
    ({"messages": [{"role": "user", "content": "x"}]}, "max_tokens"),
    ({"max_tokens": 0, "messages": []}, "max_tokens"),
    ({"max_tokens": 5, "messages": "hi"}, "messages"),
    ({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}, "messages[0].role"),
    ({"max_tokens": 5, "messages": [{"role": "user"}]}, "messages[0].content"),
    ({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "video"}]}]}, "messages[0].content[0]"),
    ({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]},
     "messages[0].content[0].source"),
    ({"max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}]},
     "messages[0].content[0]"),
    ({"max_tokens": 5, "messages": [], "tools": [{"name": "f"}]}, "tools[0].input_schema"),
    ({"max_tokens": 5, "messages": [], "tool_choice": {"type": "sometimes"}}, "tool_choice"),
    ({"max_tokens": 5, "messages": [], "tool_choice": {"type": "any"}}, "tool_choice"),
    ({"max_tokens": 5, "messages": [], "stop_sequences": "STOP"}, "stop_sequences"),
    ({"max_tokens": 5, "messages": [], "temperature": "hot"}, "temperature"),
    ({"max_tokens": 5, "messages": [], "system": 7}, "system"),
])
def test_bad_requests_name_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(BadRequest) as info:
        to_chat_request({"model": "m", **body})
    assert info.value.status == 400 and info.value.param == param


def test_count_tokens_needs_no_max_tokens_and_grows_with_the_prompt() -> None:
    short = to_chat_request({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, need_max_tokens=False)
    long = to_chat_request({"model": "m", "messages": [{"role": "user", "content": "hi " * 400}], "tools": [TOOL]},
                           need_max_tokens=False)
    assert 0 < estimate_input_tokens(short) < 10 < 300 < estimate_input_tokens(long)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["model", "max_tokens", "messages", "system", "tools", "tool_choice",
                                        "stop_sequences", "metadata", "thinking", "stream", "temperature"]),
                       _json, max_size=8))
def test_any_json_body_is_a_chat_request_or_a_bad_request(body: dict[str, Any]) -> None:
    try:
        out = to_chat_request(body)
    except BadRequest as exc:
        assert exc.status == 400
    else:
        assert isinstance(out["messages"], list) and isinstance(out["model"], str)
