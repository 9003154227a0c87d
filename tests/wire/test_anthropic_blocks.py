"""Anthropic content blocks and tool definitions -> OpenAI (``wire.anthropic.blocks`` and ``wire.anthropic.tools``),
through ``to_chat_request``, without servers: every block type of the anthropic SDK's request unions."""

from __future__ import annotations

import copy
import typing
from typing import Any

import pytest
from anthropic.types import ContentBlockParam, ToolUnionParam
from anthropic.types.beta import BetaContentBlockParam

from streamparse.wire.anthropic import to_chat_request
from streamparse.wire.anthropic.blocks import DROPPED
from streamparse.wire.validation import BadRequest, check_chat_request

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = {"name": "get_weather", "description": "Weather", "input_schema": SCHEMA}
PDF = "JVBERi0xLjQK"


def chat(**body: Any) -> dict[str, Any]:
    return to_chat_request({"model": "m", "max_tokens": 16, **body})


def user(*blocks: Any) -> list[dict[str, Any]]:
    return chat(messages=[{"role": "user", "content": list(blocks)}])["messages"]


def assistant(*blocks: Any) -> dict[str, Any]:
    out = chat(messages=[{"role": "user", "content": "q"}, {"role": "assistant", "content": list(blocks)}])["messages"]
    return typing.cast(dict[str, Any], out[-1])


def names(out: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in out.get("tools", [])]


def _literal_types(union: Any) -> set[str]:
    """The ``type`` literal of each member of one of the SDK's block unions (TypedDicts, and the response models
    the beta union also takes)."""
    kinds: set[str] = set()
    todo = [union]
    while todo:
        member = todo.pop()
        if typing.get_origin(member) in (typing.Annotated, typing.Union):
            todo.extend(typing.get_args(member)[:1] if typing.get_origin(member) is typing.Annotated
                        else typing.get_args(member))
            continue
        fields = getattr(member, "model_fields", None)
        hint = fields["type"].annotation if fields else typing.get_type_hints(member)["type"]
        while typing.get_origin(hint) is not typing.Literal:  # Required[Literal[...]]
            hint = typing.get_args(hint)[0]
        kinds.update(typing.get_args(hint))
    return kinds


HANDLED = {"text", "image", "document", "search_result", "tool_use", "tool_result", "compaction",
           "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
           "bash_code_execution_tool_result", "mcp_tool_result", "tool_addition", "tool_removal"}


@pytest.mark.parametrize("union", [ContentBlockParam, BetaContentBlockParam])
def test_every_block_type_the_sdk_sends_is_decided(union: Any) -> None:
    """A new block type in the anthropic SDK fails here until this front decides what it means."""
    assert _literal_types(union) <= HANDLED | DROPPED


# --------------------------------------------------------------------------- user blocks

