"""Responses ``input`` items as chat-completions messages.

Invariant: ``chat_messages`` returns messages that say what the items said, in their order, or raises
``BadRequest`` naming the item (``input[3].content[1]``); it never drops content silently. What it leaves
out on purpose is only what a chat backend cannot be given back and need not be: the model's own earlier
``reasoning`` items (as chat clients do), and the call items of hosted tools (web search, file search,
computer use...), which a
proxy never makes (each of these is listed in ``Input.notes``).

Mapping:
- a string -> one ``user`` message;
- ``message`` items (``type`` may be left out): ``user`` / ``system`` / ``developer`` (-> ``system``) /
  ``assistant``; ``input_text`` and ``output_text`` parts -> text, ``refusal`` -> its text, ``input_image``
  -> an ``image_url`` part; ``input_file`` and ``input_audio`` -> 400 (a chat backend takes text and images);
- ``function_call`` and ``custom_tool_call`` (-> a call whose arguments are ``{"input": …}``; with a
  ``namespace``, named ``namespace__name`` as the tool was offered) -> the
  ``tool_calls`` of an assistant message: consecutive calls, and the assistant text just before them, share
  one message, as chat templates expect;
- ``function_call_output`` / ``custom_tool_call_output`` -> ``tool`` messages (list outputs: their text
  parts joined, other parts named);
- ``tool_search_call`` / ``tool_search_output`` that the client ran -> a ``tool_search`` call and its result
  (the tools found are listed in ``found_tools``, to be offered); run by OpenAI's servers -> left out, noted;
- ``item_reference`` -> the item it names, found by the caller's lookup (the proxy's stored answers; the Vercel
  AI SDK refers to its earlier steps this way); 400 when it is not found.

``input_items`` lists a request's input as the Responses API lists it back (``GET …/input_items``): each item
typed and with an id (a new one where it had none), references replaced by what they name, text content as parts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..validation import BadRequest, shown_id
from .vocab import CUSTOM_INPUT, chat_name, fresh_id

__all__ = ["Input", "chat_messages", "HOSTED_CALL_ITEMS", "ItemLookup", "input_items", "referenced_ids"]

ItemLookup = Callable[[str], "Mapping[str, Any] | None"]  # an output item by its id, as an answer carried it

_ROLES = {"user": "user", "system": "system", "developer": "system", "assistant": "assistant"}
_TEXT_PARTS = ("input_text", "output_text", "text", "summary_text", "reasoning_text")
# Items a hosted tool's run leaves in a conversation: only OpenAI's own servers make (and read) them.
HOSTED_CALL_ITEMS = frozenset({
    "web_search_call", "file_search_call", "computer_call", "computer_call_output", "image_generation_call",
    "code_interpreter_call", "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output", "apply_patch_call",
    "apply_patch_call_output", "compaction",
})


@dataclass
class Input:
    """The chat messages of a request's ``input``, and what was left out of them (each a sentence)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    found_tools: list[tuple[str, Any]] = field(default_factory=list)  # (where, tools a client's tool_search found)


