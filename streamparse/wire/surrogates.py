"""UTF-16 surrogates in upstream JSON: joined when split, replaced when alone.

JSON may spell a character outside the BMP as a surrogate pair (``"\\ud83d\\ude00"``), and an
upstream that streams token by token may cut that pair between two events, or send a lone
surrogate. Python decodes each half as a lone surrogate, which no UTF-8 output can carry.

Invariants: every string that leaves here is UTF-8 encodable; a pair split between two deltas of
the same streamed text field (``content``, reasoning) becomes its one character, as if it had
arrived whole (chunking-invariant); any other lone surrogate becomes U+FFFD; text without
surrogates is untouched and costs one check per decoded event that orjson refused.
"""

from __future__ import annotations

import re
from typing import Any

from .shapes import map_strings

__all__ = ["fix_text", "clean_value", "SurrogateJoiner", "SURROGATE_ESCAPE", "TEXT_FIELDS"]

SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # raw JSON that may decode to a surrogate
TEXT_FIELDS = ("content", "reasoning_content", "reasoning")  # a delta's streamed text fields


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def fix_text(text: str) -> str:
    """Pairs joined into their character, lone surrogates replaced by U+FFFD."""
    if _encodable(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_value(value: Any) -> Any:
    """Decoded JSON with every string (and key) fixed (``fix_text``), changed in place. Iterative."""
    return map_strings(value, fix_text)[0]


def _high(char: str) -> bool:
    return "\ud800" <= char <= "\udbff"


class SurrogateJoiner:
    """Chat chunks (decoded JSON) -> the same with surrogates fixed; a high surrogate that ends a
    streamed text field is held and joined to the start of that field's next delta."""

    def __init__(self) -> None:
        self.held: dict[tuple[Any, str], str] = {}  # (choice index, field) -> a held high surrogate
        self._envelope: dict[str, Any] = {}

    def fix(self, chunk: Any) -> Any:
        """One decoded event's value, fixed (in place)."""
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if isinstance(choices, list):
            self._envelope = {k: v for k, v in chunk.items() if k in ("id", "object", "created", "model")}
        for choice in choices if isinstance(choices, list) else ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            index = choice.get("index", 0)
            last = choice.get("finish_reason") is not None
            for field in TEXT_FIELDS:
                held = self.held.pop((index, field), "")
                text = delta.get(field)
                if not isinstance(text, str):
                    if held:  # not continued: the half stays alone
                        delta[field] = "\ufffd"
                    continue
                text = held + text
                if text and _high(text[-1]) and not last:
                    self.held[(index, field)] = text[-1]
                    text = text[:-1]
                delta[field] = fix_text(text)
        return clean_value(chunk)

    def leftovers(self) -> list[dict[str, Any]]:
        """The stream ended: each held half, alone, as a delta of its own (U+FFFD)."""
        out = [{**self._envelope, "choices": [{"index": index, "delta": {field: "\ufffd"}, "finish_reason": None}]}
               for index, field in self.held]
        self.held.clear()
        return out