def test_documents_text_content_and_pdf() -> None:
    out = user({"type": "document", "title": "Notes", "context": "from the wiki",
                "source": {"type": "text", "media_type": "text/plain", "data": "the text"}},
               {"type": "document", "source": {"type": "content", "content": [
                   {"type": "text", "text": "part one"},
                   {"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}}]}},
               {"type": "document", "title": "report.pdf", "cache_control": {"type": "ephemeral"},
                "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}})
    assert out == [{"role": "user", "content": [
        {"type": "text", "text": "Notes\nfrom the wiki\nthe text"},
        {"type": "text", "text": "part one"},
        {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}},
        {"type": "text", "text": "report.pdf"},
        {"type": "file", "file": {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{PDF}"}}]}]
    assert user({"type": "document", "source": {"type": "content", "content": "inline"}}) == [
        {"role": "user", "content": "inline"}]


def test_search_results_and_dropped_blocks() -> None:
    result = {"type": "search_result", "title": "Paris", "source": "https://example.invalid/paris",
              "content": [{"type": "text", "text": "Paris is the capital."}], "citations": {"enabled": True}}
    assert user({"type": "text", "text": "Use this:"}, result, {"type": "container_upload", "file_id": "file_1"}) == [
        {"role": "user", "content": "Use this:\nParis (https://example.invalid/paris)\nParis is the capital."}]


def test_tool_result_contents() -> None:
    blocks = [{"type": "text", "text": "ran"},
              {"type": "search_result", "title": "T", "source": "s", "content": [{"type": "text", "text": "body"}]},
              {"type": "document", "source": {"type": "text", "data": "doc text"}},
              {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}},
              {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "x"}},
              {"type": "tool_reference", "tool_name": "get_weather"}]
    out = user({"type": "tool_result", "tool_use_id": "toolu_1", "content": blocks, "cache_control": {"type": "ephemeral"}})
    assert out == [{"role": "tool", "tool_call_id": "toolu_1", "content":
                    "ran\nT (s)\nbody\ndoc text\n[document omitted]\n[image omitted]\n[tool get_weather is available]"}]


# --------------------------------------------------------------------------- assistant history

def test_server_tool_history_keeps_what_the_model_read() -> None:
    message = assistant(
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "paris"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
            {"type": "web_search_result", "title": "Paris", "url": "https://example.invalid/p", "encrypted_content": "e"}]},
        {"type": "text", "text": "Paris is the capital.", "citations": [{"type": "web_search_result_location"}]},
        {"type": "server_tool_use", "id": "srvtoolu_2", "name": "code_execution", "input": {"code": "print(1)"}},
        {"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_2",
         "content": {"type": "code_execution_result", "stdout": "1", "stderr": "", "return_code": 0, "content": []}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_3", "content": {
            "type": "web_fetch_result", "url": "https://example.invalid/f",
            "content": {"type": "document", "source": {"type": "text", "data": "page"}}}},
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "lookup", "server_name": "kb", "input": {}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "content": [{"type": "text", "text": "found"}]},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_4",
         "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"}},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "fallback", "from": {}, "to": {}},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}})
    assert message["content"] == ("\nWeb search results:\n- Paris <https://example.invalid/p>\nParis is the capital."
                                  "\n1\n\nFetched https://example.invalid/f\npage\n\nfound\n")
    assert [c["function"]["name"] for c in message["tool_calls"]] == ["get_weather"]


def test_compaction_is_its_summary() -> None:
    message = assistant({"type": "compaction", "content": "Earlier: the user asked about Paris.", "signature": "s"},
                        {"type": "text", "text": "Go on."})
    assert message["content"] == "\nEarlier: the user asked about Paris.\nGo on."
    assert assistant({"type": "compaction", "content": None}, {"type": "text", "text": "x"})["content"] == "x"


@pytest.mark.parametrize("blocks, param", [
    ([{"type": "image", "source": {"type": "file", "file_id": "file_1"}}], "messages[0].content[0].source"),
    ([{"type": "document", "source": {"type": "url", "url": "https://example.invalid/a.pdf"}}],
     "messages[0].content[0].source"),
    ([{"type": "document", "source": {"type": "file", "file_id": "file_1"}}], "messages[0].content[0].source"),
    ([{"type": "document"}], "messages[0].content[0].source"),
    ([{"type": "document", "source": {"type": "content", "content": [{"type": "video"}]}}],
     "messages[0].content[0].source.content[0]"),
    ([{"type": "search_result", "title": "t", "source": "s", "content": [{"type": "image", "source": {}}]}],
     "messages[0].content[0].content[0]"),
    ([{"type": "tool_use", "id": "t", "name": "f", "input": {}}], "messages[0].content[0]"),
    ([{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "video"}]}],
     "messages[0].content[0].content[0]"),
    ([{"type": "hologram"}], "messages[0].content[0]"),
])
def test_blocks_that_would_change_the_answer_are_refused(blocks: list[Any], param: str) -> None:
    with pytest.raises(BadRequest) as info:
        chat(messages=[{"role": "user", "content": blocks}])
    assert info.value.status == 400 and info.value.param == param


def test_an_assistant_message_holds_no_image() -> None:
    with pytest.raises(BadRequest) as info:
        assistant({"type": "image", "source": {"type": "url", "url": "https://example.invalid/a.png"}})
    assert info.value.param == "messages[1].content[0]"


# --------------------------------------------------------------------------- tools

def test_tool_fields_for_anthropics_service_are_ignored_and_examples_shown() -> None:
    tool = {**WEATHER, "cache_control": {"type": "ephemeral"}, "strict": True,
            "eager_input_streaming": True, "allowed_callers": ["direct"], "type": "custom",
            "input_examples": [{"city": "Paris"}]}
    original = copy.deepcopy(tool)
    (out,) = chat(messages=[{"role": "user", "content": "x"}], tools=[tool])["tools"]
    assert tool == original
    assert out == {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA,
                                                    "description": 'Weather\n\nInput examples:\n{"city": "Paris"}'}}


