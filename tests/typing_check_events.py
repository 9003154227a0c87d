"""The README's event patterns, for a type checker (``mypy --strict``, run by ``tests/test_typing.py``).

Invariant: this file type-checks under ``mypy --strict`` only because ``Event`` is a discriminated
union: each access below (``event.parsed_arguments``, ``event.code``, ``event.text``...) is valid for
one member alone, so it passes only where ``event.type == ...`` or ``match`` has narrowed the event.
Not a test module (pytest does not collect it); it is never run, only checked.
"""

from __future__ import annotations

from typing import Any, Iterable

import streamparse
from streamparse import Diagnostic, Event, ReasoningDelta, TextDelta, ToolCall, ToolCallDelta, ToolCallStart

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def run(name: str, arguments: dict[str, Any]) -> None:
    print(name, arguments)


def readme_loop(model_text_deltas: Iterable[str]) -> None:
    """The README's "In code" loop, as written there."""
    parser = streamparse.StreamParser(tools=TOOLS)
    for delta in model_text_deltas:
        for event in parser.feed(delta):
            if event.type == "text":
                print(event.text, end="")
            elif event.type == "reasoning":
                print(event.text)
            elif event.type == "tool_call":
                run(event.name, event.parsed_arguments)
            elif event.type == "diagnostic":
                print(event.code, event.message, event.details)
    for event in parser.close():
        if event.type == "tool_call_start":
            print(event.index, event.id, event.name, event.dialect)
        elif event.type == "tool_call_delta":
            print(event.index, event.arguments_fragment)


def by_match(events: Iterable[Event]) -> list[str]:
    """``match`` on the event classes (positional patterns follow the constructors' field order)."""
    out: list[str] = []
    for event in events:
        match event:
            case TextDelta(text) | ReasoningDelta(text):
                out.append(text)
            case ToolCall(index, call_id, name, arguments):
                out.append(f"{index} {call_id} {name} {arguments} {event.parsed_arguments}")
            case ToolCallStart(name=name):
                out.append(name)
            case ToolCallDelta(arguments_fragment=fragment):
                out.append(fragment)
            case Diagnostic(code=code):
                out.append(code)
    return out


def by_match_on_type(event: Event) -> str:
    """``match event.type`` narrows ``event`` too."""
    match event.type:
        case "tool_call":
            return event.arguments
        case "tool_call_delta":
            return event.arguments_fragment
        case "text" | "reasoning":
            return event.text
        case _:
            return ""


def whole_text(full_text: str) -> tuple[str, list[ToolCall]]:
    result = streamparse.parse(full_text, tools=TOOLS)
    return result.content, result.tool_calls
