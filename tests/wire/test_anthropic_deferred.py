"""Deferred tools (``defer_loading: true``, Anthropic's tool search) in ``to_chat_request``: not offered until a
``tool_reference`` in the history loads them, said in ``notes``; offered from the start only beside a server tool
search nothing here runs."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from streamparse.wire.anthropic import to_chat_request
from streamparse.wire.anthropic.tools import DEFERRED_NOTE, SEARCHED_NOTE, SERVER_TOOL_NOTE
from streamparse.wire.validation import BadRequest

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {"name": "get_weather", "description": "Weather", "input_schema": SCHEMA}
# What Claude Code 2.1.332 sends ahead of its real tools when tool search is on.
PLACEHOLDER = {"name": "DeferredToolPlaceholder", "description": "A placeholder for deferred tools. Never call this "
               "tool.", "input_schema": {"type": "object", "properties": {}}, "defer_loading": True}
NOTEBOOK = {"name": "NotebookEdit", "description": "Edit a notebook cell", "input_schema": SCHEMA,
            "defer_loading": True}
SEARCH = {"name": "ToolSearch", "description": "Fetch deferred tools", "input_schema": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
ASK = [{"role": "user", "content": "x"}]


def read(notes: list[str] | None = None, **body: Any) -> dict[str, Any]:
    return to_chat_request({"model": "m", "max_tokens": 16, **body}, notes=notes)


def names(chat: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in chat.get("tools", ())]


def test_a_deferred_tool_is_not_offered_and_the_notes_name_it() -> None:
    tools = [PLACEHOLDER, WEATHER, SEARCH, NOTEBOOK]
    original = copy.deepcopy(tools)
    notes: list[str] = []
    chat = read(notes, messages=ASK, tools=tools)
    assert names(chat) == ["get_weather", "ToolSearch"]
    assert notes == [f"{DEFERRED_NOTE}: DeferredToolPlaceholder, NotebookEdit"]
    assert tools == original


def test_every_tool_deferred_sends_no_tools_and_no_tool_choice() -> None:
    chat = read(messages=ASK, tools=[PLACEHOLDER, NOTEBOOK], tool_choice={"type": "auto",
                                                                          "disable_parallel_tool_use": True})
    assert "tools" not in chat and "tool_choice" not in chat and "parallel_tool_calls" not in chat
    with pytest.raises(BadRequest) as info:
        read(messages=ASK, tools=[PLACEHOLDER], tool_choice={"type": "any"})
    assert info.value.param == "tool_choice"


def test_a_tool_reference_in_a_tool_result_loads_the_tool() -> None:
    """Claude Code's ToolSearch answers with tool_reference blocks: the tools they name are offered from then on."""
    notes: list[str] = []
    chat = read(notes, tools=[PLACEHOLDER, SEARCH, NOTEBOOK], messages=[
        {"role": "user", "content": "edit the notebook"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch",
                                           "input": {"query": "notebook"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "tool_reference", "tool_name": "NotebookEdit"}]}]}])
    assert names(chat) == ["ToolSearch", "NotebookEdit"]
    assert chat["messages"][-1] == {"role": "tool", "tool_call_id": "t1", "content": "[tool NotebookEdit is available]"}
    assert notes == [f"{DEFERRED_NOTE}: DeferredToolPlaceholder"]


def test_a_server_tool_searchs_result_and_a_tool_addition_load_too() -> None:
    result = {"type": "tool_search_tool_result", "tool_use_id": "s1", "content": {
        "type": "tool_search_tool_search_result", "tool_references": [
            {"type": "tool_reference", "tool_name": "NotebookEdit"}]}}
    chat = read(tools=[WEATHER, NOTEBOOK], messages=[
        {"role": "user", "content": "a"}, {"role": "assistant", "content": [result, {"type": "text", "text": "ok"}]}])
    assert names(chat) == ["get_weather", "NotebookEdit"]
    added = read(tools=[WEATHER, NOTEBOOK], messages=[{"role": "user", "content": "a"}, {"role": "system", "content": [
        {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "NotebookEdit"}}]}])
    assert names(added) == ["get_weather", "NotebookEdit"]


def test_beside_a_server_tool_search_deferred_tools_are_offered_at_once() -> None:
    """Nothing here runs Anthropic's tool search, so the tools it would load are offered from the start."""
    notes: list[str] = []
    search = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    chat = read(notes, messages=ASK, tools=[search, WEATHER, NOTEBOOK])
    assert names(chat) == ["get_weather", "NotebookEdit"]
    assert notes == [f"{SERVER_TOOL_NOTE}: tool_search_tool_regex", f"{SEARCHED_NOTE}: NotebookEdit"]


def test_notes_fit_in_a_header() -> None:
    """Names are shown as printable ASCII, and a long list is cut short."""
    notes: list[str] = []
    deferred = [{**NOTEBOOK, "name": f"tool_{i}"} for i in range(25)] + [{**NOTEBOOK, "name": "wetter\u00e9\r\n"}]
    read(notes, messages=ASK, tools=[WEATHER, *deferred])
    (note,) = notes
    assert note.isascii() and note.isprintable() and note.endswith("tool_19 and 6 more")
    notes.clear()
    read(notes, messages=ASK, tools=[WEATHER, {**NOTEBOOK, "name": "wetter\u00e9\r\n"}])
    assert notes == [DEFERRED_NOTE + ": 'wetter\\xe9\\r\\n'"]
