"""OpenAI Responses requests as chat-completions requests.

Invariant: ``to_chat_request`` either returns a chat request that says what the Responses request said
(instructions, every input item in order, the stored conversation it continues, tools, tool choice, sampling,
output format) or raises ``BadRequest`` naming the field; a field that would change the answer's meaning if
ignored is refused, never dropped. The input is never modified.

Mapping (fields not listed are ignored: they tune OpenAI's own service, e.g. ``service_tier``,
``prompt_cache_key``, ``truncation``, ``stream_options``, ``include``):
- ``instructions`` -> the first ``system`` message (not carried over by ``previous_response_id``, as at OpenAI);
- ``input`` -> messages (``items``), after the stored conversation (``previous``) when one is continued;
- ``tools``: ``function`` tools as they are; a ``custom`` tool (free text in, the way Codex offers
  ``apply_patch``) -> a function with one string argument ``input`` (its grammar, if any, in the description);
  a ``namespace`` tool's functions -> functions named ``namespace__name`` (their calls go back with
  ``namespace``, as Codex routes them); a ``tool_search`` the client runs (``execution: "client"``) -> a
  function ``tool_search`` whose calls go back as ``tool_search_call`` items, and the tools its outputs found
  (``tool_search_output`` items) are offered from then on;
  a function the request defers (``defer_loading: true``: OpenAI shows the model its name and description only,
  until a tool search loads it) is held back until a ``tool_search_output`` holds it, and the client-run
  ``tool_search`` function's description lists what it can load (the function's name and description, or for a
  namespace, the namespace's); beside a ``tool_search`` OpenAI's servers run (which nothing here runs, and
  without which they could never be loaded) deferred functions are offered from the start; either way, noted;
  hosted tools (web search, file search, computer use, code interpreter, MCP...) run on OpenAI's side only: left
  out, with a note; ``tool_choice`` auto / none / required / a function / a custom tool / ``allowed_tools``
  (the tools narrowed to the allowed ones); forcing a hosted tool -> 400; with no function left, ``tool_choice``
  is not sent;
- ``max_output_tokens`` -> ``max_tokens``; ``temperature``, ``top_p``, ``parallel_tool_calls``;
  ``user`` / ``safety_identifier`` -> ``user``; ``text.format`` ``json_schema`` / ``json_object`` ->
  ``response_format``; ``reasoning.effort`` -> ``reasoning_effort`` (vLLM and SGLang hand it to the chat
  template; llama.cpp and Ollama ignore it); ``stream`` (with ``stream_options.include_usage``);
- refused (400): ``background: true``, ``conversation``, ``prompt`` (a stored prompt template), ``top_logprobs``
  above 0, and an input item or part with no chat form (``items``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..diagnostics import listed_names
from ..validation import BadRequest
from .items import ItemLookup, chat_messages
from .vocab import CUSTOM_INPUT, Offered, chat_name

__all__ = ["ResponsesRequest", "to_chat_request", "CLIENT_TOOLS"]

CLIENT_TOOLS = ("function", "custom")  # tool types the client runs itself (and tool_search, when it says so)
TOOL_SEARCH = "tool_search"  # the function a client-run tool_search is offered as
HELD_NOTE = "deferred functions (defer_loading: true) held back until a tool_search_output loads them"
EARLY_NOTE = ("deferred functions (defer_loading: true) offered from the start, as the hosted tool_search that "
              "would load them is not run here")
_SEARCHABLE = 64  # entries listed in a client-run tool_search's description
_SEARCH_PARAMETERS = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_CHOICES = ("auto", "none", "required")


@dataclass
class ResponsesRequest:
    """A Responses request read: the chat request to send, and what the answer needs to be written back."""

    chat: dict[str, Any]
    echo: dict[str, Any]  # the request's settings, as the response object repeats them
    offered: dict[str, Offered] = field(default_factory=dict)  # the client's tool behind each function offered
    history: list[dict[str, Any]] = field(default_factory=list)  # the conversation so far, without instructions
    notes: list[str] = field(default_factory=list)  # what was left out, each a sentence

    @property
    def store(self) -> bool:
        return self.echo["store"] is not False


def _custom_function(tool: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A custom tool as a function with one string argument, its input format told in the description."""
    text = str(tool["description"]) if isinstance(tool.get("description"), str) else ""
    form = tool.get("format")
    if isinstance(form, dict) and form.get("type") == "grammar":
        definition, syntax = form.get("definition"), form.get("syntax")
        if not isinstance(definition, str) or not definition.strip():
            raise BadRequest(f"{where}.format.definition must be a non-empty string", param=f"{where}.format")
        text += f"\n\nThe input must follow this {syntax or 'grammar'} grammar:\n{definition}"
    elif form is not None and not (isinstance(form, dict) and form.get("type") == "text"):
        raise BadRequest(f"{where}.format must be {{'type': 'text'}} or a grammar", param=f"{where}.format")
    schema = {"type": "object", "properties": {CUSTOM_INPUT: {"type": "string", "description": "The raw input."}},
              "required": [CUSTOM_INPUT]}
    return {"name": tool["name"], "description": text.strip(), "parameters": schema}


