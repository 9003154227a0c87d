"""Anthropic Messages vocabulary: ids, stop reasons, usage, errors and the SSE frame.

Invariant: every value made here is one the Anthropic API itself could send: ids match
``^[a-zA-Z0-9_-]+$`` with the right prefix, stop reasons and error types come from its
lists, counts are non-negative integers.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from ...core.ids import fresh_id
from ..shapes import _is_object
from ..sse import dumps

__all__ = ["ERROR_TYPES", "tool_use_id", "message_id", "stop_reason", "usage_from", "encode_sse", "error_type",
           "error_body"]

# HTTP status -> Anthropic error type (https://docs.claude.com/en/api/errors; 402, 409 and 504 from the SDK's
# ErrorType). 503 is reported as overloaded, like 529. Other 4xx: invalid_request_error; anything else: api_error.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
    404: "not_found_error", 409: "conflict_error", 413: "request_too_large", 429: "rate_limit_error",
    500: "api_error", 503: "overloaded_error", 504: "timeout_error", 529: "overloaded_error",
}

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")  # Anthropic ids match ^[a-zA-Z0-9_-]+$
_BLOCK_STARTS = {"text": {"type": "text", "text": ""},
                 "thinking": {"type": "thinking", "thinking": "", "signature": ""}}
_DELTAS = {"text": "text_delta", "thinking": "thinking_delta"}
_STOP_REASONS = {"tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
                 "content_filter": "refusal"}
_COUNTS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) and value else default


def _fresh(prefix: str) -> str:
    return fresh_id(prefix)  # 24 secure random hex digits


def _rebrand(value: Any, prefix: str, known: tuple[str, ...]) -> str:
    """``prefix`` + ``value`` without its first known prefix, characters ids may not hold replaced by ``_``;
    a fresh random id when nothing is left."""
    rest = _str(value)
    rest = _UNSAFE.sub("_", next((rest[len(k):] for k in known if rest.startswith(k)), rest))
    return prefix + rest if rest else _fresh(prefix)


def tool_use_id(call_id: str) -> str:
    """``call_abc`` -> ``toolu_abc``; ``toolu_…`` kept; anything else ``toolu_`` + the (sanitized) id."""
    return _rebrand(call_id, "toolu_", ("toolu_", "call_"))


def message_id(upstream_id: Any) -> str:
    """A ``msg_…`` id from an upstream one (``chatcmpl-abc`` -> ``msg_abc``); fresh if there is none."""
    return _rebrand(upstream_id, "msg_", ("msg_", "chatcmpl-", "cmpl-"))


def stop_reason(finish_reason: str | None, *, matched_stop: str | None = None, had_tool_use: bool = False) -> str:
    """OpenAI ``finish_reason`` -> Anthropic ``stop_reason``. ``length`` and ``content_filter`` win over calls
    already made (the turn was cut, not handed to the tools); ``stop`` with a matched stop sequence is
    ``stop_sequence``; anything else ``end_turn``."""
    if finish_reason in _STOP_REASONS:
        return _STOP_REASONS[finish_reason]
    if had_tool_use:
        return "tool_use"
    return "stop_sequence" if finish_reason == "stop" and matched_stop is not None else "end_turn"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_from(usage: Any) -> dict[str, int]:
    """OpenAI usage (``prompt_tokens``, ``completion_tokens``, cached prompt tokens) or Anthropic usage -> the
    Anthropic counts it gives; unknown counts are left out. Anthropic's ``input_tokens`` does not include
    cache reads, so OpenAI's cached tokens move to ``cache_read_input_tokens``."""
    if not _is_object(usage):
        return {}
    out = {key: usage[key] for key in _COUNTS if _count(usage.get(key)) is not None}
    prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    if completion is not None:
        out["output_tokens"] = completion
    if prompt is not None:
        details = usage.get("prompt_tokens_details")
        cached = min(_count(details.get("cached_tokens")) or 0, prompt) if _is_object(details) else 0
        out["input_tokens"] = prompt - cached
        if cached:
            out["cache_read_input_tokens"] = cached
    return out


def _input(arguments: str) -> dict[str, Any]:
    """A call's arguments as its ``input``: the JSON object, or ``{}`` when they are empty, invalid or not an object."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        value = {}
    return value if isinstance(value, dict) else {}


def encode_sse(event: Mapping[str, Any]) -> bytes:
    """One event as an SSE frame: ``event: <type>`` and its compact JSON."""
    return f"event: {event['type']}\ndata: {dumps(event)}\n\n".encode("utf-8")


def error_type(status: int) -> str:
    """The Anthropic error type for an HTTP status."""
    return ERROR_TYPES.get(status) or ("invalid_request_error" if 400 <= status < 500 else "api_error")


def error_body(status: int, message: str, type_: str | None = None) -> dict[str, Any]:
    """An Anthropic error response body."""
    return {"type": "error", "error": {"type": type_ or error_type(status), "message": message}}
