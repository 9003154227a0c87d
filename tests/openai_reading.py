"""One answer read through a proxy's OpenAI front with the openai client, whole or streamed, as a test compares it.

Invariant: both ways give the same triple: the content, the calls as ``(name, parsed arguments)`` in order, and the
reasoning (``reasoning_content``, which the openai client keeps as an extra field); streamed calls are joined by
their index from their pieces.
"""

from __future__ import annotations

import json
from typing import Any

from openai import OpenAI

Read = tuple[str, list[tuple[str, Any]], str]  # (content, calls, reasoning_content)


def chat_read(base: str, messages: list[dict[str, Any]], *, stream: bool, model: str = "m",
              tools: list[Any] | None = None, extra: dict[str, Any] | None = None) -> Read:
    """POST /v1/chat/completions at ``base`` (``extra``: fields the client does not know, sent as they are)."""
    client = OpenAI(base_url=base + "/v1", api_key="sk-test", max_retries=0, timeout=30)
    kw: dict[str, Any] = {"tools": tools} if tools else {}
    if extra:
        kw["extra_body"] = extra
    if not stream:
        message = client.chat.completions.create(model=model, messages=messages, **kw).choices[0].message  # type: ignore[arg-type]
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]  # type: ignore[union-attr]
        return message.content or "", calls, getattr(message, "reasoning_content", None) or ""
    text: list[str] = []
    reasoning: list[str] = []
    pieces: dict[int, tuple[str, str]] = {}
    chunks: Any = client.chat.completions.create(model=model, messages=messages, stream=True, **kw)  # type: ignore[arg-type]
    for chunk in chunks:
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            reasoning.append(getattr(choice.delta, "reasoning_content", None) or "")
            for piece in choice.delta.tool_calls or []:
                name, args = pieces.get(piece.index, ("", ""))
                pieces[piece.index] = (name + (piece.function.name or ""), args + (piece.function.arguments or ""))
    return "".join(text), [(n, json.loads(a)) for n, a in pieces.values()], "".join(reasoning)