def test_anthropic_client_tools_get_their_schema_and_server_tools_are_left_out() -> None:
    tools = [{"type": "bash_20250124", "name": "bash"},
             {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool", "max_characters": 1000},
             {"type": "text_editor_20250124", "name": "str_replace_editor"},
             {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
             {"type": "web_fetch_20250910", "name": "web_fetch"}, {"type": "memory_20250818", "name": "memory"},
             {"type": "code_execution_20250825", "name": "code_execution"},
             {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}]
    out = chat(messages=[{"role": "user", "content": "x"}], tools=tools, tool_choice={"type": "tool", "name": "bash"})
    assert names(out) == ["bash", "str_replace_based_edit_tool", "str_replace_editor"]
    bash, new, old = (t["function"]["parameters"] for t in out["tools"])
    assert set(bash["properties"]) == {"command", "restart"}
    assert "undo_edit" not in new["properties"]["command"]["enum"] and "undo_edit" in old["properties"]["command"]["enum"]
    assert new["required"] == ["command", "path"]
    assert out["tool_choice"] == {"type": "function", "function": {"name": "bash"}}


def test_each_tool_union_member_is_a_function_or_left_out() -> None:
    """The SDK's tool types: custom, client tools with a schema here, or server tools (left out)."""
    kinds = _literal_types(ToolUnionParam) - {"custom"}
    for kind in sorted(kinds):
        out = chat(messages=[{"role": "user", "content": "x"}], tools=[{"type": kind, "name": "t"}])
        assert names(out) == (["t"] if kind.startswith(("bash_", "text_editor_")) else []), kind


def _changes(*blocks: Any) -> dict[str, Any]:
    return chat(messages=[{"role": "user", "content": "a"}, {"role": "system", "content": list(blocks)}],
                tools=[WEATHER, {**WEATHER, "name": "get_time"}])


def test_tool_changes_in_the_history_set_the_tools_offered() -> None:
    added = {"name": "search", "input_schema": SCHEMA}
    out = _changes({"type": "text", "text": "Tools changed."},
                   {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}},
                   {"type": "tool_addition", "tool": {"type": "tool_definition", "definition": added}},
                   {"type": "tool_addition", "tool": {"type": "mcp_toolset_reference", "server_name": "kb"}},
                   {"type": "tool_removal", "tool": {"type": "mcp_tool_reference", "server_name": "kb", "name": "x"}})
    assert names(out) == ["get_time", "search"]
    assert out["messages"][-1] == {"role": "system", "content": "Tools changed."}
    back = _changes({"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}},
                    {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "get_weather"}})
    assert names(back) == ["get_time", "get_weather"] and [m["role"] for m in back["messages"]] == ["user"]


def test_a_compactions_tool_changes_apply_too() -> None:
    out = chat(tools=[WEATHER], messages=[
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [{"type": "compaction", "content": "summary", "tool_changes": [
            {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}}]}]}])
    assert "tools" not in out and out["messages"][-1]["content"] == "\nsummary\n"


@pytest.mark.parametrize("block, param", [
    ({"type": "tool_removal", "tool": {"type": "tool_reference", "name": "nope"}}, "messages[1].content[0].tool.name"),
    ({"type": "tool_addition", "tool": "get_weather"}, "messages[1].content[0].tool"),
    ({"type": "tool_removal", "tool": {"type": "tool_definition", "definition": WEATHER}}, "messages[1].content[0].tool"),
    ({"type": "tool_addition", "tool": {"type": "tool_definition", "definition": {"name": "x"}}},
     "messages[1].content[0].tool.definition.input_schema"),
])
def test_bad_tool_changes_name_the_field(block: dict[str, Any], param: str) -> None:
    with pytest.raises(BadRequest) as info:
        _changes(block)
    assert info.value.status == 400 and info.value.param == param


@pytest.mark.parametrize("tools", [[WEATHER], [WEATHER, {**WEATHER, "name": "get_time"}]])
def test_a_tool_choice_naming_a_removed_tool_is_refused(tools: list[dict[str, Any]]) -> None:
    """The tool set at the end of the history is the one tool_choice must name."""
    removal = {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "get_weather"}}
    with pytest.raises(BadRequest) as info:
        check_chat_request(chat(tools=tools, tool_choice={"type": "tool", "name": "get_weather"}, messages=[
            {"role": "user", "content": "a"}, {"role": "system", "content": [removal]}]))
    assert info.value.param == "tool_choice"
