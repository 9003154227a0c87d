"""Anthropic tool definitions as OpenAI function tools.

Invariant: ``offered_tools`` gives the tools in effect for the answer, as OpenAI functions with unique names: the
request's ``tools``, then the beta ``tool_addition`` / ``tool_removal`` changes of the history applied in order
(the tool set at the end of the conversation is the one the answer may call). A custom tool keeps its schema; the
Anthropic-defined client tools ``bash_*`` and ``text_editor_*``, which the client runs but whose schema Anthropic
keeps to itself, get the input schema Anthropic documents; a server tool (web search, web fetch, code execution,
tool search, computer, memory, browser, MCP toolsets: run on Anthropic's side, or with a schema not written here)
is left out. A change that names no known tool is refused, naming the field. Pure; the input is never modified.

Ignored, as they only steer Anthropic's service: ``cache_control``, ``defer_loading`` (every tool is offered from
the start; tool search's ``tool_reference`` results only name them), ``strict``, ``eager_input_streaming``,
``allowed_callers``, ``max_characters``. ``input_examples`` are appended to the description, where the model
reads them, as Anthropic shows them to it.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..validation import BadRequest
from .blocks import Changes

__all__ = ["SERVER_TOOL_NOTE", "function_of", "offered_tools"]

SERVER_TOOL_NOTE = "Anthropic server tools (web search, code execution...) have no equivalent here and are left out"

_BASH = {"type": "object", "properties": {
    "command": {"type": "string", "description": "The bash command to run."},
    "restart": {"type": "boolean", "description": "Set to true to restart the bash session."}}}
_EDITOR_PROPERTIES: dict[str, Any] = {
    "path": {"type": "string", "description": "Absolute path to the file or directory."},
    "file_text": {"type": "string", "description": "create: the content of the new file."},
    "old_str": {"type": "string", "description": "str_replace: the exact text to replace."},
    "new_str": {"type": "string", "description": "str_replace: the new text; insert: the text to insert."},
    "insert_line": {"type": "integer", "description": "insert: the line after which to insert (0: the start)."},
    "view_range": {"type": "array", "items": {"type": "integer"},
                   "description": "view: the first and last line to show (-1: to the end)."}}
_COMMANDS = ["view", "create", "str_replace", "insert"]


def _editor(kind: str) -> dict[str, Any]:
    commands = _COMMANDS + (["undo_edit"] if kind < "text_editor_20250429" else [])
    return {"type": "object", "required": ["command", "path"],
            "properties": {"command": {"type": "string", "enum": commands}, **_EDITOR_PROPERTIES}}


def _client_tool(kind: str) -> tuple[dict[str, Any], str] | None:
    """An Anthropic-defined client tool's documented input schema and description (None: not one of them)."""
    if kind.startswith("bash_"):
        return _BASH, "Run commands in a bash shell; the session persists between calls."
    if kind.startswith("text_editor_"):
        return _editor(kind), "View, create and edit text files: view, create, str_replace, insert."
    return None


def function_of(tool: Any, at: str) -> dict[str, Any] | None:
    """One ``tools`` entry as an OpenAI function tool (None: a server tool, left out; see ``SERVER_TOOL_NOTE``)."""
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"].strip():
        raise BadRequest(f"{at} needs a non-empty string 'name'", param=f"{at}.name")
    kind = tool.get("type")
    description = tool.get("description") if isinstance(tool.get("description"), str) else None
    if kind in (None, "custom") or "input_schema" in tool:
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise BadRequest(f"{at}.input_schema must be a JSON schema object", param=f"{at}.input_schema")
    else:
        known = _client_tool(kind) if isinstance(kind, str) else None
        if known is None:
            return None
        schema, description = known
    examples = tool.get("input_examples")
    if isinstance(examples, list) and examples:
        shown = "\n".join(json.dumps(e, ensure_ascii=False, default=str) for e in examples)
        description = "\n\n".join(filter(None, [description, "Input examples:\n" + shown]))
    function: dict[str, Any] = {"name": tool["name"], "parameters": schema}
    if description is not None:
        function["description"] = description
    return {"type": "function", "function": function}


def _named(tool: Mapping[str, Any], at: str) -> str:
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"{at}.name must name a tool", param=f"{at}.name")
    return name


def offered_tools(tools: Any, changes: Changes) -> list[dict[str, Any]]:
    """The request's ``tools`` with the history's tool changes applied, as OpenAI function tools."""
    if tools is not None and not isinstance(tools, list):
        raise BadRequest("tools must be a list", param="tools")
    offered: dict[str, dict[str, Any]] = {}
    known: dict[str, dict[str, Any] | None] = {}  # every tool defined so far (None: a server tool)
    for i, tool in enumerate(tools or ()):
        function = function_of(tool, f"tools[{i}]")
        known[tool["name"]] = function
        if function is not None:
            offered[tool["name"]] = function
    for kind, ref, at in changes:
        ref_kind = ref.get("type")
        if ref_kind in ("mcp_tool_reference", "mcp_toolset_reference"):
            continue  # MCP servers are Anthropic's to connect to: their tools are not offered here
        if kind == "tool_addition" and ref_kind == "tool_definition":
            function = function_of(ref.get("definition"), f"{at}.tool.definition")
            name = ref["definition"]["name"]
            known[name] = function
            if function is not None:
                offered[name] = function
            continue
        if ref_kind != "tool_reference":
            raise BadRequest(f"{at}.tool must be a tool_reference{' or tool_definition' * (kind == 'tool_addition')}",
                             param=f"{at}.tool")
        name = _named(ref, f"{at}.tool")
        if name not in known:
            raise BadRequest(f"{at}.tool names {name!r}, which is neither in tools nor added before",
                             param=f"{at}.tool.name")
        if kind == "tool_removal":
            offered.pop(name, None)
        elif (function := known[name]) is not None:
            offered[name] = function
    return list(offered.values())
