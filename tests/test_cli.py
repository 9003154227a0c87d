"""The command line: built-in examples and files, human and JSON output."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from streamparse.cli import main
from streamparse.examples import EXAMPLES


def run(*argv: str) -> str:
    out = io.StringIO()
    assert main(list(argv), out=out) == 0
    return out.getvalue()


def test_builtin_example_prints_calls() -> None:
    text = run("--example", "qwen3_xml")
    assert "tool_call #0 get_weather" in text and '"days": 3' in text
    assert "tool_call #1 write_file" in text


def test_json_output_round_trips(tmp_path) -> None:
    source = tmp_path / "out.txt"
    source.write_text(EXAMPLES["mixed"], encoding="utf-8")
    tools = tmp_path / "tools.json"
    from streamparse.examples import EXAMPLE_TOOLS

    tools.write_text(json.dumps({"tools": EXAMPLE_TOOLS}), encoding="utf-8")
    lines = [json.loads(line) for line in run("parse", str(source), "--tools", str(tools), "--json", "--chunk", "3").splitlines()]
    names = [e["name"] for e in lines if e["type"] == "tool_call"]
    assert names == ["get_weather", "search_recipes", "search_recipes", "get_weather"]
    assert "".join(e["text"] for e in lines if e["type"] == "text") == "Small models answer in many shapes:\n\n\n\nThat is all."


def test_module_entry_point_reads_stdin() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamparse", "-", "--json"],
        input='Hi <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>',
        capture_output=True, text=True, check=True, timeout=60,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["type"] for e in events] == ["text", "tool_call"]
    assert events[1]["name"] == "f" and json.loads(events[1]["arguments"]) == {"x": 1}
