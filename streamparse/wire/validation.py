"""What the proxy accepts from clients, checked before anything is forwarded.

Invariant: a request that leaves here as a dict is strict JSON (no NaN or
Infinity, no number past a double's range, nested at most ``MAX_DEPTH`` levels, every string UTF-8 encodable: no lone
surrogate) within the size limit, and its
``tools`` / ``tool_choice`` are usable; anything else is a ``BadRequest``
that names the field, so the upstream never spends a generation on it.
"""

from __future__ import annotations

import json
import re
from typing import Any, AsyncIterable, Mapping

__all__ = ["BadRequest", "MAX_DEPTH", "read_body", "parse_json_object", "check_chat_request", "shown_id", "SHOWN_ID_CHARS"]

MAX_DEPTH = 64  # JSON nesting a chat request may use (tool schemas rarely pass 10)


class BadRequest(Exception):
    """The client's request cannot be forwarded: a 400 (or ``status``) with this message."""

    def __init__(self, message: str, *, param: str | None = None, status: int = 400):
        super().__init__(message)
        self.param = param
        self.status = status


SHOWN_ID_CHARS = 64  # an id quoted in an error message is cut to this many characters


def shown_id(value: Any) -> str:
    """An id as an error message quotes it: its repr, cut to :data:`SHOWN_ID_CHARS` characters (with the length
    it had) so a huge id never makes a huge answer."""
    if not isinstance(value, str):
        return f"(a {type(value).__name__}, not a string)"
    if len(value) <= SHOWN_ID_CHARS:
        return repr(value)
    return f"{value[:SHOWN_ID_CHARS]!r}… ({len(value)} characters)"


async def read_body(declared: str | None, pieces: AsyncIterable[bytes], limit: int) -> bytes:
    """The request body, refused with a 413 as soon as it passes ``limit`` bytes."""
    if declared and declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"request body is {declared} bytes; the limit is {limit}", status=413)
    parts: list[bytes] = []
    size = 0
    async for piece in pieces:
        size += len(piece)
        if size > limit:
            raise BadRequest(f"request body is larger than the limit of {limit} bytes", status=413)
        parts.append(piece)
    return b"".join(parts)


def _no_constant(name: str) -> Any:
    raise BadRequest(f"request body holds {name}, which is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise BadRequest(f"request body holds the number {text[:40]}, too large for a double")
    return value


def _depth(value: Any) -> int:
    """Nesting depth of decoded JSON, without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = node.values()
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in node if isinstance(child, (dict, list)))
    return deepest


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any) -> bool:
    """Whether any string (or key) in decoded JSON holds a lone surrogate (not UTF-8 encodable). Iterative."""
    stack = [value]
    while stack:
        node = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else node if isinstance(node, list) else [node]
        for item in items:
            for part in item if isinstance(node, dict) else (item,):
                if isinstance(part, str):
                    try:
                        part.encode("utf-8")
                    except UnicodeEncodeError:
                        return True
                elif isinstance(part, (dict, list)):
                    stack.append(part)
    return False


def parse_json_object(body: bytes) -> dict[str, Any]:
    """A request body -> its JSON object, or BadRequest (never a RecursionError or a 500)."""
    try:
        payload = json.loads(body, parse_constant=_no_constant, parse_float=_finite)
    except RecursionError:
        raise BadRequest(f"request body is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # also UnicodeDecodeError
        raise BadRequest(f"request body is not valid JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise BadRequest("request body must be a JSON object")
    if _depth(payload) > MAX_DEPTH:
        raise BadRequest(f"request body is nested more than {MAX_DEPTH} levels deep")
    if _SURROGATE_ESCAPE.search(body) and _lone_surrogate(payload):  # JSON allows "\ud800"; UTF-8 cannot carry it
        raise BadRequest("request body holds a lone UTF-16 surrogate escape (such as \\ud800), which is not text")
    return payload


def _tool_names(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        raise BadRequest(f"'tools' must be a list of tools, not {type(tools).__name__}", param="tools")
    names = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise BadRequest(f"{where} must be an object", param=where)
        if tool.get("type", "function") != "function":
            raise BadRequest(f"{where}.type must be 'function', not {tool.get('type')!r}", param=f"{where}.type")
        fn = tool.get("function")
        if not isinstance(fn, dict):
            raise BadRequest(f"{where}.function must be an object with a 'name'", param=f"{where}.function")
        name = fn.get("name")
        if not isinstance(name, str) or not name.strip():
            raise BadRequest(f"{where}.function.name must be a non-empty string", param=f"{where}.function.name")
        params = fn.get("parameters")
        if params is not None and not isinstance(params, dict):
            raise BadRequest(f"{where}.function.parameters must be a JSON schema object",
                             param=f"{where}.function.parameters")
        names.append(name)
    return names


def _check_tool_choice(choice: Any, names: list[str]) -> None:
    if choice is None or choice in ("auto", "none", "required"):
        return
    if isinstance(choice, dict) and choice.get("type", "function") == "function":
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(name, str) and name in names:
            return
        if isinstance(name, str):
            raise BadRequest(f"tool_choice names {name!r}, which is not among the tools", param="tool_choice")
    raise BadRequest("tool_choice must be 'auto', 'none', 'required' or "
                     "{'type': 'function', 'function': {'name': ...}}", param="tool_choice")


def check_chat_request(payload: Mapping[str, Any]) -> None:
    """Refuse what the upstream might accept but no tool parsing can use."""
    names = _tool_names(payload["tools"]) if payload.get("tools") is not None else []
    _check_tool_choice(payload.get("tool_choice"), names)
    if not isinstance(payload.get("messages", []), list):
        raise BadRequest("'messages' must be a list", param="messages")
    if "stream" in payload and not isinstance(payload["stream"], bool) and payload["stream"] is not None:
        raise BadRequest("'stream' must be true or false", param="stream")