def _function(tool: Mapping[str, Any], where: str, namespace: str | None,
              offered: dict[str, Offered], found: bool = False) -> dict[str, Any]:
    """One function or custom tool (perhaps inside a namespace) as a chat tool; ``offered`` learns its name.
    Two tools the request offers under one name are refused (tools a search ``found`` again are the same)."""
    if not isinstance(tool.get("name"), str) or not tool["name"].strip():
        raise BadRequest(f"{where} needs a non-empty string 'name'", param=f"{where}.name")
    kind = str(tool.get("type"))
    name = chat_name(tool["name"], namespace)
    if name in offered and not found:
        raise BadRequest(f"{where}: another tool is offered as {name!r} already", param=f"{where}.name")
    if kind == "custom":
        function = _custom_function(tool, where)
    else:
        schema = tool.get("parameters")
        if schema is None:
            schema = {"type": "object", "properties": {}}
        if not isinstance(schema, dict):
            raise BadRequest(f"{where}.parameters must be a JSON schema object", param=f"{where}.parameters")
        function = {"parameters": schema}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        if isinstance(tool.get("strict"), bool):
            function["strict"] = tool["strict"]
    offered[name] = Offered(tool["name"], kind, namespace)
    return {"type": "function", "function": {**function, "name": name}}


Held = list[tuple[dict[str, Any], str]]  # (a deferred function as a chat tool, what a search can find it by)


def _searchable(tool: Mapping[str, Any], namespace: Mapping[str, Any] | None) -> str:
    """What OpenAI shows the model of a deferred function: its name and description (a namespace's, inside one)."""
    shown = namespace if namespace is not None else tool
    text = shown.get("description")
    first = text.strip().splitlines()[0][:200] if isinstance(text, str) and text.strip() else ""
    return f"{shown.get('name')}: {first}" if first else str(shown.get("name"))


def _tools(tools: Any, notes: list[str], where: str = "tools", offered: dict[str, Offered] | None = None,
           found: bool = False, held: Held | None = None) -> tuple[list[dict[str, Any]], dict[str, Offered]]:
    """(chat tools, the client's tool behind each); a note for each hosted tool left out. A ``namespace`` tool's
    functions are offered as ``namespace__name``; a ``tool_search`` the client runs, as a function
    ``tool_search``. A deferred function goes to ``held`` instead (when given, and not ``found`` by a search)."""
    if not isinstance(tools, list):
        raise BadRequest(f"{where} must be a list", param=where)
    out: list[dict[str, Any]] = []
    offered = {} if offered is None else offered
    for i, tool in enumerate(tools):
        at = f"{where}[{i}]"
        kind = tool.get("type") if isinstance(tool, dict) else None
        if not isinstance(kind, str):
            raise BadRequest(f"{at} must be an object with a 'type'", param=f"{at}.type")
        if kind == "namespace":
            inner = tool.get("tools")
            if not isinstance(tool.get("name"), str) or not tool["name"] or not isinstance(inner, list):
                raise BadRequest(f"{at}: a namespace needs a 'name' and a list of 'tools'", param=at)
            for j, member in enumerate(inner):
                if isinstance(member, dict) and member.get("type") in CLIENT_TOOLS:
                    function = _function(member, f"{at}.tools[{j}]", tool["name"], offered, found)
                    if held is not None and member.get("defer_loading") is True:
                        held.append((function, _searchable(member, tool)))
                    else:
                        out.append(function)
                else:
                    raise BadRequest(f"{at}.tools[{j}] must be a function or custom tool", param=f"{at}.tools[{j}]")
        elif kind in CLIENT_TOOLS:
            function = _function(tool, at, None, offered, found)
            if held is not None and tool.get("defer_loading") is True:
                held.append((function, _searchable(tool, None)))
            else:
                out.append(function)
        elif kind == "tool_search" and tool.get("execution") == "client":
            search = {"name": TOOL_SEARCH, "description": tool.get("description"), "type": kind,
                      "parameters": tool.get("parameters") or _SEARCH_PARAMETERS}
            out.append(_function(search, at, None, offered, found))
        else:
            notes.append(f"{at}: a {kind} tool has no chat-completions form (OpenAI's servers run it, or its calls "
                         "are items of their own), so it was left out")
    return out, offered


