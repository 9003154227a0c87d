"""Deferred functions (``defer_loading: true``, OpenAI's tool search) in the Responses request: held back until a
``tool_search_output`` loads them when the client runs the search (whose description then lists them), offered
from the start beside a hosted search nothing here runs; noted either way."""

from __future__ import annotations

from typing import Any

from streamparse.wire.responses import to_chat_request
from streamparse.wire.responses.request import EARLY_NOTE, HELD_NOTE

WEATHER = {"type": "function", "name": "get_weather", "description": "Weather for a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
ORDERS = {"type": "function", "name": "list_orders", "description": "List open orders.\nMore text.",
          "parameters": {"type": "object"}, "defer_loading": True}
CRM = {"type": "namespace", "name": "crm", "description": "CRM tools.", "tools": [
    {"type": "function", "name": "lookup", "parameters": {"type": "object"}, "defer_loading": True},
    {"type": "function", "name": "ping", "parameters": {"type": "object"}}]}
CLIENT_SEARCH = {"type": "tool_search", "execution": "client", "description": "Find tools."}


def names(read: Any) -> list[str]:
    return [t["function"]["name"] for t in read.chat.get("tools", ())]


def test_a_client_run_search_holds_deferred_functions_back_and_lists_them() -> None:
    read = to_chat_request({"model": "m", "input": "x", "tools": [WEATHER, ORDERS, CRM, CLIENT_SEARCH]})
    assert names(read) == ["get_weather", "crm__ping", "tool_search"]
    search = read.chat["tools"][-1]["function"]["description"]
    assert search.startswith("Find tools.\n\nTools this search can load")
    assert search.endswith("\n- list_orders: List open orders.\n- crm: CRM tools.")
    assert read.notes == [f"{HELD_NOTE}: list_orders, crm__lookup"]


def test_what_a_search_output_holds_is_offered_even_marked_deferred() -> None:
    """Codex's tool_search_output repeats ``defer_loading: true`` on the tools it loads."""
    read = to_chat_request({"model": "m", "tools": [WEATHER, ORDERS, CLIENT_SEARCH], "input": [
        {"role": "user", "content": "orders?"},
        {"type": "tool_search_call", "call_id": "c1", "execution": "client", "arguments": {"query": "orders"}},
        {"type": "tool_search_output", "call_id": "c1", "execution": "client", "tools": [ORDERS]}]})
    assert names(read) == ["get_weather", "tool_search", "list_orders"]
    assert read.notes == [] and "can load" not in read.chat["tools"][1]["function"]["description"]


def test_beside_a_hosted_search_deferred_functions_are_offered_at_once() -> None:
    read = to_chat_request({"model": "m", "input": "x", "tools": [{"type": "tool_search"}, ORDERS, WEATHER]})
    assert names(read) == ["get_weather", "list_orders"]
    assert read.notes[-1] == f"{EARLY_NOTE}: list_orders" and "tools[0]: a tool_search tool" in read.notes[0]


def test_with_no_search_at_all_a_deferred_function_is_not_offered() -> None:
    read = to_chat_request({"model": "m", "input": "x", "tools": [ORDERS], "tool_choice": "auto"})
    assert "tools" not in read.chat and "tool_choice" not in read.chat and read.notes == [f"{HELD_NOTE}: list_orders"]
