"""Anthropic tool definitions as OpenAI function tools.

Invariant: ``offered_tools`` gives the tools in effect for the answer, as OpenAI functions with unique names: the
request's ``tools``, then the beta ``tool_addition`` / ``tool_removal`` changes of the history and the tools its
``tool_reference`` blocks load, applied in order (the tool set at the end of the conversation is the one the answer
may call). A custom tool keeps its schema; the Anthropic-defined client tools ``bash_*`` and ``text_editor_*``,
which the client runs but whose schema Anthropic keeps to itself, get the input schema Anthropic documents; a
server tool (web search, web fetch, code execution, tool search, computer, memory, browser, MCP toolsets: run on
Anthropic's side, or with a schema not written here) is left out. What is left out, or offered earlier than
asked, is said in ``notes`` (one sentence per kind). A change that names no known tool is refused, naming the
field. Pure; the input is never modified.

``defer_loading: true`` (tool search): Anthropic keeps such a tool out of the model's context until a tool search
returns a ``tool_reference`` to it, which loads it; so here it is offered only once a ``tool_reference`` in the
history (a ``tool_result``'s, as Claude Code's own ``ToolSearch`` returns them, or a server tool search's result)
has named it. Claude Code's ``DeferredToolPlaceholder`` (deferred, never to be called) is thus never offered, and
when every tool is deferred the request has none. One exception: when the request offers Anthropic's server tool
search (``tool_search_tool_regex_*`` / ``_bm25_*``), which nothing here runs, its deferred tools are offered from
the start, as they could not be loaded otherwise.

Ignored, as they only steer Anthropic's service: ``cache_control``, ``strict``, ``eager_input_streaming``,
``allowed_callers``, ``max_characters``. ``input_examples`` are appended to the description, where the model
reads them, as Anthropic shows them to it.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from ..diagnostics import listed_names
from ..validation import BadRequest
from .blocks import Changes

__all__ = ["SERVER_TOOL_NOTE", "DEFERRED_NOTE", "SEARCHED_NOTE", "function_of", "offered_tools"]

SERVER_TOOL_NOTE = "Anthropic server tools (web search, code execution...) have no equivalent here and are left out"
DEFERRED_NOTE = ("deferred tools (defer_loading: true) not offered to the model, as no tool_reference in the "
                 "conversation has loaded them")
SEARCHED_NOTE = ("deferred tools (defer_loading: true) offered from the start, as the server tool search that "
                 "would load them is not run here")
_SERVER_SEARCH = ("tool_search_tool_regex", "tool_search_tool_bm25")

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


def offered_tools(tools: Any, changes: Changes, notes: list[str] | None = None) -> list[dict[str, Any]]:
    """The request's ``tools`` with the history's tool changes applied, as OpenAI function tools; ``notes``
    gets a sentence for the server tools and the deferred tools left out (or offered because of a server
    search)."""
    if tools is not None and not isinstance(tools, list):
        raise BadRequest("tools must be a list", param="tools")
    searched = any(isinstance(t, dict) and str(t.get("type")).startswith(_SERVER_SEARCH) for t in tools or ())
    offered: dict[str, dict[str, Any]] = {}
    deferred: dict[str, dict[str, Any]] = {}  # deferred and not loaded (yet)
    known: dict[str, dict[str, Any] | None] = {}  # every tool defined so far (None: a server tool)
    server: list[str] = []

    def define(tool: Mapping[str, Any], function: dict[str, Any] | None) -> None:
        name = tool["name"]
        known[name] = function
        if function is None:
            server.append(name)
        elif tool.get("defer_loading") is True and not searched:
            offered.pop(name, None)
            deferred[name] = function
        else:
            deferred.pop(name, None)
            offered[name] = function

    for i, tool in enumerate(tools or ()):
        define(tool, function_of(tool, f"tools[{i}]"))
    for kind, ref, at in changes:
        ref_kind = ref.get("type")
        if kind == "tool_reference":  # a tool search's result: the tool it names is loaded
            if ref["tool_name"] in deferred:
                offered[ref["tool_name"]] = deferred.pop(ref["tool_name"])
            continue
        if ref_kind in ("mcp_tool_reference", "mcp_toolset_reference"):
            continue  # MCP servers are Anthropic's to connect to: their tools are not offered here
        if kind == "tool_addition" and ref_kind == "tool_definition":
            define(ref.get("definition") or {}, function_of(ref.get("definition"), f"{at}.tool.definition"))
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
            deferred.pop(name, None)
        elif name in deferred:
            offered[name] = deferred.pop(name)
        elif (function := known[name]) is not None:
            offered[name] = function
    if notes is not None:
        if server:
            notes.append(listed_names(SERVER_TOOL_NOTE, list(dict.fromkeys(server))))
        if deferred:
            notes.append(listed_names(DEFERRED_NOTE, list(deferred)))
        if searched:
            early = [t["name"] for t in tools or () if t.get("defer_loading") is True and t["name"] in offered]
            if early:
                notes.append(listed_names(SEARCHED_NOTE, early))
    return list(offered.values())
