"""Built-in sample model outputs and tools, so the CLI (and demos) work on a fresh machine.

Invariant: data only; nothing here parses, renders or opens a connection.
"""

from __future__ import annotations

from typing import Any

EXAMPLE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a text file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_recipes",
            "description": "Search recipes",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    },
]

EXAMPLES: dict[str, str] = {
    "qwen3_xml": (
        "<think>The user wants the weather and a file.</think>"
        "Let me check the weather first.\n"
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\n"
        "And save the script:\n"
        "<tool_call>\n<function=write_file>\n<parameter=path>\nhello.py\n</parameter>\n"
        "<parameter=content>\nif a < b and b > c:\n    print(\"hello & bye\")\n</parameter>\n"
        "</function>\n</tool_call>"
    ),
    "hermes": (
        "Sure, checking two cities.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "metric": true}}\n</tool_call>\n'
        "<tool_call>{'name': 'get_weather', 'arguments': {city: 'Oslo', days: '2',}}</tool_call>\n"
        "Done; <b>HTML</b> and a < b stay text."
    ),
    "mixed": (
        "Small models answer in many shapes:\n"
        '<tools>[{"name": "get_weather", "arguments": {"city": "Rome"}}, '
        '{"name": "search_recipes", "arguments": {"query": "carbonara"}}]</tools>\n'
        '<search_recipes>{"query": "vegan pasta"}</function>\n'
        "```json\n"
        '{"name": "get_weather", "arguments": {"city": "Lima"}\n'
        "```\n"
        "That is all."
    ),
}
DEFAULT_EXAMPLE = "qwen3_xml"


def long_output(steps: int = 4) -> str:
    """A longer recording (a few hundred tokens): prose with a call of each common dialect."""
    parts = []
    for i in range(steps):
        parts.append(f"Step {i + 1}: I look at the next part of the task and explain what I am about to do.\n")
        if i % 3 == 0:
            parts.append(f'<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "City {i}", "days": {i % 5 + 1}}}}}\n</tool_call>\n')
        elif i % 3 == 1:
            parts.append(f"<tool_call>\n<function=write_file>\n<parameter=path>\nstep_{i}.py\n</parameter>\n"
                         f"<parameter=content>\nprint('step {i}', 1 < 2)\n</parameter>\n</function>\n</tool_call>\n")
    parts.append("All steps are done.")
    return "".join(parts)


EXAMPLES["long"] = long_output()


def big_write(size: int) -> str:
    """A Qwen3-Coder call writing a ``size``-character file of code: the load test's heavy stream."""
    line = "    total = total + values[i] * 2  # accumulate <items> {i}\n"
    body = (line * (size // len(line) + 1))[:size]
    return ("I will write the file now.\n<tool_call>\n<function=write_file>\n<parameter=path>\nbig.py\n</parameter>\n"
            f"<parameter=content>\n{body}\n</parameter>\n</function>\n</tool_call>\nWritten.")