def _string(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(f"{where}.{key} must be a non-empty string", param=f"{where}.{key}")
    return value


def _parts(content: Any, role: str, where: str) -> str | list[dict[str, Any]]:
    """A message's content: a string, or its parts as text (joined) or chat parts when an image is among them."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string or a list of content parts", param=where)
    parts: list[dict[str, Any]] = []
    for i, part in enumerate(content):
        at = f"{where}[{i}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            parts.append({"type": "text", "text": part["refusal"]})
        elif kind == "input_image" and role == "user":
            url = part.get("image_url")
            if not isinstance(url, str) or not url:
                raise BadRequest(f"{at}: an input_image needs an image_url (a URL or a data URL); file_id is not "
                                 "served here", param=f"{at}.image_url")
            image: dict[str, Any] = {"url": url}
            if part.get("detail") in ("low", "high", "auto"):
                image["detail"] = part["detail"]
            parts.append({"type": "image_url", "image_url": image})
        elif kind in ("input_file", "input_audio"):
            raise BadRequest(f"{at}: {kind} is not supported here (a chat backend takes text and images)",
                             param=at)
        else:
            raise BadRequest(f"{at}: a {role} message cannot hold a {kind!r} part", param=at)
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _output_text(output: Any, where: str) -> str:
    """A tool's output: a string, or its parts' text (an image or file part is named, not sent)."""
    if isinstance(output, str):
        return output
    if not isinstance(output, list):
        raise BadRequest(f"{where} must be a string or a list of content parts", param=where)
    pieces = []
    for i, part in enumerate(output):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            pieces.append(part["text"])
        elif kind in ("input_image", "input_file"):
            pieces.append(f"[{kind[6:]} omitted]")
        else:
            raise BadRequest(f"{where}[{i}] must be an input_text, input_image or input_file part",
                             param=f"{where}[{i}]")
    return "".join(pieces)


class _Builder:
    """Chat messages, with calls joined to the assistant message they follow."""

    def __init__(self) -> None:
        self.out = Input()

    def message(self, item: Mapping[str, Any], where: str) -> None:
        given = item.get("role")
        role = _ROLES.get(given) if isinstance(given, str) else None
        if role is None:
            raise BadRequest(f"{where}.role must be 'user', 'assistant', 'system' or 'developer'",
                             param=f"{where}.role")
        if "content" not in item:
            raise BadRequest(f"{where}.content is required", param=f"{where}.content")
        content = _parts(item["content"], role, f"{where}.content")
        self.out.messages.append({"role": role, "content": content})

    def call(self, call_id: str, name: str, arguments: str) -> None:
        messages = self.out.messages
        last = messages[-1] if messages else None
        if last is None or last["role"] != "assistant":
            last = {"role": "assistant", "content": None}
            messages.append(last)
        last.setdefault("tool_calls", []).append(
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})

    def result(self, call_id: str, output: str) -> None:
        self.out.messages.append({"role": "tool", "tool_call_id": call_id, "content": output})


_ID_PREFIXES = {"message": "msg_", "function_call": "fc_", "function_call_output": "fco_", "reasoning": "rs_",
                "custom_tool_call": "ctc_", "custom_tool_call_output": "ctco_"}
_TEXT_PART = {"assistant": "output_text"}  # the part type of a message's text, by role (else input_text)


def referenced_ids(value: Any) -> dict[str, int]:
    """The ids the ``item_reference`` items of an ``input`` name -> where each is first named (ids that are not
    strings left out)."""
    if not isinstance(value, list):
        return {}
    named: dict[str, int] = {}
    for at, item in enumerate(value):
        if isinstance(item, dict) and item.get("type") == "item_reference" and isinstance(item.get("id"), str):
            named.setdefault(item["id"], at)
    return named


def input_items(value: Any, items: ItemLookup | None = None) -> list[dict[str, Any]]:
    """A request's ``input`` (already read by ``chat_messages``) as listed items: see the module docstring."""
    raw = [{"type": "message", "role": "user", "content": value}] if isinstance(value, str) else value
    listed: list[dict[str, Any]] = []
    for item in raw if isinstance(raw, list) else ():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "item_reference":
            found = items(item["id"]) if items is not None and isinstance(item.get("id"), str) else None
            if found is None:
                continue
            item = found
        kind = str(item.get("type", "message"))
        out = {"id": fresh_id(_ID_PREFIXES.get(kind, "item_")), **item, "type": kind}
        if kind == "message" and isinstance(out.get("content"), str):
            out["content"] = [{"type": _TEXT_PART.get(str(out.get("role")), "input_text"), "text": out["content"]}]
        listed.append(out)
    return listed


def chat_messages(value: Any, where: str = "input", items: ItemLookup | None = None) -> Input:
    """A request's ``input`` (a string, or a list of items) as chat messages; ``BadRequest`` names what is wrong.
    ``items``: where an ``item_reference`` finds the item it names (None: nowhere)."""
    if isinstance(value, str):
        return Input([{"role": "user", "content": value}])
    if not isinstance(value, list):
        raise BadRequest(f"{where} must be a string or a list of items", param=where)
    build = _Builder()
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise BadRequest(f"{at} must be an object", param=at)
        kind = item.get("type", "message")
        if not isinstance(kind, str):
            raise BadRequest(f"{at}.type must be a string", param=f"{at}.type")
        if kind == "item_reference":
            found = items(item["id"]) if items is not None and isinstance(item.get("id"), str) else None
            if found is None:
                raise BadRequest(f"{at}: no stored item {shown_id(item.get('id'))} (items are kept with the answers "
                                 "this proxy stored); send the item itself", param=at)
            item, kind = found, str(found.get("type", "message"))
        if kind == "message":
            build.message(item, at)
        elif kind == "function_call":
            arguments = item.get("arguments", "")
            if not isinstance(arguments, str):
                raise BadRequest(f"{at}.arguments must be a string of JSON", param=f"{at}.arguments")
            build.call(_string(item, "call_id", at), chat_name(_string(item, "name", at), item.get("namespace")),
                       arguments)
        elif kind == "custom_tool_call":
            text = item.get("input", "")
            if not isinstance(text, str):
                raise BadRequest(f"{at}.input must be a string", param=f"{at}.input")
            build.call(_string(item, "call_id", at), chat_name(_string(item, "name", at), item.get("namespace")),
                       json.dumps({CUSTOM_INPUT: text}, ensure_ascii=False))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            if "output" not in item:
                raise BadRequest(f"{at}.output is required", param=f"{at}.output")
            build.result(_string(item, "call_id", at), _output_text(item["output"], f"{at}.output"))
        elif kind in ("tool_search_call", "tool_search_output") and item.get("execution") == "client":
            if kind == "tool_search_call":
                arguments = json.dumps(item.get("arguments"), ensure_ascii=False)
                build.call(_string(item, "call_id", at), "tool_search", arguments)
            else:
                found = item.get("tools")
                build.out.found_tools.append((f"{at}.tools", found))
                names = [t.get("name") for t in found if isinstance(t, dict)] if isinstance(found, list) else []
                listed = ", ".join(map(str, names)) or "none"
                build.result(_string(item, "call_id", at), f"Tools found, now available: {listed}")
        elif kind == "reasoning":
            continue  # the model's own earlier reasoning: not sent back to a chat backend (as chat clients do)
        elif kind in HOSTED_CALL_ITEMS:
            build.out.notes.append(f"{at}: a {kind} item (a hosted tool's) has no chat form and was left out")
        else:
            raise BadRequest(f"{at}: unknown item type {kind!r}", param=f"{at}.type")
    return build.out
