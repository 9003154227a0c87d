"""Anthropic Messages requests as OpenAI chat-completion requests.

Invariant: ``to_chat_request`` either returns a chat request that says what the
Anthropic request said (system, every message and block in order, tools, tool
choice, sampling and stop settings) or raises ``BadRequest`` naming the field;
it never drops a block silently. What has no OpenAI equivalent is mapped as
documented below, and the input is never modified.

Mapping:
- ``system`` (string or text blocks) -> the first ``system`` message;
- user ``text`` / ``image`` blocks -> content (a string when all are text, else parts with
  ``image_url``; base64 images become data URLs); plain-text ``document`` blocks -> text;
- ``tool_result`` blocks -> ``tool`` messages (before the user's other blocks, as OpenAI
  wants them right after the assistant's calls); ``is_error`` prefixes the text with ``Error:``;
- assistant ``text`` -> content, ``tool_use`` -> ``tool_calls``; ``thinking`` blocks are dropped;
- ``tools`` with ``input_schema`` -> functions; Anthropic server tools (a ``type`` other than
  ``custom``, no ``input_schema``) run on Anthropic's side only and are left out;
- ``tool_choice`` auto/any/tool/none -> auto/required/named/none, ``disable_parallel_tool_use``
  -> ``parallel_tool_calls: false``;
- ``max_tokens``, ``stop_sequences`` (-> ``stop``), ``temperature``, ``top_p``, ``top_k``,
  ``metadata.user_id`` (-> ``user``), ``thinking`` (-> ``chat_template_kwargs.enable_thinking``,
  which vLLM, SGLang and llama.cpp read), ``stream`` (with ``stream_options.include_usage``).
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..validation import BadRequest

__all__ = ["to_chat_request", "estimate_input_tokens", "SERVER_TOOL_NOTE"]

SERVER_TOOL_NOTE = "Anthropic server tools (web search, code execution...) have no equivalent here and are left out"
_ROLES = ("user", "assistant")


def _text_of(blocks: Any, where: str) -> str:
    """A string, or a list of text blocks, as one string."""
    if isinstance(blocks, str):
        return blocks
    if not isinstance(blocks, list):
        raise BadRequest(f"{where} must be a string or a list of text blocks", param=where)
    parts = []
    for i, block in enumerate(blocks):
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise BadRequest(f"{where}[{i}] must be a text block", param=f"{where}[{i}]")
        parts.append(block["text"])
    return "\n".join(parts)


def _image_url(block: Mapping[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        media = source.get("media_type") or "image/png"
        return {"type": "image_url", "image_url": {"url": f"data:{media};base64,{source['data']}"}}
    if isinstance(source, dict) and source.get("type") == "url" and isinstance(source.get("url"), str):
        return {"type": "image_url", "image_url": {"url": source["url"]}}
    raise BadRequest(f"{where}.source must be a base64 or url image source", param=f"{where}.source")


def _tool_result_text(block: Mapping[str, Any], where: str) -> str:
    content = block.get("content", "")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        pieces = []
        for i, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif kind in ("image", "document", "search_result"):
                pieces.append(f"[{kind} omitted]")
            else:
                raise BadRequest(f"{where}.content[{i}] must be a text or image block", param=f"{where}.content[{i}]")
        text = "\n".join(pieces)
    else:
        raise BadRequest(f"{where}.content must be a string or a list of blocks", param=f"{where}.content")
    return f"Error: {text}" if block.get("is_error") else text


def _user_messages(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string or a list of blocks", param=where)
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        at = f"{where}[{i}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            parts.append(_image_url(block, at))
        elif kind == "document" and isinstance(block.get("source"), dict) and block["source"].get("type") == "text":
            parts.append({"type": "text", "text": str(block["source"].get("data", ""))})
        elif kind == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                raise BadRequest(f"{at}.tool_use_id must be a string", param=f"{at}.tool_use_id")
            results.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": _tool_result_text(block, at)})
        elif kind in ("thinking", "redacted_thinking"):
            continue
        else:
            raise BadRequest(f"{at}: a user message cannot hold a {kind!r} block here", param=at)
    if not parts:
        return results
    if all(p["type"] == "text" for p in parts):
        return results + [{"role": "user", "content": "\n".join(p["text"] for p in parts)}]
    return results + [{"role": "user", "content": parts}]


def _assistant_message(content: Any, where: str) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    if not isinstance(content, list):
        raise BadRequest(f"{where} must be a string or a list of blocks", param=where)
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for i, block in enumerate(content):
        at = f"{where}[{i}]"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise BadRequest(f"{at} needs a string 'id' and 'name'", param=at)
            arguments = block.get("input", {})
            calls.append({"id": block["id"], "type": "function",
                          "function": {"name": block["name"], "arguments": json.dumps(arguments, ensure_ascii=False)}})
        elif kind in ("thinking", "redacted_thinking"):
            continue  # the model's own earlier reasoning: not sent back to an OpenAI-style backend
        else:
            raise BadRequest(f"{at}: an assistant message cannot hold a {kind!r} block here", param=at)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise BadRequest("tools must be a list", param="tools")
    out = []
    for i, tool in enumerate(tools):
        at = f"tools[{i}]"
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"].strip():
            raise BadRequest(f"{at} needs a non-empty string 'name'", param=f"{at}.name")
        if tool.get("type", "custom") != "custom" and "input_schema" not in tool:
            continue  # a server tool (see SERVER_TOOL_NOTE)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict):
            raise BadRequest(f"{at}.input_schema must be a JSON schema object", param=f"{at}.input_schema")
        function: dict[str, Any] = {"name": tool["name"], "parameters": schema}
        if isinstance(tool.get("description"), str):
            function["description"] = tool["description"]
        out.append({"type": "function", "function": function})
    return out


def _tool_choice(choice: Any, chat: dict[str, Any]) -> None:
    if choice is None:
        return
    kind = choice.get("type") if isinstance(choice, dict) else None
    if kind == "auto":
        chat["tool_choice"] = "auto"
    elif kind == "any":
        chat["tool_choice"] = "required"
    elif kind == "none":
        chat["tool_choice"] = "none"
    elif kind == "tool" and isinstance(choice.get("name"), str):
        chat["tool_choice"] = {"type": "function", "function": {"name": choice["name"]}}
    else:
        raise BadRequest("tool_choice must be {'type': 'auto' | 'any' | 'none'} or {'type': 'tool', 'name': ...}",
                         param="tool_choice")
    if choice.get("disable_parallel_tool_use") is True:
        chat["parallel_tool_calls"] = False


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequest("messages: a list of messages is required", param="messages")
    out: list[dict[str, Any]] = []
    if "system" in body and body["system"] is not None:
        system = _text_of(body["system"], "system")
        if system:
            out.append({"role": "system", "content": system})
    for i, message in enumerate(messages):
        at = f"messages[{i}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            raise BadRequest(f"{at}.role must be 'user' or 'assistant'", param=f"{at}.role")
        if "content" not in message:
            raise BadRequest(f"{at}.content is required", param=f"{at}.content")
        if role == "user":
            out.extend(_user_messages(message["content"], f"{at}.content"))
        else:
            out.append(_assistant_message(message["content"], f"{at}.content"))
    return out


def _number(body: Mapping[str, Any], key: str) -> Any:
    value = body.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise BadRequest(f"{key} must be a number", param=key)
    return value


def to_chat_request(body: Mapping[str, Any], *, need_max_tokens: bool = True) -> dict[str, Any]:
    """An Anthropic ``/v1/messages`` body -> the equivalent OpenAI ``/v1/chat/completions`` body."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("model: a model name is required", param="model")
    chat: dict[str, Any] = {"model": model, "messages": _messages(body)}
    max_tokens = body.get("max_tokens")
    if max_tokens is not None or need_max_tokens:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise BadRequest("max_tokens: a positive integer is required", param="max_tokens")
        chat["max_tokens"] = max_tokens
    for key in ("temperature", "top_p", "top_k"):
        if _number(body, key) is not None:
            chat[key] = body[key]
    stops = body.get("stop_sequences")
    if stops is not None:
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise BadRequest("stop_sequences must be a list of strings", param="stop_sequences")
        if stops:
            chat["stop"] = list(stops)
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        chat["user"] = metadata["user_id"]
    if body.get("tools") is not None:
        tools = _tools(body["tools"])
        if tools:
            chat["tools"] = tools
    if "tool_choice" in body:
        _tool_choice(body["tool_choice"], chat)
        if "tools" not in chat and chat.get("tool_choice") not in (None, "none", "auto"):
            raise BadRequest("tool_choice asks for a tool call, but no tools were given", param="tool_choice")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled", "adaptive"):
        chat["chat_template_kwargs"] = {"enable_thinking": thinking["type"] != "disabled"}
    if body.get("stream") is True:
        chat["stream"] = True
        chat["stream_options"] = {"include_usage": True}
    return chat


IMAGE_TOKENS = 250  # what one image is counted as


def estimate_input_tokens(chat: Mapping[str, Any]) -> int:
    """A documented estimate, not a tokenizer: one token per four characters of the prompt the backend would
    see (message text, calls, tool definitions as JSON), ``IMAGE_TOKENS`` per image, and four per message for
    the chat template's framing."""
    chars = 0
    messages = chat.get("messages") or []
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(p.get("text", "")) if p.get("type") == "text" else 4 * IMAGE_TOKENS for p in content)
        for call in message.get("tool_calls") or ():
            chars += len(call["function"]["name"]) + len(call["function"]["arguments"])
    if chat.get("tools"):
        chars += len(json.dumps(chat["tools"], ensure_ascii=False))
    return math.ceil(chars / 4) + 4 * len(messages)