def _deferred(tools: list[dict[str, Any]], held: Held, body_tools: Any, notes: list[str]) -> list[dict[str, Any]]:
    """The tools to offer, given the deferred functions ``held`` back (those a search found are in ``tools``)."""
    names = {t["function"]["name"] for t in tools}
    waiting = [(t, label) for t, label in held if t["function"]["name"] not in names]
    if not waiting:
        return tools
    searches = [t for t in body_tools if isinstance(t, dict) and t.get("type") == "tool_search"]
    client_run = any(t.get("execution") == "client" for t in searches)
    if searches and not client_run:
        notes.append(listed_names(EARLY_NOTE, [t["function"]["name"] for t, _ in waiting]))
        return tools + [t for t, _ in waiting]
    notes.append(listed_names(HELD_NOTE, [t["function"]["name"] for t, _ in waiting]))
    out = []
    for tool in tools:
        if client_run and tool["function"]["name"] == TOOL_SEARCH:
            labels = list(dict.fromkeys(label for _, label in waiting))
            more = [f"- and {len(labels) - _SEARCHABLE} more"] if len(labels) > _SEARCHABLE else []
            listing = "\n".join([f"- {label}" for label in labels[:_SEARCHABLE]] + more)
            text = tool["function"].get("description") or ""
            tool = {**tool, "function": {**tool["function"], "description": f"{text}\n\nTools this search can load "
                                         f"(each can be called once a search has loaded it):\n{listing}".lstrip()}}
        out.append(tool)
    return out


def _named(choice: Mapping[str, Any], where: str) -> str:
    name = choice.get("name")
    if not isinstance(name, str) or not name:
        raise BadRequest(f"{where}.name must be a tool's name", param=f"{where}.name")
    return name


def _tool_choice(choice: Any, chat: dict[str, Any]) -> None:
    """``tool_choice`` onto ``chat`` (whose ``tools`` are the client tools offered)."""
    if isinstance(choice, str) and choice in _CHOICES:
        chat["tool_choice"] = choice
        return
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind in ("function", "custom"):
        name = chat_name(_named(choice, "tool_choice"), choice.get("namespace"))
        chat["tool_choice"] = {"type": "function", "function": {"name": name}}
    elif kind == "allowed_tools":
        allowed = choice.get("tools")
        mode = choice.get("mode", "auto")
        if not isinstance(allowed, list) or mode not in ("auto", "required"):
            raise BadRequest("tool_choice: allowed_tools needs a 'tools' list and mode 'auto' or 'required'",
                             param="tool_choice")
        names = {chat_name(str(t.get("name")), t.get("namespace")) for t in allowed
                 if isinstance(t, dict) and t.get("type") in CLIENT_TOOLS}
        chat["tools"] = [t for t in chat.get("tools", ()) if t["function"]["name"] in names]
        if not chat["tools"]:
            del chat["tools"]
        chat["tool_choice"] = mode
    elif isinstance(kind, str):
        raise BadRequest(f"tool_choice forces the hosted tool {kind!r}, which no backend here can run",
                         param="tool_choice")
    else:
        raise BadRequest("tool_choice must be 'auto', 'none', 'required', {'type': 'function', 'name': ...}, "
                         "{'type': 'custom', 'name': ...} or {'type': 'allowed_tools', ...}", param="tool_choice")


def _text_format(text: Any, chat: dict[str, Any]) -> None:
    if not isinstance(text, dict):
        raise BadRequest("text must be an object", param="text")
    form = text.get("format")
    if form is None:
        return
    kind = form.get("type") if isinstance(form, dict) else None
    if kind == "text":
        return
    if kind == "json_object":
        chat["response_format"] = {"type": "json_object"}
    elif kind == "json_schema":
        if not isinstance(form.get("schema"), dict):
            raise BadRequest("text.format.schema must be a JSON schema object", param="text.format.schema")
        spec = {k: form[k] for k in ("name", "schema", "strict", "description") if k in form}
        spec.setdefault("name", "response")
        chat["response_format"] = {"type": "json_schema", "json_schema": spec}
    else:
        raise BadRequest("text.format.type must be 'text', 'json_schema' or 'json_object'", param="text.format")


def _number(body: Mapping[str, Any], key: str) -> Any:
    value = body.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise BadRequest(f"{key} must be a number", param=key)
    return value


