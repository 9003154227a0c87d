"""Generated streams for the benchmarks (deterministic)."""

from __future__ import annotations

import json

from streamparse.examples import EXAMPLE_TOOLS

TOOLS = EXAMPLE_TOOLS

PROSE = ("The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun.\n" * 1000)[:64 * 1024]
PROSE_WITH_MARKUP = ("The quick brown fox jumps over the lazy dog; a < b, and <b>bold</b> is HTML.\n" * 1000)[:64 * 1024]


def code_text(size: int) -> str:
    line = 'def f(x):\n    return "<" + x + ">"  # a comment with \'quotes\'\n'
    return (line * (size // len(line) + 1))[:size]


def hermes_write(size: int) -> str:
    call = {"name": "write_file", "arguments": {"path": "src/app.py", "content": code_text(size)}}
    return "I will write the file.\n<tool_call>\n" + json.dumps(call) + "\n</tool_call>\nDone."


def qwen3_write(size: int) -> str:
    return (
        "I will write the file.\n<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n"
        f"<parameter=content>\n{code_text(size)}\n</parameter>\n</function>\n</tool_call>\nDone."
    )


def tool_heavy(calls: int = 200) -> str:
    parts = []
    for i in range(calls):
        parts.append(f"Step {i}: checking the weather in city number {i}.\n")
        if i % 2:
            parts.append(f'<tool_call>{{"name": "get_weather", "arguments": {{"city": "City {i}", "days": {i % 7}}}}}</tool_call>\n')
        else:
            parts.append(f"<tool_call>\n<function=get_weather>\n<parameter=city>\nCity {i}\n</parameter>\n"
                         f"<parameter=days>\n{i % 7}\n</parameter>\n</function>\n</tool_call>\n")
    return "".join(parts)


def deltas(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
