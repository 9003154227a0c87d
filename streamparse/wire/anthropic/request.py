"""Anthropic Messages requests as OpenAI chat-completion requests.

Invariant: ``to_chat_request`` either returns a chat request that says what the Anthropic request said (system,
every message and block in order, tools, tool choice, sampling, stop and output settings) or raises
``BadRequest`` naming the field. Nothing is dropped silently: what has no OpenAI equivalent is mapped, or ignored
because ignoring it cannot change what the answer means (each listed below), or refused where it would; what
happened to the tools (server tools and deferred tools left out, deferred tools offered early) is said in
``notes``, one sentence each. The input is never modified. Blocks are translated by ``blocks``, tools by
``tools`` (their docstrings hold those decisions).

Mapping:
- ``system`` (string or text blocks) -> the first ``system`` message; Claude Code's attribution block (a text
  block starting ``x-anthropic-billing-header:``, which it varies by session and is addressed to Anthropic's
  billing, not the model) is left out, so a backend's prompt cache keeps the prefix;
- ``messages``: ``user`` and ``assistant`` as ``blocks`` maps them; ``system`` messages (string or text blocks;
  Claude Code sends them) -> a ``system`` message in their place (``proxy/plan.py`` folds them into the first
  for a backend with ``system_messages = "fold"``); one with ``clear_at: "next_user_message"`` is left out once
  a later user message exists, as Anthropic stops showing it; their ``output_config`` (per-turn effort) is
  ignored;
- ``tools`` (see ``tools``: server tools and deferred tools not loaded are left out) -> functions; ``tool_choice``
  auto/any/tool/none -> auto/required/named/none, ``disable_parallel_tool_use`` -> ``parallel_tool_calls: false``;
  with no function left, ``auto`` and ``none`` (which then mean the same) and ``parallel_tool_calls`` are not
  sent (OpenAI refuses a ``tool_choice`` without ``tools``), and one that asks for a call is refused;
- ``max_tokens`` (a positive integer: ``0``, Anthropic's cache warming, generates nothing and is refused),
  ``stop_sequences`` (-> ``stop``), ``temperature``, ``top_p``, ``top_k``, ``metadata.user_id`` (-> ``user``),
  ``stream`` (with ``stream_options.include_usage``);
- ``thinking`` ``enabled`` / ``adaptive`` / ``between_tools`` / ``disabled`` ->
  ``chat_template_kwargs.enable_thinking`` (read by vLLM, SGLang and llama.cpp); ``budget_tokens`` and
  ``display`` are ignored (no OpenAI equivalent; the answer is the same, its reasoning length aside);
- ``output_config.format`` (and the older beta ``output_format``) ``json_schema`` -> ``response_format``
  ``json_schema`` (strict), as ignoring it would return free text where JSON was asked for; another format is
  refused. ``output_config.effort`` and ``task_budget`` are ignored (how hard to think: no portable equivalent);
- ``thread`` ``{"type": "continue"}`` (beta server-held history) is refused: the history it stands for is not
  kept here, and the answer would miss it; ``{"type": "create"}`` is ignored;
- ignored, as they only steer Anthropic's service and cannot change the answer's meaning: ``cache_control``
  (top level, on blocks and on tools), ``context_management`` and ``compaction`` (server-side context editing:
  the backend simply sees the whole history), ``container`` and ``mcp_servers`` (execution on Anthropic's side;
  their tools are not offered, as server tools are not), ``service_tier``, ``speed``, ``inference_geo``,
  ``diagnostics``, ``fallbacks``, ``fallback_credit_token``, ``billing_policy``, ``user_profile_id``,
  ``workspace_id``, ``betas``, and any other top-level field. The ``anthropic-beta`` header and a ``?beta=true``
  query (the SDK's beta client and Claude Code send both) change nothing here.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..validation import BadRequest
from .blocks import Changes, assistant_message, kind_of, system_text, texts, user_messages
from .tools import DEFERRED_NOTE, SERVER_TOOL_NOTE, offered_tools

__all__ = ["to_chat_request", "estimate_input_tokens", "SERVER_TOOL_NOTE", "DEFERRED_NOTE", "BILLING_HEADER"]

BILLING_HEADER = "x-anthropic-billing-header:"  # Claude Code's attribution line, sent as the first system block
_ROLES = ("user", "assistant", "system")
_THINKING = ("enabled", "adaptive", "between_tools", "disabled")


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


def _system(value: Any) -> str:
    """The top-level ``system`` (string or text blocks) as one string, without Claude Code's attribution block."""
    if isinstance(value, list):
        value = [b for b in value if not (kind_of(b) == "text" and isinstance(b.get("text"), str)
                                          and b["text"].startswith(BILLING_HEADER))]
    return "\n".join(texts(value, "system"))


