"""A call object in doubled braces (issue 30): Qwen2.5-Coder-1.5B behind llama.cpp's own template sometimes writes
``{{"name": "get_current_weather", "arguments": {…}}}``, one line per call. Each is read as the call it plainly is,
with a ``repaired`` diagnostic, streamed and whole alike; doubled braces that hold no call stay text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamparse import ParseResult, StreamParser

WEATHER: list[dict[str, Any]] = [{"type": "function", "function": {"name": "get_current_weather", "parameters": {
    "type": "object", "properties": {"location": {"type": "string"}, "unit": {"type": "string"}}}}}]


def _doubled(location: str) -> str:
    return '{{"name": "get_current_weather", "arguments": {"location": "%s", "unit": "celsius"}}}' % location


def _parse(text: str, size: int, **options: Any) -> tuple[str, list[tuple[str, Any]], list[str]]:
    parser = StreamParser(WEATHER, **options)
    events = [e for i in range(0, len(text), size) for e in parser.feed(text[i:i + size])] + parser.close()
    result = ParseResult(events)
    return (result.content, [(c.name, json.loads(c.arguments)) for c in result.tool_calls],
            [d.code for d in result.diagnostics])


@pytest.mark.parametrize("options", [{}, {"dialects": ["llama3_json"]}, {"stream_arguments": True}])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 10_000])
def test_one_line_per_call_each_read_as_a_repair(options: dict[str, Any], size: int) -> None:
    text = f"I'll check both.\n{_doubled('Boston')}\n{_doubled('San Francisco')}\n"
    content, calls, codes = _parse(text, size, **options)
    assert calls == [("get_current_weather", {"location": "Boston", "unit": "celsius"}),
                     ("get_current_weather", {"location": "San Francisco", "unit": "celsius"})]
    assert content.strip() == "I'll check both."
    assert codes.count("repaired") == 2


@pytest.mark.parametrize("size", [1, 4, 10_000])
def test_inside_a_hermes_tag_too(size: int) -> None:
    content, calls, codes = _parse(f"<tool_call>\n{_doubled('Paris')}\n</tool_call>", size)
    assert content == "" and calls == [("get_current_weather", {"location": "Paris", "unit": "celsius"})]
    assert "repaired" in codes


@pytest.mark.parametrize("text", [
    '{{"name" | upper}} is Jinja, not a call',  # no call object inside
    'In a template write {{"name": "get_current_weather", "arguments": {}}} to call it.',  # not at a line start
    '{{"name": "other_tool", "arguments": {}}}',  # a tool that was not offered
])
def test_what_is_not_a_doubled_call_stays_text(text: str) -> None:
    for size in (1, 3, len(text)):
        assert _parse(text, size)[:2] == (text, [])
