"""System messages for backends whose chat template takes one, and only at the start.

Clients put system messages in the middle of a conversation (Claude Code sends ``role: "system"`` messages among
its Anthropic ``messages``; OpenAI clients send ``system`` or ``developer`` messages anywhere). Many chat
templates (Qwen3's among them) refuse any system message but a leading one. ``fold_system`` gives such a backend
one: the text of every system and developer message, in order, in the first message.

Invariant: pure (the input is never modified); every other message is kept, in order; no system text is lost;
messages with at most one system message, already first, come back as they were (copied).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["SYSTEM_ROLES", "fold_system"]

SYSTEM_ROLES = ("system", "developer")


def _text(content: Any) -> str:
    """A system message's content as text: a string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str))
    return ""


def _is_system(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") in SYSTEM_ROLES


def fold_system(messages: Sequence[Any]) -> list[Any]:
    """``messages`` with every system (and developer) message's text joined, in order, into one leading system
    message (the first message's role, if it is one of them; else ``system``), separated by blank lines."""
    systems = [m for m in messages if _is_system(m)]
    if not systems or (len(systems) == 1 and _is_system(messages[0])):
        return [dict(m) if isinstance(m, Mapping) else m for m in messages]
    lead = dict(messages[0]) if _is_system(messages[0]) else {"role": "system"}
    lead["content"] = "\n\n".join(t for t in (_text(m.get("content")) for m in systems) if t)
    return [lead, *(dict(m) if isinstance(m, Mapping) else m for m in messages if not _is_system(m))]
