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
    ({"max_tokens": 5, "messages": [{"role": "tool", "content": "x"}]}, "messages[0].role"),
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
                                        "stop_sequences", "metadata", "thinking", "stream", "temperature",
                                        "output_config", "output_format", "thread", "context_management"]),
                       _json, max_size=8))
def test_any_json_body_is_a_chat_request_or_a_bad_request(body: dict[str, Any]) -> None:
    try:
        out = to_chat_request(body)
    except BadRequest as exc:
        assert exc.status == 400
    else:
        assert isinstance(out["messages"], list) and isinstance(out["model"], str)


# --------------------------------------------------------------------------- what current Claude Code sends

def claude_code_body() -> dict[str, Any]:
    """The shape of Claude Code 2.1.197's main request (captured; texts and the tool list cut short)."""
    return {
        "model": "claude-opus-4-8", "max_tokens": 64000, "stream": True,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.197.2b3; cc_entrypoint=sdk-cli;"},
            {"type": "text", "text": "You are a Claude agent.", "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": "You help with software tasks.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>Today is 2026-11-27.</system-reminder>\n"},
                {"type": "text", "text": "Run echo hi", "cache_control": {"type": "ephemeral"}}]},
            {"role": "system", "content": "Available agent types for the Agent tool: ..."}],
        "tools": [{"name": "Bash", "description": "Executes a bash command.", "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command"], "additionalProperties": False}}],
        "metadata": {"user_id": '{"device_id":"d","account_uuid":"","session_id":"s"}'},
        "thinking": {"type": "adaptive"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "output_config": {"effort": "high"},
    }


def test_claude_codes_request_keeps_its_system_message_in_place() -> None:
    body = claude_code_body()
    original = copy.deepcopy(body)
    out = to_chat_request(body)
    assert body == original
    assert out["messages"] == [
        {"role": "system", "content": "You are a Claude agent.\nYou help with software tasks."},  # no billing line
        {"role": "user", "content": "<system-reminder>Today is 2026-11-27.</system-reminder>\n\nRun echo hi"},
        {"role": "system", "content": "Available agent types for the Agent tool: ..."}]
    assert out["chat_template_kwargs"] == {"enable_thinking": True}  # adaptive
    assert [t["function"]["name"] for t in out["tools"]] == ["Bash"]
    assert out["user"] == original["metadata"]["user_id"] and out["max_tokens"] == 64000
    # effort and context_management change nothing the backend is told
    assert set(out) == {"model", "messages", "max_tokens", "user", "tools", "chat_template_kwargs", "stream",
                        "stream_options"}


def test_claude_codes_title_request_asks_for_json() -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"],
              "additionalProperties": False}
    out = chat(messages=[{"role": "user", "content": "Title?"}], thinking={"type": "disabled"},
               output_config={"effort": "high", "format": {"type": "json_schema", "schema": schema}})
    assert out["response_format"] == {"type": "json_schema",
                                      "json_schema": {"name": "output", "schema": schema, "strict": True}}
    assert out["chat_template_kwargs"] == {"enable_thinking": False}
    legacy = chat(messages=[{"role": "user", "content": "Title?"}], output_format={"type": "json_schema", "schema": schema})
    assert legacy["response_format"] == out["response_format"]


@pytest.mark.parametrize("content", ["Be brief.", [{"type": "text", "text": "Be"}, {"type": "text", "text": "brief."}]])
def test_system_messages_stay_in_their_place(content: Any) -> None:
    out = chat(system="Lead.", messages=[
        {"role": "user", "content": "a"}, {"role": "system", "content": content},
        {"role": "assistant", "content": "b"}, {"role": "system", "content": "Last word."}])
    text = content if isinstance(content, str) else "Be\nbrief."
    assert out["messages"] == [{"role": "system", "content": "Lead."}, {"role": "user", "content": "a"},
                               {"role": "system", "content": text}, {"role": "assistant", "content": "b"},
                               {"role": "system", "content": "Last word."}]


def test_a_system_message_cleared_at_the_next_user_message() -> None:
    turn = {"role": "system", "content": "Only for this turn.", "clear_at": "next_user_message"}
    kept = {"role": "system", "content": "Always.", "clear_at": "never"}
    now = chat(messages=[{"role": "user", "content": "a"}, turn, kept])
    assert [m["content"] for m in now["messages"]] == ["a", "Only for this turn.", "Always."]
    later = chat(messages=[{"role": "user", "content": "a"}, turn, kept, {"role": "assistant", "content": "b"},
                           {"role": "user", "content": "c"}])
    assert [m["content"] for m in later["messages"]] == ["a", "Always.", "b", "c"]
    # a per-turn output_config alone says nothing to the backend
    alone = chat(messages=[{"role": "user", "content": "a"}, {"role": "system", "output_config": {"effort": "low"}}])
    assert alone["messages"] == [{"role": "user", "content": "a"}]


@pytest.mark.parametrize("thinking, enabled", [
    ({"type": "adaptive"}, True), ({"type": "adaptive", "display": "omitted"}, True),
    ({"type": "enabled", "budget_tokens": 2048}, True), ({"type": "between_tools"}, True),
    ({"type": "disabled"}, False),
])
def test_every_thinking_mode(thinking: dict[str, Any], enabled: bool) -> None:
    out = chat(messages=[{"role": "user", "content": "x"}], thinking=thinking)
    assert out["chat_template_kwargs"] == {"enable_thinking": enabled}


def test_fields_that_only_steer_anthropics_service_are_ignored() -> None:
    base = chat(messages=[{"role": "user", "content": "x"}])
    steering = {
        "cache_control": {"type": "ephemeral"}, "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "compaction": {"type": "summarize"}, "container": "container_1", "mcp_servers": [{"type": "url", "url": "u"}],
        "service_tier": "auto", "speed": "fast", "inference_geo": "us", "diagnostics": {"previous_message_id": None},
        "output_config": {"effort": "max", "task_budget": {"type": "tokens", "total": 100}}, "betas": ["b"],
        "thread": {"type": "create"}, "fallbacks": [], "user_profile_id": "p", "workspace_id": "w"}
    assert chat(messages=[{"role": "user", "content": "x"}], **steering) == base


@pytest.mark.parametrize("body, param", [
    ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "max_tokens"),
    ({"messages": [{"role": "system", "content": [{"type": "image", "source": {}}]}]}, "messages[0].content[0]"),
    ({"messages": [{"role": "system", "content": 3}]}, "messages[0].content"),
    ({"messages": [{"role": "system"}]}, "messages[0].content"),
    ({"messages": [{"role": "system", "content": "x", "clear_at": "soon"}]}, "messages[0].clear_at"),
    ({"messages": [], "output_config": "high"}, "output_config"),
    ({"messages": [], "output_config": {"format": {"type": "xml"}}}, "output_config.format"),
    ({"messages": [], "output_format": {"type": "json_schema"}}, "output_format"),
    ({"messages": [], "thread": {"type": "continue", "previous_message_id": "msg_1"}}, "thread"),
])
def test_what_cannot_be_ignored_is_refused(body: dict[str, Any], param: str) -> None:
    with pytest.raises(BadRequest) as info:
        to_chat_request({"model": "m", "max_tokens": 5, **body})
    assert info.value.status == 400 and info.value.param == param