def _refuse_unserved(body: Mapping[str, Any]) -> None:
    """The fields a chat backend cannot serve, whose loss would change the answer."""
    if body.get("background") is True:
        raise BadRequest("background: background responses are not served here; send the request without it",
                         param="background")
    for key in ("conversation", "prompt"):
        if body.get(key) is not None:
            raise BadRequest(f"{key}: stored {key}s are not served here; send the input itself", param=key)
    logprobs = body.get("top_logprobs")
    if logprobs is not None and logprobs != 0:
        raise BadRequest("top_logprobs: log probabilities are not served by this front", param="top_logprobs")


def _echo(body: Mapping[str, Any]) -> dict[str, Any]:
    """The request's settings as the response object repeats them."""
    reasoning = body["reasoning"] if isinstance(body.get("reasoning"), dict) else {}
    text = body["text"] if isinstance(body.get("text"), dict) else {}
    return {
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "metadata": body.get("metadata") if isinstance(body.get("metadata"), dict) else {},
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": reasoning.get("effort"), "summary": reasoning.get("summary")},
        "store": body.get("store", True), "temperature": body.get("temperature"),
        "text": {"format": text.get("format") or {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
        "top_p": body.get("top_p"), "truncation": body.get("truncation", "disabled"), "user": body.get("user"),
        "background": False,
    }


def to_chat_request(body: Mapping[str, Any], previous: Sequence[dict[str, Any]] = (),
                    items: ItemLookup | None = None) -> ResponsesRequest:
    """A ``/v1/responses`` body -> the equivalent ``/v1/chat/completions`` body, and what the answer needs.
    ``previous``: the chat messages of the stored conversation that ``previous_response_id`` names; ``items``:
    where an ``item_reference`` finds its item."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("model: a model name is required", param="model")
    _refuse_unserved(body)
    if "input" not in body or body["input"] is None:
        raise BadRequest("input: a string or a list of items is required", param="input")
    given = chat_messages(body["input"], items=items)
    history = [*previous, *given.messages]  # the stored messages themselves: nothing downstream modifies them
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise BadRequest("instructions must be a string", param="instructions")
    system = [{"role": "system", "content": instructions}] if instructions else []
    chat: dict[str, Any] = {"model": model, "messages": system + history}
    notes = list(given.notes)
    max_tokens = body.get("max_output_tokens")
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise BadRequest("max_output_tokens must be a positive integer", param="max_output_tokens")
        chat["max_tokens"] = max_tokens
    for key in ("temperature", "top_p"):
        if _number(body, key) is not None:
            chat[key] = body[key]
    if body.get("parallel_tool_calls") is not None:
        if not isinstance(body["parallel_tool_calls"], bool):
            raise BadRequest("parallel_tool_calls must be true or false", param="parallel_tool_calls")
        chat["parallel_tool_calls"] = body["parallel_tool_calls"]
    user = body.get("user") or body.get("safety_identifier")
    if isinstance(user, str) and user:
        chat["user"] = user
    offered: dict[str, Offered] = {}
    tools: list[dict[str, Any]] = []
    held: Held = []  # deferred functions, offered once a search has loaded them
    if body.get("tools") is not None:
        tools, offered = _tools(body["tools"], notes, held=held)
    for where, found in given.found_tools:  # what a client-run tool_search found: offered from then on
        tools += _tools(found, notes, where, offered, found=True)[0]
    tools = _deferred(tools, held, body.get("tools") or (), notes)
    if tools:
        chat["tools"] = list({t["function"]["name"]: t for t in tools}.values())
    if body.get("tool_choice") is not None:
        _tool_choice(body["tool_choice"], chat)
        if "tools" not in chat and chat.get("tool_choice") not in ("none", "auto"):
            raise BadRequest("tool_choice asks for a tool call, but no function or custom tools were given",
                             param="tool_choice")
    if "tools" not in chat:  # auto and none mean the same then, and OpenAI refuses either without tools
        chat.pop("tool_choice", None)
    if body.get("text") is not None:
        _text_format(body["text"], chat)
    reasoning = body.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, dict):
            raise BadRequest("reasoning must be an object", param="reasoning")
        if reasoning.get("effort") is not None:
            if reasoning["effort"] not in _EFFORTS:
                raise BadRequest(f"reasoning.effort must be one of {list(_EFFORTS)}", param="reasoning.effort")
            chat["reasoning_effort"] = reasoning["effort"]
    if body.get("store") is not None and not isinstance(body["store"], bool):
        raise BadRequest("store must be true or false", param="store")
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return ResponsesRequest(chat=chat, echo=_echo(body), offered=offered, history=history,
                            notes=notes)