def _cleared(message: Mapping[str, Any], at: str, index: int, last_user: int) -> bool:
    """A system message Anthropic no longer shows: ``clear_at: "next_user_message"`` and a user message after it."""
    clear = message.get("clear_at")
    if clear not in (None, "never", "next_user_message"):
        raise BadRequest(f"{at}.clear_at must be 'next_user_message' or 'never'", param=f"{at}.clear_at")
    return clear == "next_user_message" and index < last_user


def _messages(body: Mapping[str, Any], changes: Changes) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise BadRequest("messages: a list of messages is required", param="messages")
    out: list[dict[str, Any]] = []
    if "system" in body and body["system"] is not None:
        system = _system(body["system"])
        if system:
            out.append({"role": "system", "content": system})
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"), default=-1)
    for i, message in enumerate(messages):
        at = f"messages[{i}]"
        role = message.get("role") if isinstance(message, dict) else None
        if role not in _ROLES:
            raise BadRequest(f"{at}.role must be 'user', 'assistant' or 'system'", param=f"{at}.role")
        if role == "system" and "content" not in message and isinstance(message.get("output_config"), dict):
            continue  # a per-turn output_config alone (ignored, see above)
        if "content" not in message:
            raise BadRequest(f"{at}.content is required", param=f"{at}.content")
        if role == "user":
            out.extend(user_messages(message["content"], f"{at}.content", changes))
        elif role == "assistant":
            out.append(assistant_message(message["content"], f"{at}.content", changes))
        elif not _cleared(message, at, i, last_user):
            text = system_text(message["content"], f"{at}.content", changes)
            if text:
                out.append({"role": "system", "content": text})
    return out


def _output_format(body: Mapping[str, Any], chat: dict[str, Any]) -> None:
    """``output_config.format`` (or the older beta ``output_format``) as ``response_format``."""
    config = body.get("output_config")
    if config is not None and not isinstance(config, dict):
        raise BadRequest("output_config must be an object", param="output_config")
    fmt, where = (config or {}).get("format"), "output_config.format"
    if fmt is None:
        fmt, where = body.get("output_format"), "output_format"
    if fmt is None:
        return
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema" or not isinstance(fmt.get("schema"), dict):
        raise BadRequest(f"{where} must be {{'type': 'json_schema', 'schema': {{...}}}}", param=where)
    chat["response_format"] = {"type": "json_schema",
                               "json_schema": {"name": "output", "schema": fmt["schema"], "strict": True}}


def _number(body: Mapping[str, Any], key: str) -> Any:
    value = body.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise BadRequest(f"{key} must be a number", param=key)
    return value


def to_chat_request(body: Mapping[str, Any], *, need_max_tokens: bool = True,
                    notes: list[str] | None = None) -> dict[str, Any]:
    """An Anthropic ``/v1/messages`` body -> the equivalent OpenAI ``/v1/chat/completions`` body; ``notes``
    (when given) gets a sentence for each kind of tool left out or offered early."""
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("model: a model name is required", param="model")
    changes: Changes = []
    chat: dict[str, Any] = {"model": model, "messages": _messages(body, changes)}
    max_tokens = body.get("max_tokens")
    if max_tokens is not None or need_max_tokens:
        if max_tokens == 0 and not isinstance(max_tokens, bool):
            raise BadRequest("max_tokens: 0 (Anthropic's prompt-cache warming) asks for no answer at all, which a "
                             "chat-completions backend cannot give; a positive integer is required", param="max_tokens")
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
    tools = offered_tools(body.get("tools"), changes, notes)
    if tools:
        chat["tools"] = tools
    if "tool_choice" in body:
        _tool_choice(body["tool_choice"], chat)
        if "tools" not in chat:
            if chat.get("tool_choice") not in (None, "none", "auto"):
                raise BadRequest("tool_choice asks for a tool call, but no tools were given", param="tool_choice")
            chat.pop("tool_choice", None)
            chat.pop("parallel_tool_calls", None)
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in _THINKING:
        chat["chat_template_kwargs"] = {"enable_thinking": thinking["type"] != "disabled"}
    _output_format(body, chat)
    thread = body.get("thread")
    if isinstance(thread, dict) and thread.get("type") == "continue":
        raise BadRequest("thread: a server-held conversation is not kept here; send the whole history in messages",
                         param="thread")
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
