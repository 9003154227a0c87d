"""What the OpenAI adapters read: JSON objects (dicts, or openai SDK objects read as their JSON), the tools
to parse with, and the one rule for whether to parse an answer at all.

Invariants: nothing here parses text or builds output. A request whose ``tool_choice`` names one tool is
parsed with that tool alone (``tools_from``), on every path that reads through here. ``should_parse`` is the only implementation of
the rule (stated in its docstring, and in ``streamparse.wire.openai``'s); the library's rewriters, the
ASGI middleware and the proxy's plan all decide through it.
"""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping, Protocol, Sequence, TypeGuard, Union

__all__ = ["Tools", "Model", "JSONObject", "tools_from", "should_parse", "named_tool", "map_strings"]

Tools = Sequence[Mapping[str, Any]] | None


class Model(Protocol):
    """A pydantic v2 model, such as the openai SDK's ``ChatCompletionChunk`` and ``ChatCompletion``."""

    def model_dump(self, *, mode: Literal["json", "python"] | str = ..., by_alias: bool | None = ...,
                   exclude_unset: bool = ...) -> dict[str, Any]: ...


JSONObject = Union[Mapping[str, Any], Model]


def _is_object(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A JSON object: a dict (checked first: ``isinstance(x, Mapping)`` alone is slow) or another Mapping."""
    return isinstance(value, dict) or isinstance(value, Mapping)


def _json_object(value: Any, what: str) -> Mapping[str, Any]:
    """``value`` as a JSON object: a dict (checked first: the common case costs one ``isinstance``) or other
    Mapping as it is; a pydantic model (an openai SDK object) as the JSON it was built from: API field names,
    only the fields it was given (``exclude_unset``: a field the server left out stays out, a null stays null)."""
    if isinstance(value, dict):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, Mapping):
        return value
    raise ValueError(f"{what} must be a JSON object, not {type(value).__name__}")


def named_tool(request: Mapping[str, Any] | None) -> str | None:
    """The one tool a request's ``tool_choice`` names (``{"type": "function", "function": {"name"}}``, Anthropic's
    ``{"type": "tool", "name"}``, or the legacy ``function_call: {"name"}``), else None."""
    if request is None:
        return None
    choice = request.get("tool_choice")
    if not _is_object(choice):
        choice = request.get("function_call")
        if not _is_object(choice):
            return None
    fn = choice.get("function")
    name = fn.get("name") if _is_object(fn) else choice.get("name")
    return name if isinstance(name, str) else None


def _tool_name(tool: Any) -> Any:
    if not _is_object(tool):
        return None
    fn = tool.get("function")
    return fn.get("name") if _is_object(fn) else tool.get("name")


def tools_from(tools: Tools, request: Mapping[str, Any] | None) -> Tools:
    """The tools to parse with: given explicitly (an empty list included), else the request body's ``tools``
    when it is a list, else None. When the request's ``tool_choice`` names one of them, only that one: a call
    the model writes to another tool is not the call the client demanded, and stays text (with the parser's
    ``unknown_tool`` diagnostic)."""
    if tools is None and request is not None:
        found = request.get("tools")
        tools = found if isinstance(found, list) else None
    name = named_tool(request)
    if name is not None and tools:
        only = [tool for tool in tools if _tool_name(tool) == name]
        if only:
            return only
    return tools


def should_parse(tools: Tools, request: Mapping[str, Any] | None, *, parse_without_tools: bool = False) -> bool:
    """An answer is parsed unless the request's ``tool_choice`` is ``"none"``, or no tools are offered (the
    ``tools`` argument, else the request's ``tools``, is missing or empty) and ``parse_without_tools`` is false.

    Not parsed means passed on untouched. ``parse_without_tools`` then parses what needs no tool names: the
    explicitly tagged blocks (the forms that look like prose are gated by tool names). Its default is true in
    the library's rewriters (``rewrite_stream``, ``rewrite_completion``, ``ChunkRewriter``: calling one asks
    for parsing) and false in the middleware and the proxy, which stand in front of clients that did not ask.
    """
    if request is not None and request.get("tool_choice") == "none":
        return False
    return bool(tools_from(tools, request)) or parse_without_tools


def map_strings(value: Any, fn: Callable[[str], str]) -> tuple[Any, int]:
    """Decoded JSON with ``fn`` applied to every string and every key, changed in place; and how many changed.
    Iterative, so any depth ``json`` can decode is walked (masking secrets, fixing surrogates)."""
    if isinstance(value, str):
        mapped = fn(value)
        return mapped, int(mapped != value)
    changed = 0
    stack: list[Any] = [value] if isinstance(value, (dict, list)) else []  # only containers ever on it
    while stack:
        node = stack.pop()
        slots = list(node) if isinstance(node, dict) else range(len(node))  # keys, or a list's indexes
        for slot in slots:
            child = node[slot]
            if isinstance(child, str):
                mapped = fn(child)
                if mapped != child:
                    node[slot], changed = mapped, changed + 1
            elif isinstance(child, (dict, list)):
                stack.append(child)
            if isinstance(slot, str) and (clean := fn(slot)) != slot:
                node[clean] = node.pop(slot)
                changed += 1
    return value, changed
