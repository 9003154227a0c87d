"""OpenAI Responses vocabulary: ids, usage, the reason an answer is incomplete, and the values of the items that
stand for a client's own tools (a custom tool's input, a tool search's arguments).

Invariant: every value made here is one the Responses API itself could send: ids carry the prefix of their
kind (``resp_``, ``msg_``, ``fc_``, ``ctc_``, ``rs_``) and only ``[A-Za-z0-9_-]``; usage has every count the
openai package's ``ResponseUsage`` requires, each a non-negative integer; a status is one of the API's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from ...core.ids import fresh_id as _fresh
from ..shapes import _is_object

__all__ = ["fresh_id", "call_id", "usage_from", "incomplete_reason", "CUSTOM_INPUT", "Offered", "chat_name",
           "custom_input", "search_arguments"]

CUSTOM_INPUT = "input"  # a custom (free-text) tool is offered upstream as a function with this one string argument
NAMESPACE_SEP = "__"  # a namespaced tool's function name upstream: namespace__name (as vLLM's Responses front)


@dataclass(frozen=True)
class Offered:
    """The client's tool behind a function offered upstream: its own name, its type (``function``; ``custom``, a
    free-text tool; ``tool_search``, run by the client), and the namespace it was offered in (Codex routes a
    call by name and namespace)."""

    name: str
    kind: str = "function"
    namespace: str | None = None


def chat_name(name: str, namespace: Any = None) -> str:
    """The function name a (namespaced) tool has upstream."""
    return f"{namespace}{NAMESPACE_SEP}{name}" if isinstance(namespace, str) and namespace else name
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}


def fresh_id(prefix: str) -> str:
    """``prefix`` and 32 secure random hex digits (``core.ids``): unique per item, as clients key on item ids."""
    return _fresh(prefix, 16)


def call_id(value: Any) -> str:
    """A call's ``call_id``: the upstream's id when it has one (safe characters only), else a fresh one."""
    text = _UNSAFE.sub("_", value) if isinstance(value, str) else ""
    return text or fresh_id("call_")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _detail(usage: Mapping[str, Any], key: str, field: str) -> int:
    details = usage.get(key)
    return _count(details.get(field)) if _is_object(details) else 0


def usage_from(usage: Any) -> dict[str, Any] | None:
    """Chat-completions usage (``prompt_tokens``, ``completion_tokens``, their details) or Responses usage ->
    Responses usage; None when the upstream said nothing (the field is then null, never invented zeros). A
    chat backend reports no cache writes: ``cache_write_tokens`` is 0, as the openai package requires it."""
    if not _is_object(usage):
        return None
    if "input_tokens" in usage or "output_tokens" in usage:
        prompt, completion = _count(usage.get("input_tokens")), _count(usage.get("output_tokens"))
        cached = _detail(usage, "input_tokens_details", "cached_tokens")
        reasoning = _detail(usage, "output_tokens_details", "reasoning_tokens")
    elif "prompt_tokens" in usage or "completion_tokens" in usage:
        prompt, completion = _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
        cached = _detail(usage, "prompt_tokens_details", "cached_tokens")
        reasoning = _detail(usage, "completion_tokens_details", "reasoning_tokens")
    else:
        return None
    total = usage.get("total_tokens")
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": min(cached, prompt), "cache_write_tokens": 0},
            "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": min(reasoning, completion)},
            "total_tokens": _count(total) if _count(total) >= prompt + completion else prompt + completion}


def incomplete_reason(finish_reason: Any) -> str | None:
    """The ``incomplete_details.reason`` a chat ``finish_reason`` means (``length`` -> ``max_output_tokens``),
    else None: the answer is complete."""
    return _INCOMPLETE.get(finish_reason) if isinstance(finish_reason, str) else None


def custom_input(arguments: str) -> str:
    """A custom tool's input from the arguments of the function that stood for it: ``{"input": "…"}`` gives
    its string; an object with one string value gives that value; anything else is the text the model wrote."""
    try:
        value = json.loads(arguments)
    except (ValueError, RecursionError):
        return arguments
    if isinstance(value, dict):
        if isinstance(value.get(CUSTOM_INPUT), str):
            return str(value[CUSTOM_INPUT])
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(value) == 1 and strings:
            return strings[0]
    return value if isinstance(value, str) else arguments


def search_arguments(arguments: str) -> Any:
    """A ``tool_search_call``'s arguments: the JSON value the model wrote (its text, if it is not JSON)."""
    try:
        return json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):
        return arguments
