"""Where an answer begins: the end of a generation prompt that is the beginning of the answer's markup.

Invariant: a pure function of the prompt and a parser's marker table; it names no dialect.
"""

from __future__ import annotations

from typing import Any

__all__ = ["answer_opening"]

_MAX_OPENING = 64


def answer_opening(generation_prompt: str, table: Any) -> str:
    """The generation prompt's last line when it is a marker, or a marker's beginning, of the dialects and spans a
    parser reads (``table``: its ``MarkerTable``): functionary's ``>>>``, harmony's ``<|start|>assistant``. The
    answer continues it, so the parser reads it first. "" otherwise."""
    last = generation_prompt[generation_prompt.rfind("\n") + 1:]
    if not last or len(last) > _MAX_OPENING:
        return ""
    low = last.lower()
    return last if low in table.literals or low in table.line_prefixes else ""
